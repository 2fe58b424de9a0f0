package exec

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Metrics are a query's counters. They are updated on the hot path with
// atomics; exporters (the server's /metrics) read them.
type Metrics struct {
	RecordsIn   atomic.Int64
	RecordsOut  atomic.Int64
	LateDropped atomic.Int64
	// RestoredRecords and RestoreNanos add up the state restores of the
	// query's tasks: records replayed from changelogs and time spent.
	RestoredRecords atomic.Int64
	RestoreNanos    atomic.Int64
	// StandbyRecords counts the changelog records standby stores
	// replayed (exec/standby.go); they are not restores.
	StandbyRecords atomic.Int64
	// Expired counts state entries deleted by retention: keys of a
	// non-windowed aggregate WITH (RETENTION=…), and windows past their
	// retention.
	Expired atomic.Int64

	// expiryVisited counts index entries read by key expiry scans, so
	// tests can check a scan reads only what it deletes plus one.
	expiryVisited atomic.Int64

	// Lag is the records the query's consumer is behind the end of its
	// input partitions on this instance, as of the last fetch.
	Lag atomic.Int64

	mu     sync.Mutex
	errors map[string]*atomic.Int64
	// lateness is measured per source topic (see Lateness).
	lateness map[string]*Lateness
	restores map[string]StoreRestore
	// partRestores are the records restored per store and partition.
	partRestores map[string]map[int32]int64
	// operatorRows counts the rows each operator of the main chain took
	// in, per sub-topology, step and partition: one task owns each
	// counter, so tasks running in parallel never write the same one.
	operatorRows map[operatorKey]*atomic.Int64
}

type operatorKey struct{ sub, step, partition int }

// operatorCounter is the counter of rows into step of sub-topology sub in
// the task of partition; a task made again for the partition (after a
// rebalance) goes on counting where the last one stopped.
func (m *Metrics) operatorCounter(sub, step int, partition int32) *atomic.Int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.operatorRows == nil {
		m.operatorRows = map[operatorKey]*atomic.Int64{}
	}
	k := operatorKey{sub, step, int(partition)}
	c := m.operatorRows[k]
	if c == nil {
		c = new(atomic.Int64)
		m.operatorRows[k] = c
	}
	return c
}

// OperatorRows is how many rows step of sub-topology sub has taken in on
// this instance, over its partitions (from the sub-topology's main input;
// a join's second input is not counted here).
func (m *Metrics) OperatorRows(sub, step int) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for k, c := range m.operatorRows {
		if k.sub == sub && k.step == step {
			n += c.Load()
		}
	}
	return n
}

// StoreRestore adds up the restores of one state store's partitions.
type StoreRestore struct {
	// Count is how many store partition restores finished: a task that
	// keeps its partition through a rebalance restores nothing again.
	Count   int64
	Records int64
	Took    time.Duration
}

// AddRestore records one finished restore of a store partition.
func (m *Metrics) AddRestore(store string, partition int32, records int64, took time.Duration) {
	m.RestoredRecords.Add(records)
	m.RestoreNanos.Add(int64(took))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.restores == nil {
		m.restores = map[string]StoreRestore{}
		m.partRestores = map[string]map[int32]int64{}
	}
	r := m.restores[store]
	r.Count++
	r.Records += records
	r.Took += took
	m.restores[store] = r
	if m.partRestores[store] == nil {
		m.partRestores[store] = map[int32]int64{}
	}
	m.partRestores[store][partition] += records
}

// RestoredRecordsOf is how many changelog records the restores of one
// store partition replayed on this instance: a partition that moves
// here with a warm standby copy replays only the tail.
func (m *Metrics) RestoredRecordsOf(store string, partition int32) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.partRestores[store][partition]
}

// Restores returns the restore totals by store.
func (m *Metrics) Restores() map[string]StoreRestore {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]StoreRestore, len(m.restores))
	for k, v := range m.restores {
		out[k] = v
	}
	return out
}

// Lateness returns how late the records of topic arrived at this
// query's tasks, or nil when the query has read none.
func (m *Metrics) Lateness(topic string) *Lateness {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lateness[topic]
}

// latenessOf returns the lateness of topic, creating it.
func (m *Metrics) latenessOf(topic string) *Lateness {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lateness == nil {
		m.lateness = map[string]*Lateness{}
	}
	l, ok := m.lateness[topic]
	if !ok {
		l = &Lateness{}
		m.lateness[topic] = l
	}
	return l
}

// Error kinds counted in Metrics.
const (
	ErrKindDeserialize = "deserialize"
	ErrKindTimestamp   = "timestamp"
	ErrKindSerialize   = "serialize"
	ErrKindProcessing  = "processing"
	ErrKindCommit      = "commit"
	// ErrKindFunction counts records a user-defined function failed on
	// (a trap, a timeout, out of memory, a bad return): skipped, like a
	// record that does not decode.
	ErrKindFunction = "function"
	// ErrKindMissingColumn counts records read with a column absent: the
	// row goes on with NULL there, as in ksqlDB, but it is counted.
	ErrKindMissingColumn = "missing_column"
)

// CountError adds one to the error counter of the given kind.
func (m *Metrics) CountError(kind string) int64 {
	m.mu.Lock()
	if m.errors == nil {
		m.errors = map[string]*atomic.Int64{}
	}
	c, ok := m.errors[kind]
	if !ok {
		c = new(atomic.Int64)
		m.errors[kind] = c
	}
	m.mu.Unlock()
	return c.Add(1)
}

// Errors returns the error counts by kind.
func (m *Metrics) Errors() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int64, len(m.errors))
	for k, c := range m.errors {
		out[k] = c.Load()
	}
	return out
}

// ErrorKinds lists the kinds with counts, sorted.
func (m *Metrics) ErrorKinds() []string {
	errs := m.Errors()
	out := make([]string, 0, len(errs))
	for k := range errs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
