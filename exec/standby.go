package exec

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TaskStandby is the state of a partition this instance does not own but
// keeps a warm copy of: its stores follow their changelogs into local
// state, so that when the partition moves here its restore replays only
// what was written since the last catch-up.
const TaskStandby TaskState = "STANDBY"

// standbyInterval is how often standby stores catch up with their
// changelogs. A takeover replays at most about this much of the owner's
// writes, plus what it wrote since its last commit.
const standbyInterval = time.Second

// SetStandbys replaces the input partitions (topic → partitions) whose
// state this runner keeps warm. Partitions of stateless sub-topologies
// and partitions assigned here are ignored: an assigned partition has its
// task, and a standby must never compete with it for a store. A standby
// consumes only changelogs, never the input, so it commits no offsets,
// and it is no task: ordinary pull queries (which only read partitions
// this instance owns and runs) never read it; standby reads do, through
// StandbyReadable.
func (r *KafkaRunner) SetStandbys(parts map[string][]int32) {
	want := map[topicPartition]bool{}
	for topic, ps := range parts {
		sub := r.topo.sub(topic)
		if sub == nil || !hasStores(sub) {
			continue
		}
		for _, p := range ps {
			want[topicPartition{topic, p}] = true
		}
	}
	r.mu.Lock()
	changed := len(want) != len(r.standby)
	for tp := range want {
		if !r.standby[tp] {
			changed = true
		}
	}
	r.standby = want
	for tp := range r.standbyCaught {
		if !want[tp] {
			delete(r.standbyCaught, tp)
		}
	}
	r.mu.Unlock()
	if changed {
		select {
		case r.standbyKick <- struct{}{}:
		default:
		}
		r.partitionsChanged()
	}
}

// Standbys lists the partitions this runner keeps standby state for and
// does not own, with State TaskStandby, sorted by topic and partition.
func (r *KafkaRunner) Standbys() []TaskInfo {
	r.mu.Lock()
	out := make([]TaskInfo, 0, len(r.standby))
	for tp := range r.standby {
		if r.ownsLocked(tp) {
			continue
		}
		out = append(out, TaskInfo{Topic: tp.topic, Partition: tp.partition, State: TaskStandby})
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		return partitionLess(out[i].Topic, out[i].Partition, out[j].Topic, out[j].Partition)
	})
	return out
}

// ownsLocked reports whether tp is assigned here or has a task; r.mu held.
func (r *KafkaRunner) ownsLocked(tp topicPartition) bool {
	_, assigned := r.assigned[tp]
	_, task := r.tasks[tp]
	return assigned || task
}

// standbyLoop brings every standby store partition up to its changelog's
// end every standbyInterval, and at once when the set changes.
func (r *KafkaRunner) standbyLoop(ctx context.Context) {
	defer close(r.standbyDone)
	tick := time.NewTicker(standbyInterval)
	defer tick.Stop()
	for {
		for _, ti := range r.Standbys() {
			if ctx.Err() != nil {
				return
			}
			if err := r.catchUp(ctx, topicPartition{ti.Topic, ti.Partition}); err != nil && ctx.Err() == nil {
				// A standby is an optimization: the partition's owner is
				// unaffected, and a takeover restores whatever is missing.
				r.cfg.Log.Warn("standby catch-up failed", "query", r.topo.QueryID, "topic", ti.Topic, "partition", ti.Partition, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-r.standbyKick:
		}
	}
}

// catchUp replays the new changelog records of one standby partition's
// stores into local state, with their checkpoint, as a restore does.
// standbyMu keeps it and a task's restore of the same store apart: a
// task's creation waits for a catch-up under way, and a catch-up that
// starts after the partition was assigned does nothing.
func (r *KafkaRunner) catchUp(ctx context.Context, tp topicPartition) (err error) {
	r.standbyMu.Lock()
	defer r.standbyMu.Unlock()
	r.mu.Lock()
	skip := !r.standby[tp] || r.ownsLocked(tp)
	if skip {
		// State an owner left behind is no standby's until it caught up.
		delete(r.standbyCaught, tp)
		delete(r.standbyExpiry, tp)
	}
	r.mu.Unlock()
	if skip {
		return nil
	}
	defer func() {
		if err == nil {
			r.mu.Lock()
			if r.standby[tp] && !r.ownsLocked(tp) {
				r.standbyCaught[tp] = true
			}
			r.mu.Unlock()
		}
	}()
	sub := r.topo.sub(tp.topic)
	var applied int64
	for _, n := range sub.Nodes {
		for _, name := range n.StoreNames() {
			spec, err := r.topo.store(name)
			if err != nil {
				return err
			}
			s := r.cfg.DB.Store(name, tp.partition)
			log, err := spec.changelog(tp.partition)
			if err != nil {
				return fmt.Errorf("standby %s/%d: %w", name, tp.partition, err)
			}
			recs, err := s.Restore(ctx, r.cfg.ConnOpts, log, nil)
			if err != nil {
				return fmt.Errorf("standby %s/%d: %w", name, tp.partition, err)
			}
			r.Metrics.StandbyRecords.Add(recs)
			applied += recs
		}
	}
	return r.expireStandby(sub, tp, applied)
}

// standbyExpiry is when a standby partition's state past retention was
// last dropped, and whether records came since.
type standbyExpiry struct {
	last    time.Time
	pending bool
}

// expireStandby drops the state past retention a standby partition's
// catch-ups restored (expireRestored): at its first catch-up, then at
// most every standbyExpiryEvery while records come. The caller holds
// standbyMu.
func (r *KafkaRunner) expireStandby(sub *SubTopology, tp topicPartition, applied int64) error {
	e, seen := r.standbyExpiry[tp]
	e.pending = e.pending || applied > 0
	if seen && (!e.pending || time.Since(e.last) < standbyExpiryEvery) {
		r.standbyExpiry[tp] = e
		return nil
	}
	n, err := expireRestored(r.topo, sub, r.cfg.DB, tp.partition, r.cfg.Log)
	if err != nil {
		return fmt.Errorf("standby %s/%d: %w", tp.topic, tp.partition, err)
	}
	if n > 0 {
		r.cfg.Log.Debug("standby dropped expired state", "query", r.topo.QueryID, "topic", tp.topic, "partition", tp.partition, "windows", n)
	}
	r.standbyExpiry[tp] = standbyExpiry{last: time.Now()}
	return nil
}

// ErrStandbyUnavailable is the kind of StandbyReadable's refusals: the
// partition is no standby here, has not caught up yet, or lags too far.
var ErrStandbyUnavailable = errors.New("standby not readable")

// StandbyReadable checks that pull queries may read the stores of
// partition p of topic from this instance's standby state: p is a standby
// here (not owned), its stores caught up with their changelogs at least
// once, and, when maxLag >= 0, none lags its changelog's last stable
// offset by more than maxLag offsets. What a standby holds is what its
// catch-ups applied, read read_committed: a prefix of the owner's
// committed writes, never an aborted transaction's.
func (r *KafkaRunner) StandbyReadable(ctx context.Context, topic string, p int32, maxLag int64) error {
	tp := topicPartition{topic, p}
	r.mu.Lock()
	standby := r.standby[tp] && !r.ownsLocked(tp)
	caught := r.standbyCaught[tp]
	// r.cl was set before the standby loop that marked tp caught started.
	cl := r.cl
	r.mu.Unlock()
	switch {
	case !standby:
		return fmt.Errorf("%w: partition %d of %s (query %s) has no standby here", ErrStandbyUnavailable, p, topic, r.topo.QueryID)
	case !caught || cl == nil:
		return fmt.Errorf("%w: the standby of partition %d of %s (query %s) has not caught up with its changelog yet", ErrStandbyUnavailable, p, topic, r.topo.QueryID)
	case maxLag < 0:
		return nil
	}
	r.standbyMu.Lock()
	defer r.standbyMu.Unlock()
	sub := r.topo.sub(topic)
	adm := kadm.NewClient(cl)
	for _, n := range sub.Nodes {
		for _, name := range n.StoreNames() {
			spec, err := r.topo.store(name)
			if err != nil {
				return err
			}
			log, err := spec.changelog(p)
			if err != nil {
				return fmt.Errorf("standby %s/%d: %w", name, p, err)
			}
			lag, err := r.cfg.DB.Store(name, p).Lag(ctx, adm, log)
			if err != nil {
				return fmt.Errorf("%w: standby %s/%d: %w", ErrStandbyUnavailable, name, p, err)
			}
			if lag > maxLag {
				return fmt.Errorf("%w: the standby of partition %d of %s (query %s) lags its changelog by %d offsets, more than the %d allowed", ErrStandbyUnavailable, p, topic, r.topo.QueryID, lag, maxLag)
			}
		}
	}
	return nil
}
