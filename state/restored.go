package state

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A cold restore (no local checkpoint: a new owner of the partition, an
// empty data dir) used to insert every changelog record into Badger before
// the task could run. Badger's single writer goroutine (memtable skiplist and
// WAL) costs several microseconds per record, ~10× what consuming the record
// costs, so the restore ran at ~0.06× the rate of a raw consume (see
// docs/benchmarks.md). Instead, a cold restore now keeps the latest value of
// each key in memory while consuming (the snapshot; a tombstone removes the
// key, since nothing lies below it), returns as soon as the changelog end is
// reached, and leaves writing the snapshot to Badger to a background
// goroutine (the build).
//
// Until the build is done, reads go overlay → committed-after-restore →
// snapshot, all in memory: Badger holds nothing of this store partition but
// the build's partial output, which no read looks at. Commits made meanwhile
// have produced their changelog records as usual, but their Badger half is
// kept in memory (after) with their checkpoint: written straight to Badger
// they could be overwritten by the build's older snapshot values. When the
// snapshot is in Badger, the build writes after and the latest checkpoint in
// one transaction, marks the layer done (reads fall through to Badger) and
// drops the memory.
//
// The checkpoint, the record of "restored up to offset N", reaches Badger
// only in that last transaction. A crash before it leaves partial data and
// no checkpoint, so the next Restore wipes the partition and starts again.

// restored is a cold-restored store partition whose snapshot is not yet
// fully in Badger.
type restored struct {
	// snap is filled by the restore loop before the build starts and never
	// changed after, so the build reads it without the lock; readers take
	// mu because the build drops it when done.
	snap *snapshot
	held int64 // bytes counted in DB.restoreHeld for this layer
	// sorted holds snap's live refs in key order. The build sorts them
	// first and closes ready; Range waits for that.
	sorted []uint32
	ready  chan struct{}

	mu sync.Mutex // guards snap, sorted (once ready), done, err, after, cp
	// done means Badger holds snapshot, after and cp: reads go there.
	done bool
	// err is why the build failed. The memory layers stay the truth;
	// Commit reports err so the task fails and the next Restore rebuilds.
	err error
	// after holds what was committed since the restore, not yet in
	// Badger. Only the task goroutine writes it (Commit, under mu).
	after memtable
	// cp is the latest checkpoint: the restore's, then each Commit's.
	cp Checkpoint

	cancel   atomic.Bool   // set by Wipe (cancelBuild): stop, write no checkpoint
	finished chan struct{} // closed when the build goroutine returns
}

// errBuildCanceled ends a build that Wipe cancelled.
var errBuildCanceled = errors.New("build canceled")

// buildChunk is how many snapshot keys the build writes between looks at
// its cancel flag.
const buildChunk = 1 << 14

// startBuild installs snap as s's restored layer with checkpoint cp and
// starts writing it to Badger in the background.
func (s *Store) startBuild(snap *snapshot, cp Checkpoint) {
	r := &restored{
		snap:     snap,
		held:     snap.memBytes(),
		ready:    make(chan struct{}),
		after:    newMemtable(),
		cp:       cp,
		finished: make(chan struct{}),
	}
	s.db.restoreHeld.Add(r.held)
	s.restored.Store(r)
	s.db.builds.Add(1)
	go s.build(r)
}

// build writes r's snapshot to Badger, then hands over: see the comment at
// the top of this file.
func (s *Store) build(r *restored) {
	defer s.db.builds.Done()
	defer close(r.finished)
	start := time.Now()
	refs := r.snap.sorted()
	r.sorted = refs
	close(r.ready)
	// Another store partition's wipe (DropPrefix) blocks every write to
	// the shared DB for a moment: the snapshot is written again then.
	err := whileBlocked(func() error { return s.writeSorted(r.snap, refs, func() error { return s.db.buildPause(r) }) })
	if err == nil {
		err = s.handOver(r)
	}
	switch {
	case errors.Is(err, errBuildCanceled):
		s.db.restoreHeld.Add(-r.held)
	case err != nil:
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
		s.db.log.Error("writing restored state to badger failed; it stays in memory until the next restore",
			"store", s.id.String(), "err", err)
	default:
		s.db.log.Debug("restored state written to badger", "store", s.id.String(), "keys", len(refs), "duration", time.Since(start))
	}
}

// writeSorted writes the snapshot's entries refs (in key order) to Badger in
// a WriteBatch, calling pause before each chunk; pause's error stops it.
func (s *Store) writeSorted(snap *snapshot, refs []uint32, pause func() error) error {
	// Sorted input spares Badger's memtable skiplist most of its cache
	// misses (the benchmark's 79k → 131k records/s).
	// The snapshot holds each key once: one commit timestamp serves
	// the whole batch, below handOver's, whose writes win.
	ts := s.db.beginWrite()
	defer s.db.endWrite(ts)
	wb := s.db.bdb.NewWriteBatchAt(ts)
	flushed := false
	defer func() {
		// Cancel after Flush would finish the batch's throttle twice.
		if !flushed {
			wb.Cancel()
		}
	}()
	// Badger keeps keys until the batch commits; one slab per chunk spares
	// an allocation per key.
	var kslab []byte
	for i, ref := range refs {
		k, v := snap.entry(ref)
		if i%buildChunk == 0 {
			if err := pause(); err != nil {
				return err
			}
			kslab = make([]byte, 0, buildChunk*(len(s.data)+len(k)+8))
		}
		n := len(kslab)
		kslab = append(append(kslab, s.data...), k...)
		if err := wb.Set(kslab[n:len(kslab):len(kslab)], v); err != nil {
			return fmt.Errorf("write restored state: %w", err)
		}
	}
	if err := pause(); err != nil {
		return err
	}
	flushed = true
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("write restored state: %w", err)
	}
	return nil
}

// handOver writes what was committed during the build and the latest
// checkpoint in one transaction, after the snapshot: Badger's later
// versions win, so a key committed after the restore keeps its new value.
// Then reads go to Badger and the memory is let go.
func (s *Store) handOver(r *restored) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel.Load() {
		return errBuildCanceled
	}
	if err := s.writeTable(&r.after, r.cp); err != nil {
		return fmt.Errorf("write state committed during restore: %w", err)
	}
	r.done = true
	r.snap, r.sorted, r.after = nil, nil, memtable{}
	s.db.restoreHeld.Add(-r.held)
	s.restored.CompareAndSwap(r, nil)
	return nil
}

// buildPause checks for cancellation between chunks, and lets tests hold
// the build at a chunk boundary (DB.buildGate).
func (db *DB) buildPause(r *restored) error {
	if g := db.buildGate; g != nil {
		<-g
	}
	if r.cancel.Load() {
		return errBuildCanceled
	}
	return nil
}

// get looks key up in after, then the snapshot. served is false once the
// build is done: the caller reads Badger instead.
func (r *restored) get(key []byte) (value []byte, ok, served bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return nil, false, false
	}
	if e, hit := r.after.get(key); hit {
		return e.value, !e.del, true
	}
	v, hit := r.snap.get(key)
	return v, hit, true
}

// commit takes a commit's overlay while the build runs (handled true); the
// caller then clears the overlay. handled is false once the build is done.
func (r *restored) commit(overlay *memtable, cp Checkpoint) (handled bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return false, fmt.Errorf("restored state not written to badger: %w", r.err)
	}
	if r.done {
		return false, nil
	}
	for _, k := range overlay.sortedKeys() {
		r.after.set([]byte(k), overlay.m[k])
	}
	r.cp = cp
	return true, nil
}

// checkpoint returns the latest checkpoint while the build runs.
func (r *restored) checkpoint() (Checkpoint, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cp, !r.done
}

// memBytes is what the layer holds in memory, while it serves reads.
func (r *restored) memBytes() (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held + r.after.bytes, !r.done
}

// view is a Range's hold on the memory layers: the snapshot and its sorted
// refs (immutable), and after as it stood (its keys slice is replaced, not
// changed, when it re-sorts).
type view struct {
	snap      *snapshot
	sorted    []uint32
	after     map[string]entry
	afterKeys []string
}

// view waits for the snapshot's keys to be sorted and returns the layers to
// range over; ok is false once the build is done.
func (r *restored) view() (v view, ok bool) {
	<-r.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return view{}, false
	}
	return view{snap: r.snap, sorted: r.sorted, after: r.after.m, afterKeys: r.after.sortedKeys()}, true
}

// stats counts the live keys starting with prefix that keep accepts
// (nil: all) and their bytes, as CommittedStatsOf does for Badger.
func (r *restored) stats(prefix []byte, keep func(key []byte) bool) (keys, size int64, ok bool) {
	<-r.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return 0, 0, false
	}
	for _, ref := range r.sorted[r.snap.search(r.sorted, prefix):] {
		k, v := r.snap.entry(ref)
		if !bytes.HasPrefix(k, prefix) {
			break
		}
		if keep != nil && !keep(k) {
			continue
		}
		keys++
		size += int64(len(k) + len(v))
	}
	for k, e := range r.after.m {
		if !strings.HasPrefix(k, string(prefix)) || (keep != nil && !keep([]byte(k))) {
			continue
		}
		if old, hit := r.snap.get([]byte(k)); hit {
			keys--
			size -= int64(len(k) + len(old))
		}
		if !e.del {
			keys++
			size += int64(len(k) + len(e.value))
		}
	}
	return keys, size, true
}

// newMemCursor walks the memory layers in key order over [start, end):
// after shadows the snapshot, and its tombstones hide snapshot keys.
func newMemCursor(v view, start, end []byte) *tableCursor {
	below := &snapCursor{snap: v.snap, sorted: v.sorted, i: v.snap.search(v.sorted, start), end: end}
	return newTableCursor(v.after, v.afterKeys, start, end, below)
}

// snapCursor walks a snapshot's sorted entries from i while below end.
type snapCursor struct {
	snap   *snapshot
	sorted []uint32
	i      int
	end    []byte
}

func (c *snapCursor) valid() bool {
	if c.i >= len(c.sorted) {
		return false
	}
	return c.end == nil || bytes.Compare(c.key(), c.end) < 0
}

func (c *snapCursor) key() []byte {
	k, _ := c.snap.entry(c.sorted[c.i])
	return k
}

func (c *snapCursor) value(fn func([]byte) error) error {
	_, v := c.snap.entry(c.sorted[c.i])
	return fn(v)
}

func (c *snapCursor) next() { c.i++ }

// waitBuild waits for a build of s to end (done, failed or cancelled) and
// forgets the layer: Restore then starts from what Badger holds.
func (s *Store) waitBuild() {
	if r := s.restored.Load(); r != nil {
		<-r.finished
		s.forget(r)
	}
}

// cancelBuild stops a build of s without writing its checkpoint and waits
// for it, as a crash would stop it (Wipe drops what it wrote).
func (s *Store) cancelBuild() {
	if r := s.restored.Load(); r != nil {
		r.cancel.Store(true)
		<-r.finished
		s.forget(r)
	}
}

// forget drops a finished layer that did not hand over (failed or
// cancelled).
func (s *Store) forget(r *restored) {
	if s.restored.CompareAndSwap(r, nil) {
		r.mu.Lock()
		failed := r.err != nil
		r.mu.Unlock()
		if failed {
			s.db.restoreHeld.Add(-r.held)
		}
	}
}
