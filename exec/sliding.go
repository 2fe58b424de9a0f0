package exec

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/sluice-sql/sluice/types"
)

// slidingAggregate folds rows into sliding windows of Size: for each
// record time t the window [t−Size, t], and [t+1, t+1+Size] when another
// record follows t within Size (the window just after t drops out). Both
// ends are inclusive. Every distinct set of records that lie within Size
// of each other thus has exactly one window, so results change only when
// the set does — Kafka Streams' SlidingWindows, which ksqlDB lacks.
//
// A record at t is accepted while t + grace is not behind stream time;
// then every window containing it is still open (its end is at least t),
// and a window [s, e] closes once e + grace is behind stream time.
//
// New windows need the records they cover, so the operator keeps each
// accepted record's aggregate arguments until no new window can cover it
// (t + size + grace behind stream time). State layout:
//
//	0x00 ‖ group key ‖ start     → maxTs ‖ accumulators   (window)
//	0x01 ‖ end ‖ group key       → empty (windows by end: close, expiry)
//	0x02 ‖ group key ‖ t         → argument rows of the records at t
//	0x03 ‖ t ‖ group key         → empty (records by time: pruning)
type slidingAggregate struct {
	*aggregate
	recs []slidingRecord
	// affected are the windows this record changed or created, with
	// their new state, to emit without reading them back.
	affected []slidingWindow
	// nextPrune is when the oldest kept record can be dropped; pruneFrom
	// is where the next pruning scan starts.
	nextPrune, pruneFrom int64
}

// A sliding aggregation does not promise to keep nothing of a row (the
// embedded aggregate's promise is for time windows and none).
func (a *slidingAggregate) borrowsRows() bool { return false }

type slidingWindow struct {
	start, maxTs int64
	accs         []any
}

type slidingRecord struct {
	ts   int64
	args []any // per aggregate call, its argument values
}

const (
	slidingWindowTag    = 0x00
	slidingWinIndexTag  = 0x01
	slidingRecordTag    = 0x02
	slidingRecIndexTag  = 0x03
	slidingRecIndexNext = slidingRecIndexTag + 1
)

func slidingWindowKey(buf, groupKey []byte, start int64) []byte {
	return appendTime(append(append(buf, slidingWindowTag), groupKey...), start)
}

func slidingWinIndexKey(buf []byte, end int64, groupKey []byte) []byte {
	return append(appendTime(append(buf, slidingWinIndexTag), end), groupKey...)
}

func slidingRecordKey(buf, groupKey []byte, t int64) []byte {
	return appendTime(append(append(buf, slidingRecordTag), groupKey...), t)
}

func slidingRecIndexKey(buf []byte, t int64, groupKey []byte) []byte {
	return append(appendTime(append(buf, slidingRecIndexTag), t), groupKey...)
}

func (a *slidingAggregate) Open(tc *TaskContext) error {
	a.nextPrune, a.pruneFrom = math.MinInt64, math.MinInt64
	if err := a.aggregate.Open(tc); err != nil {
		return err
	}
	if tc.StreamTime == math.MinInt64 {
		return nil
	}
	// Expired windows and pruned records leave the store without
	// tombstones, so a restore from the changelog brings back those it
	// had not aged out yet: they go before anything reads the store, pull
	// queries included.
	if !a.node.EmitFinal {
		if err := a.scanWindows(tc, a.node.Window.retention(), &a.nextExpire, &a.expireFrom, false); err != nil {
			return err
		}
	}
	return a.prune(tc)
}

func (a *slidingAggregate) Process(tc *TaskContext, row *Row) error {
	if row.Tombstone || !a.groupKey(tc, row) {
		return nil
	}
	w := a.node.Window
	t, size := row.Ts, w.Size
	if addSat(t, w.Grace) < tc.StreamTime {
		a.late(tc, row, subSat(t, size), t)
		return nil
	}
	a.affected = a.affected[:0]

	// 1. Windows that exist and contain t take the record.
	lo := slidingWindowKey(nil, a.keyBuf, subSat(t, size))
	hi := slidingWindowKey(nil, a.keyBuf, addSat(t, 1))
	type update struct {
		start int64
		accs  []any
		maxTs int64
	}
	var updates []update
	var decodeErr error
	err := a.store.RangeBetween(lo, hi, func(k, v []byte) bool {
		accs, maxTs, err := decodeAggState(v, a.node.Store)
		if err != nil {
			decodeErr = err
			return false
		}
		updates = append(updates, update{readTime(k[len(k)-8:]), accs, maxTs})
		return true
	})
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return fmt.Errorf("aggregate %s: read windows: %w", a.node.Store, err)
	}
	for _, u := range updates {
		a.fold(u.accs, row, nil)
		a.putWindow(u.start, max(u.maxTs, t), u.accs, false)
		a.affected = append(a.affected, slidingWindow{u.start, max(u.maxTs, t), u.accs})
	}

	// 2. Keep the record for windows created later.
	args := make([]any, len(a.node.Aggs))
	for i, call := range a.node.Aggs {
		vals := make([]any, len(call.Args))
		for j, e := range call.Args {
			vals[j] = e(row.Cols)
		}
		args[i] = vals
	}
	a.stateKey = slidingRecordKey(a.stateKey[:0], a.keyBuf, t)
	prev, seen, err := a.store.Get(a.stateKey)
	if err != nil {
		return fmt.Errorf("aggregate %s: read records: %w", a.node.Store, err)
	}
	a.valBuf = types.AppendValues(append(a.valBuf[:0], prev...), args)
	a.store.Put(a.stateKey, a.valBuf)
	if !seen {
		a.idxKey = slidingRecIndexKey(a.idxKey[:0], t, a.keyBuf)
		a.store.Put(a.idxKey, nil)
		a.nextPrune = min(a.nextPrune, addSat(t, size+w.Grace+1))
	}

	// 3. Windows the record calls into being: its own [t−size, t]; the
	// one after it when a record follows within size; and the one after
	// the record just before it, which t now ends.
	if err := a.loadRecords(subSat(t, size), addSat(t, size+2)); err != nil {
		return err
	}
	want := []int64{subSat(t, size)}
	prevTs, hasPrev, hasNext := int64(0), false, false
	for _, r := range a.recs {
		switch {
		case r.ts < t:
			prevTs, hasPrev = r.ts, true
		case r.ts > t && r.ts <= t+size:
			hasNext = true
		}
	}
	if hasNext {
		want = append(want, t+1)
	}
	if hasPrev {
		want = append(want, prevTs+1)
	}
	for _, s := range want {
		if slices.ContainsFunc(a.affected, func(w slidingWindow) bool { return w.start == s }) {
			continue
		}
		a.stateKey = slidingWindowKey(a.stateKey[:0], a.keyBuf, s)
		_, exists, err := a.store.Get(a.stateKey)
		if err != nil {
			return fmt.Errorf("aggregate %s: read window: %w", a.node.Store, err)
		}
		if exists {
			continue
		}
		accs, maxTs := a.initAccs(), int64(math.MinInt64)
		for _, r := range a.recs {
			if r.ts < s || r.ts > s+size {
				continue
			}
			for i, call := range a.node.Aggs {
				accs[i] = call.Agg.Add(accs[i], r.args[i].([]any))
			}
			maxTs = max(maxTs, r.ts)
		}
		a.putWindow(s, maxTs, accs, true)
		a.affected = append(a.affected, slidingWindow{s, maxTs, accs})
	}

	// 4. Emit (EMIT CHANGES) or remember when the windows close.
	slices.SortFunc(a.affected, func(x, y slidingWindow) int { return cmp.Compare(x.start, y.start) })
	for _, w := range a.affected {
		end := w.start + size
		if a.node.EmitFinal {
			a.nextClose = min(a.nextClose, addSat(end, a.node.Window.Grace+1))
			continue
		}
		a.nextExpire = min(a.nextExpire, addSat(end, a.node.Window.retention()+1))
		if err := a.emit(tc, a.result(w.accs, w.maxTs, w.start, end)); err != nil {
			return err
		}
	}
	return nil
}

func (a *slidingAggregate) putWindow(start, maxTs int64, accs []any, isNew bool) {
	a.stateKey = slidingWindowKey(a.stateKey[:0], a.keyBuf, start)
	a.store.Put(a.stateKey, a.encodeAggState(maxTs, accs))
	if isNew {
		a.idxKey = slidingWinIndexKey(a.idxKey[:0], start+a.node.Window.Size, a.keyBuf)
		a.store.Put(a.idxKey, nil)
	}
}

// loadRecords reads the current key's kept records with times in
// [from, to), in time and then arrival order.
func (a *slidingAggregate) loadRecords(from, to int64) error {
	a.recs = a.recs[:0]
	var decodeErr error
	err := a.store.RangeBetween(slidingRecordKey(nil, a.keyBuf, from), slidingRecordKey(nil, a.keyBuf, to), func(k, v []byte) bool {
		ts := readTime(k[len(k)-8:])
		for len(v) > 0 {
			args, rest, err := types.DecodeValues(v)
			if err != nil {
				decodeErr = err
				return false
			}
			a.recs = append(a.recs, slidingRecord{ts: ts, args: args})
			v = rest
		}
		return true
	})
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return fmt.Errorf("aggregate %s: read records: %w", a.node.Store, err)
	}
	return nil
}

// AdvanceTime emits closed windows (EMIT FINAL) or deletes windows past
// retention (EMIT CHANGES), and drops records no new window can cover.
func (a *slidingAggregate) AdvanceTime(tc *TaskContext) error {
	w := a.node.Window
	if a.node.EmitFinal && tc.StreamTime >= a.nextClose {
		if err := a.scanWindows(tc, w.Grace, &a.nextClose, &a.closeFrom, true); err != nil {
			return err
		}
	}
	if !a.node.EmitFinal && tc.StreamTime >= a.nextExpire {
		if err := a.scanWindows(tc, w.retention(), &a.nextExpire, &a.expireFrom, false); err != nil {
			return err
		}
	}
	if tc.StreamTime >= a.nextPrune {
		if err := a.prune(tc); err != nil {
			return err
		}
	}
	return a.forward.AdvanceTime(tc)
}

// scanWindows removes windows whose end + after is behind stream time,
// emitting each when emit is set.
func (a *slidingAggregate) scanWindows(tc *TaskContext, after int64, next, from *int64, emit bool) error {
	w := a.node.Window
	*next = math.MaxInt64
	cutoff := subSat(tc.StreamTime, addSat(after, 1)) // windows ending at or before cutoff are due
	start := *from
	*from = max(*from, addSat(cutoff, 1))
	var due [][]byte
	err := a.store.RangeBetween(slidingWinIndexKey(nil, start, nil), []byte{slidingWinIndexTag + 1}, func(k, _ []byte) bool {
		end := readTime(k[1:])
		if end > cutoff {
			*next = addSat(end, addSat(after, 1))
			return false
		}
		due = append(due, append([]byte(nil), k...))
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: scan windows: %w", a.node.Store, err)
	}
	for _, k := range due {
		end, gk := readTime(k[1:]), k[9:]
		a.stateKey = slidingWindowKey(a.stateKey[:0], gk, end-w.Size)
		if emit {
			if err := a.emitStored(tc, a.stateKey, gk, end-w.Size, end); err != nil {
				return err
			}
			// Emitted, the window is deleted: a restore must not bring
			// it back to be emitted again.
			a.store.Delete(k)
			a.store.Delete(a.stateKey)
			continue
		}
		// Past retention: a local delete, no tombstone (state.Store.
		// Expire); the compact,delete changelog ages the window out,
		// and Open drops what a restore brings back.
		tc.Metrics.Expired.Add(1)
		a.store.Expire(k)
		a.store.Expire(a.stateKey)
	}
	return nil
}

// prune deletes kept records at or before stream time − size − grace − 1:
// every window that could still be created starts after them.
func (a *slidingAggregate) prune(tc *TaskContext) error {
	w := a.node.Window
	keep := addSat(w.Size, w.Grace+1)
	cutoff := subSat(tc.StreamTime, keep)
	a.nextPrune = math.MaxInt64
	from := a.pruneFrom
	a.pruneFrom = max(a.pruneFrom, addSat(cutoff, 1))
	var old [][]byte
	err := a.store.RangeBetween(slidingRecIndexKey(nil, from, nil), []byte{slidingRecIndexNext}, func(k, _ []byte) bool {
		ts := readTime(k[1:])
		if ts > cutoff {
			a.nextPrune = addSat(ts, keep)
			return false
		}
		old = append(old, append([]byte(nil), k...))
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: prune records: %w", a.node.Store, err)
	}
	// No new window can cover these records: a local delete, as for
	// expired windows (a restored one is pruned again as the task opens,
	// and could not join a window before that either).
	for _, k := range old {
		a.store.Expire(k)
		a.store.Expire(slidingRecordKey(a.stateKey[:0], k[9:], readTime(k[1:])))
	}
	return nil
}
