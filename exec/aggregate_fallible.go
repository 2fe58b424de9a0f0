package exec

import "github.com/sluice-sql/sluice/expr"

// A fallible aggregate (a user-defined one, expr.Aggregate.Fallible) may
// fail on a row: its call panics with an *expr.FunctionError, and the
// task makes the record a bad record. The state of every group and
// window the record touches must then stay as it was, and none of the
// record's output may have gone out. So an aggregate with fallible calls
// folds a record in two passes: the first computes what may fail (the
// fallible aggregates' accumulators after the record, merged sessions
// first, and the results the record emits) from the accumulators as
// they are, changing nothing (a fallible call never changes an
// accumulator in place); the second changes the state and emits as
// before, taking those values instead of calling the fallible aggregates
// again. Built-in aggregates cannot fail and fold in place in the second
// pass.

// fallibleFold is what the first pass computed for one group or window,
// by aggregate index (only the fallible aggregates' entries are set).
type fallibleFold struct {
	accs []any
	// results are the results of accs, old the results of the
	// accumulators before the record (for a sink of change events), each
	// computed only where the record emits them.
	results, old []any
}

// setFallible notes which of the node's aggregates are fallible (nil:
// none).
func (a *aggregate) setFallible() {
	a.fallible = nil
	for i, call := range a.node.Aggs {
		if call.Agg.Fallible {
			a.fallible = append(a.fallible, i)
		}
	}
}

// prepareFold computes into dst what folding row into base (nil: fresh
// accumulators) does to the fallible aggregates, after merging the
// accumulators of merged into base in order (sessions a record bridges).
// results asks for the results after the row, old for those before it.
func (a *aggregate) prepareFold(dst *fallibleFold, base []any, merged [][]any, row *Row, results, old bool) {
	n := len(a.node.Aggs)
	dst.accs = resize(dst.accs, n)
	dst.results, dst.old = dst.results[:0], dst.old[:0]
	if results {
		dst.results = resize(dst.results, n)
	}
	if old {
		dst.old = resize(dst.old, n)
	}
	for _, i := range a.fallible {
		agg := a.node.Aggs[i].Agg
		var acc any
		if base != nil {
			acc = base[i]
			if old {
				dst.old[i] = agg.Result(acc)
			}
		} else {
			acc = agg.Init()
		}
		for _, m := range merged {
			acc = agg.Merge(acc, m[i])
		}
		acc = a.foldOne(i, acc, row)
		dst.accs[i] = acc
		if results {
			dst.results[i] = agg.Result(acc)
		}
	}
}

// foldOne is fold for aggregate i alone, returning its new accumulator.
func (a *aggregate) foldOne(i int, acc any, row *Row) any {
	call := a.node.Aggs[i]
	args := func(cols []any) []any {
		a.args = a.args[:0]
		for _, e := range call.Args {
			a.args = append(a.args, e(cols))
		}
		return a.args
	}
	if c := a.node.Changes; c != nil {
		mode, _ := row.Cols[c.ModeCol].(int32)
		if mode != ChangeAdd {
			old := append([]any(nil), row.Cols...)
			copy(old[c.ArgsAt:c.ArgsAt+c.NArgs], row.Cols[c.OldArgsAt:c.OldArgsAt+c.NArgs])
			acc = call.Agg.Undo(acc, args(old))
		}
		if mode == ChangeUndo {
			return acc
		}
	}
	return call.Agg.Add(acc, args(row.Cols))
}

// freshAccs is initAccs, leaving the fallible aggregates' accumulators
// unset when skipFallible (the first pass has their values).
func (a *aggregate) freshAccs(skipFallible bool) []any {
	if !skipFallible {
		return a.initAccs()
	}
	accs := make([]any, len(a.node.Aggs))
	for i, call := range a.node.Aggs {
		if !call.Agg.Fallible {
			accs[i] = call.Agg.Init()
		}
	}
	return accs
}

func resize(s []any, n int) []any {
	if cap(s) < n {
		return make([]any, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// closingResult is the result row of a window closing on time (EMIT
// FINAL). No record is at fault when a fallible aggregate's result fails
// there (the record that moved stream time was folded already): the
// window's output is lost, counted and logged as a failing record would
// be, and ok is false.
func (a *aggregate) closingResult(tc *TaskContext, accs []any, maxTs, start, end int64) (row *Row, ok bool) {
	if a.fallible == nil {
		return a.closedRow(accs, maxTs, start, end), true
	}
	defer func() {
		if p := recover(); p != nil {
			fe, isFE := p.(*expr.FunctionError)
			if !isFE {
				panic(p)
			}
			if n := tc.Metrics.CountError(ErrKindFunction); n <= 1 || n%1000 == 0 {
				tc.Log.Warn("skipping a closing window's output a function failed on", "query", tc.QueryID, "function", fe.Function,
					"partition", tc.Partition, "window_start", start, "window_end", end, "err", fe.Err, "skipped_so_far", n)
			}
			row, ok = nil, false
		}
	}()
	return a.closedRow(accs, maxTs, start, end), true
}

// closedRow is a closing window's result: in the operator's one reused
// Row when what follows borrows rows (as emitResult), else a new one.
func (a *aggregate) closedRow(accs []any, maxTs, start, end int64) *Row {
	if !a.reuse {
		return a.result(accs, maxTs, start, end)
	}
	a.outRow = Row{Cols: a.appendResult(a.outRow.Cols[:0], accs, start, end, nil), Ts: maxTs}
	return &a.outRow
}
