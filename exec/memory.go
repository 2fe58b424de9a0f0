package exec

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/sluice-sql/sluice/state"
)

// MemoryRunner drives topologies without a broker: records sent to a
// topic go to every task reading it, and records the tasks produce are
// collected and routed on to tasks reading their topics, in order, the
// way Kafka Streams' test driver works. Every topic has one partition.
// State still lives in real Badger stores; commits happen after each
// input record so each record's effects reach the store.
type MemoryRunner struct {
	DB  *state.DB
	Log *slog.Logger

	topos    []*Topology
	tasks    map[string][]*Task // by source topic
	metrics  map[string]*Metrics
	offsets  map[string]int64
	queue    []*Record
	produced []*Record
	// changelogs keep what each store committed, in order, standing in
	// for changelog topics so Restart can rebuild wiped state from them.
	changelogs map[string]*memChangelog
	// clock is the runner's wall clock. It stands still unless Idle
	// moves it, so a test says exactly when partitions become idle.
	clock time.Time
}

type memChangelog struct {
	changes []state.Change
	src     map[string]int64
}

// NewMemoryRunner returns an empty runner over db.
func NewMemoryRunner(db *state.DB, log *slog.Logger) *MemoryRunner {
	if log == nil {
		log = slog.Default()
	}
	return &MemoryRunner{DB: db, Log: log, tasks: map[string][]*Task{}, metrics: map[string]*Metrics{}, offsets: map[string]int64{}, changelogs: map[string]*memChangelog{}, clock: time.Now()}
}

// Add starts a topology: one task per sub-topology on partition 0.
func (m *MemoryRunner) Add(topo *Topology) error {
	if err := m.startTasks(topo); err != nil {
		return err
	}
	m.topos = append(m.topos, topo)
	return nil
}

func (m *MemoryRunner) startTasks(topo *Topology) error {
	met := m.metrics[topo.QueryID]
	if met == nil {
		met = &Metrics{}
		m.metrics[topo.QueryID] = met
	}
	for _, sub := range topo.Subs {
		t, err := NewTask(topo, sub, 0, m.DB, m, met, m.Log)
		if err != nil {
			return err
		}
		t.setClock(m.clock)
		if err := t.Open(); err != nil {
			return err
		}
		for _, in := range sub.Inputs() {
			m.tasks[in.Topic] = append(m.tasks[in.Topic], t)
		}
	}
	return nil
}

// Restart stops every task and starts them again from their stores, as
// a restarted process would. With wipe, the stores are emptied first and
// rebuilt from what was committed to their changelogs, as on a machine
// that lost its data directory.
func (m *MemoryRunner) Restart(wipe bool) error {
	closed := map[*Task]bool{}
	for topic, ts := range m.tasks {
		for _, t := range ts {
			if closed[t] {
				continue // a join's task reads several topics
			}
			closed[t] = true
			if err := t.Close(); err != nil {
				return err
			}
			if wipe {
				for _, s := range t.stores {
					if err := m.rebuild(s); err != nil {
						return err
					}
				}
			}
		}
		delete(m.tasks, topic)
	}
	for _, topo := range m.topos {
		if err := m.startTasks(topo); err != nil {
			return err
		}
	}
	return nil
}

func (m *MemoryRunner) rebuild(s taskStore) error {
	if err := s.store.Wipe(); err != nil {
		return err
	}
	log := m.changelogs[s.spec.Changelog]
	if log == nil {
		return nil
	}
	for _, c := range log.changes {
		if c.Delete {
			s.store.Delete(c.Key)
		} else {
			s.store.Put(c.Key, c.Value)
		}
	}
	return s.store.Commit(state.Checkpoint{ChangelogOffset: int64(len(log.changes)), SourceOffsets: log.src})
}

// Remove stops a topology's tasks.
func (m *MemoryRunner) Remove(queryID string) {
	for topic, ts := range m.tasks {
		kept := ts[:0]
		for _, t := range ts {
			if t.Topo.QueryID == queryID {
				_ = t.Close()
				continue
			}
			kept = append(kept, t)
		}
		m.tasks[topic] = kept
	}
}

// Metrics returns a query's counters.
func (m *MemoryRunner) Metrics(queryID string) *Metrics { return m.metrics[queryID] }

// Produce implements Output: records from tasks join the queue.
func (m *MemoryRunner) Produce(rec *Record) {
	cp := *rec
	cp.Partition = 0
	m.queue = append(m.queue, &cp)
}

// Send delivers rec to its topic and processes everything that follows
// from it. Records produced along the way are returned in order.
func (m *MemoryRunner) Send(rec Record) ([]*Record, error) {
	m.queue = append(m.queue, &rec)
	return m.drain(&rec)
}

// drain delivers queued records until none is left, returning those the
// tasks produced (everything but input, the record sent from outside).
func (m *MemoryRunner) drain(input *Record) ([]*Record, error) {
	var out []*Record
	for len(m.queue) > 0 {
		r := m.queue[0]
		m.queue = m.queue[1:]
		r.Partition = 0
		r.Offset = m.offsets[r.Topic]
		m.offsets[r.Topic]++
		if r != input {
			out = append(out, r)
		}
		for _, t := range m.tasks[r.Topic] {
			t.setClock(m.clock)
			err := t.Process(r)
			t.FlushBatch()
			if err != nil {
				return out, err
			}
			if err := m.commit(t); err != nil {
				return out, err
			}
		}
	}
	m.produced = append(m.produced, out...)
	return out, nil
}

// AdvanceAll moves every task's stream time to at least ts, closing
// windows as if a record with that time had arrived, and delivers what
// that produces.
func (m *MemoryRunner) AdvanceAll(ts int64) ([]*Record, error) {
	seen := map[*Task]bool{}
	for _, ts2 := range m.tasks {
		for _, t := range ts2 {
			if seen[t] {
				continue
			}
			seen[t] = true
			if ts > t.tc.StreamTime {
				t.tc.StreamTime = ts
			}
			if err := t.head.AdvanceTime(&t.tc); err != nil {
				return nil, err
			}
		}
	}
	return m.drain(nil)
}

// Idle lets d of wall-clock time pass without input. Tasks of
// topologies with an IdleTimeout that have now had no record for that
// long move their stream time on with the clock (Topology.IdleTimeout);
// what that produces is delivered and returned.
func (m *MemoryRunner) Idle(d time.Duration) ([]*Record, error) {
	m.clock = m.clock.Add(d)
	topics := make([]string, 0, len(m.tasks))
	for topic := range m.tasks {
		topics = append(topics, topic)
	}
	sort.Strings(topics) // outputs in the same order on every run
	seen := map[*Task]bool{}
	for _, topic := range topics {
		for _, t := range m.tasks[topic] {
			if seen[t] {
				continue
			}
			seen[t] = true
			t.setClock(m.clock)
			ts, ok := t.idleTarget(t.Topo.IdleTimeout)
			if !ok {
				continue
			}
			if err := t.advanceIdle(ts); err != nil {
				return nil, err
			}
			if err := m.commit(t); err != nil {
				return nil, err
			}
		}
	}
	return m.drain(nil)
}

func (m *MemoryRunner) commit(t *Task) error {
	src := t.checkpointOffsets()
	for _, s := range t.stores {
		log := m.changelogs[s.spec.Changelog]
		if log == nil {
			log = &memChangelog{}
			m.changelogs[s.spec.Changelog] = log
		}
		log.changes = append(log.changes, s.store.Pending()...)
		log.src = src
		if err := s.store.Flush(context.Background(), nil, state.Changelog{Topic: s.spec.Changelog}, src); err != nil {
			return fmt.Errorf("commit %s: %w", s.spec.Name, err)
		}
	}
	return nil
}

// Produced returns every record produced so far.
func (m *MemoryRunner) Produced() []*Record { return m.produced }
