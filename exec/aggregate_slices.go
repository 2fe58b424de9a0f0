package exec

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/types"
)

// A sliced HOPPING aggregation (AggregateNode.Sliced) keeps one entry
// per group and slice of the advance instead of one per group and
// window. The slice [t, t+advance) is the first advance of the window
// starting at t, and its entry is stored under that window's key
// (windowKey(t, group)), so the store is ordered by time as for windows,
// and a slice is deleted, or expires, exactly when the last window
// holding it, the one starting at t, closes.
//
// A record folds into its slice once, where an unsliced aggregation
// folds it into size/advance windows: that many fewer cache updates,
// store writes and changelog records. A window's result is the merge of
// the size/advance slices it spans, computed when it closes (EMIT FINAL
// emits nothing before). The merge is exact because every aggregate is
// Sliceable.
//
// Which windows have been emitted follows from stream time alone: a
// window closes, and is emitted at once (AdvanceTime runs after every
// record), when stream time reaches its end plus grace, and stream time
// is checkpointed with the state. A restored task therefore knows that
// every window ending at or before its restored stream time minus grace
// was emitted, even though later slices of those windows are still in
// the store.

// processSlice folds a record into the slice holding it, or turns it
// away as late when the last window holding it (the slice's own) has
// closed; windows holding it that closed before it came were emitted
// without it, as the unsliced aggregation leaves them.
func (a *aggregate) processSlice(tc *TaskContext, row *Row) error {
	w := a.node.Window
	if row.Ts < 0 {
		return nil // no window holds it (sources skip such records)
	}
	slice := row.Ts - mod(row.Ts, w.Advance)
	if slice+w.Size+w.Grace <= tc.StreamTime {
		a.late(tc, row, slice, slice+w.Size)
		return nil
	}
	// The first window holding the record that is still open closes
	// first.
	first := max(slice-w.Size+w.Advance, 0, w.firstOpenStart(tc.StreamTime))
	a.nextClose = min(a.nextClose, first+w.Size+w.Grace)
	if slice < a.sliceTailEnd {
		// The slice changes: what the last close kept of it, and of the
		// slices after it, is read again.
		a.sliceTail = slices.DeleteFunc(a.sliceTail, func(r sliceRun) bool { return r.start >= slice })
		a.sliceTailEnd = slice
	}
	a.stateKey = windowKey(a.stateKey[:0], slice, a.keyBuf)
	if err := a.update(tc, row, a.stateKey, slice, slice+w.Size, nil); err != nil {
		return err
	}
	a.nextExpire = min(a.nextExpire, slice+w.Size+w.retention())
	return nil
}

// lastClosedStart is the start of the newest window closed at stream
// time st (end + grace at or before it), and ok false while none is:
// windows start at 0 or later.
func (w *WindowSpec) lastClosedStart(st int64) (start int64, ok bool) {
	limit := subSat(st, w.Size+w.Grace) // a window closed iff start <= limit
	if limit < 0 {
		return 0, false
	}
	return limit - mod(limit, w.Advance), true
}

// firstOpenStart is the start of the first window not closed at stream
// time st, on the advance (math.MinInt64 while none has closed): where a
// sliced aggregation restored at st resumes closing windows, as every
// window before it was emitted before the checkpoint.
func (w *WindowSpec) firstOpenStart(st int64) int64 {
	if last, ok := w.lastClosedStart(st); ok {
		return last + w.Advance
	}
	return math.MinInt64
}

// storedSlice is one group's slice read back from the store.
type storedSlice struct {
	key   []byte // the store key: window start ‖ group key
	group []any
	accs  []any
	maxTs int64
}

// sliceRun is the slices of one start, in group key order.
type sliceRun struct {
	start  int64
	groups []storedSlice
}

// appendSlice appends to runs the slice stored as k, v (a key not a
// slice's is skipped). Keys come in store order, so a run's slices are
// in group key order.
func appendSlice(runs []sliceRun, k, v []byte, store string) ([]sliceRun, error) {
	start, gk, ok := splitWindowKey(k)
	if !ok || isWindowMember(k) {
		return runs, nil
	}
	group, _, err := types.DecodeValues(gk)
	if err != nil {
		return runs, fmt.Errorf("aggregate %s: decode group key: %w", store, err)
	}
	accs, maxTs, err := decodeAggState(v, store)
	if err != nil {
		return runs, err
	}
	if len(runs) == 0 || runs[len(runs)-1].start != start {
		runs = append(runs, sliceRun{start: start})
	}
	r := &runs[len(runs)-1]
	r.groups = append(r.groups, storedSlice{bytes.Clone(k), group, accs, maxTs})
	return runs, nil
}

// closeSlices emits every window closed by stream time that has not
// been emitted, each the merge of its slices, in start order and, within
// a start, in group key order (as an unsliced aggregation emits them),
// then deletes the slices no open window holds.
func (a *aggregate) closeSlices(tc *TaskContext) error {
	w := a.node.Window
	a.nextClose = math.MaxInt64
	last, closable := w.lastClosedStart(tc.StreamTime)
	if !closable {
		last = -w.Advance // no window closed yet: read only to find the first slice
	}
	// Windows from closeFrom to last close now; they read the slices up
	// to the last one's end. The first slice past that, if any, says when
	// the next window closes.
	readTo := last + w.Size
	// The slices the last close read and kept (sliceTail) are read from
	// memory; the store is read from where they end.
	runs := a.sliceTail
	next := int64(math.MaxInt64) // the first slice start not read
	var failed error
	err := a.store.RangeBetween(windowBound(max(a.closeFrom, a.sliceTailEnd)), nil, func(k, v []byte) bool {
		start, _, ok := splitWindowKey(k)
		if !ok || isWindowMember(k) {
			return true
		}
		if start >= readTo {
			next = start
			return false
		}
		if runs, failed = appendSlice(runs, k, v, a.node.Store); failed != nil {
			return false
		}
		return true
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return fmt.Errorf("aggregate %s: scan slices: %w", a.node.Store, err)
	}
	if closable {
		if err := a.emitSlicedWindows(tc, runs, a.closeFrom, last); err != nil {
			return err
		}
		// Slices up to last were the first of a window now closed: no
		// open window holds them.
		for _, r := range runs {
			if r.start > last {
				break
			}
			for _, g := range r.groups {
				a.deleteState(g.key)
			}
		}
		a.closeFrom = max(a.closeFrom, last+w.Advance)
	}
	// The slices read that no closed window took are kept for the next
	// close: each slice is then decoded once, not once per window.
	kept := 0
	for kept < len(runs) && runs[kept].start <= last {
		kept++
	}
	a.sliceTail, a.sliceTailEnd = runs[kept:], readTo
	// The next window to close is the first still open that holds a
	// slice left in the store.
	if len(a.sliceTail) > 0 {
		next = a.sliceTail[0].start
	}
	if next != math.MaxInt64 {
		first := max(next-w.Size+w.Advance, last+w.Advance, 0)
		a.nextClose = first + w.Size + w.Grace
	}
	return nil
}

// emitSlicedWindows emits the windows starting in [from, last] that
// hold a slice of runs, each group's result the merge of its slices
// (earlier first) with the latest event time among them.
func (a *aggregate) emitSlicedWindows(tc *TaskContext, runs []sliceRun, from, last int64) error {
	return eachSlicedWindow(a.node, runs, from, last, func(start int64, groups []*mergedSlice) error {
		for _, g := range groups {
			copy(a.keyVals, g.group)
			if out, ok := a.closingResult(tc, g.accs, g.maxTs, start, start+a.node.Window.Size); ok {
				if err := a.emit(tc, out); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// mergedSlice is one group's window: the merge of its slices.
type mergedSlice struct {
	gk    string
	group []any
	accs  []any
	maxTs int64
}

// eachSlicedWindow calls fn with each window starting in [from, last]
// that holds a slice of runs (sorted by start), in start order, with
// its groups in group key order.
func eachSlicedWindow(n *AggregateNode, runs []sliceRun, from, last int64, fn func(start int64, groups []*mergedSlice) error) error {
	w := n.Window
	if len(runs) == 0 {
		return nil
	}
	start := max(from, runs[0].start-w.Size+w.Advance, 0)
	start += mod(-start, w.Advance) // windows start on the advance
	byGroup := map[string]*mergedSlice{}
	var groups []*mergedSlice
	first := 0 // the first run the window may hold
	for start <= last {
		for first < len(runs) && runs[first].start < start {
			first++
		}
		if first == len(runs) {
			return nil
		}
		if runs[first].start >= start+w.Size {
			// No slice in this window: go to the first window holding the
			// next slice.
			start = runs[first].start - w.Size + w.Advance
			continue
		}
		clear(byGroup)
		groups = groups[:0]
		for i := first; i < len(runs) && runs[i].start < start+w.Size; i++ {
			for _, s := range runs[i].groups {
				m := byGroup[string(s.key[8:])]
				if m == nil {
					gk := string(s.key[8:])
					m = &mergedSlice{gk: gk, group: s.group, accs: slices.Clone(s.accs), maxTs: s.maxTs}
					byGroup[gk] = m
					groups = append(groups, m)
					continue
				}
				for j, call := range n.Aggs {
					m.accs[j] = call.Agg.Merge(m.accs[j], s.accs[j])
				}
				m.maxTs = max(m.maxTs, s.maxTs)
			}
		}
		slices.SortFunc(groups, func(x, y *mergedSlice) int { return strings.Compare(x.gk, y.gk) })
		if err := fn(start, groups); err != nil {
			return err
		}
		start += w.Advance
	}
	return nil
}
