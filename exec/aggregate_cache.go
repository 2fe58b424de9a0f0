package exec

import (
	"bytes"

	"github.com/sluice-sql/sluice/state"
)

// aggCacheBytes bounds what one aggregate's cache holds (its estimate of
// keys, encoded values and per-entry overhead): a store partition's hot
// keys and windows, about 20,000 of COUNT and SUM, beside the 4 MB the
// store may hold between Badger writes (heldBytesLimit).
const aggCacheBytes = 4 << 20

// aggEntryOverhead is what an entry costs beyond its key and encoded
// value: the map slot, the entry, the accumulator slice and its boxed
// values.
const aggEntryOverhead = 160

// aggCache keeps an aggregate's accumulators decoded, by state key, so a
// record folds into Go values: the store sees a key's encoded state once
// per commit interval (state.WriteBack), not once per record. It is the
// store's WriteBack, so the changelog, commits and the aggregate's own
// scans (closing and expiring windows) see everything it holds; its
// changed entries are never in Kafka or Badger until then, so an abort or
// a crash loses only what was not committed, as before.
type aggCache struct {
	store *state.Store
	// encode lays an entry's state out as the store keeps it.
	encode  func(buf []byte, maxTs int64, accs []any) []byte
	entries map[string]*aggEntry
	// changed lists the entries folded into since the last WriteBack.
	changed []*aggEntry
	bytes   int64
	limit   int64
	buf     []byte
}

// aggEntry is one key's (or window's) accumulators.
type aggEntry struct {
	key   string
	keyB  []byte // key, for the store
	accs  []any
	maxTs int64
	// existed says the store had the key, or the cache wrote it.
	existed bool
	changed bool
	// size is what the entry counts toward the cache's bytes.
	size int64
}

var _ state.WriteBack = (*aggCache)(nil)

func newAggCache(s *state.Store, limit int64, encode func([]byte, int64, []any) []byte) *aggCache {
	c := &aggCache{store: s, encode: encode, entries: make(map[string]*aggEntry), limit: limit}
	s.SetWriteBack(c)
	return c
}

// get returns the entry of key, or nil.
func (c *aggCache) get(key []byte) *aggEntry { return c.entries[string(key)] }

// add makes an entry for key, read from the store (encLen: the size of
// its encoded state), making room first if the cache is full.
func (c *aggCache) add(key []byte, accs []any, maxTs int64, existed bool, encLen int) *aggEntry {
	if c.bytes >= c.limit {
		c.WriteBack()
		c.evict(c.limit / 2)
	}
	e := &aggEntry{key: string(key), keyB: bytes.Clone(key), accs: accs, maxTs: maxTs, existed: existed}
	e.size = int64(len(e.key)+encLen) + aggEntryOverhead
	c.bytes += e.size
	c.entries[e.key] = e
	return e
}

// changedEntry marks e as folded into since the last WriteBack.
func (c *aggCache) changedEntry(e *aggEntry) {
	if !e.changed {
		e.changed = true
		c.changed = append(c.changed, e)
	}
}

// drop forgets key: the aggregate deletes it from the store.
func (c *aggCache) drop(key []byte) {
	e, ok := c.entries[string(key)]
	if !ok {
		return
	}
	// Still on the changed list, it must not be written back.
	e.changed = false
	c.bytes -= e.size
	delete(c.entries, e.key)
}

// WriteBack encodes the changed entries into the store.
func (c *aggCache) WriteBack() {
	for _, e := range c.changed {
		if !e.changed {
			continue // dropped since
		}
		e.changed = false
		e.existed = true
		c.buf = c.encode(c.buf[:0], e.maxTs, e.accs)
		c.store.Put(e.keyB, c.buf)
		size := int64(len(e.key)+len(c.buf)) + aggEntryOverhead
		c.bytes += size - e.size
		e.size = size
	}
	clear(c.changed)
	c.changed = c.changed[:0]
}

// Discard drops every entry: the store dropped its uncommitted writes.
func (c *aggCache) Discard() {
	clear(c.entries)
	clear(c.changed)
	c.changed = c.changed[:0]
	c.bytes = 0
}

// evict drops entries, all written back, until the cache holds at most
// target bytes. Go's map order picks them, roughly at random: a hot key
// dropped is read back from the store's overlay at its next record.
func (c *aggCache) evict(target int64) {
	for k, e := range c.entries {
		if c.bytes <= target {
			return
		}
		c.bytes -= e.size
		delete(c.entries, k)
	}
}
