package state

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/ristretto/v2/z"
)

// ErrClosed is returned by operations on a DB (or one of its stores) after
// Close.
var ErrClosed = errors.New("state: database closed")

// Options configure Open.
type Options struct {
	// Dir is the Badger directory. Empty opens Badger in in-memory mode,
	// which the offline `sluice test` runner uses: nothing touches disk and
	// nothing survives Close.
	Dir string
	// Logger receives Badger's warnings and errors; Badger's info and debug
	// chatter (table opening, compactions) is dropped. Nil means
	// slog.Default().
	Logger *slog.Logger
	// MinFreeBytes is the free disk space every commit leaves untouched;
	// a commit that would eat into it fails with ErrDiskFull. Zero means
	// DefaultMinFreeBytes; negative turns the check off.
	MinFreeBytes int64
	// RestoreMemory bounds the memory that cold restores (no local
	// checkpoint) hold, over all store partitions: such a restore reads
	// the changelog into memory and writes it to Badger in the background
	// (restored.go), and past this bound writes the rest straight to
	// Badger, ~4× slower. A 1M-key store of 16-byte keys and 40-byte values
	// takes ~80 MB. 0 means an eighth of the memory the process may use
	// (the machine's, or its cgroup's limit), at least 256 MiB and at most
	// 2 GiB: the memory is held only until the background write ends.
	// Negative always writes straight to Badger.
	RestoreMemory int64
}

// Bounds of Options.RestoreMemory's default.
const (
	minDefaultRestoreMemory = 256 << 20
	maxDefaultRestoreMemory = 2 << 30
)

// defaultRestoreMemory is Options.RestoreMemory's default: an eighth of
// availableMemory, clamped; 256 MiB when that is unknown.
func defaultRestoreMemory() int64 {
	return min(max(availableMemory()/8, minDefaultRestoreMemory), maxDefaultRestoreMemory)
}

// availableMemory is the memory this process may use: the machine's
// (MemTotal in /proc/meminfo) or its cgroup v2 limit (memory.max) when
// lower; 0 when neither can be read (not Linux).
func availableMemory() int64 {
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					total = kb << 10
				}
			}
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && limit > 0 && (total == 0 || limit < total) {
			total = limit
		}
	}
	return total
}

// isEmptyFileErr reports Badger's refusal to open a directory holding a
// file a crash left empty (z.NewFile, wrapped by Badger with its own text).
func isEmptyFileErr(err error) bool {
	return errors.Is(err, z.NewFile) || strings.Contains(err.Error(), z.NewFile.Error())
}

// DB is one Badger database holding every store partition of an instance.
// Its methods are safe for concurrent use; the *Store values it hands out are
// not (each belongs to one task goroutine).
type DB struct {
	bdb *badger.DB
	log *slog.Logger
	dir string
	// minFree is the free-space reserve (see Options.MinFreeBytes).
	minFree atomic.Int64

	closed atomic.Bool

	mu     sync.Mutex // guards stores and the catalog
	stores map[StoreID]*Store
	// numbers and names are the catalog (keys.go): each store name's
	// number, and each number's name; nextNumber is the one the next new
	// name gets.
	numbers    map[string]uint32
	names      map[uint32]string
	nextNumber uint32

	// builds counts cold restores whose data is still being written to
	// Badger in the background; Close waits for them.
	builds sync.WaitGroup
	// buildGate, when set (by tests), holds every build before each chunk
	// until it receives, so a test can look at a store mid-build.
	buildGate chan struct{}
	// Badger runs in managed mode: Sluice gives each write its commit
	// timestamps, and reads read the latest version of every key
	// (View's MaxUint64) without waiting. Badger's own timestamps make
	// every read wait until each write given a timestamp before it is
	// in the memtable: a task's Get or range waited for the commit its
	// store was writing in the background, the very write that runs in
	// the background so that the task goes on (in Nexmark q5 the tasks
	// spent more time waiting there than in any other wait). A read
	// needs no such wait here: a store partition's reads see its commit
	// on the way to Badger in memory first (Store.flush), and no other
	// writer touches its keys.
	//
	// tsMu guards lastTs (the last timestamp given out), writing (the
	// first timestamp of each write under way) and discardTs, the
	// timestamp below every write under way, up to which Badger may drop
	// overwritten versions: nothing reads below the latest.
	tsMu      sync.Mutex
	lastTs    uint64
	writing   map[uint64]struct{}
	discardTs uint64
	// restoreMemory is Options.RestoreMemory; restoreHeld is what cold
	// restores hold in memory now.
	restoreMemory int64
	restoreHeld   atomic.Int64
}

// StoreID names one partition of one store.
type StoreID struct {
	Name      string
	Partition int32
}

func (id StoreID) String() string { return fmt.Sprintf("%s/%d", id.Name, id.Partition) }

// Open opens (or creates) the database described by opts.
func Open(opts Options) (*DB, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	// Smaller memtables than Badger's 64 MB default: state is written in
	// commit-sized batches, so large memtables buy no speed here (the
	// restore benchmark measured the same rate) but cost ~200 MB of RSS.
	bo := badger.DefaultOptions(opts.Dir).
		WithLogger(badgerLogger{log: log}).
		WithLoggingLevel(badger.WARNING).
		// Memtables live on the Go heap (no jemalloc), where the
		// collector lets the heap grow to twice what is live: 8 MiB
		// each instead of 16 took a million-key aggregation's peak RSS
		// from 238 to 201 MB at the same speed (docs/benchmarks.md).
		WithMemTableSize(8 << 20).
		WithNumMemtables(3).
		// Conflict detection stays on: without it (tried for speed, since
		// a store partition has one writer) TestCrashRecovery's
		// exactly-once case lost state after kills, reproducibly; why is
		// not understood yet.
		// Tables are written uncompressed and read straight from their
		// memory maps, as Kafka Streams' RocksDB stores are: Badger's
		// default Snappy spent a few percent of a join's CPU compressing
		// every table a flush or compaction wrote, and needed a block
		// cache of decompressed blocks (64 MiB here) that, without
		// compression, Badger advises against.
		WithCompression(options.None).
		WithBlockCacheSize(0).
		// A store whose keys arrive all over the key space (a stream-stream
		// join keeps its rows by join key) makes every level-0 table
		// overlap the whole of level 1, and each compaction rewrites it.
		// A 64 MiB level 1 (Badger's default is 10) and up to 10 level-0
		// tables before compacting (5) rewrite less of it per byte
		// written: Nexmark q20 at a million bids, whose join store grows
		// for its hour of grace, ran 15% faster (median of four
		// alternated runs, docs/benchmarks.md); the aggregation's peak RSS
		// rose ~10 MB (more level-0 tables mapped).
		WithBaseLevelSize(64 << 20).
		WithNumLevelZeroTables(10).
		WithNumLevelZeroTablesStall(20)
	if opts.Dir == "" {
		bo = bo.WithInMemory(true)
	}
	bdb, err := badger.OpenManaged(bo)
	if err != nil && isEmptyFileErr(err) {
		// A crash between creating a memtable or value log file and its
		// first write leaves it empty, and Badger's Open then fails with
		// z.NewFile (dgraph-io/badger#2207) after sizing the file; the
		// second Open finds it sized and goes on. Nothing was in it.
		log.Warn("state: reopening after an empty file a crash left", "dir", opts.Dir, "err", err)
		bdb, err = badger.OpenManaged(bo)
	}
	if err != nil {
		return nil, fmt.Errorf("open state %q: %w", opts.Dir, err)
	}
	mem := opts.RestoreMemory
	if mem == 0 {
		mem = defaultRestoreMemory()
	}
	db := &DB{bdb: bdb, log: log, dir: opts.Dir, stores: make(map[StoreID]*Store), restoreMemory: mem}
	db.lastTs = bdb.MaxVersion()
	db.writing = make(map[uint64]struct{})
	db.discardTs = db.lastTs
	bdb.SetDiscardTs(db.lastTs)
	if err := db.dropLegacy(); err != nil {
		bdb.Close()
		return nil, fmt.Errorf("open state %q: %w", opts.Dir, err)
	}
	if err := db.loadCatalog(); err != nil {
		bdb.Close()
		return nil, fmt.Errorf("open state %q: %w", opts.Dir, err)
	}
	reserve := opts.MinFreeBytes
	if reserve == 0 {
		reserve = DefaultMinFreeBytes
	}
	db.SetMinFreeBytes(reserve)
	return db, nil
}

// Close closes Badger. Overlays that were not committed are lost, which is
// fine: their changes were never acknowledged to Kafka either. Cold restores
// still being written to Badger are finished first, so that a restart finds
// a checkpoint and replays only the tail (a 1M-key store takes seconds).
func (db *DB) Close() error {
	if db.closed.Load() {
		return nil
	}
	db.builds.Wait()
	if db.closed.Swap(true) {
		return nil
	}
	if err := db.bdb.Close(); err != nil {
		return fmt.Errorf("close state: %w", err)
	}
	return nil
}

// Store returns the view of one store's partition. It is cheap and returns the
// same *Store for the same (name, partition) while the DB is open, so the
// overlay is shared by whoever asks.
func (db *DB) Store(name string, partition int32) *Store {
	id := StoreID{Name: name, Partition: partition}
	db.mu.Lock()
	defer db.mu.Unlock()
	if s, ok := db.stores[id]; ok {
		return s
	}
	number, err := db.numberLocked(name)
	s := newStore(db, id, number, err)
	if err == nil {
		db.stores[id] = s
	}
	return s
}

// numberLocked returns name's store number, giving it the next one (and
// writing that to the catalog before any of the store's data) when it
// has none. db.mu is held.
func (db *DB) numberLocked(name string) (uint32, error) {
	if n, ok := db.numbers[name]; ok {
		return n, nil
	}
	if err := db.checkOpen(); err != nil {
		return 0, err
	}
	n := db.nextNumber
	err := whileBlocked(func() error {
		return db.update(func(txn *badger.Txn) error { return txn.Set(catalogKey(name), encodeNumber(n)) })
	})
	if err != nil {
		return 0, fmt.Errorf("number store %s: %w", name, err)
	}
	db.numbers[name], db.names[n] = n, name
	db.nextNumber++
	return n, nil
}

// beginWrite gives a write its first commit timestamp, and keeps Badger
// from discarding versions at or above it until endWrite(first).
func (db *DB) beginWrite() (first uint64) {
	db.tsMu.Lock()
	defer db.tsMu.Unlock()
	db.lastTs++
	first = db.lastTs
	db.writing[first] = struct{}{}
	return first
}

// moreTs gives a write under way (beginWrite) one more timestamp.
func (db *DB) moreTs() uint64 {
	db.tsMu.Lock()
	defer db.tsMu.Unlock()
	db.lastTs++
	return db.lastTs
}

// endWrite ends the write that began at first, and lets Badger discard
// the versions every later write overwrites.
func (db *DB) endWrite(first uint64) {
	db.tsMu.Lock()
	defer db.tsMu.Unlock()
	delete(db.writing, first)
	low := db.lastTs
	for f := range db.writing {
		low = min(low, f-1)
	}
	if low > db.discardTs {
		db.discardTs = low
		db.bdb.SetDiscardTs(low)
	}
}

// update runs fn in a read-write transaction and commits it.
func (db *DB) update(fn func(txn *badger.Txn) error) error {
	if err := db.checkOpen(); err != nil {
		return err
	}
	ts := db.beginWrite()
	defer db.endWrite(ts)
	txn := db.bdb.NewTransactionAt(math.MaxUint64, true)
	defer txn.Discard()
	if err := fn(txn); err != nil {
		return err
	}
	return txn.CommitAt(ts, nil)
}

// loadCatalog reads every store name's number.
func (db *DB) loadCatalog() error {
	db.numbers, db.names, db.nextNumber = make(map[string]uint32), make(map[uint32]string), 1
	err := db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, Prefix: []byte{tagCatalog}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			name := string(it.Item().Key()[1:])
			var n uint32
			err := it.Item().Value(func(v []byte) (err error) {
				n, err = decodeNumber(v)
				return err
			})
			if err != nil {
				return fmt.Errorf("store %s: %w", name, err)
			}
			if other, taken := db.names[n]; taken {
				return fmt.Errorf("stores %s and %s have the same number %d", other, name, n)
			}
			db.numbers[name], db.names[n] = n, name
			db.nextNumber = max(db.nextNumber, n+1)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read store catalog: %w", err)
	}
	return nil
}

// dropLegacy deletes the stores of the key layout before store numbers
// (keys.go): the stores they held are restored from their changelogs
// when their tasks open them, as on a new disk.
func (db *DB) dropLegacy() error {
	found := false
	err := db.bdb.View(func(txn *badger.Txn) error {
		for _, tag := range legacyTags {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tag}})
			it.Rewind()
			found = found || it.Valid()
			it.Close()
		}
		return nil
	})
	if err != nil || !found {
		return err
	}
	db.log.Warn("state: dropping stores kept in an earlier layout; their changelogs restore them", "dir", db.dir)
	prefixes := make([][]byte, len(legacyTags))
	for i, tag := range legacyTags {
		prefixes[i] = []byte{tag}
	}
	if err := db.bdb.DropPrefix(prefixes...); err != nil {
		return fmt.Errorf("drop stores of an earlier layout: %w", err)
	}
	return nil
}

// Stores lists the (name, partition) pairs that have data or a checkpoint on
// disk, or a cold restore's data, a commit on its way there or committed
// writes held in memory (committedView), sorted by name and partition.
// Stores with only uncommitted writes in their overlay are not listed.
func (db *DB) Stores() ([]StoreID, error) {
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	seen := make(map[StoreID]bool)
	var out []StoreID
	db.mu.Lock()
	for id, s := range db.stores {
		// The view is asked before Badger is: a write it forgets in
		// between is in Badger by then.
		if s.restored.Load() != nil || s.flush.Load() != nil || s.view.holds() {
			seen[id] = true
			out = append(out, id)
		}
	}
	names := maps.Clone(db.names)
	db.mu.Unlock()
	err := db.bdb.View(func(txn *badger.Txn) error {
		for _, tag := range []byte{tagCheckpoint, tagData} {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tag}})
			// Seek past each store partition's key range after seeing its
			// first key, so the cost is one seek per store partition, not
			// one step per data key.
			for it.Rewind(); it.Valid(); {
				_, number, part, n, err := decodeStorePrefix(it.Item().Key())
				if err != nil {
					it.Close()
					return err
				}
				name, ok := names[number]
				if !ok {
					it.Close()
					return fmt.Errorf("store number %d is not in the catalog", number)
				}
				id := StoreID{Name: name, Partition: part}
				if !seen[id] {
					seen[id] = true
					out = append(out, id)
				}
				next := prefixEnd(it.Item().KeyCopy(nil)[:n])
				if next == nil {
					break
				}
				it.Seek(next)
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list stores: %w", err)
	}
	sortIDs(out)
	return out, nil
}

func sortIDs(ids []StoreID) {
	slices.SortFunc(ids, func(a, b StoreID) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
}

// checkOpen is called by every operation that reaches Badger: Badger itself
// does not reliably refuse work after Close.
func (db *DB) checkOpen() error {
	if db.closed.Load() {
		return ErrClosed
	}
	return nil
}

// badgerLogger forwards Badger's warnings and errors to slog and drops the
// rest: Badger logs every table open and compaction at info level, which
// would drown an instance's own logs.
type badgerLogger struct{ log *slog.Logger }

func (l badgerLogger) Errorf(f string, a ...any) {
	l.log.Error(trimNL(fmt.Sprintf(f, a...)), "component", "badger")
}

func (l badgerLogger) Warningf(f string, a ...any) {
	l.log.Warn(trimNL(fmt.Sprintf(f, a...)), "component", "badger")
}

func (badgerLogger) Infof(string, ...any)  {}
func (badgerLogger) Debugf(string, ...any) {}

func trimNL(s string) string { return strings.TrimRight(s, "\n") }

var _ badger.Logger = badgerLogger{}
