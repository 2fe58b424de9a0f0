package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// AggCall is one aggregate function with its argument expressions over
// the aggregate's input row.
type AggCall struct {
	Agg  *expr.Aggregate
	Args []expr.Eval
	Text string
}

// AggregateNode groups rows by key columns (and window), folds them into
// accumulators kept in a state store, and emits the updated aggregate as
// a row [key columns…, results…, (WINDOWSTART, WINDOWEND)].
type AggregateNode struct {
	Store     string
	KeyCols   []int
	KeyNames  []string
	Aggs      []AggCall
	Window    *WindowSpec // nil: not windowed
	EmitFinal bool
	// WithOld attaches the previous result to each emitted row (Row.Old).
	WithOld bool
	// Retention (milliseconds, 0: forever) bounds a non-windowed
	// aggregate: a key whose latest event time is at or before stream
	// time minus Retention is deleted from the store and a tombstone of
	// its row is emitted; a later record for it starts from scratch.
	// Windowed aggregates bound their state with Window.Retention.
	Retention int64
	// LateTopic, when set, receives every record that arrived after all
	// its windows closed (WITH (LATE_TOPIC=…)), stamped with its event
	// time and headers naming the query, the window and the stream time.
	LateTopic string
	// KsqlDBFinal reproduces ksqlDB's EMIT FINAL quirk (property
	// sluice.compat=ksqldb): a closed time window is dropped instead of
	// emitted when its start lies more than the retention behind the
	// newest window start, as Kafka Streams' window store has already
	// expired it. Sluice otherwise emits every window exactly once.
	KsqlDBFinal bool
	// Changes, when set, says the input rows are changes of an aggregated
	// table (TableChangeNode) rather than stream records.
	Changes *TableChanges
	// CacheBytes bounds, per store partition, the cache of decoded
	// accumulators of time-windowed and non-windowed aggregates
	// (property statestore.cache.max.bytes): 0 is DefaultAggCacheBytes;
	// below 0 turns the cache off, so that every record reads its key's
	// state from the store and writes it back, as before the cache.
	CacheBytes int64
	// Sliced keeps a HOPPING window's state per slice of the advance
	// (the planner sets it for EMIT FINAL when the size is a multiple of
	// the advance and every aggregate is expr.Aggregate.Sliceable): a
	// record folds into the one slice holding it, not into each of the
	// size/advance windows holding it, and a window's result is the
	// merge of its slices when it closes (aggregate_slices.go).
	Sliced bool
}

// TableChanges says where a table change row keeps its parts: the
// aggregate's argument columns of the new row at ArgsAt, those of the old
// row at OldArgsAt (NArgs each), and the change's mode at ModeCol.
type TableChanges struct {
	ArgsAt, OldArgsAt, NArgs, ModeCol int
}

var _ Node = (*AggregateNode)(nil)

func (n *AggregateNode) New(next Operator) (Operator, error) {
	a := &aggregate{forward: forward{next}, node: n, reuse: borrowsRows(next)}
	if n.Window != nil {
		switch n.Window.Kind {
		case Session:
			return &sessionAggregate{aggregate: a}, nil
		case Sliding:
			return &slidingAggregate{aggregate: a}, nil
		}
	}
	return a, nil
}

func (n *AggregateNode) Describe() string {
	calls := make([]string, len(n.Aggs))
	for i, a := range n.Aggs {
		calls[i] = a.Text
	}
	s := fmt.Sprintf("aggregate %s by %s", strings.Join(calls, ", "), strings.Join(n.KeyNames, ", "))
	if n.Window != nil {
		s += " window " + n.Window.String()
		if n.EmitFinal {
			s += " emit final"
			if n.Sliced {
				s += " sliced by " + (time.Duration(n.Window.Advance) * time.Millisecond).String()
			}
		} else {
			s += " emit changes"
		}
		if n.LateTopic != "" {
			s += ", late records to " + n.LateTopic
		}
	} else if n.Retention > 0 {
		s += " retention " + (time.Duration(n.Retention) * time.Millisecond).String()
	}
	return s + " [store " + n.Store + "]"
}

// EntryPrefix is the key prefix of the store's windows (or, not
// windowed, its keys), leaving out index and record entries, so reports
// can count open windows.
func (n *AggregateNode) EntryPrefix() []byte {
	if n.Window == nil {
		return []byte{tableDataTag}
	}
	switch n.Window.Kind {
	case Session:
		return []byte{sessionDataTag}
	case Sliding:
		return []byte{slidingWindowTag}
	}
	return nil // time windows: every key is a window
}

// IsEntry reports whether a key under EntryPrefix is a window (or key)
// rather than one of the values a time window's COUNT_DISTINCT keeps
// among its windows (aggregate_members.go).
func (n *AggregateNode) IsEntry(key []byte) bool {
	return n.Window == nil || n.Window.Kind == Session || n.Window.Kind == Sliding || !isWindowMember(key)
}

func (n *AggregateNode) Stateful() bool       { return true }
func (n *AggregateNode) StoreNames() []string { return []string{n.Store} }

type aggregate struct {
	forward
	node  *AggregateNode
	store *state.Store
	// reuse says next keeps nothing of a row (rowBorrower): the result
	// of each record goes out in outRow (emitResult).
	reuse  bool
	outRow Row
	// bounds holds the last window bounds a result carried, boxed once
	// for the run of results of the same window.
	bounds [2]any
	// cache holds the accumulators of hot keys and windows decoded
	// (time windows and non-windowed aggregates; session and sliding
	// windows keep theirs in the store).
	cache *aggCache
	// members says which aggregate calls keep their members as state
	// entries of their own (aggregate_members.go); nil: none.
	members []bool

	memberKey []byte

	keyBuf, stateKey, valBuf, idxKey []byte
	keyVals                          []any
	starts                           []int64
	args                             []any
	// nextClose is the earliest stream time at which some open window
	// closes (EMIT FINAL); nextExpire is when some window's retention
	// ends, or (non-windowed with Retention) when the least recently
	// updated key expires. Both start at the minimum so the first
	// AdvanceTime after Open scans restored state once.
	nextClose, nextExpire int64
	// closeFrom, expireFrom and keysFrom are where the next scan of
	// closeWindows, expire and expireKeys starts: everything before was
	// deleted by an earlier scan and cannot come back. Starting there
	// rather than at the beginning keeps scans from walking over the
	// deletion markers Badger keeps until compaction.
	closeFrom, expireFrom, keysFrom int64
	// sliceTail holds the slices (Sliced) the last close decoded that
	// no window closed yet, every slice in [closeFrom, sliceTailEnd):
	// the next close reads the store from sliceTailEnd on.
	sliceTail    []sliceRun
	sliceTailEnd int64
	// maxStart is the newest window start that took a record (for
	// KsqlDBFinal).
	maxStart int64
	// fallible lists the aggregates that may fail (nil: none);
	// prepared holds the first pass's values of a record's fold, one per
	// group or window it touches (aggregate_fallible.go).
	fallible []int
	prepared []fallibleFold
}

// An aggregation over time windows (or none) keeps nothing of a row: it
// folds the row's values into its accumulators and encodes its group key.
func (a *aggregate) borrowsRows() bool { return true }

func (a *aggregate) Open(tc *TaskContext) error {
	s, err := tc.Store(a.node.Store)
	if err != nil {
		return err
	}
	a.store = s
	if w := a.node.Window; w == nil || (w.Kind != Session && w.Kind != Sliding) {
		if a.cache, err = newAggCache(s, a.node.cacheLimit(), appendAggState); err != nil {
			return fmt.Errorf("aggregate %s: %w", a.node.Store, err)
		}
		a.setMembers()
	}
	a.keyVals = make([]any, len(a.node.KeyCols))
	a.setFallible()
	a.nextClose, a.nextExpire = math.MinInt64, math.MinInt64
	a.closeFrom, a.expireFrom, a.keysFrom = math.MinInt64, math.MinInt64, math.MinInt64
	if a.node.Sliced {
		// Windows closed by the restored stream time were emitted, though
		// their later slices are still stored (aggregate_slices.go).
		a.closeFrom = a.node.Window.firstOpenStart(tc.StreamTime)
		a.sliceTail, a.sliceTailEnd = nil, math.MinInt64
	}
	a.maxStart = math.MinInt64
	if w := a.node.Window; w != nil && w.Kind != Session && w.Kind != Sliding && tc.StreamTime != math.MinInt64 {
		// A restore from the changelog brings back the windows that
		// expired without tombstones (Store.Expire): they go before
		// anything reads the store, pull queries included, when the
		// checkpoint knows the stream time they expired by.
		return a.expire(tc)
	}
	return nil
}

// late counts a record that arrived after every window it belongs to
// closed and, with a late topic, writes the record there: its key and
// value as the aggregate read them, its event time as timestamp, and
// headers saying which query and window it missed and the stream time
// when it came. [start, end) is the newest window it would have joined.
func (a *aggregate) late(tc *TaskContext, row *Row, start, end int64) {
	lateRecord(tc, a.node.LateTopic, row, start, end, tc.StreamTime-row.Ts, a.node.Window.Grace)
}

// lateRecord counts a record turned away as late and, with a late topic,
// writes the input record there unchanged but for its timestamp (the
// event time) and headers saying which query and window it missed and
// the stream time when it came. lateBy is how far (ms) the record's event
// time lies behind the time it was judged by, grace the grace period (ms)
// it exceeded.
func lateRecord(tc *TaskContext, topic string, row *Row, start, end, lateBy, grace int64) {
	if tc.Metrics.LateDropped.Add(1) == 1 {
		logFirstLate(tc, lateBy, grace)
	}
	if topic == "" || tc.input == nil {
		return
	}
	in := tc.input
	itoa := func(v int64) []byte { return strconv.AppendInt(nil, v, 10) }
	tc.Out.Produce(&Record{
		Topic: topic, Partition: -1, Key: in.Key, Value: in.Value, Timestamp: row.Ts,
		Headers: []Header{
			{Key: "sluice.query", Value: []byte(tc.QueryID)},
			{Key: "sluice.window.start", Value: itoa(start)},
			{Key: "sluice.window.end", Value: itoa(end)},
			{Key: "sluice.stream.time", Value: itoa(tc.StreamTime)},
			{Key: "sluice.topic", Value: []byte(in.Topic)},
			{Key: "sluice.partition", Value: itoa(int64(in.Partition))},
			{Key: "sluice.offset", Value: itoa(in.Offset)},
		},
	})
}

// logFirstLate logs the query's first record dropped as late, at INFO:
// a dropped record is otherwise only counted (DESCRIBE EXTENDED, /metrics),
// which `sluice run` shows nowhere. Later ones are counted alone, so a
// stream of late records does not flood the log.
func logFirstLate(tc *TaskContext, lateBy, grace int64) {
	args := []any{"query", tc.QueryID}
	if in := tc.input; in != nil {
		args = append(args, "topic", in.Topic, "partition", in.Partition, "offset", in.Offset)
	}
	args = append(args, "late_by", time.Duration(lateBy)*time.Millisecond, "grace", time.Duration(grace)*time.Millisecond)
	tc.Log.Info("late record dropped: it arrived after its windows' grace period; later ones are only counted", args...)
}

func (a *aggregate) Process(tc *TaskContext, row *Row) (err error) {
	if row.Tombstone {
		return nil // stream aggregation: a null value carries nothing to fold
	}
	if !a.groupKey(tc, row) {
		return nil
	}
	if a.node.Sliced {
		return a.processSlice(tc, row)
	}
	w := a.node.Window
	if w == nil {
		a.stateKey = tableKey(a.stateKey[:0], a.keyBuf)
		var pre *fallibleFold
		if a.fallible != nil {
			if pre, err = a.prepare(0, a.stateKey, row); err != nil {
				return err
			}
		}
		return a.update(tc, row, a.stateKey, 0, 0, pre)
	}
	a.starts = w.starts(row.Ts, a.starts)
	if a.fallible != nil {
		for n, start := range a.starts {
			if start+w.Size+w.Grace <= tc.StreamTime {
				continue
			}
			a.stateKey = windowKey(a.stateKey[:0], start, a.keyBuf)
			if _, err := a.prepare(n, a.stateKey, row); err != nil {
				return err
			}
		}
	}
	accepted := false
	for n, start := range a.starts {
		end := start + w.Size
		if end+w.Grace <= tc.StreamTime {
			continue // closed: stream time passed end + grace
		}
		accepted = true
		a.stateKey = windowKey(a.stateKey[:0], start, a.keyBuf)
		var pre *fallibleFold
		if a.fallible != nil {
			pre = &a.prepared[n]
		}
		if err := a.update(tc, row, a.stateKey, start, end, pre); err != nil {
			return err
		}
		if a.node.EmitFinal {
			a.nextClose = min(a.nextClose, end+w.Grace)
		}
		a.nextExpire = min(a.nextExpire, end+w.retention())
		a.maxStart = max(a.maxStart, start)
	}
	if !accepted && len(a.starts) > 0 {
		last := a.starts[len(a.starts)-1]
		a.late(tc, row, last, last+w.Size)
	}
	return nil
}

// update folds row into the accumulators kept under key and emits the
// new result (unless results wait for the window to close). The
// accumulators live in the cache (aggCache), which writes them to the
// store once per commit interval.
func (a *aggregate) update(tc *TaskContext, row *Row, key []byte, start, end int64, pre *fallibleFold) error {
	e, err := a.entry(key)
	if err != nil {
		return err
	}
	existed := e.existed
	var old []any
	if a.node.WithOld && existed {
		old = a.resultOf(e.accs, e.maxTs, start, end, preOld(pre)).Cols
	}
	a.fold(e.accs, row, pre)
	if a.members != nil {
		if err := a.addMembers(e, key, row.Cols); err != nil {
			return err
		}
	}
	oldTs := e.maxTs
	e.maxTs = max(e.maxTs, row.Ts)
	e.existed = true
	a.cache.changedEntry(e)
	if ret := a.node.Retention; ret > 0 && a.node.Window == nil && (!existed || e.maxTs != oldTs) {
		// Keep the time index exact: one entry per live key, at its
		// latest event time.
		gk := key[1:]
		if existed {
			a.idxKey = expiryKey(a.idxKey[:0], oldTs, gk)
			a.store.Delete(a.idxKey)
		}
		a.idxKey = expiryKey(a.idxKey[:0], e.maxTs, gk)
		a.store.Put(a.idxKey, nil)
		a.nextExpire = min(a.nextExpire, addSat(e.maxTs, ret))
		a.keysFrom = min(a.keysFrom, e.maxTs) // a late new key may sit below the last cutoff
	}
	if a.node.EmitFinal {
		return nil
	}
	return a.emitResult(tc, e.accs, e.maxTs, start, end, preResults(pre), old)
}

// emitResult emits the result of a record's fold, with old as the row's
// Old. When what follows borrows rows it goes out in the same Row and
// columns every time, so a result costs no allocation of its own.
func (a *aggregate) emitResult(tc *TaskContext, accs []any, maxTs, start, end int64, results, old []any) error {
	if !a.reuse {
		out := a.resultOf(accs, maxTs, start, end, results)
		out.Old = old
		return a.emit(tc, out)
	}
	a.outRow = Row{Cols: a.appendResult(a.outRow.Cols[:0], accs, start, end, results), Ts: maxTs, Old: old}
	return a.emit(tc, &a.outRow)
}

// prepare runs the first pass of a record's fold into the group or
// window under key (aggregate_fallible.go), into a.prepared[n].
func (a *aggregate) prepare(n int, key []byte, row *Row) (*fallibleFold, error) {
	for len(a.prepared) <= n {
		a.prepared = append(a.prepared, fallibleFold{})
	}
	e, err := a.entry(key)
	if err != nil {
		return nil, err
	}
	var base []any
	if e.existed {
		base = e.accs
	}
	pre := &a.prepared[n]
	a.prepareFold(pre, base, nil, row, !a.node.EmitFinal, a.node.WithOld && e.existed)
	return pre, nil
}

func preResults(pre *fallibleFold) []any {
	if pre == nil {
		return nil
	}
	return pre.results
}

func preOld(pre *fallibleFold) []any {
	if pre == nil {
		return nil
	}
	return pre.old
}

// entry returns the cached accumulators of key, read from the store on a
// miss.
func (a *aggregate) entry(key []byte) (*aggEntry, error) {
	if e := a.cache.get(key); e != nil {
		return e, nil
	}
	if a.cache.absent(key) {
		return a.cache.add(key, a.initAccs(), math.MinInt64, false, 0), nil
	}
	v, ok, err := a.store.Get(key)
	if err != nil {
		return nil, fmt.Errorf("aggregate %s: read state: %w", a.node.Store, err)
	}
	if !ok {
		return a.cache.add(key, a.initAccs(), math.MinInt64, false, 0), nil
	}
	accs, maxTs, err := decodeAggState(v, a.node.Store)
	if err != nil {
		return nil, err
	}
	migrated := false
	if a.members != nil {
		if migrated, err = a.migrateMembers(key, accs); err != nil {
			return nil, err
		}
	}
	e := a.cache.add(key, accs, maxTs, true, len(v))
	if migrated {
		a.cache.changedEntry(e) // the group's state now holds counts
	}
	return e, nil
}

// deleteState deletes key, a group's state or a member entry, from the
// store and the cache. A member goes only with its group's state, so the
// cache forgets members by group.
func (a *aggregate) deleteState(key []byte) {
	a.cache.drop(key) // with what it knows of the group's members
	a.store.Delete(key)
}

// fold adds one row to the accumulators. A change of an aggregated
// table (Changes) may first take the row's old values back out. pre,
// when set, holds the fallible aggregates' new accumulators, computed
// by the first pass.
func (a *aggregate) fold(accs []any, row *Row, pre *fallibleFold) {
	if pre != nil {
		defer func() {
			for _, i := range a.fallible {
				accs[i] = pre.accs[i]
			}
		}()
	}
	skip := pre != nil
	if c := a.node.Changes; c != nil {
		mode, _ := row.Cols[c.ModeCol].(int32)
		if mode != ChangeAdd {
			old := append([]any(nil), row.Cols...)
			copy(old[c.ArgsAt:c.ArgsAt+c.NArgs], row.Cols[c.OldArgsAt:c.OldArgsAt+c.NArgs])
			a.apply(accs, old, true, skip)
		}
		if mode == ChangeUndo {
			return
		}
	}
	a.apply(accs, row.Cols, false, skip)
}

// apply folds cols into accs, or takes them out (undo); skipFallible
// leaves the fallible aggregates to the caller.
func (a *aggregate) apply(accs []any, cols []any, undo, skipFallible bool) {
	for i, call := range a.node.Aggs {
		if a.members != nil && a.members[i] {
			continue // addMembers counts them
		}
		if skipFallible && call.Agg.Fallible {
			continue
		}
		a.args = a.args[:0]
		for _, e := range call.Args {
			a.args = append(a.args, e(cols))
		}
		if undo {
			accs[i] = call.Agg.Undo(accs[i], a.args)
		} else {
			accs[i] = call.Agg.Add(accs[i], a.args)
		}
	}
}

// initAccs returns fresh accumulators.
func (a *aggregate) initAccs() []any {
	accs := make([]any, len(a.node.Aggs))
	for i, call := range a.node.Aggs {
		if a.members != nil && a.members[i] {
			accs[i] = int64(0)
			continue
		}
		accs[i] = call.Agg.Init()
	}
	return accs
}

// encodeAggState lays out a window's or key's state: maxTs ‖ accumulators.
func (a *aggregate) encodeAggState(maxTs int64, accs []any) []byte {
	a.valBuf = appendAggState(a.valBuf[:0], maxTs, accs)
	return a.valBuf
}

func appendAggState(buf []byte, maxTs int64, accs []any) []byte {
	return types.AppendValues(types.AppendValue(buf, maxTs), accs)
}

func decodeAggState(v []byte, store string) ([]any, int64, error) {
	ts, rest, err := types.DecodeValue(v)
	if err != nil {
		return nil, 0, fmt.Errorf("aggregate %s: decode state: %w", store, err)
	}
	accs, _, err := types.DecodeValues(rest)
	if err != nil {
		return nil, 0, fmt.Errorf("aggregate %s: decode state: %w", store, err)
	}
	maxTs, _ := ts.(int64)
	return accs, maxTs, nil
}

func (a *aggregate) result(accs []any, maxTs, start, end int64) *Row {
	return a.resultOf(accs, maxTs, start, end, nil)
}

// resultOf is result taking the fallible aggregates' results from
// results where it is set (the first pass computed them).
func (a *aggregate) resultOf(accs []any, maxTs, start, end int64, results []any) *Row {
	n := len(a.keyVals) + len(accs)
	if a.node.Window != nil {
		n += 2
	}
	return &Row{Cols: a.appendResult(make([]any, 0, n), accs, start, end, results), Ts: maxTs}
}

// appendResult appends to cols a result's columns: the group's key
// columns, each aggregate's result (a fallible one's from results where
// set) and, windowed, the window's bounds.
func (a *aggregate) appendResult(cols, accs []any, start, end int64, results []any) []any {
	cols = append(cols, a.keyVals...)
	for i, call := range a.node.Aggs {
		if len(results) > 0 && call.Agg.Fallible {
			cols = append(cols, results[i])
			continue
		}
		cols = append(cols, call.Agg.Result(accs[i]))
	}
	if a.node.Window != nil {
		if a.bounds[0] != start || a.bounds[1] != end {
			a.bounds = [2]any{start, end}
		}
		cols = append(cols, a.bounds[:]...)
	}
	return cols
}

// Close lets go of the store: what the cache holds beyond the last
// commit is uncommitted work, lost as in a crash.
func (a *aggregate) Close() error {
	if a.cache != nil {
		a.store.DropWriteBack(a.cache)
		a.cache = nil
	}
	return a.forward.Close()
}

// AdvanceTime emits windows that closed (EMIT FINAL) and deletes windows
// past retention, so windowed state stays bounded.
func (a *aggregate) AdvanceTime(tc *TaskContext) error {
	w := a.node.Window
	if w == nil {
		if a.node.Retention > 0 && tc.StreamTime >= a.nextExpire {
			if err := a.expireKeys(tc); err != nil {
				return err
			}
		}
		return a.forward.AdvanceTime(tc)
	}
	if a.node.EmitFinal && tc.StreamTime >= a.nextClose {
		close := a.closeWindows
		if a.node.Sliced {
			close = a.closeSlices
		}
		if err := close(tc); err != nil {
			return err
		}
	}
	if tc.StreamTime >= a.nextExpire {
		if err := a.expire(tc); err != nil {
			return err
		}
	}
	return a.forward.AdvanceTime(tc)
}

func (a *aggregate) closeWindows(tc *TaskContext) error {
	w := a.node.Window
	a.nextClose = math.MaxInt64
	type closed struct {
		key        []byte
		accs       []any
		maxTs      int64
		start, end int64
		group      []any
	}
	var done []closed
	var members [][]byte // of the closed windows
	// Windows are stored in start order; all windows of one size close in
	// that order too, so the scan stops at the first open one. Windows
	// starting at or before stream time - size - grace are closed now
	// and no record can open them again: the next scan starts after.
	from := a.closeFrom
	a.closeFrom = max(a.closeFrom, addSat(subSat(tc.StreamTime, w.Size+w.Grace), 1))
	err := a.store.RangeBetween(windowBound(from), nil, func(k, v []byte) bool {
		start, gk, ok := splitWindowKey(k)
		if !ok {
			return true
		}
		end := start + w.Size
		if end+w.Grace > tc.StreamTime {
			a.nextClose = end + w.Grace
			return false
		}
		if isWindowMember(k) {
			members = append(members, bytes.Clone(k))
			return true
		}
		accs, maxTs, err := decodeAggState(v, a.node.Store)
		if err != nil {
			return true
		}
		group, _, err := types.DecodeValues(gk)
		if err != nil {
			return true
		}
		done = append(done, closed{append([]byte(nil), k...), accs, maxTs, start, end, group})
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: scan windows: %w", a.node.Store, err)
	}
	for _, c := range done {
		if a.node.KsqlDBFinal && c.start+w.retention() < a.maxStart {
			a.deleteState(c.key)
			tc.Metrics.Expired.Add(1)
			continue
		}
		copy(a.keyVals, c.group)
		if out, ok := a.closingResult(tc, c.accs, c.maxTs, c.start, c.end); ok {
			if err := a.emit(tc, out); err != nil {
				return err
			}
		}
		a.deleteState(c.key)
	}
	for _, k := range members {
		a.deleteState(k)
	}
	return nil
}

func (a *aggregate) expire(tc *TaskContext) error {
	w := a.node.Window
	ret := w.retention()
	cutoff := subSat(tc.StreamTime, ret) // windows ending at or before cutoff are gone
	// Windows starting at or before last have ended by cutoff. Window
	// starts are multiples of the advance, so next is the first start a
	// kept window can have, and expiry is due again when its retention
	// ends (sooner than that, no scan finds anything).
	adv := w.Size
	if w.Kind == Hopping {
		adv = w.Advance
	}
	last := subSat(cutoff, w.Size)
	next := addSat(last, 1)
	bound := windowBound(next)
	if m := mod(next, adv); m != 0 {
		next = addSat(next, adv-m)
	}
	a.nextExpire = addSat(addSat(next, w.Size), ret)
	// The cache's expired windows go unwritten; the scan reads only what
	// the store holds (no write-back for it) and finds the rest.
	windows := 0
	if a.cache != nil {
		windows = a.cache.expireBelow(bound)
	}
	var old [][]byte
	// Windows ending at or before cutoff are deleted below and closed for
	// good (retention >= size + grace): the next scan starts after them.
	from := a.expireFrom
	a.expireFrom = max(a.expireFrom, addSat(last, 1))
	err := a.store.ScanForExpiry(windowBound(from), bound, func(k, _ []byte) bool {
		old = append(old, append([]byte(nil), k...))
		if !isWindowMember(k) {
			windows++
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: expire windows: %w", a.node.Store, err)
	}
	for _, k := range old {
		// The windows' members too. No tombstones: the changelog is
		// compact,delete and ages the windows out (Store.Expire); those
		// a restore brings back go when the task opens (Open).
		a.store.Expire(k)
	}
	tc.Metrics.Expired.Add(int64(windows))
	if windows == 0 {
		// Nothing was due: the oldest window may lie far beyond next (a
		// long retention, a gap in the input), and a scan at every
		// advance until it is due would find nothing each time. Its own
		// expiry is when the next scan is due.
		a.nextExpire = math.MaxInt64
		err := a.store.RangeBetween(bound, nil, func(k, _ []byte) bool {
			if start, _, ok := splitWindowKey(k); ok {
				a.nextExpire = addSat(addSat(start, w.Size), ret)
			}
			return false
		})
		if err != nil {
			return fmt.Errorf("aggregate %s: find the oldest window: %w", a.node.Store, err)
		}
	}
	return nil
}

// Non-windowed state holds two kinds of keys, told apart by their first
// byte so that ranges over one never meet the other:
//
//	0x00 ‖ group key                          → maxTs ‖ accumulators
//	0x01 ‖ big-endian(maxTs ^ sign) ‖ group key → empty (with Retention only)
//
// The second is a time index: it lists the keys in order of their latest
// event time, so expiry reads only the keys it deletes plus one.
const (
	tableDataTag  = 0x00
	tableIndexTag = 0x01
)

func tableKey(buf, groupKey []byte) []byte {
	return append(append(buf, tableDataTag), groupKey...)
}

func expiryKey(buf []byte, ts int64, groupKey []byte) []byte {
	buf = append(buf, tableIndexTag)
	buf = binary.BigEndian.AppendUint64(buf, uint64(ts)^(1<<63))
	return append(buf, groupKey...)
}

func splitExpiryKey(k []byte) (ts int64, groupKey []byte, ok bool) {
	if len(k) < 9 || k[0] != tableIndexTag {
		return 0, nil, false
	}
	return int64(binary.BigEndian.Uint64(k[1:]) ^ (1 << 63)), k[9:], true
}

// expireKeys deletes the keys last updated at or before stream time minus
// retention, in order of that time, and emits a tombstone for each, so
// the output table loses the row too. The tombstones carry the stream
// time at which the keys expired.
func (a *aggregate) expireKeys(tc *TaskContext) error {
	ret := a.node.Retention
	cutoff := subSat(tc.StreamTime, ret)
	a.nextExpire = math.MaxInt64
	var expired [][]byte
	// Entries at or before cutoff are all deleted below; the next scan
	// starts after them unless a late new key lands there (see update).
	from := a.keysFrom
	a.keysFrom = max(a.keysFrom, addSat(cutoff, 1))
	err := a.store.RangeBetween(expiryKey(nil, from, nil), []byte{tableIndexTag + 1}, func(k, _ []byte) bool {
		tc.Metrics.expiryVisited.Add(1)
		ts, _, ok := splitExpiryKey(k)
		if !ok {
			return true
		}
		if ts > cutoff {
			a.nextExpire = addSat(ts, ret)
			return false
		}
		expired = append(expired, bytes.Clone(k))
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: expire keys: %w", a.node.Store, err)
	}
	for _, k := range expired {
		_, gk, _ := splitExpiryKey(k)
		group, _, err := types.DecodeValues(gk)
		if err != nil {
			return fmt.Errorf("aggregate %s: decode expired key: %w", a.node.Store, err)
		}
		a.store.Delete(k)
		a.stateKey = tableKey(a.stateKey[:0], gk)
		var old []any
		if a.node.WithOld {
			// The row leaving the table, for HAVING and a sink of
			// change events.
			e, err := a.entry(a.stateKey)
			if err != nil {
				return fmt.Errorf("aggregate %s: expire keys: %w", a.node.Store, err)
			}
			if e.existed {
				old = a.result(e.accs, e.maxTs, 0, 0).Cols
				copy(old, group) // result's key columns are the last record's
			}
		}
		a.deleteState(a.stateKey)
		if a.members != nil {
			if err := a.deleteMembers(gk); err != nil {
				return err
			}
		}
		tc.Metrics.Expired.Add(1)
		// Values stay NULL: a tombstone carries only its key columns.
		cols := make([]any, len(a.node.KeyCols)+len(a.node.Aggs))
		copy(cols, group)
		if err := a.emit(tc, &Row{Cols: cols, Ts: tc.StreamTime, Tombstone: true, Old: old}); err != nil {
			return err
		}
	}
	return nil
}

func addSat(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func subSat(a, b int64) int64 {
	if b > 0 && a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}
