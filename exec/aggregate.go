package exec

import (
	"fmt"
	"math"
	"strings"

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
}

var _ Node = (*AggregateNode)(nil)

func (n *AggregateNode) New(next Operator) (Operator, error) {
	return &aggregate{forward: forward{next}, node: n}, nil
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
		} else {
			s += " emit changes"
		}
	}
	return s + " [store " + n.Store + "]"
}
func (n *AggregateNode) Stateful() bool       { return true }
func (n *AggregateNode) StoreNames() []string { return []string{n.Store} }

type aggregate struct {
	forward
	node  *AggregateNode
	store *state.Store

	keyBuf, stateKey, valBuf []byte
	keyVals                  []any
	starts                   []int64
	args                     []any
	// nextClose is the earliest stream time at which some open window
	// closes (EMIT FINAL); nextExpire is when some window's retention
	// ends. Both start at the minimum so the first AdvanceTime after
	// Open scans restored state once.
	nextClose, nextExpire int64
}

func (a *aggregate) Open(tc *TaskContext) error {
	s, err := tc.Store(a.node.Store)
	if err != nil {
		return err
	}
	a.store = s
	a.keyVals = make([]any, len(a.node.KeyCols))
	a.nextClose, a.nextExpire = math.MinInt64, math.MinInt64
	return nil
}

func (a *aggregate) Process(tc *TaskContext, row *Row) error {
	if row.Tombstone {
		return nil // stream aggregation: a null value carries nothing to fold
	}
	for i, c := range a.node.KeyCols {
		v := row.Cols[c]
		if v == nil {
			// ksqlDB drops rows whose grouping key is NULL.
			tc.Metrics.CountError(ErrKindProcessing)
			return nil
		}
		a.keyVals[i] = v
	}
	a.keyBuf = types.AppendValues(a.keyBuf[:0], a.keyVals)
	w := a.node.Window
	if w == nil {
		return a.update(tc, row, a.keyBuf, 0, 0)
	}
	a.starts = w.starts(row.Ts, a.starts)
	accepted := false
	for _, start := range a.starts {
		end := start + w.Size
		if end+w.Grace <= tc.StreamTime {
			continue // closed: stream time passed end + grace
		}
		accepted = true
		a.stateKey = windowKey(a.stateKey[:0], start, a.keyBuf)
		if err := a.update(tc, row, a.stateKey, start, end); err != nil {
			return err
		}
		if a.node.EmitFinal {
			a.nextClose = min(a.nextClose, end+w.Grace)
		}
		a.nextExpire = min(a.nextExpire, end+w.retention())
	}
	if !accepted {
		tc.Metrics.LateDropped.Add(1)
	}
	return nil
}

// update folds row into the accumulators stored under key and emits the
// new result (unless results wait for the window to close).
func (a *aggregate) update(tc *TaskContext, row *Row, key []byte, start, end int64) error {
	accs, maxTs, existed, err := a.load(key)
	if err != nil {
		return err
	}
	var old []any
	if a.node.WithOld && existed {
		old = a.result(accs, maxTs, start, end).Cols
	}
	for i, call := range a.node.Aggs {
		a.args = a.args[:0]
		for _, e := range call.Args {
			a.args = append(a.args, e(row.Cols))
		}
		accs[i] = call.Agg.Add(accs[i], a.args)
	}
	maxTs = max(maxTs, row.Ts)
	a.valBuf = types.AppendValue(a.valBuf[:0], maxTs)
	a.valBuf = types.AppendValues(a.valBuf, accs)
	a.store.Put(key, a.valBuf)
	if a.node.EmitFinal {
		return nil
	}
	out := a.result(accs, maxTs, start, end)
	out.Old = old
	return a.emit(tc, out)
}

func (a *aggregate) load(key []byte) (accs []any, maxTs int64, existed bool, err error) {
	v, ok, err := a.store.Get(key)
	if err != nil {
		return nil, 0, false, fmt.Errorf("aggregate %s: read state: %w", a.node.Store, err)
	}
	if !ok {
		accs = make([]any, len(a.node.Aggs))
		for i, call := range a.node.Aggs {
			accs[i] = call.Agg.Init()
		}
		return accs, math.MinInt64, false, nil
	}
	accs, maxTs, err = decodeAggState(v, a.node.Store)
	return accs, maxTs, true, err
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
	n := len(a.keyVals) + len(accs)
	if a.node.Window != nil {
		n += 2
	}
	cols := make([]any, 0, n)
	cols = append(cols, a.keyVals...)
	for i, call := range a.node.Aggs {
		cols = append(cols, call.Agg.Result(accs[i]))
	}
	if a.node.Window != nil {
		cols = append(cols, start, end)
	}
	return &Row{Cols: cols, Ts: maxTs}
}

// AdvanceTime emits windows that closed (EMIT FINAL) and deletes windows
// past retention, so windowed state stays bounded.
func (a *aggregate) AdvanceTime(tc *TaskContext) error {
	w := a.node.Window
	if w == nil {
		return a.forward.AdvanceTime(tc)
	}
	if a.node.EmitFinal && tc.StreamTime >= a.nextClose {
		if err := a.closeWindows(tc); err != nil {
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
	// Windows are stored in start order; all windows of one size close in
	// that order too, so the scan stops at the first open one.
	err := a.store.Range(nil, func(k, v []byte) bool {
		start, gk, ok := splitWindowKey(k)
		if !ok {
			return true
		}
		end := start + w.Size
		if end+w.Grace > tc.StreamTime {
			a.nextClose = end + w.Grace
			return false
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
		copy(a.keyVals, c.group)
		if err := a.emit(tc, a.result(c.accs, c.maxTs, c.start, c.end)); err != nil {
			return err
		}
		a.store.Delete(c.key)
	}
	return nil
}

func (a *aggregate) expire(tc *TaskContext) error {
	w := a.node.Window
	ret := w.retention()
	cutoff := tc.StreamTime - ret // windows ending at or before cutoff are gone
	a.nextExpire = math.MaxInt64
	var old [][]byte
	err := a.store.Range(nil, func(k, _ []byte) bool {
		start, _, ok := splitWindowKey(k)
		if !ok {
			return true
		}
		if start+w.Size > cutoff {
			a.nextExpire = start + w.Size + ret
			return false
		}
		old = append(old, append([]byte(nil), k...))
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: expire windows: %w", a.node.Store, err)
	}
	for _, k := range old {
		a.store.Delete(k)
	}
	return nil
}
