package exec

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// keptIndex is, for one side of a stream-stream join, the rows its store
// keeps: by join key, so that a row of the other side finds its matches
// with a map lookup instead of a Badger iterator, and a row whose key the
// side does not keep (most rows of a join that matches few) reads nothing
// at all; and by time, so that forgetting the rows the side no longer
// keeps deletes them where they are instead of scanning the store's
// expiry keys for them.
//
// The index is never the truth, but a copy of the store's data keys: it
// is built from the store when the operator opens (after a restore, or
// when an aborted transaction reopened the task, so writes the store
// discarded are never in it), and streamStream and closeWindows, the only
// writers of the store's data keys while the operator is open, change
// the index as they change the store. It holds each row's time and
// offset, and the values of the rows that matched (at most
// keptDecodedRows of them): a row that matches once (an auction) tends to
// match again (its next bids).
type keptIndex struct {
	keys map[string]*keptKey
	// byTime holds every row by time, oldest first, for expiry.
	byTime keptHeap
	// rows is how many rows the index holds; decoded how many of them
	// with their values.
	rows, decoded int
}

// keptKey is a join key's rows, in the store's order of their data keys:
// by time, then offset.
type keptKey struct {
	key  string
	rows []keptRow
}

// keptRow is one row a stream side keeps: the time and offset of its data
// key, and its values when the index holds them (nil: read the store).
type keptRow struct {
	ts   int64
	off  [8]byte
	cols []any
	// expiry is set when the store holds the row's expiry key (the row
	// was kept while the side had no index, or by an older Sluice), to
	// delete with it.
	expiry bool
}

// keptTime is a row in keptIndex.byTime.
type keptTime struct {
	ts  int64
	off [8]byte
	k   *keptKey
}

// keptHeap is a binary min-heap of rows by time. It is typed rather than
// a container/heap, whose Push takes an interface and so allocates one
// per kept row.
type keptHeap []keptTime

func (h *keptHeap) push(t keptTime) {
	*h = append(*h, t)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if q[p].ts <= q[i].ts {
			break
		}
		q[p], q[i] = q[i], q[p]
		i = p
	}
}

// pop removes and returns the oldest row; the heap must not be empty.
func (h *keptHeap) pop() keptTime {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = keptTime{}
	q = q[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(q) {
			break
		}
		if c+1 < len(q) && q[c+1].ts < q[c].ts {
			c++
		}
		if q[i].ts <= q[c].ts {
			break
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
	*h = q
	return top
}

// keptDecodedRows bounds the rows a side's index holds decoded. Rows beyond
// it cost a store read (most often of the overlay, in memory) and a
// decode each time they match; the index of times and offsets itself is
// the size of the rows the side keeps.
var keptDecodedRows = 1 << 16

// keptScanRows is how many rows of one key a match must read from the
// store before it reads them with one range over the key's data keys
// instead of a point read each: the matches of a row that joins many
// kept rows at once (a window's maximum and the window's counts) are
// neighbours in the store, and one iterator walks them for less than
// Badger's lookup of each in every level.
var keptScanRows = 16

// keptIndexRows bounds the rows a side's index holds (some 80 bytes each
// and their key's): a join whose window keeps more per side and task
// drops its index and scans its store, as it did before it had one.
var keptIndexRows = 1 << 21

// before orders a key's rows as the store orders their data keys: by
// time, then offset.
func (r *keptRow) before(ts int64, off []byte) bool {
	if r.ts != ts {
		return r.ts < ts
	}
	return bytes.Compare(r.off[:], off) < 0
}

// buildKeptIndex reads the data keys of a stream side's store: nil when
// they are more than keptIndexRows.
func buildKeptIndex(s *state.Store) (*keptIndex, error) {
	x := &keptIndex{keys: make(map[string]*keptKey)}
	var bad error
	err := s.Range([]byte{joinDataTag}, func(k, _ []byte) bool {
		if len(k) < 17 {
			bad = fmt.Errorf("join store data key %x: too short for a time and offset", k)
			return false
		}
		var off [8]byte
		copy(off[:], k[len(k)-8:])
		// The store's order is the index's: add appends.
		x.add(k[1:len(k)-16], readTime(k[len(k)-16:]), off[:], false)
		return x.rows <= keptIndexRows
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, fmt.Errorf("join index of %s: %w", s.ID(), err)
	}
	if x.rows > keptIndexRows {
		return nil, nil // too many rows: the side's matches are scanned in the store
	}
	// The rows that have an expiry key.
	err = s.Range([]byte{joinExpiryTag}, func(k, _ []byte) bool {
		if len(k) < 17 {
			bad = fmt.Errorf("join store expiry key %x: too short for a time and offset", k)
			return false
		}
		if r := x.find(k[9:len(k)-8], readTime(k[1:9]), k[len(k)-8:]); r != nil {
			r.expiry = true
		}
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, fmt.Errorf("join index of %s: %w", s.ID(), err)
	}
	return x, nil
}

// completeExpiryKeys gives every row of a stream side's store its expiry
// key, for an operator that has no index of the side (it keeps more than
// keptIndexRows): rows kept while it had one have none. One point read
// per row, when the operator opens.
func completeExpiryKeys(s *state.Store, buf *[]byte) error {
	var bad error
	err := s.Range([]byte{joinDataTag}, func(k, _ []byte) bool {
		if len(k) < 17 {
			bad = fmt.Errorf("join store data key %x: too short for a time and offset", k)
			return false
		}
		*buf = joinExpiryKey((*buf)[:0], readTime(k[len(k)-16:]), k[1:len(k)-16], k[len(k)-8:])
		_, ok, err := s.Get(*buf)
		if err != nil {
			bad = err
			return false
		}
		if !ok {
			s.Put(*buf, nil)
		}
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return fmt.Errorf("join expiry keys of %s: %w", s.ID(), err)
	}
	return nil
}

// find returns the index's row of key at ts and off, nil if it has none.
func (x *keptIndex) find(key []byte, ts int64, off []byte) *keptRow {
	k := x.keys[string(key)]
	if k == nil {
		return nil
	}
	i, found := slices.BinarySearchFunc(k.rows, ts, func(r keptRow, ts int64) int {
		if r.ts != ts {
			if r.ts < ts {
				return -1
			}
			return 1
		}
		return bytes.Compare(r.off[:], off)
	})
	if !found {
		return nil
	}
	return &k.rows[i]
}

// add records a row the side now keeps. Its values are not held: most
// kept rows of a join never match (a bid no auction comes for), and a row
// that does is decoded when it first matches and held from then on.
func (x *keptIndex) add(key []byte, ts int64, off []byte, expiry bool) {
	k := x.keys[string(key)]
	if k == nil {
		k = &keptKey{key: string(key)}
		x.keys[k.key] = k
	}
	rows := k.rows
	i := len(rows)
	for i > 0 && !rows[i-1].before(ts, off) {
		i-- // rows come mostly in time order: search from the end
	}
	r := keptRow{ts: ts, expiry: expiry}
	copy(r.off[:], off)
	if i < len(rows) && rows[i].ts == ts && bytes.Equal(rows[i].off[:], off) {
		// The store's Put replaced the row: so does the index.
		if rows[i].cols != nil {
			x.decoded--
		}
		rows[i] = r
		return
	}
	k.rows = slices.Insert(rows, i, r)
	x.byTime.push(keptTime{ts: ts, off: r.off, k: k})
	x.rows++
}

// expire forgets the rows older than limit and calls fn with each one's
// key, time and offset and whether it has an expiry key, so the caller
// deletes it from the store.
func (x *keptIndex) expire(limit int64, fn func(key string, ts int64, off []byte, expiry bool)) {
	for len(x.byTime) > 0 && x.byTime[0].ts < limit {
		t := x.byTime.pop()
		k := t.k
		i, found := slices.BinarySearchFunc(k.rows, t, func(r keptRow, t keptTime) int {
			if r.ts != t.ts {
				if r.ts < t.ts {
					return -1
				}
				return 1
			}
			return bytes.Compare(r.off[:], t.off[:])
		})
		if !found {
			continue // cannot happen: the two orders hold the same rows
		}
		if k.rows[i].cols != nil {
			x.decoded--
		}
		expiry := k.rows[i].expiry
		x.rows--
		if len(k.rows) == 1 {
			delete(x.keys, k.key)
		} else {
			k.rows = slices.Delete(k.rows, i, i+1)
		}
		fn(k.key, t.ts, t.off[:], expiry)
	}
}

// between calls fn with the key's rows whose time is in [from, to], in
// the store's order, and their values: those the index holds, or read
// from s and decoded (and then held, within keptDecodedRows). buf is
// scratch for the data key; the last one built is returned.
func (x *keptIndex) between(s *state.Store, key []byte, from, to int64, buf []byte, fn func(r *keptRow) error) ([]byte, error) {
	k := x.keys[string(key)]
	if k == nil {
		return buf, nil
	}
	rows := k.rows
	i, _ := slices.BinarySearchFunc(rows, from, func(r keptRow, t int64) int {
		if r.ts < t {
			return -1
		}
		return 1
	})
	end, undecoded := i, 0
	for ; end < len(rows) && rows[end].ts <= to; end++ {
		if rows[end].cols == nil {
			undecoded++
		}
	}
	if undecoded >= keptScanRows {
		return x.scan(s, key, rows[i:end], from, to, buf, fn)
	}
	for ; i < end; i++ {
		r := &rows[i]
		if r.cols == nil {
			buf = appendTime(append(append(buf[:0], joinDataTag), key...), r.ts)
			buf = append(buf, r.off[:]...)
			v, ok, err := s.Get(buf)
			if err != nil {
				return buf, err
			}
			if !ok {
				return buf, fmt.Errorf("join index of %s: row %x is not in the store", s.ID(), buf)
			}
			d, err := x.decode(r, buf, v)
			if err != nil {
				return buf, err
			}
			if err := fn(d); err != nil {
				return buf, err
			}
			continue
		}
		if err := fn(r); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// scan calls fn on rows, a key's rows in the index between from and to
// (at least keptScanRows of them not decoded), reading their values with
// one range over the key's data keys in the store. The index and the
// store must hold the same rows there.
func (x *keptIndex) scan(s *state.Store, key []byte, rows []keptRow, from, to int64, buf []byte, fn func(r *keptRow) error) ([]byte, error) {
	buf, start, end := dataKeyRange(buf, key, from, to)
	i := 0
	var ferr error
	err := s.RangeBetween(start, end, func(k, v []byte) bool {
		if len(k) != 1+len(key)+16 || !bytes.Equal(k[1:1+len(key)], key) {
			return true // another key's, whose encoding begins with this one's
		}
		ts := readTime(k[len(k)-16:])
		if i >= len(rows) || rows[i].ts != ts || !bytes.Equal(rows[i].off[:], k[len(k)-8:]) {
			ferr = fmt.Errorf("join index of %s: row %x is not in the index", s.ID(), k)
			return false
		}
		r := &rows[i]
		i++
		if r.cols != nil {
			ferr = fn(r)
			return ferr == nil
		}
		d, err := x.decode(r, k, v)
		if err != nil {
			ferr = err
			return false
		}
		ferr = fn(d)
		return ferr == nil
	})
	if err == nil {
		err = ferr
	}
	if err == nil && i < len(rows) {
		err = fmt.Errorf("join index of %s: row of %x at %d is not in the store", s.ID(), key, rows[i].ts)
	}
	return buf, err
}

// decode decodes v, the stored values of r (data key k), keeping them in
// the index while it holds fewer than keptDecodedRows decoded, and returns
// the row with its values.
func (x *keptIndex) decode(r *keptRow, k, v []byte) (*keptRow, error) {
	cols, _, err := types.DecodeValues(v)
	if err != nil {
		return nil, fmt.Errorf("join store row %x: %w", k, err)
	}
	if x.decoded < keptDecodedRows {
		r.cols = cols
		x.decoded++
		return r, nil
	}
	return &keptRow{ts: r.ts, off: r.off, cols: cols}, nil
}

// dataKeyRange builds in buf the bounds of a key's data keys with times
// in [from, to]: start inclusive, end exclusive.
func dataKeyRange(buf, key []byte, from, to int64) (out, start, end []byte) {
	buf = appendTime(append(append(buf[:0], joinDataTag), key...), from)
	mid := len(buf)
	buf = appendTime(append(append(buf, joinDataTag), key...), satAdd(to, 1))
	return buf, buf[:mid], buf[mid:]
}
