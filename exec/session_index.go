package exec

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/google/btree"
)

// sessionIndex is a task's in-memory list of the sessions that a record may
// still merge with (or, under EMIT FINAL, that are yet to be emitted): per
// group key the sessions with their accumulators, and all of them in order
// of end. A record finds the one or two sessions it touches with a map
// lookup and folds into Go values; the store sees a session's state once
// per commit interval (the operator is the store's state.WriteBack), where
// a range scan per record opened a Badger iterator and every record wrote
// the session under a new key.
//
// It is never the truth: the operator builds it from the store when it
// opens, and what it holds beyond the store is written back before the
// store's writes are taken (changelog, commit, scan). A crash loses it with
// the store's uncommitted writes; an aborted transaction discards the
// store's overlay, and with it the index, which the operator builds again
// from what the store then holds before it next uses it. Sessions leave it
// as they close, so it is bounded by what can still change (by end + gap +
// grace).
type sessionIndex struct {
	byKey map[string]*keySessions
	// byEnd orders the sessions by the end they had when they were
	// placed (byEnd), which records extending a session leave behind:
	// popEnded moves a session it finds there to its end. Sessions ending
	// at the same time are ordered by group key bytes, then start as 8
	// big-endian bytes, compared as one string (as the store's index by
	// end ordered them when it held every session), so that EMIT FINAL
	// emits sessions closing together in the order it always has.
	byEnd *btree.BTreeG[*sessionState]
}

// keySessions are one group key's indexed sessions, in start order (the
// sessions of a key never overlap).
type keySessions struct {
	key   string
	spans []*sessionState
}

// sessionState is one session: its bounds and accumulators, and how they
// stand against the store.
type sessionState struct {
	ks         *keySessions
	start, end int64
	// byEnd is the end under which sessionIndex.byEnd holds the session:
	// at most end.
	byEnd int64
	// maxTs is the latest event time folded in.
	maxTs int64
	accs  []any
	// stored says the store holds the session's data key (group key,
	// start); changed that it is on the operator's list of sessions to
	// write back; gone that it was merged away, emitted or expired, so
	// the write-back skips it.
	stored, changed, gone bool
}

func newSessionIndex() *sessionIndex {
	return &sessionIndex{
		byKey: map[string]*keySessions{},
		byEnd: btree.NewG(32, sessionEndLess),
	}
}

func sessionEndLess(a, b *sessionState) bool {
	if a.byEnd != b.byEnd {
		return a.byEnd < b.byEnd
	}
	if a.ks == b.ks {
		return a.start < b.start
	}
	return compareKeyStart(a.ks.key, a.start, b.ks.key, b.start) < 0
}

// compareKeyStart compares key a ‖ start a with key b ‖ start b, each start
// as appendTime writes it, without building either.
func compareKeyStart(ka string, sa int64, kb string, sb int64) int {
	n := min(len(ka), len(kb))
	if c := strings.Compare(ka[:n], kb[:n]); c != 0 {
		return c
	}
	var ta, tb [8]byte
	binary.BigEndian.PutUint64(ta[:], uint64(sa)^(1<<63))
	binary.BigEndian.PutUint64(tb[:], uint64(sb)^(1<<63))
	at := func(k string, t *[8]byte, i int) byte {
		if i < len(k) {
			return k[i]
		}
		return t[i-len(k)]
	}
	la, lb := len(ka)+8, len(kb)+8
	for i := n; i < min(la, lb); i++ {
		x, y := at(ka, &ta, i), at(kb, &tb, i)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case la < lb:
		return -1
	case la > lb:
		return 1
	}
	return 0
}

// lookup returns the indexed sessions of group key gk, nil when it has none.
func (x *sessionIndex) lookup(gk []byte) *keySessions {
	return x.byKey[string(gk)]
}

// entry returns the entry of group key gk, making it if need be (ks:
// lookup's answer, nil when it had none).
func (x *sessionIndex) entry(gk []byte, ks *keySessions) *keySessions {
	if ks == nil {
		ks = &keySessions{key: string(gk)}
		x.byKey[ks.key] = ks
	}
	return ks
}

// add indexes session s of s.ks.
func (x *sessionIndex) add(s *sessionState) {
	ks := s.ks
	i, _ := slices.BinarySearchFunc(ks.spans, s.start, compareStart)
	ks.spans = slices.Insert(ks.spans, i, s)
	s.byEnd = s.end
	x.byEnd.ReplaceOrInsert(s)
}

func compareStart(s *sessionState, t int64) int {
	switch {
	case s.start < t:
		return -1
	case s.start > t:
		return 1
	}
	return 0
}

// remove drops session s from the index. Its key keeps its entry, empty
// or not, for the caller to add the merged session to without a new one;
// forget drops it once empty.
func (x *sessionIndex) remove(s *sessionState) {
	ks := s.ks
	x.byEnd.Delete(s)
	if i, ok := slices.BinarySearchFunc(ks.spans, s.start, compareStart); ok {
		ks.spans = slices.Delete(ks.spans, i, i+1)
	}
}

// setEnd extends session s, which stays indexed, to end (at least its
// end). It stays where it is in byEnd, below its end, until popEnded
// reaches it: a record extending a session costs no change to the tree.
func (x *sessionIndex) setEnd(s *sessionState, end int64) {
	s.end = end
}

// forget drops the entry of a key left without sessions.
func (x *sessionIndex) forget(ks *keySessions) {
	if len(ks.spans) == 0 {
		delete(x.byKey, ks.key)
	}
}

// popEnded removes the first session in end order if it ends at or before
// cutoff, and returns it.
func (x *sessionIndex) popEnded(cutoff int64) (*sessionState, bool) {
	for {
		s, ok := x.byEnd.Min()
		if !ok || s.byEnd > cutoff {
			return nil, false
		}
		if s.byEnd != s.end {
			// Extended since it was placed: it goes to its end, which
			// every session still before it is at or below.
			x.byEnd.Delete(s)
			s.byEnd = s.end
			x.byEnd.ReplaceOrInsert(s)
			continue
		}
		x.remove(s)
		x.forget(s.ks)
		return s, true
	}
}

// len is the number of indexed sessions.
func (x *sessionIndex) len() int { return x.byEnd.Len() }

// sessionExpiry lists, in order of end, the closed sessions EMIT CHANGES
// keeps until their retention ends, so that expiring them deletes what it
// finds at the head instead of scanning the store's index on every record
// (sessions end about as often as records arrive). A closed session can
// no longer change, so its entry stays true until it expires.
//
// The queue is bounded: closed sessions it has no room for, and those the
// store held when the task opened, form the gap [gapFrom, gapTo] (ends),
// which lives only in the store. Once the queue runs dry, a scan of the
// store's index moves up to refill of the gap's sessions into it,
// and closed sessions join the queue again once the gap is empty: the
// queue, then the gap, then the index hold every stored session in order
// of end.
type sessionExpiry struct {
	queue []expiringSession
	head  int
	// gapFrom > gapTo when there is no gap.
	gapFrom, gapTo int64
	// limit bounds the queue closing sessions join (expiryQueueMax);
	// refill is how many sessions one scan of the gap reads
	// (expiryRefill). Tests make them small.
	limit, refill int
}

type expiringSession struct {
	key        string
	start, end int64
}

const (
	// expiryQueueMax bounds the queue (of closed sessions waiting for
	// their retention to end) that closing sessions join: a few MB.
	expiryQueueMax = 1 << 16
	// expiryRefill is how many sessions one scan of the gap reads.
	expiryRefill = 4096
)

// newSessionExpiry starts with the gap [gapFrom, gapTo]: the closed
// sessions a store holds when its task opens.
func newSessionExpiry(gapFrom, gapTo int64) sessionExpiry {
	return sessionExpiry{gapFrom: gapFrom, gapTo: gapTo, limit: expiryQueueMax, refill: expiryRefill}
}

func (q *sessionExpiry) gap() bool { return q.gapFrom <= q.gapTo }

// closed takes a session that has just left the index as it closed.
// Sessions close in order of end, so it goes at the tail, unless the queue
// is full (several closing at the same end all go in) or a gap exists. One
// that ends before the gap (a record exactly at the edge of lateness
// starts a session that is closed at once, and the gap's scan may have
// read past its end) still goes at the tail: everything queued ends at or
// before it.
func (q *sessionExpiry) closed(key string, start, end int64) {
	n := len(q.queue) - q.head
	if !q.gap() && (n < q.limit || n > 0 && q.queue[len(q.queue)-1].end == end) || q.gap() && end < q.gapFrom {
		q.queue = append(q.queue, expiringSession{key, start, end})
		return
	}
	if !q.gap() {
		q.gapFrom = end
	}
	q.gapTo = max(q.gapTo, end)
}

// front returns the queue's first session, if any.
func (q *sessionExpiry) front() (expiringSession, bool) {
	if q.head == len(q.queue) {
		return expiringSession{}, false
	}
	return q.queue[q.head], true
}

// pop drops the queue's first session, reusing the slice once it is empty
// or mostly consumed.
func (q *sessionExpiry) pop() {
	q.queue[q.head] = expiringSession{}
	q.head++
	switch {
	case q.head == len(q.queue):
		q.queue, q.head = q.queue[:0], 0
	case q.head > 1024 && q.head > len(q.queue)/2:
		q.queue = q.queue[:copy(q.queue, q.queue[q.head:])]
		q.head = 0
	}
}
