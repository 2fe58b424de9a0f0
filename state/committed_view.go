package state

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// committedView holds a store partition's committed writes that Badger
// may not have yet, for readers on other goroutines (pull queries, through
// RangeCommitted). Under exactly-once, committed transactions' writes are
// held in the overlay for up to a second between Badger writes (Hold), and
// the overlay also holds the open transaction's writes, which no reader may
// see; at-least-once commits write Badger in the background. Each commit
// publishes the writes the changelog took for it (ProduceChangelog's
// delta) here; once the Badger write that holds them is done they are
// forgotten, so the view stays the size of at most a second of commits.
//
// A commit that writes Badger hands the view its whole overlay (Commit's
// flush table, which nothing writes any more) instead of a copy: that
// table holds every write held so far and the commit's own, so the
// entries published before it go, and the view costs the heap only the
// held deltas since. A copy of a million-key aggregation's commit was an
// eighth of its live heap (docs/benchmarks.md, "Memory: M1 and M2").
type committedView struct {
	mu sync.RWMutex
	m  map[string]viewEntry
	// flushing is the overlay of the commit being written to Badger, if
	// any, published as flushSeq: entries of m are newer.
	flushing *memtable
	flushSeq uint64
	// seq numbers the publications: a Badger write forgets what was
	// published up to the commit it wrote, not what came later.
	seq uint64
}

type viewEntry struct {
	value []byte
	del   bool
	seq   uint64
}

// publish adds a committed delta and returns its number.
func (v *committedView) publish(delta []Change) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	if len(delta) == 0 {
		return v.seq
	}
	if v.m == nil {
		v.m = make(map[string]viewEntry, len(delta))
	}
	for _, c := range delta {
		v.m[string(c.Key)] = viewEntry{value: c.Value, del: c.Delete, seq: v.seq}
	}
	return v.seq
}

// publishFlush publishes t, a commit's whole overlay on its way to
// Badger, and returns its number. Every entry published before is in t
// (held writes stay in the overlay until a commit writes them) or, from
// an earlier commit, in Badger already (Commit waits for the previous
// write first), so they are dropped.
func (v *committedView) publishFlush(t *memtable) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	v.m = nil
	v.flushing, v.flushSeq = t, v.seq
	return v.seq
}

// forget drops what was published up to seq: Badger holds it now.
func (v *committedView) forget(seq uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, e := range v.m {
		if e.seq <= seq {
			delete(v.m, k)
		}
	}
	if len(v.m) == 0 {
		// A map keeps its largest size: a fresh one costs nothing.
		v.m = nil
	}
	if v.flushing != nil && v.flushSeq <= seq {
		v.flushing = nil
	}
}

// holds reports whether the view has writes Badger may not have.
func (v *committedView) holds() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.m) > 0 || v.flushing != nil
}

// clear drops everything (the store partition was wiped).
func (v *committedView) clear() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.m = nil
	v.flushing = nil
}

// snapshot returns the entries under prefix in key order and a Badger
// read transaction opened at the same moment: no write can be forgotten
// in between, so the two together are the committed state as of one
// instant, but for keys that a commit made while the caller reads writes
// to Badger (the transaction reads the latest versions: the DB gives
// Badger its timestamps, and keeps no old versions for readers). The
// caller discards the transaction.
func (v *committedView) snapshot(db *badger.DB, prefix []byte) ([]string, map[string]viewEntry, *badger.Txn) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var keys []string
	entries := map[string]viewEntry{}
	if t := v.flushing; t != nil {
		for _, k := range t.sortedKeysOf(string(prefix)) {
			e := t.m[k]
			keys = append(keys, k)
			entries[k] = viewEntry{value: e.value, del: e.del, seq: v.flushSeq}
		}
	}
	for k, e := range v.m {
		if strings.HasPrefix(k, string(prefix)) {
			if _, dup := entries[k]; !dup {
				keys = append(keys, k)
			}
			entries[k] = e
		}
	}
	slices.Sort(keys)
	return keys, entries, db.NewTransactionAt(math.MaxUint64, false)
}
