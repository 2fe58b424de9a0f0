package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/state"
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
//	0x02 ‖ group key ‖ start        → end ‖ maxTs ‖ accumulators
//	0x01 ‖ end ‖ group key ‖ start  → empty: the closed sessions EMIT
//	                                   CHANGES keeps until their retention
//	                                   ends, in order of end, for expiry
//
// A session keeps its key while records extend its end, the common case,
// so it is written once per commit interval under one key. The sessions
// that can still change live in memory with their accumulators
// (sessionIndex), built from the store's data keys when the operator opens;
// the operator is the store's state.WriteBack and writes the sessions
// changed since the last write-back when the store's writes are taken.
// EMIT FINAL emits closing sessions as they leave the index; EMIT CHANGES
// writes a closed session's index key by end once, as it closes, and queues
// it for expiry (sessionExpiry); one whose retention has ended by then is
// deleted at once.
//
// Stores written before this layout (0x00 ‖ group key ‖ start ‖ end →
// maxTs ‖ accumulators, and an index key by end for every session) are
// rewritten when the operator opens (migrateSessions).
type sessionAggregate struct {
	*aggregate
	index *sessionIndex
	// expiry lists the closed sessions EMIT CHANGES keeps until their
	// retention ends.
	expiry sessionExpiry
	// changed lists the sessions changed since the last WriteBack.
	changed []*sessionState
	// stale says the store discarded its uncommitted writes, and the
	// index and expiry with them: they are built again from the store
	// before their next use.
	stale bool
	// touched are the sessions the current record merges with, reused
	// from record to record.
	touched []*sessionState
	dataKey []byte
}

// A session aggregation does not promise to keep nothing of a row (the
// embedded aggregate's promise is for time windows and none).
func (a *sessionAggregate) borrowsRows() bool { return false }

var _ state.WriteBack = (*sessionAggregate)(nil)

const (
	// sessionOldDataTag keyed a session by group key, start and end,
	// before sessions kept one key as they extend (migrateSessions).
	sessionOldDataTag = 0x00
	sessionIndexTag   = 0x01
	sessionDataTag    = 0x02
)

func appendTime(buf []byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(buf, uint64(t)^(1<<63))
}

func readTime(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// sessionKey is the data key of a group key's session starting at start.
func sessionKey(buf, groupKey []byte, start int64) []byte {
	buf = append(append(buf, sessionDataTag), groupKey...)
	return appendTime(buf, start)
}

// splitSessionKey returns group key and start of a data key.
func splitSessionKey(k []byte) (groupKey []byte, start int64, ok bool) {
	if len(k) < 9 || k[0] != sessionDataTag {
		return nil, 0, false
	}
	return k[1 : len(k)-8], readTime(k[len(k)-8:]), true
}

// appendSessionState lays out a session's value: end ‖ maxTs ‖ accumulators.
func appendSessionState(buf []byte, end, maxTs int64, accs []any) []byte {
	return appendAggState(appendTime(buf, end), maxTs, accs)
}

// splitSessionState returns the end of a session's value and the rest,
// maxTs ‖ accumulators as decodeAggState reads them.
func splitSessionState(v []byte) (end int64, rest []byte, ok bool) {
	if len(v) < 8 {
		return 0, nil, false
	}
	return readTime(v), v[8:], true
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

// Open rewrites a store of the old layout, builds the session index from
// the store and becomes the store's write-back cache.
func (a *sessionAggregate) Open(tc *TaskContext) error {
	if err := a.aggregate.Open(tc); err != nil {
		return err
	}
	if err := a.migrateSessions(tc); err != nil {
		return err
	}
	if err := a.load(tc); err != nil {
		return err
	}
	a.store.SetWriteBack(a)
	return nil
}

// load builds the index from the store's sessions: those still open at
// stream time or, under EMIT FINAL, every stored session, since those are
// the ones yet to be emitted (AdvanceTime emits the closed ones first
// thing). Under EMIT CHANGES the closed ones are in the store's index by
// end, the expiry's gap.
func (a *sessionAggregate) load(tc *TaskContext) error {
	a.index = newSessionIndex()
	clear(a.changed)
	a.changed = a.changed[:0]
	a.stale = false
	w := a.node.Window
	closed := int64(math.MinInt64) // sessions ending at or before closed are left out
	cutoff := int64(math.MinInt64) // sessions ending at or before cutoff are past retention
	if !a.node.EmitFinal {
		closed = subSat(tc.StreamTime, w.Size+w.Grace)
		cutoff = subSat(tc.StreamTime, w.retention())
		a.expiry = newSessionExpiry(math.MinInt64, closed)
	}
	// Sessions expire without tombstones, so a restore from the changelog
	// brings back those it had not aged out yet: they go before anything
	// reads the store, pull queries included, when stream time is known.
	var expired [][]byte
	var failed error
	err := a.store.Range([]byte{sessionDataTag}, func(k, v []byte) bool {
		gk, start, ok := splitSessionKey(k)
		end, rest, okV := splitSessionState(v)
		if !ok || !okV {
			failed = fmt.Errorf("aggregate %s: malformed session %x", a.node.Store, k)
			return false
		}
		if end <= cutoff {
			expired = append(expired, bytes.Clone(k))
			return true
		}
		if end <= closed {
			return true
		}
		accs, maxTs, err := decodeAggState(rest, a.node.Store)
		if err != nil {
			failed = err
			return false
		}
		ks := a.index.entry(gk, a.index.lookup(gk))
		a.index.add(&sessionState{ks: ks, start: start, end: end, maxTs: maxTs, accs: accs, stored: true})
		return true
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return fmt.Errorf("aggregate %s: index sessions: %w", a.node.Store, err)
	}
	return a.expireRestored(tc, expired, cutoff)
}

// expireRestored drops from the store the sessions past retention that
// load found (their data keys), and the index keys by end of those
// sessions: the ones ending at or before cutoff.
func (a *sessionAggregate) expireRestored(tc *TaskContext, expired [][]byte, cutoff int64) error {
	if len(expired) == 0 {
		return nil
	}
	for _, k := range expired {
		a.store.Expire(k)
	}
	tc.Metrics.Expired.Add(int64(len(expired)))
	var idx [][]byte
	hi := appendTime([]byte{sessionIndexTag}, addSat(cutoff, 1))
	err := a.store.RangeBetween([]byte{sessionIndexTag}, hi, func(k, _ []byte) bool {
		idx = append(idx, bytes.Clone(k))
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: expire restored sessions: %w", a.node.Store, err)
	}
	for _, k := range idx {
		a.store.Expire(k)
	}
	return nil
}

// migrateSessions rewrites the sessions of a store written before sessions
// kept their key as they extend: each moves from 0x00 ‖ group key ‖ start ‖
// end to its data key (group key, start), its end into the value. The
// index by end keeps only the closed sessions EMIT CHANGES retains. The
// rewrite goes to the store's overlay, so the next commit makes it durable
// along with the changelog; a crash before redoes it.
func (a *sessionAggregate) migrateSessions(tc *TaskContext) error {
	w := a.node.Window
	closed := subSat(tc.StreamTime, w.Size+w.Grace)
	type oldSession struct{ key, value []byte }
	var batch []oldSession
	from := []byte{sessionOldDataTag}
	for {
		batch = batch[:0]
		err := a.store.RangeBetween(from, []byte{sessionOldDataTag + 1}, func(k, v []byte) bool {
			batch = append(batch, oldSession{bytes.Clone(k), bytes.Clone(v)})
			return len(batch) < expiryRefill
		})
		if err != nil {
			return fmt.Errorf("aggregate %s: read sessions of the old layout: %w", a.node.Store, err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, old := range batch {
			k := old.key
			if len(k) < 17 {
				return fmt.Errorf("aggregate %s: malformed session %x", a.node.Store, k)
			}
			gk, start, end := k[1:len(k)-16], readTime(k[len(k)-16:]), readTime(k[len(k)-8:])
			a.dataKey = sessionKey(a.dataKey[:0], gk, start)
			a.valBuf = append(appendTime(a.valBuf[:0], end), old.value...)
			a.store.Put(a.dataKey, a.valBuf)
			a.store.Delete(k)
			if a.node.EmitFinal || end > closed {
				a.idxKey = sessionIndexKey(a.idxKey[:0], end, gk, start)
				a.store.Delete(a.idxKey)
			}
		}
		last := batch[len(batch)-1].key
		from = append(last[:len(last):len(last)], 0)
	}
}

// WriteBack puts the sessions changed since the last call into the store.
func (a *sessionAggregate) WriteBack() {
	for _, s := range a.changed {
		if s.changed {
			a.writeSession(s)
		}
	}
	clear(a.changed)
	a.changed = a.changed[:0]
}

// Discard drops the index: the store dropped the uncommitted writes it
// holds changes beyond. It is built again from the store before its next
// use.
func (a *sessionAggregate) Discard() {
	a.index = nil
	clear(a.changed)
	a.changed = a.changed[:0]
	a.stale = true
}

// Close stops being the store's write-back cache: what it holds beyond the
// last commit is uncommitted work, lost as in a crash.
func (a *sessionAggregate) Close() error {
	if a.store != nil {
		a.store.DropWriteBack(a)
	}
	return a.aggregate.Close()
}

// writeSession puts session s into the store under its data key.
func (a *sessionAggregate) writeSession(s *sessionState) {
	s.changed, s.stored = false, true
	a.dataKey = sessionKey(a.dataKey[:0], []byte(s.ks.key), s.start)
	a.valBuf = appendSessionState(a.valBuf[:0], s.end, s.maxTs, s.accs)
	a.store.Put(a.dataKey, a.valBuf)
}

// dropSession deletes session s, no longer indexed, from the store (if it
// ever reached it) and from the sessions to write back. A session past
// its retention (expired) leaves without a changelog tombstone: the
// session changelog is compact,delete and ages it out (state.Store.
// Expire), as Kafka Streams' session stores drop their expired segments;
// a restore may bring it back, and load expires it again.
func (a *sessionAggregate) dropSession(s *sessionState, expired bool) {
	if s.stored {
		a.dataKey = sessionKey(a.dataKey[:0], []byte(s.ks.key), s.start)
		if expired {
			a.store.Expire(a.dataKey)
		} else {
			a.store.Delete(a.dataKey)
		}
	}
	s.changed, s.stored, s.gone = false, false, true
	s.accs = nil
}

// markChanged puts s on the list of sessions to write back.
func (a *sessionAggregate) markChanged(s *sessionState) {
	if !s.changed {
		s.changed = true
		a.changed = append(a.changed, s)
	}
}

// ready builds the index again if the store discarded it.
func (a *sessionAggregate) ready(tc *TaskContext) error {
	if !a.stale {
		return nil
	}
	return a.load(tc)
}

func (a *sessionAggregate) Process(tc *TaskContext, row *Row) error {
	if row.Tombstone || !a.groupKey(tc, row) {
		return nil
	}
	if err := a.ready(tc); err != nil {
		return err
	}
	w := a.node.Window
	t := row.Ts
	// The sessions this record touches: open ones whose span comes
	// within the gap of t. Sessions of a key never overlap, so in start
	// order the search ends at the first that starts beyond t + gap.
	ks := a.index.lookup(a.keyBuf)
	a.touched = a.touched[:0]
	mergedStart, mergedEnd := t, t
	if ks != nil {
		for _, s := range ks.spans {
			if s.start > addSat(t, w.Size) {
				break
			}
			if s.end < subSat(t, w.Size) || !a.open(tc, s.end) {
				continue
			}
			a.touched = append(a.touched, s)
			mergedStart, mergedEnd = min(mergedStart, s.start), max(mergedEnd, s.end)
		}
	}
	if addSat(mergedEnd, w.Size+w.Grace) < tc.StreamTime {
		a.late(tc, row, mergedStart, mergedEnd)
		return nil
	}
	var pre *fallibleFold
	if a.fallible != nil {
		// The first pass: what may fail, before anything changes.
		pre = a.prepareSession(row)
	}
	// The merged session keeps the key of the touched session that
	// starts where it does, the first in start order, if any.
	// Accumulators combine in time order; the new record is the latest
	// by offset, so it is added last.
	var kept *sessionState
	merging := a.touched
	if len(a.touched) > 0 && a.touched[0].start == mergedStart {
		kept, merging = a.touched[0], a.touched[1:]
		if kept.end != mergedEnd && !a.node.EmitFinal {
			// Its row changes bounds: the old one is retracted.
			if err := a.emit(tc, a.tombstone(kept.maxTs, kept.start, kept.end)); err != nil {
				return err
			}
		}
	} else {
		ks = a.index.entry(a.keyBuf, ks)
		kept = &sessionState{ks: ks, start: mergedStart, end: mergedEnd, maxTs: math.MinInt64}
		if len(merging) > 0 {
			// The first merged session's accumulators become the new
			// session's: it is dropped below.
			kept.accs, merging[0].accs = merging[0].accs, nil
			kept.maxTs = merging[0].maxTs
			if err := a.retract(tc, merging[0], kept.maxTs); err != nil {
				return err
			}
			merging = merging[1:]
		} else {
			kept.accs = a.freshAccs(pre != nil)
		}
		a.index.add(kept)
	}
	for _, s := range merging {
		for i, call := range a.node.Aggs {
			if pre != nil && call.Agg.Fallible {
				continue // the first pass merged them
			}
			kept.accs[i] = call.Agg.Merge(kept.accs[i], s.accs[i])
		}
		kept.maxTs = max(kept.maxTs, s.maxTs)
		if err := a.retract(tc, s, s.maxTs); err != nil {
			return err
		}
	}
	a.index.setEnd(kept, mergedEnd)
	a.fold(kept.accs, row, pre)
	kept.maxTs = max(kept.maxTs, t)
	a.markChanged(kept)
	if a.node.EmitFinal {
		return nil
	}
	return a.emit(tc, a.resultOf(kept.accs, kept.maxTs, kept.start, kept.end, preResults(pre)))
}

// prepareSession runs the first pass of folding row into the sessions it
// touches (a.touched, in start order): they merge into the first, then
// take the row.
func (a *sessionAggregate) prepareSession(row *Row) *fallibleFold {
	if len(a.prepared) == 0 {
		a.prepared = append(a.prepared, fallibleFold{})
	}
	pre := &a.prepared[0]
	var base []any
	var merged [][]any
	if len(a.touched) > 0 {
		base = a.touched[0].accs
		for _, s := range a.touched[1:] {
			merged = append(merged, s.accs)
		}
	}
	a.prepareFold(pre, base, merged, row, !a.node.EmitFinal, false)
	return pre
}

// retract takes session s, merged into another, out of the index and the
// store, and under EMIT CHANGES retracts its row (event time maxTs).
func (a *sessionAggregate) retract(tc *TaskContext, s *sessionState, maxTs int64) error {
	a.index.remove(s)
	a.dropSession(s, false)
	if a.node.EmitFinal {
		return nil
	}
	return a.emit(tc, a.tombstone(maxTs, s.start, s.end))
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
	if err := a.ready(tc); err != nil {
		return err
	}
	w := a.node.Window
	closed := subSat(tc.StreamTime, w.Size+w.Grace) // sessions ending at or before closed are closed
	if a.node.EmitFinal {
		if err := a.emitClosed(tc, closed); err != nil {
			return err
		}
		return a.forward.AdvanceTime(tc)
	}
	cutoff := subSat(tc.StreamTime, w.retention()) // sessions ending at or before cutoff are due
	for {
		s, ok := a.index.popEnded(closed)
		if !ok {
			break
		}
		if s.end <= cutoff {
			// Its retention ended as it closed (retention gap + grace):
			// no tombstone.
			a.dropSession(s, true)
			tc.Metrics.Expired.Add(1)
			continue
		}
		// Closed, it never changes again: written now, it needs no
		// write-back, and its index key by end is written once.
		if s.changed {
			a.writeSession(s)
		}
		s.gone = true
		s.accs = nil
		a.idxKey = sessionIndexKey(a.idxKey[:0], s.end, []byte(s.ks.key), s.start)
		a.store.Put(a.idxKey, nil)
		a.expiry.closed(s.ks.key, s.start, s.end)
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
		s, ok := a.index.popEnded(closed)
		if !ok {
			return nil
		}
		group, _, err := types.DecodeValues([]byte(s.ks.key))
		if err != nil {
			return fmt.Errorf("aggregate %s: decode session key: %w", a.node.Store, err)
		}
		copy(a.keyVals, group)
		if out, ok := a.closingResult(tc, s.accs, s.maxTs, s.start, s.end); ok {
			if err := a.emit(tc, out); err != nil {
				return err
			}
		}
		a.dropSession(s, false)
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
		a.dataKey = sessionKey(a.dataKey[:0], a.keyBuf, s.start)
		a.idxKey = sessionIndexKey(a.idxKey[:0], s.end, a.keyBuf, s.start)
		a.store.Expire(a.idxKey)
		a.store.Expire(a.dataKey)
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
