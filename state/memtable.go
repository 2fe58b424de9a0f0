package state

import "slices"

// memtable maps user key → latest write, with the keys sorted on demand. It
// holds a commit interval's overlay, and the intervals committed while a cold
// restore's snapshot is still being written to Badger (see restored.go).
//
// A map (not a tree) keeps set at one hash lookup; the key order Range and
// Pending need is built lazily in keys.
type memtable struct {
	m map[string]entry
	// keys holds m's keys; sorted unless dirty. Only a set of a new key
	// makes it dirty, so coalescing updates stay cheap.
	keys  []string
	dirty bool
	bytes int64
}

type entry struct {
	value []byte
	del   bool
}

func newMemtable() memtable { return memtable{m: make(map[string]entry)} }

func (t *memtable) get(key []byte) (entry, bool) {
	e, ok := t.m[string(key)]
	return e, ok
}

func (t *memtable) set(key []byte, e entry) {
	if old, hit := t.m[string(key)]; hit {
		t.bytes += int64(len(e.value) - len(old.value))
		t.m[string(key)] = e
		return
	}
	k := string(key)
	t.m[k] = e
	t.keys = append(t.keys, k)
	t.dirty = true
	t.bytes += int64(len(k) + len(e.value))
}

// sortedKeys returns the keys in order. When re-sorting it builds a new
// slice, so a Range in progress (whose fn may write) keeps a stable view.
func (t *memtable) sortedKeys() []string {
	if t.dirty {
		t.keys = slices.Clone(t.keys)
		slices.Sort(t.keys)
		t.dirty = false
	}
	return t.keys
}

func (t *memtable) len() int { return len(t.m) }

// reset empties the table in place.
func (t *memtable) reset() {
	clear(t.m)
	t.keys = nil
	t.dirty = false
	t.bytes = 0
}
