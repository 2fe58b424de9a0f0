package state

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/google/btree"
)

// memtable maps user key → latest write, with the keys in order. It holds a
// commit interval's overlay, and the intervals committed while a cold
// restore's snapshot is still being written to Badger (see restored.go).
//
// The map keeps get and an update of a known key at one hash lookup; the
// B-tree orders the keys, so a range over a few of them (session and
// sliding windows range on every record) costs a tree seek, not a sort of
// everything written this interval. The tree is built on the first range
// of the table's life (or since its reset) and then kept as keys arrive:
// a table nobody ranges over (an aggregation's overlay, read by key and
// written to Badger and the changelog by the store's own sorted dirty
// list) pays a map insert a key, not a tree insert too (the tree was a
// twentieth of q16's CPU).
//
// The keys a table holds, and the first value of each, are copied into
// chunks of its own (keep) rather than allocated one by one: a write of a
// new key costs no allocation of its own, and the collector finds a
// chunk where it found two objects a key. A key's later values are
// allocated each, so that a key rewritten many times before a commit (an
// aggregate's under exactly-once, Hold) leaves its old values to the
// collector instead of the table's chunks.
type memtable struct {
	m map[string]entry
	// order holds every key of m while ordered, and is empty otherwise.
	order   *btree.BTreeG[string]
	ordered bool
	// filtered counts the keys whole ranges have visited in the map
	// while the table had no tree (see cursor).
	filtered int
	bytes    int64
	// chunk is the slab keep appends to. Nothing in a chunk is ever
	// written twice: keys (as strings) and values point into it.
	chunk []byte
}

type entry struct {
	value []byte
	del   bool
	// gen is the Store's changelog generation of the write (see
	// Store.dirty); other tables leave it 0.
	gen uint32
	// local marks a delete the changelog is not to take (Store.Expire):
	// a later write of the key, in any generation, is one it must take.
	local bool
}

func newMemtable() memtable {
	return memtable{m: make(map[string]entry)}
}

// memtableSizeHintMax caps the keys a fresh overlay makes room for.
const memtableSizeHintMax = 1 << 16

// newMemtableLike is a fresh table with room for as many keys as prev
// held (at most memtableSizeHintMax): an overlay started at a commit
// takes about as many writes as the one before, and a map grown from
// empty rehashes every key it holds at each doubling (a fortieth of a
// stream-stream join's CPU in Nexmark q20, docs/benchmarks.md).
func newMemtableLike(prev *memtable) memtable {
	return memtable{m: make(map[string]entry, min(len(prev.m), memtableSizeHintMax))}
}

func newKeyOrder() *btree.BTreeG[string] {
	return btree.NewG(32, func(a, b string) bool { return a < b })
}

func (t *memtable) get(key []byte) (entry, bool) {
	e, ok := t.m[string(key)]
	return e, ok
}

// set writes key, with e's value as it is (the table keeps it, and the
// caller must not change it). fresh reports a key the table lacked or held
// from an earlier generation than e's; k is the table's own copy of a key
// it lacked ("" otherwise), for the caller to keep without copying again.
func (t *memtable) set(key []byte, e entry) (k string, fresh bool) {
	return t.write(key, e, false)
}

// put is set with a copy of value, which must not be nil (nil is a
// tombstone on the changelog; an empty value is not).
func (t *memtable) put(key, value []byte, gen uint32) (k string, fresh bool) {
	return t.write(key, entry{value: value, gen: gen}, true)
}

func (t *memtable) write(key []byte, e entry, copyValue bool) (k string, fresh bool) {
	if old, hit := t.m[string(key)]; hit {
		if copyValue {
			e.value = append(make([]byte, 0, len(e.value)), e.value...)
		}
		t.bytes += int64(len(e.value) - len(old.value))
		t.m[string(key)] = e
		return "", old.gen != e.gen || old.local
	}
	kb := t.keep(key)
	k = unsafe.String(unsafe.SliceData(kb), len(kb))
	if copyValue {
		e.value = t.keep(e.value)
	}
	if t.m == nil {
		t.m = make(map[string]entry)
	}
	t.m[k] = e
	if t.ordered {
		t.order.ReplaceOrInsert(k)
	}
	t.bytes += int64(len(k) + len(e.value))
	return k, true
}

// Chunk sizes of a table's slab: the first small, so that a table that
// takes a few writes an interval (most store partitions of a query that
// has many) holds little, each next twice the last up to the largest.
// A key or value above a quarter of the largest is allocated on its own.
const (
	firstChunk = 512
	maxChunk   = 64 << 10
)

// keep returns a copy of b in the table's slab (b itself when empty). The
// copy's capacity ends at its length, so nothing appends into a neighbour.
func (t *memtable) keep(b []byte) []byte {
	if len(b) == 0 {
		return b[:0:0]
	}
	if len(b) > maxChunk/4 {
		return append(make([]byte, 0, len(b)), b...)
	}
	if cap(t.chunk)-len(t.chunk) < len(b) {
		size := min(max(2*cap(t.chunk), firstChunk), maxChunk)
		for size < len(b) {
			size *= 2
		}
		t.chunk = make([]byte, 0, size)
	}
	from := len(t.chunk)
	t.chunk = append(t.chunk, b...)
	return t.chunk[from:len(t.chunk):len(t.chunk)]
}

// keyOrder returns the table's keys in order, building the tree from the
// map on the first call since the table was made or reset.
func (t *memtable) keyOrder() *btree.BTreeG[string] {
	if t.ordered {
		return t.order
	}
	if t.order == nil {
		t.order = newKeyOrder()
	}
	keys := make([]string, 0, len(t.m))
	for k := range t.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		t.order.ReplaceOrInsert(k)
	}
	t.ordered = true
	return t.order
}

// sortedKeysOf returns the keys of t starting with prefix, in order,
// without building t's tree: for readers that share t (a committed view's
// table being flushed) and so may not change it.
func (t *memtable) sortedKeysOf(prefix string) []string {
	var out []string
	if t.ordered {
		t.order.AscendGreaterOrEqual(prefix, func(k string) bool {
			if !strings.HasPrefix(k, prefix) {
				return false
			}
			out = append(out, k)
			return true
		})
		return out
	}
	for k := range t.m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// sortedKeys returns all keys in order, in a new slice: a Range in
// progress (whose fn may write) keeps a stable view.
func (t *memtable) sortedKeys() []string {
	return t.keysBetween(nil, nil)
}

// keysBetween returns the keys in [start, end) in order (end nil: no
// bound), in a new slice.
func (t *memtable) keysBetween(start, end []byte) []string {
	if len(t.m) == 0 {
		return nil
	}
	order := t.keyOrder()
	var out []string
	collect := func(k string) bool {
		out = append(out, k)
		return true
	}
	switch {
	case end != nil:
		order.AscendRange(string(start), string(end), collect)
	default:
		order.AscendGreaterOrEqual(string(start), collect)
	}
	return out
}

// keyCursor walks the keys of a memtable in [start, end) in order, as they
// were when it was made: a chunk of keys at a time, past the first chunk
// from a copy-on-write clone of the key order (O(1) to make). A range that
// stops early (a session's few windows, a scan up to the first window not
// yet due) costs what it visits, not every key written this interval, and
// writes made while it walks are not seen.
type keyCursor struct {
	order *btree.BTreeG[string]
	end   []byte
	chunk []string
	i     int
	// from is where the next chunk starts; "" with more false: no more.
	from string
	more bool
}

// cursorChunk is how many keys a keyCursor takes from the tree at a time.
const cursorChunk = 32

// filterPasses is how many passes over its map a table makes for ranges
// read to their end (whole) before it builds its tree instead. A pass
// costs a map visit a key; the tree costs a sort now and an insert for
// every key written after, some ten times a visit each. An aggregation's
// overlay, scanned for expired windows a few times between commits,
// pays for no tree. A range that may stop early (a session's, a join's)
// always walks the tree: a pass would collect and sort all of it.
const filterPasses = 8

// cursor walks the keys in [start, end) (end nil: no bound); whole says
// the caller reads them all.
func (t *memtable) cursor(start, end []byte, whole bool) *keyCursor {
	c := &keyCursor{end: end}
	if whole && len(t.m) > 0 && !t.ordered && end != nil && t.filtered < filterPasses*len(t.m) {
		t.filtered += len(t.m)
		lo, hi := string(start), string(end)
		for k := range t.m {
			if k >= lo && k < hi {
				c.chunk = append(c.chunk, k)
			}
		}
		slices.Sort(c.chunk)
		return c
	}
	if len(t.m) > 0 {
		c.order, c.from, c.more = t.keyOrder(), string(start), true
		c.fill()
		if c.more {
			// A range longer than a chunk reads the rest from a clone,
			// taken before the caller can write: a short range (the
			// common case) does not make later writes copy tree nodes.
			c.order = c.order.Clone()
		}
	}
	return c
}

func (c *keyCursor) fill() {
	c.chunk, c.i = c.chunk[:0], 0
	if !c.more {
		return
	}
	collect := func(k string) bool {
		c.chunk = append(c.chunk, k)
		return len(c.chunk) < cursorChunk
	}
	if c.end != nil {
		c.order.AscendRange(c.from, string(c.end), collect)
	} else {
		c.order.AscendGreaterOrEqual(c.from, collect)
	}
	if len(c.chunk) < cursorChunk {
		c.more = false
		return
	}
	// The next chunk starts just after this one's last key.
	c.from = c.chunk[len(c.chunk)-1] + "\x00"
}

// peek returns the cursor's key, false when it is past the end.
func (c *keyCursor) peek() (string, bool) {
	if c.i >= len(c.chunk) {
		return "", false
	}
	return c.chunk[c.i], true
}

func (c *keyCursor) advance() {
	c.i++
	if c.i >= len(c.chunk) && c.more {
		c.fill()
	}
}

func (t *memtable) len() int { return len(t.m) }

// memtableEntryOverhead is what a key costs the Go heap beyond its bytes
// and its value's: the map slot and its share of the map's spare room and
// the store's dirty list (the key and its first value share the table's
// slab, so no allocation of their own is rounded up to a size class);
// memtableTreeOverhead what the key order adds once built (the B-tree's
// string header and its share of the nodes). Measured with 26-byte keys
// and 18-byte values (TestMemtableMemoryHonest): about 137 bytes a key on
// the heap without the tree and 176 with it, of which the bytes
// themselves are 44.
const (
	memtableEntryOverhead = 93
	memtableTreeOverhead  = 39
)

// memory estimates what the table holds on the Go heap: its keys and
// values (bytes) and each key's overhead. bytes alone counted a
// million-key aggregation's overlay at a quarter of its size, so a
// bound on bytes let the heap grow four times past what it meant.
func (t *memtable) memory() int64 {
	per := int64(memtableEntryOverhead)
	if t.ordered {
		per += memtableTreeOverhead
	}
	return t.bytes + int64(len(t.m))*per
}

// maxKey returns the table's greatest key.
func (t *memtable) maxKey() (string, bool) {
	if len(t.m) == 0 {
		return "", false
	}
	return t.keyOrder().Max()
}

// reset empties the table in place (the tree keeps its nodes for reuse,
// and is built again on the next range).
func (t *memtable) reset() {
	clear(t.m)
	if t.order != nil {
		t.order.Clear(true)
	}
	t.ordered = false
	t.filtered = 0
	t.bytes = 0
	// Readers may still hold keys and values of the old chunk.
	t.chunk = nil
}
