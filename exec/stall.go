package exec

import (
	"log/slog"
	"sort"
	"sync"
	"time"
)

// What a stalled partition waits on, as the WARN, DESCRIBE and the API
// name it.
const (
	// WaitRebalance: the group has not handed the partition to a member
	// that processes it (a dead member still holds it, or a rebalance
	// callback does not return).
	WaitRebalance = "rebalance"
	// WaitTransaction: a commit (an exactly-once transaction, or
	// at-least-once's flush and offset commit) does not finish, or the
	// input's last stable offset is held back by a transaction another
	// producer left open.
	WaitTransaction = "transaction"
	// WaitFetch: the consumer receives nothing from the partition
	// although it has records to read.
	WaitFetch = "fetch"
	// WaitProduce: the loop is blocked handing records to the producer
	// (its buffer is full and the broker does not take them).
	WaitProduce = "produce"
	// WaitRestore: the partition's state is being restored from its
	// changelog.
	WaitRestore = "restore"
	// WaitRegistry: a record's schema cannot be fetched from the Schema
	// Registry; the partition reads it again after a backoff.
	WaitRegistry = "schema registry"
)

// DefaultStallTimeout is sluice.stall.timeout's default.
const DefaultStallTimeout = 30 * time.Second

// Stall describes one input partition of this instance that has records
// to process but has made no committed progress for the stall timeout.
type Stall struct {
	Query       string
	SubTopology int
	Topic       string
	Partition   int32
	// WaitingOn is one of WaitRebalance, WaitTransaction, WaitFetch,
	// WaitProduce, WaitRestore, WaitRegistry.
	WaitingOn string
	// Lag is the partition's records not yet committed, as of the last
	// fetch that answered for it (or the group's view from the broker).
	Lag int64
	// Since is the last committed progress, or when input was first seen
	// after the partition had caught up (input waits from its arrival).
	Since time.Time
}

// loop phases: what the runner's loop is doing right now. A phase other
// than polling that lasts past the stall timeout is what stalled
// partitions wait on.
const (
	phasePoll      = WaitFetch
	phaseProcess   = WaitProduce
	phaseCommit    = WaitTransaction
	phaseRestore   = WaitRestore
	phaseRebalance = WaitRebalance
)

// partitionProgress is what the watch knows of one assigned input
// partition.
type partitionProgress struct {
	// next is the offset after the last record (or transaction marker)
	// consumed; committed the same at the last successful commit; -1
	// before the first fetch answered.
	next, committed int64
	// end is the partition's end (high watermark) and stable its last
	// stable offset, as the last fetch reported them; -1 when unknown.
	end, stable int64
	// progressed is when committed last moved, the partition was
	// assigned, or input was first seen after it had caught up; heard is
	// when a fetch last returned records of it.
	progressed, heard time.Time
}

// caughtUp reports whether the partition is known to have nothing left
// to commit: both its end and its position are known and meet.
func (p *partitionProgress) caughtUp() bool {
	return p.end >= 0 && (p.committed >= 0 || p.next >= 0) && p.lag() == 0
}

// update applies what the loop or the broker reported of the partition.
// A caught-up partition has made all the progress it could, so input that
// arrives after it waits from when it was first seen, not from the last
// commit: after a quiet spell longer than the stall timeout, that commit
// is old, and the first record of a burst would otherwise count as
// stalled until the next commit took it.
func (p *partitionProgress) update(now time.Time, apply func()) {
	was := p.caughtUp()
	apply()
	if was && p.lag() > 0 {
		p.progressed = now
	}
}

func (p *partitionProgress) lag() int64 {
	if p.end < 0 {
		return 0
	}
	pos := p.committed
	if pos < 0 {
		pos = p.next
	}
	if pos < 0 {
		return 0
	}
	return max(p.end-pos, 0)
}

// stallWatch tells stalled partitions apart from busy or idle ones. The
// runner's loop reports what it does (phase), what each fetch showed and
// each commit made durable; a goroutine of its own checks every second,
// so a loop blocked in a call that never returns is seen too.
type stallWatch struct {
	query   string
	timeout time.Duration
	log     *slog.Logger
	subOf   func(topic string) int
	// groupLag, when set, asks the broker for the group's lag of the
	// query's inputs (partition → records) when this instance owns no
	// partition at all: input waiting for a rebalance shows nowhere else.
	groupLag func() (map[topicPartition]int64, error)
	// ends asks the broker for partitions' end and last stable offsets.
	// A fetch reports them only along with records, so a partition that
	// returns none (its input held behind an open transaction, or simply
	// idle) is asked about this way, at most every half timeout.
	ends      func(tps []topicPartition) (map[topicPartition]partitionEnds, error)
	endsAsked time.Time
	// spawn runs the broker questions (go, but synchronous in tests);
	// askingEnds and askingGroup say one is under way.
	spawn                   func(func())
	askingEnds, askingGroup bool

	mu         sync.Mutex
	phase      string
	phaseSince time.Time
	parts      map[topicPartition]*partitionProgress
	restoring  map[topicPartition]bool
	registry   map[topicPartition]bool
	// paused: the query is paused (PAUSE), and waits on no one.
	paused bool
	// unowned tracks, while this instance owns nothing, the group's lag
	// and since when it has not moved.
	unowned      map[topicPartition]int64
	unownedSince time.Time
	started      time.Time
	stalled      map[topicPartition]Stall
}

func newStallWatch(query string, timeout time.Duration, log *slog.Logger, subOf func(string) int) *stallWatch {
	now := time.Now()
	return &stallWatch{query: query, timeout: timeout, log: log, subOf: subOf, phase: phasePoll, phaseSince: now, started: now,
		spawn: func(f func()) { go f() },
		parts: map[topicPartition]*partitionProgress{}, restoring: map[topicPartition]bool{}, registry: map[topicPartition]bool{}, stalled: map[topicPartition]Stall{}}
}

// enter records that the loop starts a phase; it returns the phase it
// left, for a nested phase to restore.
func (w *stallWatch) enter(phase string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev := w.phase
	if phase != w.phase {
		w.phase, w.phaseSince = phase, time.Now()
	}
	return prev
}

func (w *stallWatch) assigned(tps []topicPartition) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for _, tp := range tps {
		if _, ok := w.parts[tp]; !ok {
			w.parts[tp] = &partitionProgress{next: -1, committed: -1, end: -1, stable: -1, progressed: now, heard: now}
		}
	}
	w.unowned = nil
}

func (w *stallWatch) revoked(tps []topicPartition) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, tp := range tps {
		delete(w.parts, tp)
		w.clear(tp)
	}
}

// waitRegistry says whether tp waits for the Schema Registry.
func (w *stallWatch) waitRegistry(tp topicPartition, on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if on {
		w.registry[tp] = true
	} else {
		delete(w.registry, tp)
	}
}

func (w *stallWatch) restore(tp topicPartition, on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if on {
		w.restoring[tp] = true
	} else {
		delete(w.restoring, tp)
	}
}

// fetched records what a fetch showed of a partition: the offsets of its
// first record and after its last (-1 if it returned none), and the
// partition's end and last stable offsets.
func (w *stallWatch) fetched(tp topicPartition, first, next, end, stable int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.parts[tp]
	if p == nil {
		return
	}
	now := time.Now()
	p.update(now, func() {
		if next >= 0 {
			p.heard = now
			if p.committed < 0 && p.next < 0 {
				// The first records after an assignment start where the
				// group's committed offset is.
				p.committed = first
			}
			p.next = next
		}
		if end >= 0 {
			p.end = end
		}
		if stable >= 0 {
			p.stable = stable
		}
	})
}

// known reports whether the watch knows where the partition's consumer
// stands.
func (w *stallWatch) known(tp topicPartition) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.parts[tp]
	return p == nil || p.next >= 0 || p.committed >= 0
}

// position sets where a partition's consumer starts when no record has
// been read from it yet: its committed offset.
func (w *stallWatch) position(tp topicPartition, committed int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.parts[tp]; p != nil && p.next < 0 && p.committed < 0 {
		p.committed, p.next = committed, committed
	}
}

// committing returns the positions a commit about to start makes durable.
func (w *stallWatch) committing() map[topicPartition]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[topicPartition]int64, len(w.parts))
	for tp, p := range w.parts {
		if p.next >= 0 {
			out[tp] = p.next
		}
	}
	return out
}

// committed records a successful commit of the positions committing
// returned.
func (w *stallWatch) committed(pos map[topicPartition]int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for tp, off := range pos {
		p := w.parts[tp]
		if p == nil || off <= p.committed {
			continue
		}
		p.committed, p.progressed = off, now
		w.clear(tp)
	}
}

// pause tells the watch the query is paused or resumed: a paused query
// is not stalled, and its time without progress counts from its resume.
func (w *stallWatch) pause(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = on
	now := time.Now()
	for tp, p := range w.parts {
		p.progressed = now
		w.clear(tp)
	}
	w.phaseSince, w.unownedSince = now, now
}

// clear ends a partition's stall; w.mu is held.
func (w *stallWatch) clear(tp topicPartition) {
	if s, ok := w.stalled[tp]; ok {
		delete(w.stalled, tp)
		w.log.Info("query progressing again", "query", w.query, "subtopology", s.SubTopology, "topic", tp.topic, "partition", tp.partition,
			"stalled_for", time.Since(s.Since).Round(time.Millisecond))
	}
}

// check finds the partitions stalled now, logging one WARN for each
// partition that has just stalled.
func (w *stallWatch) check(now time.Time) {
	w.mu.Lock()
	if w.paused {
		w.mu.Unlock()
		return
	}
	owned := len(w.parts)
	var silent []topicPartition
	if w.ends != nil && !w.askingEnds && now.Sub(w.endsAsked) >= w.timeout/2 {
		for tp, p := range w.parts {
			if now.Sub(p.heard) >= w.timeout/2 {
				silent = append(silent, tp)
			}
		}
	}
	askGroup := owned == 0 && w.groupLag != nil && !w.askingGroup && now.Sub(w.started) >= w.timeout
	if len(silent) > 0 {
		w.askingEnds, w.endsAsked = true, now
	}
	w.askingGroup = w.askingGroup || askGroup
	w.mu.Unlock()
	// The broker is asked in the background: a broker that does not
	// answer (the very thing that may stall a query) must not hold the
	// checks back.
	if len(silent) > 0 {
		w.spawn(func() {
			ends, err := w.ends(silent)
			w.mu.Lock()
			defer w.mu.Unlock()
			w.askingEnds = false
			if err != nil {
				return
			}
			answered := time.Now()
			for tp, e := range ends {
				if p := w.parts[tp]; p != nil {
					p.update(answered, func() { p.end, p.stable = e.end, e.stable })
				}
			}
		})
	}
	if askGroup {
		w.spawn(func() {
			group, err := w.groupLag()
			w.mu.Lock()
			defer w.mu.Unlock()
			w.askingGroup = false
			if err == nil && len(w.parts) == 0 {
				w.observeGroup(group, now)
			}
		})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	loopStuck := w.phase != phasePoll && now.Sub(w.phaseSince) >= w.timeout
	for tp, p := range w.parts {
		lag := p.lag()
		if lag == 0 || now.Sub(p.progressed) < w.timeout {
			if lag == 0 {
				w.clear(tp)
			}
			continue
		}
		waiting := WaitFetch
		switch {
		case w.restoring[tp]:
			waiting = WaitRestore
		case w.registry[tp]:
			waiting = WaitRegistry
		case loopStuck:
			waiting = w.phase
		case p.stable >= 0 && p.stable < p.end && p.next >= p.stable:
			// Everything up to the last stable offset is read: the rest
			// sits behind a transaction that has not ended.
			waiting = WaitTransaction
		case p.next > p.committed:
			// Records are read and processed but their commit does not
			// go through (aborted transactions, failed offset commits).
			waiting = WaitTransaction
		}
		w.report(tp, Stall{Query: w.query, SubTopology: w.subOf(tp.topic), Topic: tp.topic, Partition: tp.partition,
			WaitingOn: waiting, Lag: lag, Since: p.progressed})
	}
	if owned > 0 {
		w.unowned = nil
		return
	}
	// This instance owns nothing. Input the group has not committed, and
	// whose commits do not move, waits for a rebalance to hand it to a
	// member that works (this one, once a dead member's session ends).
	if w.unowned == nil || now.Sub(w.unownedSince) < w.timeout {
		return
	}
	for tp, lag := range w.unowned {
		if lag > 0 {
			w.report(tp, Stall{Query: w.query, SubTopology: w.subOf(tp.topic), Topic: tp.topic, Partition: tp.partition,
				WaitingOn: WaitRebalance, Lag: lag, Since: w.unownedSince})
		}
	}
}

// observeGroup takes the broker's answer about the group while this
// instance owns nothing; w.mu is held. Lag that changed since the last
// answer starts the clock again.
func (w *stallWatch) observeGroup(group map[topicPartition]int64, at time.Time) {
	if w.unowned != nil && sameLag(w.unowned, group) {
		return
	}
	w.unowned, w.unownedSince = group, at
	for tp := range w.stalled {
		w.clear(tp)
	}
}

// partitionEnds are a partition's end (high watermark) and last stable
// offsets.
type partitionEnds struct{ end, stable int64 }

func sameLag(a, b map[topicPartition]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for tp, n := range a {
		if m, ok := b[tp]; !ok || m != n {
			return false
		}
	}
	return true
}

// report records a stall; w.mu is held. The WARN is logged once per
// stall, and again only if what it waits on changes.
func (w *stallWatch) report(tp topicPartition, s Stall) {
	prev, ok := w.stalled[tp]
	w.stalled[tp] = s
	if ok && prev.WaitingOn == s.WaitingOn {
		return
	}
	w.log.Warn("query stalled: input waits but nothing is committed", "query", s.Query, "subtopology", s.SubTopology,
		"topic", s.Topic, "partition", s.Partition, "waiting_on", s.WaitingOn, "lag", s.Lag,
		"no_progress_for", time.Since(s.Since).Round(time.Second))
}

// stalls returns the partitions stalled as of the last check, sorted.
func (w *stallWatch) stalls() []Stall {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Stall, 0, len(w.stalled))
	for _, s := range w.stalled {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		return partitionLess(out[i].Topic, out[i].Partition, out[j].Topic, out[j].Partition)
	})
	return out
}

// run checks every interval until done is closed.
func (w *stallWatch) run(done <-chan struct{}) {
	interval := min(time.Second, max(w.timeout/4, 10*time.Millisecond))
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			w.check(now)
		}
	}
}
