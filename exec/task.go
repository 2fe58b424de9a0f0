package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/state"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TaskState is the visible lifecycle state of a task.
type TaskState string

const (
	TaskRestoring TaskState = "RESTORING"
	TaskRunning   TaskState = "RUNNING"
	TaskClosed    TaskState = "CLOSED"
)

// Hot-key sampling (see Task.Process).
const (
	hotExact  = 4096
	hotSample = 8
)

// streamTimeKey stores a task's stream time in its state checkpoint, so
// a restarted task keeps closing windows where it left off.
const streamTimeKey = "#streamtime"

// Task runs one sub-topology for one input partition.
type Task struct {
	Topo      *Topology
	Sub       *SubTopology
	Partition int32
	State     TaskState

	head   Operator
	ops    []Operator
	tc     TaskContext
	stores []taskStore
	// inputs are the task's source topics (one, or several for a join),
	// the main one first; byTopic finds them.
	inputs  []*taskInput
	byTopic map[string]*taskInput
	// lastInput is the input of the last record (see input).
	lastInput *taskInput
	row       Row

	// clock is the wall-clock time of the batch being processed, set by
	// the runner: one clock reading per batch, not per record.
	clock time.Time
	// lastRecord is the clock when the last record arrived and idleFrom
	// the stream time just after it: an idle task's stream time is
	// idleFrom plus the wall-clock time since lastRecord.
	lastRecord time.Time
	idleFrom   int64
	// batchIn counts the records since the last FlushBatch.
	batchIn int64
	// behind lists further inputs whose partition was not yet assigned
	// when the task restored the tables they carry (see KafkaRunner).
	behind  map[string]bool
	hotSeen int64
	// hot tracks the busiest input keys: for an aggregation after a
	// repartition the input key is the group key.
	hot *HotKeys
	// copy, when set, produces the results of records the chain would
	// only rearrange (see recordCopy).
	copy *recordCopy
}

type taskStore struct {
	spec  StoreSpec
	store *state.Store
}

// taskInput is one source topic of a task.
type taskInput struct {
	spec *SourceSpec
	dec  *decoder
	// side is where a join's further input enters the chain (nil for the
	// main input, which enters at the head).
	side     SideOperator
	sideNum  int
	applied  int64 // next offset whose effect is not yet in state: replays below it are skipped
	next     int64 // next offset after the last processed record
	lateness *Lateness
	// late holds the lateness of the batch's records until FlushBatch
	// hands it to lateness in one lock, which tasks share per topic.
	late []int64
	// upstream holds, for a repartition source, the next upstream offset
	// per upstream partition whose effect is not yet applied.
	upstream map[upstreamSource]int64
	// index is the input's number among the task's inputs, stamped on
	// the repartition records it leads to (see upstreamSource).
	index int32
	// upPrefix marks this input's upstream offsets in checkpoints: the
	// main input's are "#up/<p>", a further input's "#up/<topic>/<p>".
	upPrefix string
}

// key names the input partition in checkpoints.
func (in *taskInput) key(partition int32) string {
	return in.spec.Topic + "/" + strconv.Itoa(int(partition))
}

// NewTask builds the operator chain of sub for one partition. Stores
// come from db; nothing is restored yet (see the runners).
func NewTask(topo *Topology, sub *SubTopology, partition int32, db *state.DB, out Output, m *Metrics, log *slog.Logger) (*Task, error) {
	t := &Task{Topo: topo, Sub: sub, Partition: partition, State: TaskRestoring, clock: time.Now(), hot: NewHotKeys(), byTopic: map[string]*taskInput{}}
	for _, src := range sub.Inputs() {
		dec, err := newDecoder(src)
		if err != nil {
			return nil, err
		}
		in := &taskInput{spec: src, dec: dec, applied: -1, next: -1, upPrefix: upstreamKeyPrefix, index: int32(len(t.inputs))}
		if len(t.inputs) > 0 {
			in.upPrefix = upstreamKeyPrefix + src.Topic + "/"
		}
		if !src.Dedupe {
			in.lateness = m.latenessOf(src.Topic)
		}
		t.inputs = append(t.inputs, in)
		t.byTopic[src.Topic] = in
	}
	t.tc = TaskContext{QueryID: topo.QueryID, Partition: partition, StreamTime: math.MinInt64, Out: out, Metrics: m, Log: log, stores: map[string]*state.Store{}}
	for _, n := range sub.Nodes {
		for _, name := range n.StoreNames() {
			spec, err := topo.store(name)
			if err != nil {
				return nil, err
			}
			s := db.Store(name, partition)
			t.stores = append(t.stores, taskStore{spec, s})
			t.tc.stores[name] = s
		}
	}
	var next Operator
	for i := len(sub.Nodes) - 1; i >= 0; i-- {
		op, err := sub.Nodes[i].New(next)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", topo.QueryID, err)
		}
		t.ops = append([]Operator{op}, t.ops...)
		next = op
		if m != nil {
			next = &countedOp{Operator: op, rows: m.operatorCounter(sub.ID, i, partition)}
		}
	}
	t.head = next
	if !topo.NoCopy {
		t.copy = newRecordCopy(sub)
	}
	for i, si := range sub.Sides {
		op, ok := t.ops[si.Node].(SideOperator)
		if !ok {
			return nil, fmt.Errorf("query %s: step %d takes no second input", topo.QueryID, si.Node+1)
		}
		t.inputs[i+1].side, t.inputs[i+1].sideNum = op, si.Side
	}
	// A chain that keeps nothing of the rows it is handed (an
	// aggregation, a projection into a sink) takes each input's rows in
	// the same columns, decoded anew; a join's side keeps them.
	if borrowsRows(t.head) {
		for _, in := range t.inputs {
			if in.side == nil {
				in.dec.reuse = true
			}
		}
	}
	return t, nil
}

// Stores lists the task's stores with their specs.
func (t *Task) Stores() []*state.Store {
	out := make([]*state.Store, len(t.stores))
	for i, s := range t.stores {
		out[i] = s.store
	}
	return out
}

// NextOffset is the next offset of topic the task has yet to process
// (-1 before the first record).
func (t *Task) NextOffset(topic string) int64 {
	if in := t.byTopic[topic]; in != nil {
		return in.next
	}
	return -1
}

// Open reads the checkpoint of restored state and opens the operators.
func (t *Task) Open() error {
	for _, s := range t.stores {
		cp, err := s.store.Checkpoint()
		if err != nil {
			return fmt.Errorf("query %s: checkpoint of %s: %w", t.Topo.QueryID, s.spec.Name, err)
		}
		for _, in := range t.inputs {
			if off, ok := cp.SourceOffsets[in.key(t.Partition)]; ok && (in.applied < 0 || off < in.applied) {
				in.applied = off
			}
		}
		if st, ok := cp.SourceOffsets[streamTimeKey]; ok && st > t.tc.StreamTime {
			t.tc.StreamTime = st
		}
		for k, off := range cp.SourceOffsets {
			for _, in := range t.inputs {
				p, ok := parseUpstreamKey(k, in.upPrefix)
				if !ok || !in.spec.Dedupe {
					continue
				}
				if in.upstream == nil {
					in.upstream = map[upstreamSource]int64{}
				}
				if cur, seen := in.upstream[p]; !seen || off < cur {
					in.upstream[p] = off
				}
			}
		}
	}
	for _, op := range t.ops {
		if err := op.Open(&t.tc); err != nil {
			return fmt.Errorf("query %s: open: %w", t.Topo.QueryID, err)
		}
	}
	t.lastRecord, t.idleFrom = t.clock, t.tc.StreamTime
	t.State = TaskRunning
	return nil
}

// setClock tells the task the wall-clock time of what it processes
// next, or of an idle check.
func (t *Task) setClock(now time.Time) { t.clock = now }

// FlushBatch adds what the records since the last flush counted to the
// query's shared metrics: once per batch, so that tasks processing in
// parallel do not contend for them on every record. Whoever drives a task
// with Process calls it after each batch (the runners do).
func (t *Task) FlushBatch() {
	if t.batchIn > 0 {
		t.tc.Metrics.RecordsIn.Add(t.batchIn)
		t.batchIn = 0
	}
	for _, in := range t.inputs {
		if len(in.late) > 0 {
			in.lateness.RecordAll(in.late, t.clock)
			in.late = in.late[:0]
		}
	}
}

// RegistryRetry is what Process returns for a record whose schema the
// Schema Registry cannot give now (format.ErrRegistryUnavailable): the
// record was not applied, and the runner reads it again, from Offset,
// after a backoff.
type RegistryRetry struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *RegistryRetry) Error() string {
	return fmt.Sprintf("%s/%d@%d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *RegistryRetry) Unwrap() error { return e.Err }

// Process runs one record through the chain. Bad records are counted,
// logged and skipped; only failures of the engine itself (state errors,
// a panicking operator) return an error, which fails the query. A record
// whose schema the registry cannot give now returns a *RegistryRetry.
func (t *Task) Process(rec *Record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if fe, ok := p.(*expr.FunctionError); ok {
				t.functionFailed(rec, fe)
				err = nil
				return
			}
			t.tc.Log.Error("operator panicked", "query", t.Topo.QueryID, "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("query %s: operator panicked at %s/%d@%d: %v", t.Topo.QueryID, rec.Topic, rec.Partition, rec.Offset, p)
		}
	}()
	in := t.input(rec.Topic)
	if in == nil {
		return fmt.Errorf("query %s: task %d does not read %s", t.Topo.QueryID, t.Partition, rec.Topic)
	}
	if rec.Offset < in.applied {
		return nil
	}
	prevNext := in.next
	in.next = rec.Offset + 1
	t.lastRecord, t.idleFrom = t.clock, t.tc.StreamTime
	if in.spec.Dedupe && !in.freshUpstream(rec) {
		return nil
	}
	t.tc.input, t.tc.inputIdx, t.tc.outSeq = rec, in.index, 0
	t.batchIn++
	// The first hotExact records are counted one by one, then one in
	// hotSample stands for hotSample: the shares stay right at an eighth
	// of the cost.
	if t.hotSeen++; t.hotSeen <= hotExact {
		t.hot.Add(rec.Key)
	} else if t.hotSeen%hotSample == 0 {
		t.hot.AddN(rec.Key, hotSample)
	}
	if t.copy != nil && in.side == nil {
		var ts int64
		if t.copy.copy(&t.tc, rec, &ts) {
			t.observe(in, ts)
			return nil
		}
	}
	if in.spec.Table && in.side == nil && rec.Key == nil && len(in.spec.KeyCols) > 0 && !in.spec.Enveloped() {
		// A table row needs a key to be a row: like a Kafka Streams
		// KTable source, a record with a null key is skipped. (A change
		// event's row image holds its key: its record key only
		// partitions.)
		t.observe(in, rec.Timestamp)
		return nil
	}
	t.row = Row{}
	if err := in.dec.decode(rec, &t.row); err != nil {
		if err == errNoChange {
			t.observe(in, rec.Timestamp)
			return nil
		}
		if errors.Is(err, format.ErrRegistryUnavailable) {
			// Not a bad record: its schema cannot be fetched now. The
			// record is not applied; the runner reads it again later.
			in.next, t.batchIn = prevNext, t.batchIn-1
			return &RegistryRetry{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset, Err: err}
		}
		kind := ErrKindDeserialize
		if de, ok := err.(*decodeError); ok {
			kind = de.kind
		}
		if kind == ErrKindTimestamp && in.spec.FailOnBadTimestamp {
			return fmt.Errorf("query %s: %w %s/%d@%d: %v", t.Topo.QueryID, ErrTimestampExtractor, rec.Topic, rec.Partition, rec.Offset, err)
		}
		if n := t.tc.Metrics.CountError(kind); n <= 1 || n%1000 == 0 {
			t.tc.Log.Warn("skipping bad record", "query", t.Topo.QueryID, "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "kind", kind, "err", err, "skipped_so_far", n)
		}
		if t.Topo.ErrorTopic != "" {
			t.tc.Out.Produce(deadLetter(t.Topo, rec, kind, err))
		}
		return nil
	}
	if t.row.Tombstone && !in.spec.Table && !in.spec.KeepNullValues {
		return nil
	}
	if missing := in.dec.missingColumns(); missing > 0 && !t.row.Tombstone {
		if n := t.tc.Metrics.CountError(ErrKindMissingColumn); n <= 1 || n%1000 == 0 {
			t.tc.Log.Warn("record lacks columns; reading them as NULL", "query", t.Topo.QueryID, "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "missing", missing, "so_far", n)
		}
	}
	t.observe(in, t.row.Ts)
	if in.side != nil {
		err = in.side.ProcessSide(&t.tc, in.sideNum, &t.row)
	} else {
		err = t.head.Process(&t.tc, &t.row)
	}
	if err != nil {
		return err
	}
	return t.head.AdvanceTime(&t.tc)
}

// functionFailed handles a record a user-defined function failed on as a
// bad record: counted, logged (the first and every thousandth time, with
// the function and the record's position) and dead-lettered where the
// query has an error topic. What the chain did before the call stands
// (an aggregate updated before a failing projection of its result); the
// record's output is not produced.
func (t *Task) functionFailed(rec *Record, fe *expr.FunctionError) {
	if n := t.tc.Metrics.CountError(ErrKindFunction); n <= 1 || n%1000 == 0 {
		t.tc.Log.Warn("skipping record a function failed on", "query", t.Topo.QueryID, "function", fe.Function, "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "err", fe.Err, "skipped_so_far", n)
	}
	if t.Topo.ErrorTopic != "" {
		t.tc.Out.Produce(deadLetter(t.Topo, rec, ErrKindFunction, fe))
	}
}

// input is the task input reading topic (nil: none). Records come in
// runs of one topic, whose name is the same string each time, so the
// last input answers most calls with a comparison of two equal pointers
// instead of a hash of the name.
func (t *Task) input(topic string) *taskInput {
	if in := t.lastInput; in != nil && in.spec.Topic == topic {
		return in
	}
	in := t.byTopic[topic]
	if in != nil {
		t.lastInput = in
	}
	return in
}

// observe moves stream time to a record's event time ts, or notes how
// late the record is.
func (t *Task) observe(in *taskInput, ts int64) {
	var late int64
	if ts > t.tc.StreamTime {
		t.tc.StreamTime = ts
	} else if t.tc.StreamTime != math.MinInt64 {
		late = t.tc.StreamTime - ts
		if late < 0 { // overflow: an event time near MinInt64
			late = math.MaxInt64
		}
	}
	if in.lateness != nil {
		in.late = append(in.late, late)
	}
	t.idleFrom = t.tc.StreamTime
}

// idleTarget is the stream time an idle task moves to: once no record
// has arrived for timeout of wall-clock time, the stream time at the
// last record plus the wall-clock time since, so windows close as if
// event time went on at the pace of the clock. ok is false while the
// task is not idle, has never seen an event time, or is already there.
func (t *Task) idleTarget(timeout time.Duration) (ts int64, ok bool) {
	if timeout <= 0 || t.State != TaskRunning || t.idleFrom == math.MinInt64 {
		return 0, false
	}
	idle := t.clock.Sub(t.lastRecord)
	if idle < timeout {
		return 0, false
	}
	ts = t.idleFrom + idle.Milliseconds()
	return ts, ts > t.tc.StreamTime
}

// advanceIdle moves stream time to ts and lets the operators act on it
// (EMIT FINAL windows close, state expires), as a record would. Like
// Process it turns an operator's panic into an error that fails the
// query.
func (t *Task) advanceIdle(ts int64) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if fe, ok := p.(*expr.FunctionError); ok {
				// No record to skip: the output being made (a closing
				// window's) is lost, counted and logged as a record's
				// would be.
				if n := t.tc.Metrics.CountError(ErrKindFunction); n <= 1 || n%1000 == 0 {
					t.tc.Log.Warn("skipping output a function failed on while advancing idle time", "query", t.Topo.QueryID, "function", fe.Function, "topic", t.Sub.Source.Topic, "partition", t.Partition, "err", fe.Err, "skipped_so_far", n)
				}
				err = nil
				return
			}
			t.tc.Log.Error("operator panicked", "query", t.Topo.QueryID, "topic", t.Sub.Source.Topic, "partition", t.Partition, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("query %s: operator panicked advancing idle %s/%d: %v", t.Topo.QueryID, t.Sub.Source.Topic, t.Partition, p)
		}
	}()
	t.tc.StreamTime = ts
	// Nothing is being processed: a repartition sink must not stamp its
	// output with the last record's position.
	t.tc.input = nil
	if err := t.head.AdvanceTime(&t.tc); err != nil {
		return fmt.Errorf("query %s: advance idle %s/%d: %w", t.Topo.QueryID, t.Sub.Source.Topic, t.Partition, err)
	}
	return nil
}

// checkpointOffsets is what a commit records with the state: the next
// source offset and the stream time.
func (t *Task) checkpointOffsets() map[string]int64 {
	m := map[string]int64{streamTimeKey: t.tc.StreamTime}
	for _, in := range t.inputs {
		if in.next >= 0 {
			m[in.key(t.Partition)] = in.next
		} else if in.applied >= 0 {
			m[in.key(t.Partition)] = in.applied
		}
	}
	for _, in := range t.inputs {
		for p, off := range in.upstream {
			m[upstreamKey(in.upPrefix, p)] = off
		}
	}
	return m
}

// Copied counts the records whose results the task copied instead of
// running them through its chain (see recordCopy).
func (t *Task) Copied() int64 {
	if t.copy == nil {
		return 0
	}
	return t.copy.copied
}

// HotKeys is the sketch of the task's busiest input keys.
func (t *Task) HotKeys() *HotKeys { return t.hot }

// StreamTime is the largest event time the task has seen.
func (t *Task) StreamTime() int64 { return t.tc.StreamTime }

// Close closes the operators.
func (t *Task) Close() error {
	var first error
	for _, op := range t.ops {
		if err := op.Close(); err != nil && first == nil {
			first = err
		}
	}
	t.State = TaskClosed
	return first
}

// deadLetter is a bad input record as the error topic keeps it: key,
// value and timestamp unchanged, and headers saying which query could
// not read it, where it was, and why.
func deadLetter(topo *Topology, rec *Record, kind string, err error) *Record {
	return &Record{
		Topic: topo.ErrorTopic, Partition: -1, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp,
		Headers: []Header{
			{Key: "sluice.query", Value: []byte(topo.QueryID)},
			{Key: "sluice.topic", Value: []byte(rec.Topic)},
			{Key: "sluice.partition", Value: []byte(strconv.Itoa(int(rec.Partition)))},
			{Key: "sluice.offset", Value: []byte(strconv.FormatInt(rec.Offset, 10))},
			{Key: "sluice.error.kind", Value: []byte(kind)},
			{Key: "sluice.error", Value: []byte(err.Error())},
		},
	}
}

// produceChangelog produces a store's pending changes to its changelog
// and returns the checkpoint to commit. A store whose changelog is one of
// the task's source topics (FromSource) produces nothing: its checkpoint
// records the task's position in that topic, which a restore continues
// from.
func (t *Task) produceChangelog(ctx context.Context, cl *kgo.Client, s taskStore, src map[string]int64) (state.Checkpoint, error) {
	if s.spec.FromSource == nil {
		return s.store.ProduceChangelog(ctx, cl, state.Changelog{Topic: s.spec.Changelog, Partition: t.Partition}, src)
	}
	cp, err := s.store.ProduceChangelog(ctx, nil, state.Changelog{}, src)
	if err != nil {
		return cp, err
	}
	if next := t.NextOffset(s.spec.FromSource.Topic); next > cp.ChangelogOffset {
		cp.ChangelogOffset = next
	}
	return cp, nil
}
