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
//	                                   for closing and expiry scans
type sessionAggregate struct {
	*aggregate
	sessions []session
}

type session struct {
	key        []byte
	start, end int64
	maxTs      int64
	accs       []any
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

func (a *sessionAggregate) Process(tc *TaskContext, row *Row) error {
	if row.Tombstone || !a.groupKey(tc, row) {
		return nil
	}
	w := a.node.Window
	t := row.Ts
	// The sessions this record touches: open ones whose span comes
	// within the gap of t. Sessions of a key never overlap, so in start
	// order the scan ends at the first that starts beyond t + gap.
	a.sessions = a.sessions[:0]
	prefix := append([]byte{sessionDataTag}, a.keyBuf...)
	var decodeErr error
	err := a.store.RangeBetween(prefix, prefixEnd(prefix), func(k, v []byte) bool {
		if len(k) != len(prefix)+16 {
			return true
		}
		start, end := readTime(k[len(prefix):]), readTime(k[len(prefix)+8:])
		if start > addSat(t, w.Size) {
			return false
		}
		if end < subSat(t, w.Size) || !a.open(tc, end) {
			return true
		}
		accs, maxTs, err := decodeAggState(v, a.node.Store)
		if err != nil {
			decodeErr = err
			return false
		}
		a.sessions = append(a.sessions, session{key: append([]byte(nil), k...), start: start, end: end, maxTs: maxTs, accs: accs})
		return true
	})
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return fmt.Errorf("aggregate %s: read sessions: %w", a.node.Store, err)
	}
	merged := session{start: t, end: t, maxTs: t}
	for _, s := range a.sessions {
		merged.start, merged.end = min(merged.start, s.start), max(merged.end, s.end)
		merged.maxTs = max(merged.maxTs, s.maxTs)
	}
	if addSat(merged.end, w.Size+w.Grace) < tc.StreamTime {
		a.late(tc, row, merged.start, merged.end)
		return nil
	}
	// Accumulators combine in time order; the new record is the latest
	// by offset, so it is added last.
	if len(a.sessions) == 0 {
		merged.accs = a.initAccs()
	} else {
		merged.accs = a.sessions[0].accs
		for _, s := range a.sessions[1:] {
			for i, call := range a.node.Aggs {
				merged.accs[i] = call.Agg.Merge(merged.accs[i], s.accs[i])
			}
		}
	}
	a.fold(merged.accs, row)
	for _, s := range a.sessions {
		if s.start == merged.start && s.end == merged.end {
			continue // the record fell inside this session: updated below
		}
		a.store.Delete(s.key)
		a.idxKey = sessionIndexKey(a.idxKey[:0], s.end, a.keyBuf, s.start)
		a.store.Delete(a.idxKey)
		if !a.node.EmitFinal {
			if err := a.emit(tc, a.tombstone(s.maxTs, s.start, s.end)); err != nil {
				return err
			}
		}
	}
	a.stateKey = sessionKey(a.stateKey[:0], a.keyBuf, merged.start, merged.end)
	a.store.Put(a.stateKey, a.encodeAggState(merged.maxTs, merged.accs))
	a.idxKey = sessionIndexKey(a.idxKey[:0], merged.end, a.keyBuf, merged.start)
	a.store.Put(a.idxKey, nil)
	if a.node.EmitFinal {
		a.nextClose = min(a.nextClose, addSat(merged.end, w.Size+w.Grace))
		return nil
	}
	a.nextExpire = min(a.nextExpire, addSat(merged.end, w.retention()))
	return a.emit(tc, a.result(merged.accs, merged.maxTs, merged.start, merged.end))
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

// AdvanceTime emits sessions that closed (EMIT FINAL) or deletes those
// past retention (EMIT CHANGES), walking the index in order of end.
func (a *sessionAggregate) AdvanceTime(tc *TaskContext) error {
	w := a.node.Window
	if a.node.EmitFinal && tc.StreamTime >= a.nextClose {
		if err := a.scanEnded(tc, w.Size+w.Grace, &a.nextClose, &a.closeFrom, true); err != nil {
			return err
		}
	}
	if !a.node.EmitFinal && tc.StreamTime >= a.nextExpire {
		if err := a.scanEnded(tc, w.retention(), &a.nextExpire, &a.expireFrom, false); err != nil {
			return err
		}
	}
	return a.forward.AdvanceTime(tc)
}

// scanEnded removes the sessions whose end + after is at or before stream
// time, emitting each when emit is set. next becomes the time the first
// remaining session is due; from is where the next scan starts.
func (a *sessionAggregate) scanEnded(tc *TaskContext, after int64, next, from *int64, emit bool) error {
	*next = math.MaxInt64
	cutoff := subSat(tc.StreamTime, after) // sessions ending at or before cutoff are due
	start := *from
	*from = max(*from, addSat(cutoff, 1))
	var due [][]byte
	err := a.store.RangeBetween(sessionIndexKey(nil, start, nil, math.MinInt64)[:9], []byte{sessionIndexTag + 1}, func(k, _ []byte) bool {
		end, _, _, ok := splitSessionIndexKey(k)
		if !ok {
			return true
		}
		if end > cutoff {
			*next = addSat(end, after)
			return false
		}
		due = append(due, append([]byte(nil), k...))
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: scan sessions: %w", a.node.Store, err)
	}
	for _, k := range due {
		end, gk, start, _ := splitSessionIndexKey(k)
		a.stateKey = sessionKey(a.stateKey[:0], gk, start, end)
		if emit {
			if err := a.emitStored(tc, a.stateKey, gk, start, end); err != nil {
				return err
			}
		} else {
			tc.Metrics.Expired.Add(1)
		}
		a.store.Delete(k)
		a.store.Delete(a.stateKey)
	}
	return nil
}

// prefixEnd is the smallest key greater than every key starting with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
