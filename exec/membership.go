package exec

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Group membership of a query's runner.
//
// A persistent query's runner is a static member of its consumer group
// (KafkaConfig.InstanceID, the engine's instance id kept in its data
// directory). Kafka then knows a restarted process as the member it
// replaces: after a crash the new incarnation gets its predecessor's
// partitions as soon as it joins, instead of after the dead member's
// session timeout. A static member's client does not leave the group
// when it closes, so a clean stop leaves explicitly (KIP-345: a
// LeaveGroup naming the instance id), and its partitions move to the
// other instances at once. A member that dies and never comes back still
// loses its partitions after the session timeout.

// leaveTimeout bounds the explicit leave of a stopping static member.
const leaveTimeout = 5 * time.Second

// leaveGroup leaves the group by instance id once the runner's client is
// closed. It is a no-op for a dynamic member, which left as its client
// closed. A failure is logged: the partitions then move after the
// session timeout, as after a crash.
func (r *KafkaRunner) leaveGroup() {
	if r.cfg.InstanceID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
	defer cancel()
	cl, err := kgo.NewClient(r.cfg.ConnOpts...)
	if err == nil {
		defer cl.Close()
		var resps kadm.LeaveGroupResponses
		resps, err = kadm.NewClient(cl).LeaveGroup(ctx, kadm.LeaveGroup(r.cfg.GroupID).InstanceIDs(r.cfg.InstanceID).Reason("clean stop"))
		if err == nil {
			err = resps.Error()
		}
	}
	if err != nil {
		r.cfg.Log.Warn("leave consumer group", "query", r.topo.QueryID, "group", r.cfg.GroupID, "instance", r.cfg.InstanceID, "err", err)
	}
}

// unassignedLag is the stall watch's view of the group from the broker,
// asked while this instance owns none of the query's partitions: the
// records of each input partition the group has not committed, for the
// partitions no member holds or while the group is not stable.
func (r *KafkaRunner) unassignedLag() (map[topicPartition]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lags, err := kadm.NewClient(r.cl).Lag(ctx, r.cfg.GroupID)
	if err != nil {
		return nil, err
	}
	l, ok := lags[r.cfg.GroupID]
	if !ok {
		return map[topicPartition]int64{}, nil
	}
	if err := l.Error(); err != nil {
		return nil, err
	}
	out := map[topicPartition]int64{}
	stable := l.State == "Stable"
	for _, topic := range r.topo.SourceTopics() {
		for p, ml := range l.Lag[topic] {
			if ml.Lag > 0 && (!stable || ml.Member == nil) {
				out[topicPartition{topic, p}] = ml.Lag
			}
		}
	}
	return out, nil
}

// partitionEnds asks the broker for the end and last stable offsets of
// partitions (the stall watch's question about silent partitions).
func (r *KafkaRunner) partitionEnds(tps []topicPartition) (map[topicPartition]partitionEnds, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.topic] = true
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	adm := kadm.NewClient(r.cl)
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	stable, err := adm.ListCommittedOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	out := map[topicPartition]partitionEnds{}
	for _, tp := range tps {
		e, ok1 := ends.Lookup(tp.topic, tp.partition)
		s, ok2 := stable.Lookup(tp.topic, tp.partition)
		if ok1 && ok2 && e.Err == nil && s.Err == nil {
			out[tp] = partitionEnds{end: e.Offset, stable: s.Offset}
		}
	}
	return out, nil
}

// partitionList flattens a topic → partitions map.
func partitionList(m map[string][]int32) []topicPartition {
	var out []topicPartition
	for topic, ps := range m {
		for _, p := range ps {
			out = append(out, topicPartition{topic, p})
		}
	}
	return out
}

// partitionLess orders partitions by topic, then number.
func partitionLess(topicA string, a int32, topicB string, b int32) bool {
	if topicA != topicB {
		return topicA < topicB
	}
	return a < b
}
