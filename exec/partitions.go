package exec

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A task's lifecycle on this instance. The group assigns a partition
// (onAssigned); its task is created, and its stores restored from their
// changelogs (RESTORING), when its first record arrives or, for a
// stateful sub-topology, at once (startAssignedTasks); it then runs
// (RUNNING) until the partition is revoked (onRevoked: its work committed
// first) or lost (onLost: dropped, another member owns it now).
// task returns the task for a partition, creating it (and restoring its
// state from the changelog) on first use.
func (r *KafkaRunner) task(ctx context.Context, topic string, partition int32) (*Task, error) {
	return r.taskAt(ctx, topic, partition, time.Now())
}

// taskAt is task, with the wall-clock time the partition counts as last
// heard from when the task is new.
func (r *KafkaRunner) taskAt(ctx context.Context, topic string, partition int32, heard time.Time) (*Task, error) {
	sub := r.topo.sub(topic)
	if sub == nil {
		return nil, fmt.Errorf("query %s: no sub-topology reads %s", r.topo.QueryID, topic)
	}
	// A join's task reads partition p of several topics: it is known by
	// its main topic's partition.
	tp := topicPartition{sub.Source.Topic, partition}
	r.mu.Lock()
	t, ok := r.tasks[tp]
	r.mu.Unlock()
	if ok {
		if topic != sub.Source.Topic && t.behind[topic] {
			// The table this input carries was assigned after the task
			// restored it: what another instance read meanwhile is read
			// now, before the first record of the input is joined.
			if err := r.restoreFrom(ctx, tp, t, topic); err != nil {
				return nil, err
			}
			delete(t.behind, topic)
		}
		return t, nil
	}
	t, err := NewTask(r.topo, sub, partition, r.cfg.DB, r.output(), r.Metrics, r.cfg.Log)
	if err != nil {
		return nil, err
	}
	if len(t.stores) > 0 {
		// A standby catch-up of this partition may be under way: wait
		// for it, then restore the little it left. A transient query
		// keeps no changelog, but still reads the tables it joins from
		// their topics.
		r.standbyMu.Lock()
		for _, s := range t.stores {
			if r.cfg.Transient && s.spec.FromSource == nil {
				continue
			}
			if err := r.restore(ctx, tp, s); err != nil {
				r.standbyMu.Unlock()
				return nil, err
			}
		}
		r.standbyMu.Unlock()
	}
	r.mu.Lock()
	for _, si := range sub.Sides {
		if _, assigned := r.assigned[topicPartition{si.Source.Topic, partition}]; !assigned {
			if t.behind == nil {
				t.behind = map[string]bool{}
			}
			t.behind[si.Source.Topic] = true
		}
	}
	r.mu.Unlock()
	t.setClock(heard)
	if err := t.Open(); err != nil {
		return nil, err
	}
	// Only a restored, open task joins the set that commits: a restore
	// cut short by a stop leaves nothing half-done to commit.
	r.mu.Lock()
	r.tasks[tp] = t
	r.mu.Unlock()
	r.partitionsChanged()
	return t, nil
}

// restoreFrom restores again the task's stores whose changelog is the
// source topic, from where their checkpoints left off.
func (r *KafkaRunner) restoreFrom(ctx context.Context, tp topicPartition, t *Task, topic string) error {
	r.standbyMu.Lock()
	defer r.standbyMu.Unlock()
	for _, s := range t.stores {
		if s.spec.FromSource != nil && s.spec.FromSource.Topic == topic {
			if err := r.restore(ctx, tp, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// restore replays one store partition's changelog, reporting progress
// and logging what it took.
func (r *KafkaRunner) restore(ctx context.Context, tp topicPartition, s taskStore) error {
	start := time.Now()
	prog := &RestoreProgress{Query: r.topo.QueryID, Store: s.spec.Name, Partition: tp.partition, Started: start}
	r.mu.Lock()
	r.restoring[tp] = prog
	r.mu.Unlock()
	prev := r.watch.enter(phaseRestore)
	r.watch.restore(tp, true)
	defer func() {
		r.mu.Lock()
		delete(r.restoring, tp)
		r.mu.Unlock()
		r.watch.restore(tp, false)
		r.watch.enter(prev)
	}()
	log, err := s.spec.changelog(tp.partition)
	if err != nil {
		return fmt.Errorf("query %s: restore %s/%d: %w", r.topo.QueryID, s.spec.Name, tp.partition, err)
	}
	if s.spec.FromSource != nil && s.spec.FromSource.Topic == tp.topic {
		if log.Until, err = r.resumeOffset(ctx, tp); err != nil {
			return fmt.Errorf("query %s: restore %s/%d: %w", r.topo.QueryID, s.spec.Name, tp.partition, err)
		}
	}
	// A changelog of this query's own (not a source topic it reads) may
	// hold the open last transaction of the partition's previous owner.
	log.AfterOpenTransactions = s.spec.FromSource == nil
	n, err := s.store.Restore(ctx, r.cfg.ConnOpts, log, func(done, total int64) {
		r.mu.Lock()
		prog.Done, prog.Total = done, total
		snapshot := *prog
		r.mu.Unlock()
		if r.cfg.OnRestoreProgress != nil {
			r.cfg.OnRestoreProgress(snapshot)
		}
	})
	if err != nil {
		return fmt.Errorf("query %s: restore %s/%d: %w", r.topo.QueryID, s.spec.Name, tp.partition, err)
	}
	took := time.Since(start)
	r.Metrics.AddRestore(s.spec.Name, tp.partition, n, took)
	r.cfg.Log.Info("state restored", "query", r.topo.QueryID, "store", s.spec.Name, "partition", tp.partition,
		"records", n, "bytes", s.store.ApproxBytes(), "duration", took)
	return nil
}

// onAssigned notes when partitions arrived (see assigned).
func (r *KafkaRunner) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	now := time.Now()
	r.mu.Lock()
	for topic, ps := range assigned {
		for _, p := range ps {
			r.assigned[topicPartition{topic, p}] = now
		}
	}
	r.mu.Unlock()
	r.watch.assigned(partitionList(assigned))
	r.partitionsChanged()
}

// startAssignedTasks creates the task of every stateful partition that is
// assigned but has no task yet, without waiting for its first record:
// its state is restored from the changelog at once, so that a pull query
// this instance answers for the partition reads current state rather than
// what it last kept before the partition moved away, and, with an idle
// timeout, advanceIdle can close the windows of a partition that stays
// silent after a restart or rebalance as if it had been idle since it
// was assigned.
func (r *KafkaRunner) startAssignedTasks(ctx context.Context) error {
	type due struct {
		tp topicPartition
		at time.Time
	}
	var dues []due
	r.mu.Lock()
	for tp, at := range r.assigned {
		if _, ok := r.tasks[tp]; ok {
			continue
		}
		if sub := r.topo.sub(tp.topic); sub != nil && hasStores(sub) {
			tp.topic = sub.Source.Topic
			if _, ok := r.tasks[tp]; !ok {
				dues = append(dues, due{tp, at})
			}
		}
	}
	r.mu.Unlock()
	sort.Slice(dues, func(i, j int) bool {
		if dues[i].tp.topic != dues[j].tp.topic {
			return dues[i].tp.topic < dues[j].tp.topic
		}
		return dues[i].tp.partition < dues[j].tp.partition
	})
	for _, d := range dues {
		if _, err := r.taskAt(ctx, d.tp.topic, d.tp.partition, d.at); err != nil {
			return err
		}
	}
	return nil
}

// taskKey is the key in tasks of the task reading topic's partition p:
// its sub-topology's main topic and p.
func (r *KafkaRunner) taskKey(topic string, p int32) topicPartition {
	if sub := r.topo.sub(topic); sub != nil {
		topic = sub.Source.Topic
	}
	return topicPartition{topic, p}
}

func hasStores(sub *SubTopology) bool {
	for _, n := range sub.Nodes {
		if len(n.StoreNames()) > 0 {
			return true
		}
	}
	return false
}

// onRevoked has the committer commit what the leaving tasks need before
// their partitions move to another instance, then closes the tasks.
func (r *KafkaRunner) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	defer r.watch.enter(r.watch.enter(phaseRebalance))
	defer r.committer.rebalancing()()
	var leaving []*Task
	r.mu.Lock()
	for topic, ps := range revoked {
		for _, p := range ps {
			if t, ok := r.tasks[r.taskKey(topic, p)]; ok {
				leaving = append(leaving, t)
			}
		}
	}
	r.mu.Unlock()
	r.committer.revoking(ctx, leaving)
	r.dropTasks(revoked)
}

// onLost drops tasks without committing: another instance owns them now.
func (r *KafkaRunner) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	defer r.committer.rebalancing()()
	r.mu.Lock()
	for topic, ps := range lost {
		for _, p := range ps {
			if t, ok := r.tasks[r.taskKey(topic, p)]; ok {
				for _, s := range t.stores {
					s.store.Discard()
				}
			}
		}
	}
	r.mu.Unlock()
	r.dropTasks(lost)
}

func (r *KafkaRunner) dropTasks(parts map[string][]int32) {
	r.watch.revoked(partitionList(parts))
	r.mu.Lock()
	for topic, ps := range parts {
		for _, p := range ps {
			delete(r.assigned, topicPartition{topic, p})
			tp := r.taskKey(topic, p)
			if t, ok := r.tasks[tp]; ok {
				_ = t.Close()
				delete(r.tasks, tp)
			}
		}
	}
	r.mu.Unlock()
	r.partitionsChanged()
}

// resumeOffset is where the task of tp goes on reading tp: the group's
// committed offset, or the start with none committed and
// auto.offset.reset=earliest. Nil: the end of the topic (latest). The
// offset is fetched stable (KIP-447): while a transaction that commits
// offsets of tp is open, the broker answers UNSTABLE_OFFSET_COMMIT, and
// the fetch is asked again until it has ended, as the consumer's own
// fetch does before it reads tp.
func (r *KafkaRunner) resumeOffset(ctx context.Context, tp topicPartition) (*int64, error) {
	adm := kadm.NewClient(r.cl)
	for {
		offs, err := adm.FetchOffsetsForTopics(kadm.RequireStable(ctx), r.cfg.GroupID, tp.topic)
		if err == nil {
			if o, ok := offs.Lookup(tp.topic, tp.partition); ok && errors.Is(o.Err, kerr.UnstableOffsetCommit) {
				err = o.Err
			}
		}
		if errors.Is(err, kerr.UnstableOffsetCommit) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("committed offset of %s/%d: %w", tp.topic, tp.partition, err)
		}
		if o, ok := offs.Lookup(tp.topic, tp.partition); ok && o.Err == nil && o.At >= 0 {
			at := o.At
			return &at, nil
		}
		break
	}
	if strings.EqualFold(r.cfg.ResetOffset, "earliest") {
		zero := int64(0)
		return &zero, nil
	}
	return nil, nil
}
