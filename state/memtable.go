package state

import "github.com/google/btree"

// memtable maps user key → latest write, with the keys in order. It holds a
// commit interval's overlay, and the intervals committed while a cold
// restore's snapshot is still being written to Badger (see restored.go).
//
// The map keeps get and an update of a known key at one hash lookup; the
// B-tree orders the keys as they arrive, so a range over a few of them
// (session and sliding windows range on every record) costs a tree seek,
// not a sort of everything written this interval.
type memtable struct {
	m     map[string]entry
	order *btree.BTreeG[string]
	bytes int64
}

type entry struct {
	value []byte
	del   bool
	// gen is the Store's changelog generation of the write (see
	// Store.dirty); other tables leave it 0.
	gen uint32
}

func newMemtable() memtable {
	return memtable{m: make(map[string]entry), order: newKeyOrder()}
}

func newKeyOrder() *btree.BTreeG[string] {
	return btree.NewG(32, func(a, b string) bool { return a < b })
}

func (t *memtable) get(key []byte) (entry, bool) {
	e, ok := t.m[string(key)]
	return e, ok
}

// set writes key. fresh reports a key the table lacked or held from an
// earlier generation than e's; k is the table's own copy of a key it
// lacked ("" otherwise), for the caller to keep without copying again.
func (t *memtable) set(key []byte, e entry) (k string, fresh bool) {
	if old, hit := t.m[string(key)]; hit {
		t.bytes += int64(len(e.value) - len(old.value))
		t.m[string(key)] = e
		return "", old.gen != e.gen
	}
	k = string(key)
	if t.m == nil {
		t.m = make(map[string]entry)
	}
	if t.order == nil {
		t.order = newKeyOrder()
	}
	t.m[k] = e
	t.order.ReplaceOrInsert(k)
	t.bytes += int64(len(k) + len(e.value))
	return k, true
}

// sortedKeys returns all keys in order, in a new slice: a Range in
// progress (whose fn may write) keeps a stable view.
func (t *memtable) sortedKeys() []string {
	return t.keysBetween(nil, nil)
}

// keysBetween returns the keys in [start, end) in order (end nil: no
// bound), in a new slice.
func (t *memtable) keysBetween(start, end []byte) []string {
	if t.order == nil {
		return nil
	}
	var out []string
	collect := func(k string) bool {
		out = append(out, k)
		return true
	}
	switch {
	case end != nil:
		t.order.AscendRange(string(start), string(end), collect)
	default:
		t.order.AscendGreaterOrEqual(string(start), collect)
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

func (t *memtable) cursor(start, end []byte) *keyCursor {
	c := &keyCursor{end: end}
	if t.order != nil && t.order.Len() > 0 {
		c.order, c.from, c.more = t.order, string(start), true
		c.fill()
		if c.more {
			// A range longer than a chunk reads the rest from a clone,
			// taken before the caller can write: a short range (the
			// common case) does not make later writes copy tree nodes.
			c.order = t.order.Clone()
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
// and its value's: the map slot and its share of the map's spare room,
// the B-tree's string header and its share of the nodes, the store's
// dirty list, and the rounding of the key's and the value's allocations
// up to a size class. Measured with 26-byte keys and 18-byte values
// (TestMemtableMemoryHonest): about 190 bytes a key on the heap, of
// which the bytes themselves are 44.
const memtableEntryOverhead = 144

// memory estimates what the table holds on the Go heap: its keys and
// values (bytes) and each key's overhead. bytes alone counted a
// million-key aggregation's overlay at a quarter of its size, so a
// bound on bytes let the heap grow four times past what it meant.
func (t *memtable) memory() int64 {
	return t.bytes + int64(len(t.m))*memtableEntryOverhead
}

// reset empties the table in place.
func (t *memtable) reset() {
	clear(t.m)
	if t.order != nil {
		t.order.Clear(true)
	}
	t.bytes = 0
}
