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

func (t *memtable) len() int { return len(t.m) }

// reset empties the table in place.
func (t *memtable) reset() {
	clear(t.m)
	if t.order != nil {
		t.order.Clear(true)
	}
	t.bytes = 0
}
