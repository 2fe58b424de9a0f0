package state

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dgraph-io/badger/v4"
)

// Store is one partition of one state store: an in-memory overlay holding the
// writes of the current commit interval on top of the committed data in
// Badger. Reads see the overlay first. A Store is owned by one task and is not
// safe for concurrent use.
type Store struct {
	db   *DB
	id   StoreID
	data []byte // Badger prefix of this store partition's data keys
	ckey []byte // Badger key of this store partition's checkpoint
	err  error  // why the store has no number in the catalog, if it has none

	// overlay holds the writes since the last Commit: under exactly-once
	// those of several transactions (see Hold).
	overlay memtable
	// dirty lists the keys written since the changelog last took the
	// overlay (ProduceChangelog, then Hold or Commit): the overlay's
	// entries of generation gen. held, when set, is the checkpoint of
	// what Kafka committed and the overlay keeps for the next Commit.
	dirty []string
	gen   uint32
	held  *Checkpoint
	// restored is set while a cold restore's data is still being written
	// to Badger in the background; reads and commits go through it (see
	// restored.go). The build goroutine clears it when done.
	restored atomic.Pointer[restored]
	// flush is the last commit's overlay on its way to Badger, written
	// by a goroutine of its own so that the task goes on processing
	// meanwhile (see Commit). Reads see it between the overlay and Badger.
	flush atomic.Pointer[flush]
	// produced is the delta the changelog took last (ProduceChangelog),
	// published to view once Kafka has committed it (Hold, Commit).
	produced []Change
	// view is what pull queries read on top of Badger (RangeCommitted).
	view committedView
	// writeBack is the cache of the operator that owns the store, if it
	// keeps one (see WriteBack).
	writeBack WriteBack
}

// flush is one commit's overlay and checkpoint being written to Badger.
// Nothing writes table once it is handed over, so the task's reads and
// the writing goroutine share it.
type flush struct {
	table memtable
	cp    Checkpoint
	done  chan struct{} // closed once written; err is set before
	err   error
	// keys are table's keys in order, sorted by the first range that
	// reads the table while it is being written (the store's owner
	// only: the writing goroutine never reads them).
	keys []string
}

// inFlight returns the commit being written to Badger if its write has
// not ended; one that has ended is settled (dropped, or its error
// returned). For the store's owner.
func (s *Store) inFlight() (*flush, error) {
	f := s.flush.Load()
	if f == nil {
		return nil, nil
	}
	select {
	case <-f.done:
		return nil, s.settle()
	default:
		if f.keys == nil {
			f.keys = f.table.sortedKeysOf("")
		}
		return f, nil
	}
}

// flushed waits for the commit being written to Badger, if any, and
// returns how its write went. Any goroutine may call it.
func (s *Store) flushed() error {
	f := s.flush.Load()
	if f == nil {
		return nil
	}
	<-f.done
	return f.err
}

// settle waits for the commit being written, and when it is in Badger
// drops it, so Badger alone holds what is committed. For the store's
// owner (the task, a restore, a wipe).
func (s *Store) settle() error {
	f := s.flush.Load()
	if err := s.flushed(); err != nil {
		return err
	}
	s.flush.CompareAndSwap(f, nil)
	return nil
}

// Change is one overlay entry, as written to the changelog.
type Change struct {
	Key, Value []byte
	Delete     bool
}

// Checkpoint is what a store partition has durably applied.
type Checkpoint struct {
	// ChangelogOffset is the next changelog offset to read on restore; 0
	// means "replay from the start".
	ChangelogOffset int64
	// SourceOffsets maps "topic/partition" to the next source offset whose
	// effects are not yet in this state, so a replayed record never counts
	// twice.
	SourceOffsets map[string]int64
}

// newStore makes the store partition id, whose name has number in the
// catalog; a store whose name could not be numbered (err) fails every
// operation that reaches Badger with err.
func newStore(db *DB, id StoreID, number uint32, err error) *Store {
	return &Store{
		db:      db,
		id:      id,
		data:    storePrefix(tagData, number, id.Partition),
		ckey:    storePrefix(tagCheckpoint, number, id.Partition),
		err:     err,
		overlay: newMemtable(),
	}
}

// checkOpen is called by every operation that reaches Badger.
func (s *Store) checkOpen() error {
	if s.err != nil {
		return s.err
	}
	return s.db.checkOpen()
}

// ID returns the store name and partition.
func (s *Store) ID() StoreID { return s.id }

func (s *Store) errorf(op string, err error) error {
	return fmt.Errorf("%s %s/%d: %w", op, s.id.Name, s.id.Partition, err)
}

// Get returns the value of key: the overlay's if it has one (a tombstone
// there means absent), else Badger's. A value from the overlay is shared with
// it and must not be modified.
func (s *Store) Get(key []byte) (value []byte, ok bool, err error) {
	if e, hit := s.overlay.get(key); hit {
		if e.del {
			return nil, false, nil
		}
		return e.value, true, nil
	}
	if f := s.flush.Load(); f != nil {
		if e, hit := f.table.get(key); hit {
			if e.del {
				return nil, false, nil
			}
			return e.value, true, nil
		}
	}
	if r := s.restored.Load(); r != nil {
		if v, ok, served := r.get(key); served {
			return v, ok, nil
		}
	}
	if err := s.checkOpen(); err != nil {
		return nil, false, s.errorf("get", err)
	}
	err = s.db.bdb.View(func(txn *badger.Txn) error {
		item, err := txn.Get(concat(s.data, key))
		if err != nil {
			return err
		}
		value, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.errorf("get", err)
	}
	return value, true, nil
}

// Put records key=value in the overlay, replacing any earlier write of key in
// this interval. Key and value are copied, so the caller may reuse them.
func (s *Store) Put(key, value []byte) {
	if value == nil {
		// A nil value must stay distinguishable from a tombstone on the
		// changelog, where a nil value means delete.
		value = []byte{}
	}
	k, fresh := s.overlay.put(key, value, s.gen)
	s.noteWrite(key, k, fresh)
}

// Delete records a tombstone for key in the overlay.
func (s *Store) Delete(key []byte) {
	k, fresh := s.overlay.set(key, entry{del: true, gen: s.gen})
	s.noteWrite(key, k, fresh)
}

// Expire deletes key from the store partition without a changelog record,
// for state a compact,delete changelog ages out by itself: a windowed
// store's windows past retention. Kafka Streams drops such windows with
// their store's time segments and writes no tombstones either; here a
// tombstone per window cost a late-data aggregation about 4% of its CPU
// (docs/benchmarks.md).
// The changelog still holds the key's last value until its retention
// deletes it, so a restore may bring the key back: the owner must expire
// what it finds past retention after a restore as it does in the run.
// A key written since the changelog last took the store gets its
// tombstone (Delete): the changelog would otherwise take that write.
func (s *Store) Expire(key []byte) {
	if e, ok := s.overlay.get(key); ok && e.gen == s.gen && !e.local {
		s.Delete(key)
		return
	}
	s.overlay.set(key, entry{del: true, gen: s.gen, local: true})
}

// noteWrite lists a write of key the changelog has not taken as dirty;
// k and fresh are what the overlay's set returned.
func (s *Store) noteWrite(key []byte, k string, fresh bool) {
	if fresh {
		if k == "" {
			k = string(key)
		}
		s.dirty = append(s.dirty, k)
	}
}

// Range calls fn for each live key starting with prefix, in ascending key
// order, merging the overlay and Badger (the overlay wins, tombstones hide)
// or, while a cold restore's data is being written to Badger, the overlay
// and the restored layers in memory; the first Range after a cold restore
// waits for those to be sorted.
// fn returning false stops. key and value are only valid during the call;
// copy them to keep them. An empty prefix ranges over the whole store.
func (s *Store) Range(prefix []byte, fn func(key, value []byte) bool) error {
	var end []byte
	if len(prefix) > 0 {
		end = prefixEnd(prefix)
		if end == nil {
			// prefix is all 0xff: the range is unbounded above but must
			// still start at prefix.
			return s.rangeBetween("range", prefix, nil, rangeAll, fn)
		}
	}
	return s.rangeBetween("range", prefix, end, rangeAll, fn)
}

// RangeBetween is Range over the keys in [start, end); a nil end is unbounded.
// Window stores use it to scan time ranges of one key.
func (s *Store) RangeBetween(start, end []byte, fn func(key, value []byte) bool) error {
	return s.rangeBetween("range", start, end, rangeAll, fn)
}

// ScanForExpiry is RangeBetween for the owner of the store's WriteBack
// cache scanning [start, end) to the end to delete what it finds. The
// cache is not written back first: the owner drops its own expired
// entries, unwritten. A write-back for every scan was 6% of a late-data
// aggregation's CPU, and wrote windows that then expired before the
// next write-back, to be deleted from Badger (docs/benchmarks.md). And
// the overlay may pass over its map for the keys in range rather than
// build its key order (memtable.cursor), which every later write of the
// interval would then keep up.
func (s *Store) ScanForExpiry(start, end []byte, fn func(key, value []byte) bool) error {
	return s.rangeBetween("scan for expiry", start, end, rangeExpiry, fn)
}

// rangeKind says what a range is for.
type rangeKind int

const (
	rangeAll    rangeKind = iota // everything the store and its cache hold
	rangeExpiry                  // ScanForExpiry
)

func (s *Store) rangeBetween(op string, start, end []byte, kind rangeKind, fn func(key, value []byte) bool) error {
	if err := s.checkOpen(); err != nil {
		return s.errorf(op, err)
	}
	if kind == rangeAll {
		// The cache's entries are part of what the range must see.
		s.flushWriteBack()
	}
	// A commit still being written to Badger is a layer of its own,
	// between the overlay and Badger: the range goes on without waiting
	// for the write (an aggregation closing windows ranges at every
	// advance of its stream time, and waited for most of its commits).
	f, err := s.inFlight()
	if err != nil {
		return s.errorf(op, err)
	}
	if r := s.restored.Load(); r != nil {
		// Commits go to the restored layers while they are built: no
		// commit is on its way to Badger but one from before.
		if err := s.settle(); err != nil {
			return s.errorf(op, err)
		}
		if v, ok := r.view(); ok {
			if err := s.merge(newMemCursor(v, start, end), start, end, kind, fn); err != nil {
				return s.errorf(op, err)
			}
			return nil
		}
	}
	err = s.db.bdb.View(func(txn *badger.Txn) error {
		// A bounded range narrows the iterator to the longest prefix its
		// bounds share, and reads values only for the keys it visits:
		// Badger otherwise prefetches past the end of short ranges,
		// walking every version of the keys beyond.
		opts := badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 64, Prefix: s.data}
		if end != nil {
			opts.PrefetchValues = false
			opts.Prefix = concat(s.data, commonPrefix(start, end))
		}
		it := txn.NewIterator(opts)
		defer it.Close()
		it.Seek(concat(s.data, start))
		var below cursor = &badgerCursor{it: it, prefix: len(s.data), end: end}
		if f != nil {
			below = newTableCursor(f.table.m, f.keys, start, end, below)
		}
		return s.merge(below, start, end, kind, fn)
	})
	if err != nil {
		return s.errorf(op, err)
	}
	return nil
}

// cursor is what lies below the overlay, in key order within a range's
// bounds: Badger, or the restored layers while they are being built.
type cursor interface {
	valid() bool
	key() []byte
	value(fn func([]byte) error) error
	next()
}

type badgerCursor struct {
	it     *badger.Iterator
	prefix int
	end    []byte
}

func (c *badgerCursor) valid() bool {
	return c.it.Valid() && (c.end == nil || bytes.Compare(c.key(), c.end) < 0)
}
func (c *badgerCursor) key() []byte                       { return c.it.Item().Key()[c.prefix:] }
func (c *badgerCursor) value(fn func([]byte) error) error { return c.it.Item().Value(fn) }
func (c *badgerCursor) next()                             { c.it.Next() }

// tableCursor walks a table (its entries m, their keys in order) over a
// cursor below it, in [start, end): the live keys of both, the table's
// entries winning and its tombstones hiding the keys below. A commit on
// its way to Badger is such a table over Badger, and a restore's writes
// committed during its build over its snapshot.
type tableCursor struct {
	m     map[string]entry
	keys  []string
	i     int
	end   []byte
	below cursor
	// The current key and whence: below's (value read from it) or the
	// table's (val).
	ok, fromBelow bool
	k, val        []byte
}

func newTableCursor(m map[string]entry, keys []string, start, end []byte, below cursor) *tableCursor {
	c := &tableCursor{m: m, keys: keys, end: end, below: below}
	c.i, _ = slices.BinarySearch(keys, string(start))
	c.find()
	return c
}

func (c *tableCursor) valid() bool { return c.ok }
func (c *tableCursor) key() []byte { return c.k }

func (c *tableCursor) value(fn func([]byte) error) error {
	if c.fromBelow {
		return c.below.value(fn)
	}
	return fn(c.val)
}

func (c *tableCursor) next() {
	if c.fromBelow {
		c.below.next()
	}
	c.find()
}

// find moves to the first live key at or after the table's next key and
// below's current one.
func (c *tableCursor) find() {
	for {
		var tk, bk []byte
		if c.i < len(c.keys) {
			// The table's keys never change: a view of one's bytes
			// saves a copy a key.
			tk = unsafe.Slice(unsafe.StringData(c.keys[c.i]), len(c.keys[c.i]))
			if c.end != nil && bytes.Compare(tk, c.end) >= 0 {
				c.i, tk = len(c.keys), nil
			}
		}
		if c.below.valid() {
			bk = c.below.key()
		}
		switch {
		case tk == nil && bk == nil:
			c.ok = false
			return
		case tk != nil && (bk == nil || bytes.Compare(tk, bk) <= 0):
			if bk != nil && bytes.Equal(tk, bk) {
				c.below.next() // shadowed by the table
			}
			e := c.m[c.keys[c.i]]
			c.i++
			if e.del {
				continue
			}
			c.ok, c.fromBelow, c.k, c.val = true, false, tk, e.value
			return
		default:
			c.ok, c.fromBelow, c.k = true, true, bk
			return
		}
	}
}

// merge calls fn for the live keys of the overlay and below in [start,
// end), in order; the overlay wins and its tombstones hide.
func (s *Store) merge(below cursor, start, end []byte, kind rangeKind, fn func(key, value []byte) bool) error {
	return mergeLayers(s.overlay.cursor(start, end, kind == rangeExpiry), s.overlay.get, below, fn)
}

// mergeLayers calls fn for the live keys of an upper layer (its keys in
// order from upper, each looked up with get when visited) and of below,
// in key order; the upper layer wins and its tombstones hide. A key get
// no longer finds is skipped: fn committed or discarded the overlay
// mid-range, and the key is no longer pending.
func mergeLayers(upper *keyCursor, get func(key []byte) (entry, bool), below cursor, fn func(key, value []byte) bool) error {
	for {
		var bk []byte
		if below.valid() {
			bk = below.key()
		}
		var ok []byte
		if k, hit := upper.peek(); hit {
			ok = []byte(k)
		}
		if bk == nil && ok == nil {
			return nil
		}
		if ok != nil && (bk == nil || bytes.Compare(ok, bk) <= 0) {
			if bk != nil && bytes.Equal(ok, bk) {
				below.next() // shadowed by the upper layer
			}
			upper.advance()
			e, hit := get(ok)
			if !hit || e.del {
				continue
			}
			if !fn(ok, e.value) {
				return nil
			}
			continue
		}
		more := true
		if err := below.value(func(v []byte) error {
			more = fn(bk, v)
			return nil
		}); err != nil {
			return err
		}
		if !more {
			return nil
		}
		below.next()
	}
}

// Pending returns the writes the changelog has not taken yet (since the
// last Hold or Commit), in key order, a WriteBack cache's first. It clears
// nothing. Values are shared
// with the overlay.
func (s *Store) Pending() []Change {
	s.flushWriteBack()
	slices.Sort(s.dirty)
	out := make([]Change, 0, len(s.dirty))
	// The keys' bytes share one allocation (Change.Key must not alias
	// the overlay's strings).
	size := 0
	for _, k := range s.dirty {
		size += len(k)
	}
	keys := make([]byte, 0, size)
	for _, k := range s.dirty {
		e := s.overlay.m[k]
		from := len(keys)
		keys = append(keys, k...)
		out = append(out, Change{Key: keys[from:len(keys):len(keys)], Value: e.value, Delete: e.del})
	}
	return out
}

// PendingCount is the number of distinct keys written since the last Hold
// or Commit, a WriteBack cache's included.
func (s *Store) PendingCount() int {
	s.flushWriteBack()
	return len(s.dirty)
}

// Discard drops the overlay, e.g. after an aborted Kafka transaction,
// held writes included: Kafka has those, and the restore that reopens the
// store replays them from the changelog, as after a crash.
func (s *Store) Discard() {
	// An aborted transaction's delta is never published. What was
	// published goes too: the restore that follows rebuilds the store
	// from the changelog, and stale entries would hide what it writes
	// (a partition that left and came back much later).
	s.produced = nil
	s.view.clear()
	if s.writeBack != nil {
		s.writeBack.Discard()
	}
	s.overlay.reset()
	s.nextGen()
	s.held = nil
}

// nextGen starts a changelog generation: the writes so far are taken.
func (s *Store) nextGen() {
	s.gen++
	s.dirty = nil // Pending's callers may still hold the keys
}

// Hold records that Kafka has committed the store's writes so far (their
// changelog records, under exactly-once in a committed transaction) and
// that cp is where they leave the store, without writing them to Badger:
// the overlay keeps them, reads see them, the changelog will not take them
// again, and the next Commit writes them with its checkpoint. Exactly-once
// commits a transaction every 100 ms, and a Badger write of every one of
// them cost the Nexmark aggregation a sixth of its throughput; held, the
// writes of a second reach Badger once, a key written many times once
// (docs/benchmarks.md). A crash loses nothing: as after any crash before a
// Badger write, the restore replays the changelog from the last
// checkpoint Badger has.
func (s *Store) Hold(cp Checkpoint) {
	s.view.publish(s.produced)
	s.produced = nil
	cp.SourceOffsets = maps.Clone(cp.SourceOffsets)
	s.held = &cp
	s.nextGen()
}

// OverlayMemory estimates what the overlay (held writes and those since)
// holds on the Go heap, keys' overheads included: what a bound on the
// process's memory must count. The commit's copies of the writes the
// changelog takes (Pending, its records, the committed view) are at most
// one each per overlay key, so they grow and shrink with it.
func (s *Store) OverlayMemory() int64 { return s.overlay.memory() }

// CommitHeld writes the held writes to Badger (Commit with the held
// checkpoint), before the store changes hands or closes. Writes not yet
// taken by the changelog must not be there.
func (s *Store) CommitHeld() error {
	if s.held == nil {
		return nil
	}
	if len(s.dirty) > 0 {
		return s.errorf("commit", fmt.Errorf("%d writes not yet in the changelog", len(s.dirty)))
	}
	return s.Commit(*s.held)
}

// Commit writes the overlay and cp to Badger in one transaction and starts a
// fresh overlay. cp is stored as given (Flush is the caller that merges source
// offsets). The write happens in the background: Commit returns once it has
// started, reads see the committed overlay until it is in Badger, and the next
// Commit (or a Range, Wipe, Restore, or DB.Close) waits for it and reports its
// error.
//
// The data is split over transactions of writeTxnKeys writes with the
// checkpoint in the last one (writeTable). That stays correct: a crash in
// between leaves the old checkpoint, and a restore replays the changelog
// (which already holds this overlay) from it, rewriting the same values.
//
// While a cold restore's data is still being written to Badger, the overlay
// and cp are kept in memory instead and reach Badger, in one transaction,
// right after that data (see restored.go).
func (s *Store) Commit(cp Checkpoint) error {
	if err := s.checkOpen(); err != nil {
		return s.errorf("commit", err)
	}
	// One commit at a time on its way to Badger: the previous one has
	// had a whole commit interval.
	if err := s.settle(); err != nil {
		return s.errorf("commit", err)
	}
	if err := s.db.checkSpace(s.overlay.bytes); err != nil {
		return s.errorf("commit", err)
	}
	if r := s.restored.Load(); r != nil {
		s.view.publish(s.produced)
		s.produced = nil
		handled, err := r.commit(&s.overlay, cp)
		if err != nil {
			return s.errorf("commit", err)
		}
		if handled {
			s.Discard()
			return nil
		}
	}
	s.produced = nil
	// The commit's data goes to Badger in the background: Kafka already
	// holds it (the changelog, and under exactly-once the committed
	// transaction), so a crash before the write ends is a restore of the
	// changelog's tail from the previous checkpoint, as a crash between
	// the changelog and Badger always was. Timed in the Nexmark
	// aggregation, this write took 20–55 ms of every 100 ms commit
	// interval (docs/benchmarks.md).
	f := &flush{table: s.overlay, cp: cp, done: make(chan struct{})}
	// Published before the write starts, forgotten once it is done:
	// RangeCommitted sees the commit all along.
	published := s.view.publishFlush(&f.table)
	s.overlay = newMemtableLike(&f.table)
	s.nextGen()
	s.held = nil
	s.flush.Store(f)
	s.db.builds.Add(1)
	go func() {
		defer s.db.builds.Done()
		f.err = whileBlocked(func() error { return s.writeTable(&f.table, cp) })
		close(f.done)
		if f.err == nil {
			s.view.forget(published)
		}
	}()
	return nil
}

// whileBlocked runs write again while Badger refuses writes because a
// DropPrefix (another store partition's Wipe) is running: that lasts
// moments, and all store partitions share one Badger DB, so a wipe must
// not fail other tasks' commits. write must be safe to repeat.
func whileBlocked(write func() error) error {
	for attempt := 0; ; attempt++ {
		err := write()
		if !errors.Is(err, badger.ErrBlockedWrites) || attempt == 200 {
			return err
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// writeTxnKeys is how many writes a Badger transaction of writeTable
// takes before it commits and the next begins.
const writeTxnKeys = 4096

// writeTable writes t and cp to Badger in transactions of writeTxnKeys
// writes (fewer if Badger's limit comes first), the checkpoint in the last:
// a crash between them leaves the previous checkpoint, and the restore
// replays the changelog, which holds all of t, from there (see Commit).
func (s *Store) writeTable(t *memtable, cp Checkpoint) error {
	enc := encodeCheckpoint(cp)
	ts := s.db.beginWrite()
	defer s.db.endWrite(ts)
	txn := s.db.bdb.NewTransactionAt(math.MaxUint64, true)
	defer func() { txn.Discard() }()
	write := func(key, value []byte, del bool) error {
		if del {
			return txn.Delete(key)
		}
		return txn.Set(key, value)
	}
	// A transaction holds an entry, a key copy and a map slot per write
	// until it commits: a commit of a full overlay in one (tens of
	// thousands of keys) was 12 of the 118 MB live at the peak of a
	// million-key aggregation. It commits every writeTxnKeys writes
	// instead, and when Badger says it is full.
	written := 0
	next := func() error {
		if err := txn.CommitAt(ts, nil); err != nil {
			return err
		}
		ts = s.db.moreTs()
		txn = s.db.bdb.NewTransactionAt(math.MaxUint64, true)
		written = 0
		return nil
	}
	apply := func(key, value []byte, del bool) error {
		if written == writeTxnKeys {
			if err := next(); err != nil {
				return err
			}
		}
		err := write(key, value, del)
		if errors.Is(err, badger.ErrTxnTooBig) {
			if err := next(); err != nil {
				return err
			}
			err = write(key, value, del)
		}
		written++
		return err
	}
	// Badger keeps each key until the transaction commits: they share
	// one allocation, sized up front, rather than one each (a commit of
	// COUNT_DISTINCT's new values writes thousands of small keys). The
	// table is walked in the map's order, not the keys': Badger's
	// transaction collects its writes in a map of its own, and a lookup
	// of each key in key order misses the CPU's caches on every key of a
	// large table.
	size := 0
	for k := range t.m {
		size += len(s.data) + len(k)
	}
	buf := make([]byte, 0, size)
	for k, e := range t.m {
		from := len(buf)
		buf = append(append(buf, s.data...), k...)
		if err := apply(buf[from:len(buf):len(buf)], e.value, e.del); err != nil {
			return err
		}
	}
	if err := apply(s.ckey, enc, false); err != nil {
		return err
	}
	return txn.CommitAt(ts, nil)
}

// Checkpoint returns the last committed checkpoint. A store partition that
// never committed returns the zero Checkpoint (ChangelogOffset 0: restore
// replays from the start; SourceOffsets nil: consume from the group's
// committed offsets).
func (s *Store) Checkpoint() (Checkpoint, error) {
	if err := s.checkOpen(); err != nil {
		return Checkpoint{}, s.errorf("checkpoint", err)
	}
	if s.held != nil {
		// Kafka's latest commit, held in the overlay.
		return Checkpoint{ChangelogOffset: s.held.ChangelogOffset, SourceOffsets: maps.Clone(s.held.SourceOffsets)}, nil
	}
	if f := s.flush.Load(); f != nil {
		// The last commit's, whether or not Badger holds it yet (a
		// failed write is reported here too: its checkpoint is not
		// durable).
		select {
		case <-f.done:
			if f.err != nil {
				return Checkpoint{}, s.errorf("checkpoint", f.err)
			}
		default:
		}
		return Checkpoint{ChangelogOffset: f.cp.ChangelogOffset, SourceOffsets: maps.Clone(f.cp.SourceOffsets)}, nil
	}
	if r := s.restored.Load(); r != nil {
		if cp, ok := r.checkpoint(); ok {
			return cp, nil
		}
	}
	var cp Checkpoint
	err := s.db.bdb.View(func(txn *badger.Txn) error {
		item, err := txn.Get(s.ckey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			cp, err = decodeCheckpoint(v)
			return err
		})
	})
	if err != nil {
		return Checkpoint{}, s.errorf("checkpoint", err)
	}
	return cp, nil
}

// Wipe deletes every key and the checkpoint of this store partition, and the
// overlay. Used before a restore from scratch. A cold restore's data still
// being written to Badger is dropped: the build is cancelled first.
func (s *Store) Wipe() error {
	if err := s.checkOpen(); err != nil {
		return s.errorf("wipe", err)
	}
	// A commit still being written would land after the wipe; its
	// error does not matter, its data is wiped anyway.
	_ = s.flushed()
	s.flush.Store(nil)
	s.cancelBuild()
	s.Discard()
	// DropPrefix blocks every write to the shared DB while it runs; a
	// store partition that holds nothing (every first start) needs none.
	if empty, err := s.empty(); err != nil || empty {
		return err
	}
	if err := whileBlocked(func() error { return s.db.bdb.DropPrefix(s.data, s.ckey) }); err != nil {
		return s.errorf("wipe", err)
	}
	return nil
}

// empty reports whether the store partition has no data and no
// checkpoint in Badger.
func (s *Store) empty() (bool, error) {
	if err := s.settle(); err != nil {
		return false, err
	}
	empty := true
	err := s.db.bdb.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(s.ckey); err == nil {
			empty = false
			return nil
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: s.data})
		defer it.Close()
		it.Rewind()
		empty = !it.Valid()
		return nil
	})
	if err != nil {
		return false, s.errorf("wipe", err)
	}
	return empty, nil
}

// ApproxBytes estimates the size of this store partition: Badger's on-disk
// table estimate for its key range (memtables are not counted, so fresh
// writes show up after a flush) plus the overlay's keys and values. While a
// cold restore's data is being written to Badger, it is that data's size in
// memory instead of Badger's estimate.
func (s *Store) ApproxBytes() int64 {
	// Badger's estimate below covers a commit only once it is written.
	_ = s.flushed()
	if r := s.restored.Load(); r != nil {
		if n, ok := r.memBytes(); ok {
			return n + s.overlay.bytes
		}
	}
	if s.checkOpen() != nil {
		return s.overlay.bytes
	}
	onDisk, _ := s.db.bdb.EstimateSize(s.data)
	return int64(onDisk) + s.overlay.bytes
}

// CommittedStats counts the committed keys starting with prefix and their
// approximate bytes (key and value). It reads Badger only, never the
// overlay, so other goroutines may call it while the task writes: reports
// such as DESCRIBE EXTENDED use it to show how much state a query holds.
// While a cold restore's data is being written to Badger, it counts that
// data and the commits since, in memory.
func (s *Store) CommittedStats(prefix []byte) (keys, bytes int64, err error) {
	return s.CommittedStatsOf(prefix, nil)
}

// CommittedStatsOf is CommittedStats of only the keys keep accepts (nil:
// all), for a store whose entries of one kind share no prefix (a time
// window's COUNT_DISTINCT values sort among its windows).
func (s *Store) CommittedStatsOf(prefix []byte, keep func(key []byte) bool) (keys, bytes int64, err error) {
	if err := s.checkOpen(); err != nil {
		return 0, 0, s.errorf("stats", err)
	}
	if err := s.flushed(); err != nil {
		return 0, 0, s.errorf("stats", err)
	}
	if r := s.restored.Load(); r != nil {
		if keys, bytes, ok := r.stats(prefix, keep); ok {
			return keys, bytes, nil
		}
	}
	err = s.db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: concat(s.data, prefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			if keep != nil && !keep(item.Key()[len(s.data):]) {
				continue
			}
			keys++
			bytes += int64(len(item.Key())-len(s.data)) + item.ValueSize()
		}
		return nil
	})
	if err != nil {
		return 0, 0, s.errorf("stats", err)
	}
	return keys, bytes, nil
}

func commonPrefix(a, b []byte) []byte {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n]
}

// ErrRestoring is returned by RangeCommitted while a cold restore's data
// is still being written to Badger: it lives in memory until then, and a
// pull query then asks again rather than read a partial table.
var ErrRestoring = errors.New("state is still being restored")

// RangeCommitted is Range over committed data only — Badger, and the
// committed writes it may not have yet (committedView) — never the open
// transaction's, so other goroutines may call it while the task writes:
// pull queries read tables this way, as of the last commit.
func (s *Store) RangeCommitted(prefix []byte, fn func(key, value []byte) bool) error {
	end := prefixEnd(prefix)
	if len(prefix) == 0 {
		end = nil
	}
	return s.RangeCommittedBetween(prefix, end, fn)
}

// RangeCommittedBetween is RangeCommitted over the keys in [start, end)
// (a nil end is unbounded): it seeks to start and stops at end, so a pull
// query's key range reads the keys in range and no others.
func (s *Store) RangeCommittedBetween(start, end []byte, fn func(key, value []byte) bool) error {
	if err := s.checkOpen(); err != nil {
		return s.errorf("range", err)
	}
	// Committed includes the commit still being written.
	if err := s.flushed(); err != nil {
		return s.errorf("range", err)
	}
	if s.restored.Load() != nil {
		return s.errorf("range", ErrRestoring)
	}
	// Committed writes Badger may not have yet (held under exactly-once,
	// or being written) come from the view, the rest from Badger, both as
	// of one instant.
	prefix := start
	if end != nil {
		prefix = commonPrefix(start, end)
	} else if len(start) > 0 {
		prefix = nil
	}
	keys, entries, txn := s.view.snapshot(s.db.bdb, prefix)
	defer txn.Discard()
	keys = keysBetween(keys, start, end)
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 64, Prefix: concat(s.data, prefix)})
	defer it.Close()
	it.Seek(concat(s.data, start))
	get := func(k []byte) (entry, bool) {
		e, ok := entries[string(k)]
		return entry{value: e.value, del: e.del}, ok
	}
	if err := mergeLayers(&keyCursor{chunk: keys}, get, &badgerCursor{it: it, prefix: len(s.data), end: end}, fn); err != nil {
		return s.errorf("range", err)
	}
	return nil
}

// keysBetween keeps the sorted keys in [start, end) (nil end: unbounded).
func keysBetween(keys []string, start, end []byte) []string {
	lo, _ := slices.BinarySearch(keys, string(start))
	hi := len(keys)
	if end != nil {
		hi, _ = slices.BinarySearch(keys, string(end))
	}
	if hi < lo {
		hi = lo
	}
	return keys[lo:hi]
}
