package exec

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CoPartitioned wraps a balancer so that the topics of each group are
// assigned together: the member that gets partition p of a group's first
// topic (its lead) also gets partition p of every other topic of the
// group. A join task for partition p then finds partition p of all its
// inputs on the same member.
//
// Only the lead topics and the topics in no group are balanced by inner;
// the other topics of a group (its mirrors) are left out of the topics it
// sees and out of the members' subscriptions and owned partitions, and
// then follow their lead partition exactly. So the balance inner aims for
// counts a lead partition once, whatever the number of its mirrors.
//
// The result keeps inner's protocol name and IsCooperative, so it is
// compatible with every member using the same wrapper; all members of a
// group must use it with the same groups, or they would disagree on the
// plan whenever the leader changes. With no groups it returns inner.
//
// Under a cooperative inner (cooperative-sticky), a lead partition that
// moves is first left out of the plan (its owner revokes it and rejoins)
// and assigned to its new owner in the next rebalance; the mirrors follow
// the lead plan, so they are revoked and assigned in the same rounds. A
// mirror partition still claimed by another member than the one its lead
// is planned to (owners that diverged, for example when the groups of a
// running group change) is likewise left out of the plan until its owner
// has revoked it, so no partition is ever consumed by two members; unless
// the planned member claims it too, at the highest generation claimed (the
// other claim is stale, as in AdjustCooperative), when it keeps it.
//
// Groups that share a topic are merged (co-partitioning is transitive).
// Within a group, the lead is the first topic the members subscribe to
// that exists; all existing topics of a group must have the same number of
// partitions, or balancing fails with an error. inner must be one of
// franz-go's consumer-protocol balancers (kgo.ConsumerBalancerBalance
// returning a *kgo.BalancePlan), otherwise balancing fails with an error
// rather than produce a plan that ignores the groups.
func CoPartitioned(inner kgo.GroupBalancer, groups [][]string) kgo.GroupBalancer {
	merged := mergeGroups(groups)
	if len(merged) == 0 {
		return inner
	}
	b := &coPartitioned{GroupBalancer: inner, groups: merged, group: map[string]int{}}
	for i, g := range merged {
		for _, t := range g {
			b.group[t] = i
		}
	}
	return b
}

// mergeGroups merges groups sharing a topic, keeping the first topic of
// the earliest group first, drops repeats, and drops groups of fewer than
// two topics.
func mergeGroups(groups [][]string) [][]string {
	union := func(a, b []string) []string {
		for _, t := range b {
			if !slices.Contains(a, t) {
				a = append(a, t)
			}
		}
		return a
	}
	var out [][]string // disjoint
	for _, g := range groups {
		cur := union(nil, g)
		first := -1
		for i := 0; i < len(out); {
			if !slices.ContainsFunc(out[i], func(t string) bool { return slices.Contains(cur, t) }) {
				i++
				continue
			}
			if first < 0 {
				first = i
				i++
				continue
			}
			out[first] = union(out[first], out[i])
			out = slices.Delete(out, i, i+1)
		}
		if first < 0 {
			out = append(out, cur)
		} else {
			out[first] = union(out[first], cur)
		}
	}
	return slices.DeleteFunc(out, func(g []string) bool { return len(g) < 2 })
}

type coPartitioned struct {
	kgo.GroupBalancer
	groups [][]string
	group  map[string]int // topic => index in groups
}

func (b *coPartitioned) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	inner, ok := b.GroupBalancer.(kgo.ConsumerBalancerBalance)
	if !ok {
		return nil, nil, fmt.Errorf("co-partitioning: balancer %s (%T) is not a consumer-protocol balancer", b.ProtocolName(), b.GroupBalancer)
	}
	cb := &coPartitionedBalance{b: b, inner: inner}
	c, err := kgo.NewConsumerBalancer(cb, members)
	if err != nil {
		return nil, nil, err
	}
	// Remember every member's full subscription and the owners of grouped
	// partitions. Which topics are mirrors depends on the topics that
	// exist, known only at Balance, which hides them from inner.
	cb.subscribed = make([]map[string]bool, len(c.Members()))
	cb.owned = map[string]map[int32][]claim{}
	i := 0
	c.EachMember(func(m *kmsg.JoinGroupResponseMember, meta *kmsg.ConsumerMemberMetadata) {
		sub := map[string]bool{}
		for _, t := range meta.Topics {
			sub[t] = true
		}
		cb.subscribed[i] = sub
		i++
		for _, o := range meta.OwnedPartitions {
			if _, grouped := b.group[o.Topic]; !grouped {
				continue
			}
			byPart := cb.owned[o.Topic]
			if byPart == nil {
				byPart = map[int32][]claim{}
				cb.owned[o.Topic] = byPart
			}
			for _, p := range o.Partitions {
				byPart[p] = append(byPart[p], claim{m.MemberID, meta.Generation})
			}
		}
	})
	// MemberTopics keeps every topic (the client loads their partition
	// counts before Balance).
	return c, c.MemberTopics(), nil
}

// coPartitionedBalance balances one rebalance of a co-partitioned group.
type coPartitionedBalance struct {
	b     *coPartitioned
	inner kgo.ConsumerBalancerBalance
	// subscribed[i] is the subscription of the ith member, before hiding.
	subscribed []map[string]bool
	// owned maps a grouped topic's partition to the members that claim it.
	owned map[string]map[int32][]claim
}

// claim is a member's claim to own a partition, at the generation it
// last joined in.
type claim struct {
	member     string
	generation int32
}

func (cb *coPartitionedBalance) Balance(c *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	// Pick each group's lead: its first existing topic.
	type mirrorSet struct {
		lead    string
		mirrors []string
	}
	var sets []mirrorSet
	hidden := map[string]bool{}
	for _, g := range cb.b.groups {
		var s mirrorSet
		for _, t := range g {
			n, ok := topics[t]
			if !ok {
				continue
			}
			if s.lead == "" {
				s.lead = t
				continue
			}
			if n != topics[s.lead] {
				c.SetError(fmt.Errorf("co-partitioned topics %s and %s have %d and %d partitions", s.lead, t, topics[s.lead], n))
				return nil
			}
			s.mirrors = append(s.mirrors, t)
			hidden[t] = true
		}
		if len(s.mirrors) > 0 {
			sets = append(sets, s)
		}
	}

	// Hide the mirrors from inner: from the topics, the subscriptions and
	// the owned partitions (sticky would otherwise count them).
	leadTopics := make(map[string]int32, len(topics))
	for t, n := range topics {
		if !hidden[t] {
			leadTopics[t] = n
		}
	}
	c.EachMember(func(_ *kmsg.JoinGroupResponseMember, meta *kmsg.ConsumerMemberMetadata) {
		meta.Topics = slices.DeleteFunc(meta.Topics, func(t string) bool { return hidden[t] })
		meta.OwnedPartitions = slices.DeleteFunc(meta.OwnedPartitions, func(o kmsg.ConsumerMemberMetadataOwnedPartition) bool { return hidden[o.Topic] })
	})

	into := cb.inner.Balance(c, leadTopics)
	if into == nil {
		return nil // inner set the error
	}
	plan, ok := into.(*kgo.BalancePlan)
	if !ok {
		c.SetError(fmt.Errorf("co-partitioning: balancer %s returned a %T, not a *kgo.BalancePlan", cb.b.ProtocolName(), into))
		return nil
	}
	if len(sets) == 0 {
		return plan
	}
	cooperative := cb.b.IsCooperative()
	byMember := plan.AsMemberIDMap()
	for i, m := range c.Members() {
		assigned := byMember[m.MemberID]
		if assigned == nil {
			continue
		}
		for _, s := range sets {
			lead := assigned[s.lead]
			if len(lead) == 0 {
				continue
			}
			for _, mirror := range s.mirrors {
				if !cb.subscribed[i][mirror] {
					c.SetError(fmt.Errorf("co-partitioned topics: member %s is assigned %s but does not consume %s", m.MemberID, s.lead, mirror))
					return nil
				}
				parts := make([]int32, 0, len(lead))
				for _, p := range lead {
					if cooperative && !ownedBy(cb.owned[mirror][p], m.MemberID) {
						// Its owner revokes it (it is not in its plan)
						// and rejoins; it comes here in that rebalance.
						continue
					}
					parts = append(parts, p)
				}
				if len(parts) > 0 {
					plan.AddPartitions(&c.Members()[i], mirror, parts)
				}
			}
		}
	}
	return plan
}

// ownedBy reports whether member may be planned a partition with these
// claims right away: nobody else claims it, or member claims it at the
// highest generation claimed (as AdjustCooperative reckons a lead
// partition: a lower claim is stale, and its member, planned without the
// partition, revokes it at its sync, so no new overlap). Otherwise the
// partition waits for the next rebalance, after its owner has revoked it.
func ownedBy(claims []claim, member string) bool {
	var mine, top int32
	claimed, others := false, false
	for i, c := range claims {
		if i == 0 || c.generation > top {
			top = c.generation
		}
		if c.member != member {
			others = true
		} else if !claimed || c.generation > mine {
			mine, claimed = c.generation, true
		}
	}
	return !others || claimed && mine >= top
}
