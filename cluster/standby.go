package cluster

import (
	"sort"

	"github.com/sluice-sql/sluice/engine"
)

// StandbyAssignment says which partitions of each query instance self
// keeps standby state for, as topic → partitions per query id, given
// what the instances report and replicas(query), the query's
// num.standby.replicas. The rule is deterministic, so every instance
// computes the same without talking to the others: the live instances
// running a query, sorted by id, form a ring, and for each partition an
// instance owns, the replicas instances after it on the ring keep a
// standby. It follows ownership, which every instance publishes on each
// change, so it is recomputed whenever a status arrives. Partitions of
// stateless sub-topologies come out too; the runner ignores them.
//
// An owner judged stale (crashed, or cut off) keeps its standbys for the
// partitions no live instance owns yet: they are placed as if it were
// still on the ring, so the instances that stood by for it go on doing
// so until the group gives the partitions to someone else. Pull queries
// with standby reads answer from them meanwhile.
func StandbyAssignment(instances []Instance, self string, replicas func(query string) int) map[string]map[string][]int32 {
	running := map[string][]string{}             // query → live instance ids
	liveOwned := map[string]map[Partition]bool{} // query → partitions a live instance owns (State cleared)
	for _, in := range instances {
		if !in.Alive {
			continue
		}
		for q, parts := range in.Queries {
			running[q] = append(running[q], in.ID)
			if liveOwned[q] == nil {
				liveOwned[q] = map[Partition]bool{}
			}
			for _, p := range parts {
				liveOwned[q][Partition{Topic: p.Topic, Partition: p.Partition}] = true
			}
		}
	}
	for _, ring := range running {
		sort.Strings(ring)
	}
	out := map[string]map[string][]int32{}
	for _, in := range instances {
		if in.ID == self {
			continue
		}
		for q, parts := range in.Queries {
			if !in.Alive {
				// Only what nobody live took over.
				var orphans []Partition
				for _, p := range parts {
					if !liveOwned[q][Partition{Topic: p.Topic, Partition: p.Partition}] {
						orphans = append(orphans, p)
					}
				}
				parts = orphans
			}
			if len(parts) == 0 {
				continue
			}
			n := replicas(q)
			ring := running[q]
			at := sort.SearchStrings(ring, in.ID)
			if !in.Alive {
				// Its place on the ring, had it stayed: the next live one
				// is its first follower.
				ring = append(append(append([]string{}, ring[:at]...), in.ID), ring[at:]...)
			}
			for i := 1; i <= n && i < len(ring); i++ {
				if ring[(at+i)%len(ring)] != self {
					continue
				}
				if out[q] == nil {
					out[q] = map[string][]int32{}
				}
				for _, p := range parts {
					out[q][p.Topic] = append(out[q][p.Topic], p.Partition)
				}
			}
		}
	}
	for _, byTopic := range out {
		for _, ps := range byTopic {
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		}
	}
	return out
}

// ApplyStandbys gives each of e's persistent queries the standby
// partitions StandbyAssignment computes for it from instances: what
// Config.OnInstances should do for an engine.
func ApplyStandbys(e *engine.Engine, instances []Instance) {
	queries := e.Queries()
	replicas := map[string]int{}
	for _, q := range queries {
		replicas[q.ID] = q.StandbyReplicas()
	}
	self := ""
	for _, in := range instances {
		if in.Self {
			self = in.ID
		}
	}
	asg := StandbyAssignment(instances, self, func(q string) int { return replicas[q] })
	for _, q := range queries {
		q.SetStandbys(asg[q.ID])
	}
}

// EngineStandbys reports the standby partitions of e's persistent
// queries: what Config.LocalStandbys should return for an engine.
func EngineStandbys(e *engine.Engine) map[string][]Partition {
	out := map[string][]Partition{}
	for _, q := range e.Queries() {
		sb := q.Standbys()
		if len(sb) == 0 {
			continue
		}
		ps := make([]Partition, 0, len(sb))
		for _, ti := range sb {
			ps = append(ps, Partition{Topic: ti.Topic, Partition: ti.Partition, State: string(ti.State)})
		}
		out[q.ID] = ps
	}
	return out
}
