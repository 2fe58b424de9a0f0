package exec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/types"
)

// sessionAggregate folds rows into session windows: per key, records no
// more than the gap apart form one session [first, last]. A record that
// falls within the gap of one or more open sessions merges them into one;
// with EMIT CHANGES each superseded session is retracted by a tombstone
// before the merged session is emitted.
//
// A session [start, end] stays open while end + gap + grace is ahead of
// stream time: until then a record may still extend it. A record whose
// merged session would already be closed is late. Closed sessions never
// merge again, so EMIT FINAL emits each session exactly once.
//
// State layout (one store per task partition):
//
//	0x00 ‖ group key ‖ start ‖ end  → maxTs ‖ accumulators
//	0x01 ‖ end ‖ group key ‖ start  → empty: sessions in order of end,
//	                                   read when the operator opens and
//	                                   by expiry's scans of its gap
//
// The sessions that can still change are also listed in memory
// (sessionIndex), so that a record reads the one or two it touches with
// point reads instead of a range scan, and EMIT FINAL finds those that
// close without one; EMIT CHANGES queues the closed ones for expiry
// (sessionExpiry).
type sessionAggregate struct {
	*aggregate
	index *sessionIndex
	// expiry lists the closed sessions EMIT CHANGES keeps until their
	// retention ends.
	expiry sessionExpiry
	// touched are the sessions the current record merges with; merging
	// holds their accumulators. Both are reused from record to record.
	touched []sessionSpan
	merging [][]any
}

const (
	sessionDataTag  = 0x00
	sessionIndexTag = 0x01
)

func appendTime(buf []byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(buf, uint64(t)^(1<<63))
}

func readTime(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

func sessionKey(buf, groupKey []byte, start, end int64) []byte {
	buf = append(append(buf, sessionDataTag), groupKey...)
	return appendTime(appendTime(buf, start), end)
}

func sessionIndexKey(buf []byte, end int64, groupKey []byte, start int64) []byte {
	buf = appendTime(append(buf, sessionIndexTag), end)
	return appendTime(append(buf, groupKey...), start)
}

// splitSessionIndexKey returns end, group key and start of an index key.
func splitSessionIndexKey(k []byte) (end int64, groupKey []byte, start int64, ok bool) {
	if len(k) < 17 || k[0] != sessionIndexTag {
		return 0, nil, 0, false
	}
	return readTime(k[1:]), k[9 : len(k)-8], readTime(k[len(k)-8:]), true
}

// open reports whether a session ending at end can still change.
func (a *sessionAggregate) open(tc *TaskContext, end int64) bool {
	w := a.node.Window
	return addSat(end, w.Size+w.Grace) > tc.StreamTime
}

// Open builds the session index from the store: the sessions still open
// at the restored stream time or, under EMIT FINAL, every stored session,
// since those are the ones yet to be emitted (AdvanceTime emits the closed
// ones first thing).
func (a *sessionAggregate) Open(tc *TaskContext) error {
	if err := a.aggregate.Open(tc); err != nil {
		return err
	}
	a.index = newSessionIndex()
	from := int64(math.MinInt64)
	if !a.node.EmitFinal {
		// The closed sessions the store holds are the expiry's gap, for
		// it to read when their retention ends.
		w := a.node.Window
		from = addSat(subSat(tc.StreamTime, w.Size+w.Grace), 1)
		a.expiry = newSessionExpiry(math.MinInt64, from-1)
	}
	err := a.store.RangeBetween(sessionIndexKey(nil, from, nil, math.MinInt64)[:9], []byte{sessionIndexTag + 1}, func(k, _ []byte) bool {
		end, gk, start, ok := splitSessionIndexKey(k)
		if ok {
			a.index.add(gk, a.index.lookup(gk), start, end)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: index sessions: %w", a.node.Store, err)
	}
	return nil
}

func (a *sessionAggregate) Process(tc *TaskContext, row *Row) error {
	if row.Tombstone || !a.groupKey(tc, row) {
		return nil
	}
	w := a.node.Window
	t := row.Ts
	// The sessions this record touches: open ones whose span comes
	// within the gap of t. Sessions of a key never overlap, so in start
	// order the search ends at the first that starts beyond t + gap.
	ks := a.index.lookup(a.keyBuf)
	a.touched = a.touched[:0]
	merged := sessionSpan{start: t, end: t}
	if ks != nil {
		for _, s := range ks.spans {
			if s.start > addSat(t, w.Size) {
				break
			}
			if s.end < subSat(t, w.Size) || !a.open(tc, s.end) {
				continue
			}
			a.touched = append(a.touched, s)
			merged.start, merged.end = min(merged.start, s.start), max(merged.end, s.end)
		}
	}
	if addSat(merged.end, w.Size+w.Grace) < tc.StreamTime {
		a.late(tc, row, merged.start, merged.end)
		return nil
	}
	// Accumulators combine in time order; the new record is the latest
	// by offset, so it is added last.
	maxTs := t
	a.merging = a.merging[:0]
	for _, s := range a.touched {
		a.stateKey = sessionKey(a.stateKey[:0], a.keyBuf, s.start, s.end)
		v, ok, err := a.store.Get(a.stateKey)
		if err != nil {
			return fmt.Errorf("aggregate %s: read session: %w", a.node.Store, err)
		}
		if !ok {
			return fmt.Errorf("aggregate %s: session [%d, %d] of a key is indexed but not stored", a.node.Store, s.start, s.end)
		}
		accs, sMaxTs, err := decodeAggState(v, a.node.Store)
		if err != nil {
			return err
		}
		a.merging = append(a.merging, accs)
		maxTs = max(maxTs, sMaxTs)
		if s != merged {
			a.store.Delete(a.stateKey)
			a.idxKey = sessionIndexKey(a.idxKey[:0], s.end, a.keyBuf, s.start)
			a.store.Delete(a.idxKey)
			if !a.node.EmitFinal {
				if err := a.emit(tc, a.tombstone(sMaxTs, s.start, s.end)); err != nil {
					return err
				}
			}
		}
	}
	var accs []any
	if len(a.merging) == 0 {
		accs = a.initAccs()
	} else {
		accs = a.merging[0]
		for _, other := range a.merging[1:] {
			for i, call := range a.node.Aggs {
				accs[i] = call.Agg.Merge(accs[i], other[i])
			}
		}
	}
	a.fold(accs, row)
	a.stateKey = sessionKey(a.stateKey[:0], a.keyBuf, merged.start, merged.end)
	a.store.Put(a.stateKey, a.encodeAggState(maxTs, accs))
	a.idxKey = sessionIndexKey(a.idxKey[:0], merged.end, a.keyBuf, merged.start)
	a.store.Put(a.idxKey, nil)
	if len(a.touched) != 1 || a.touched[0] != merged {
		for _, s := range a.touched {
			a.index.remove(ks, s.start, s.end)
		}
		a.index.add(a.keyBuf, ks, merged.start, merged.end)
	}
	if a.node.EmitFinal {
		return nil
	}
	return a.emit(tc, a.result(accs, maxTs, merged.start, merged.end))
}

// emitStored emits the window stored under key (group key gk, bounds
// start and end) as it closes; a window already gone emits nothing.
func (a *aggregate) emitStored(tc *TaskContext, key, gk []byte, start, end int64) error {
	v, ok, err := a.store.Get(key)
	if err != nil {
		return fmt.Errorf("aggregate %s: read window: %w", a.node.Store, err)
	}
	if !ok {
		return nil
	}
	accs, maxTs, err := decodeAggState(v, a.node.Store)
	if err != nil {
		return err
	}
	group, _, err := types.DecodeValues(gk)
	if err != nil {
		return fmt.Errorf("aggregate %s: decode window key: %w", a.node.Store, err)
	}
	copy(a.keyVals, group)
	return a.emit(tc, a.result(accs, maxTs, start, end))
}

// tombstone retracts a superseded window of the current group key.
func (a *aggregate) tombstone(ts, start, end int64) *Row {
	cols := make([]any, len(a.keyVals)+len(a.node.Aggs)+2)
	copy(cols, a.keyVals)
	cols[len(cols)-2], cols[len(cols)-1] = start, end
	return &Row{Cols: cols, Ts: ts, Tombstone: true}
}

// groupKey reads the grouping columns of row into keyVals and keyBuf; it
// is false (and the row is counted and dropped, as ksqlDB does) when one
// is NULL.
func (a *aggregate) groupKey(tc *TaskContext, row *Row) bool {
	for i, c := range a.node.KeyCols {
		v := row.Cols[c]
		if v == nil {
			tc.Metrics.CountError(ErrKindProcessing)
			return false
		}
		a.keyVals[i] = v
	}
	a.keyBuf = types.AppendValues(a.keyBuf[:0], a.keyVals)
	return true
}

// AdvanceTime takes the sessions that closed out of the index, emitting
// each under EMIT FINAL; under EMIT CHANGES they wait in the expiry queue
// until their retention ends and are deleted then.
func (a *sessionAggregate) AdvanceTime(tc *TaskContext) error {
	w := a.node.Window
	closed := subSat(tc.StreamTime, w.Size+w.Grace) // sessions ending at or before closed are closed
	if a.node.EmitFinal {
		if err := a.emitClosed(tc, closed); err != nil {
			return err
		}
		return a.forward.AdvanceTime(tc)
	}
	for {
		ref, ok := a.index.popEnded(closed)
		if !ok {
			break
		}
		a.expiry.closed(ref.ks.key, ref.start, ref.end)
	}
	if err := a.expireSessions(tc, closed); err != nil {
		return err
	}
	return a.forward.AdvanceTime(tc)
}

// emitClosed emits and deletes the sessions ending at or before closed,
// in order of end, as they leave the index.
func (a *sessionAggregate) emitClosed(tc *TaskContext, closed int64) error {
	for {
		ref, ok := a.index.popEnded(closed)
		if !ok {
			return nil
		}
		a.keyBuf = append(a.keyBuf[:0], ref.ks.key...)
		a.stateKey = sessionKey(a.stateKey[:0], a.keyBuf, ref.start, ref.end)
		if err := a.emitStored(tc, a.stateKey, a.keyBuf, ref.start, ref.end); err != nil {
			return err
		}
		a.idxKey = sessionIndexKey(a.idxKey[:0], ref.end, a.keyBuf, ref.start)
		a.store.Delete(a.idxKey)
		a.store.Delete(a.stateKey)
	}
}

// expireSessions deletes the sessions whose end + retention is at or before
// stream time, from the head of the expiry queue, refilling it from the
// gap when it runs dry. Retention is at least gap + grace, so they all
// closed before (ended at or before closed).
func (a *sessionAggregate) expireSessions(tc *TaskContext, closed int64) error {
	cutoff := subSat(tc.StreamTime, a.node.Window.retention()) // sessions ending at or before cutoff are due
	for {
		s, ok := a.expiry.front()
		if !ok {
			if !a.expiry.gap() || a.expiry.gapFrom > cutoff {
				return nil
			}
			if err := a.refillExpiry(closed); err != nil {
				return err
			}
			continue
		}
		if s.end > cutoff {
			return nil
		}
		a.expiry.pop()
		a.keyBuf = append(a.keyBuf[:0], s.key...)
		a.stateKey = sessionKey(a.stateKey[:0], a.keyBuf, s.start, s.end)
		a.idxKey = sessionIndexKey(a.idxKey[:0], s.end, a.keyBuf, s.start)
		a.store.Delete(a.idxKey)
		a.store.Delete(a.stateKey)
		tc.Metrics.Expired.Add(1)
	}
}

// refillExpiry moves the first sessions of the expiry's gap from the
// store's index into the queue: up to q.refill of them (and the rest
// of those ending with the last), none ending after closed, which may
// still change. The gap then starts after what was read; it is empty when
// the scan reached its end.
func (a *sessionAggregate) refillExpiry(closed int64) error {
	q := &a.expiry
	bound := min(q.gapTo, closed)
	read, last := 0, int64(math.MinInt64)
	full := false
	err := a.store.RangeBetween(sessionIndexKey(nil, q.gapFrom, nil, math.MinInt64)[:9], []byte{sessionIndexTag + 1}, func(k, _ []byte) bool {
		end, gk, start, ok := splitSessionIndexKey(k)
		if !ok {
			return true
		}
		if end > bound || read >= q.refill && end != last {
			full = end <= bound
			return false
		}
		q.queue = append(q.queue, expiringSession{key: string(gk), start: start, end: end})
		read, last = read+1, end
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: scan closed sessions: %w", a.node.Store, err)
	}
	if full {
		q.gapFrom = last + 1
	} else {
		q.gapFrom = addSat(bound, 1)
	}
	return nil
}
