package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openDB(t testing.TB, dir string) *DB {
	t.Helper()
	db, err := Open(Options{Dir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// kv is a key/value pair as Range reports it.
type kv struct{ K, V string }

func collect(t testing.TB, s *Store, prefix []byte) []kv {
	t.Helper()
	return collectFrom(t, s.Range, prefix)
}

// collectFrom gathers what a range method (Range, RangeCommitted) reports.
func collectFrom(t testing.TB, rangeFn func([]byte, func(k, v []byte) bool) error, prefix []byte) []kv {
	t.Helper()
	var out []kv
	if err := rangeFn(prefix, func(k, v []byte) bool {
		out = append(out, kv{string(k), string(v)})
		return true
	}); err != nil {
		t.Fatalf("range %q: %v", prefix, err)
	}
	return out
}

func mustGet(t testing.TB, s *Store, key string) (string, bool) {
	t.Helper()
	v, ok, err := s.Get([]byte(key))
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return string(v), ok
}

// op is one write in a table-driven test: Put unless del.
type op struct {
	k, v string
	del  bool
}

func apply(s *Store, ops []op) {
	for _, o := range ops {
		if o.del {
			s.Delete([]byte(o.k))
		} else {
			s.Put([]byte(o.k), []byte(o.v))
		}
	}
}

func TestOverlayReadYourWritesAndCoalescing(t *testing.T) {
	tests := []struct {
		name    string
		ops     []op
		want    map[string]string // key → value; absent keys listed in gone
		gone    []string
		pending []Change
	}{
		{
			name:    "put then get",
			ops:     []op{{k: "a", v: "1"}},
			want:    map[string]string{"a": "1"},
			pending: []Change{{Key: []byte("a"), Value: []byte("1")}},
		},
		{
			name:    "repeated puts coalesce to the last",
			ops:     []op{{k: "a", v: "1"}, {k: "a", v: "2"}, {k: "a", v: "3"}},
			want:    map[string]string{"a": "3"},
			pending: []Change{{Key: []byte("a"), Value: []byte("3")}},
		},
		{
			name:    "delete after put is a tombstone",
			ops:     []op{{k: "a", v: "1"}, {k: "a", del: true}},
			gone:    []string{"a"},
			pending: []Change{{Key: []byte("a"), Delete: true}},
		},
		{
			name:    "put after delete revives",
			ops:     []op{{k: "a", del: true}, {k: "a", v: "x"}},
			want:    map[string]string{"a": "x"},
			pending: []Change{{Key: []byte("a"), Value: []byte("x")}},
		},
		{
			name: "pending is in key order",
			ops:  []op{{k: "c", v: "3"}, {k: "a", v: "1"}, {k: "b", del: true}, {k: "c", v: "33"}},
			want: map[string]string{"a": "1", "c": "33"},
			gone: []string{"b", "zz"},
			pending: []Change{
				{Key: []byte("a"), Value: []byte("1")},
				{Key: []byte("b"), Delete: true},
				{Key: []byte("c"), Value: []byte("33")},
			},
		},
		{
			name:    "empty value is not a delete",
			ops:     []op{{k: "e", v: ""}},
			want:    map[string]string{"e": ""},
			pending: []Change{{Key: []byte("e"), Value: []byte{}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openDB(t, t.TempDir()).Store("agg", 0)
			apply(s, tt.ops)
			for k, want := range tt.want {
				if got, ok := mustGet(t, s, k); !ok || got != want {
					t.Errorf("Get(%q) = %q, %v; want %q, true", k, got, ok, want)
				}
			}
			for _, k := range tt.gone {
				if got, ok := mustGet(t, s, k); ok {
					t.Errorf("Get(%q) = %q, true; want absent", k, got)
				}
			}
			if diff := cmp.Diff(tt.pending, s.Pending()); diff != "" {
				t.Errorf("Pending() mismatch (-want +got):\n%s", diff)
			}
			if got := s.PendingCount(); got != len(tt.pending) {
				t.Errorf("PendingCount() = %d, want %d", got, len(tt.pending))
			}
		})
	}
}

func TestPutCopiesKeyAndValue(t *testing.T) {
	s := openDB(t, "").Store("agg", 0)
	k, v := []byte("key"), []byte("val")
	s.Put(k, v)
	copy(k, "XXX")
	copy(v, "YYY")
	if got, ok := mustGet(t, s, "key"); !ok || got != "val" {
		t.Fatalf("Get after caller reused buffers = %q, %v; want \"val\", true", got, ok)
	}
}

// TestOverlayKeepsWhatItWasGiven: the overlay copies keys and values
// into slabs of its own (a key's first value) or allocations of their own
// (later values, and any above a slab's size); whichever, a value read
// from it has no room past its end that a neighbour's bytes live in, an
// empty value stays a value (not a tombstone), and what a reader holds is
// not changed by later writes or a Discard.
func TestOverlayKeepsWhatItWasGiven(t *testing.T) {
	s := openDB(t, "").Store("agg", 0)
	big := bytes.Repeat([]byte("b"), maxChunk)
	buf := []byte("0123456789")
	s.Put([]byte("a"), buf[:4])
	s.Put([]byte("b"), buf[4:8])
	s.Put([]byte("e"), nil)
	s.Put([]byte("big"), big)
	copy(buf, "XXXXXXXXXX")
	big[0] = 'X'
	a, _, err := s.Get([]byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	_ = append(a, "!!!!"...) // must not land in "b"'s value
	want := map[string]string{"a": "0123", "b": "4567", "e": "", "big": strings.Repeat("b", maxChunk)}
	for k, v := range want {
		if got, ok := mustGet(t, s, k); !ok || got != v {
			t.Errorf("Get(%q) = %.20q, %v; want %.20q", k, got, ok, v)
		}
	}
	var empty *Change
	for _, c := range s.Pending() {
		if string(c.Key) == "e" {
			empty = &c
		}
	}
	if empty == nil || empty.Delete || empty.Value == nil {
		t.Errorf("pending write of an empty value = %+v; want a non-nil empty value", empty)
	}
	// Rewrites take allocations of their own; a reader keeps what it read.
	s.Put([]byte("a"), []byte("rewritten"))
	if string(a) != "0123" {
		t.Errorf("value read before a rewrite became %q", a)
	}
	s.Discard()
	s.Put([]byte("a"), []byte("after discard"))
	s.Put([]byte("c"), []byte("zzzz"))
	if string(a) != "0123" {
		t.Errorf("value read before a discard became %q", a)
	}
	if got, _ := mustGet(t, s, "a"); got != "after discard" {
		t.Errorf("Get(a) after discard and put = %q", got)
	}
}

func TestOverlayShadowsBadger(t *testing.T) {
	s := openDB(t, t.TempDir()).Store("agg", 0)
	apply(s, []op{{k: "a", v: "old"}, {k: "b", v: "keep"}})
	if err := s.Commit(Checkpoint{ChangelogOffset: 2}); err != nil {
		t.Fatal(err)
	}
	apply(s, []op{{k: "a", v: "new"}, {k: "b", del: true}})
	if got, ok := mustGet(t, s, "a"); !ok || got != "new" {
		t.Errorf("Get(a) = %q, %v; want new", got, ok)
	}
	if _, ok := mustGet(t, s, "b"); ok {
		t.Errorf("Get(b) found; the overlay tombstone must hide it")
	}
	s.Discard()
	if got, ok := mustGet(t, s, "b"); !ok || got != "keep" {
		t.Errorf("after Discard Get(b) = %q, %v; want keep", got, ok)
	}
	if s.PendingCount() != 0 {
		t.Errorf("PendingCount after Discard = %d", s.PendingCount())
	}
}

func TestRangeMergesOverlayAndBadger(t *testing.T) {
	s := openDB(t, t.TempDir()).Store("win", 3)
	// Committed: a1 a2 a3 b1 c1.
	apply(s, []op{{k: "a1", v: "d"}, {k: "a2", v: "d"}, {k: "a3", v: "d"}, {k: "b1", v: "d"}, {k: "c1", v: "d"}})
	if err := s.Commit(Checkpoint{ChangelogOffset: 5}); err != nil {
		t.Fatal(err)
	}
	// Overlay: overwrite a2, delete a3, add a0 and a25, delete b1, tombstone
	// a key Badger never had.
	apply(s, []op{{k: "a2", v: "o"}, {k: "a3", del: true}, {k: "a0", v: "o"}, {k: "a25", v: "o"}, {k: "b1", del: true}, {k: "a9", del: true}})

	tests := []struct {
		name       string
		start, end string // RangeBetween bounds when prefix is unset
		prefix     *string
		stopAfter  int
		want       []kv
	}{
		{name: "prefix a", prefix: ptr("a"), want: []kv{{"a0", "o"}, {"a1", "d"}, {"a2", "o"}, {"a25", "o"}}},
		{name: "prefix b (all hidden)", prefix: ptr("b"), want: nil},
		{name: "whole store", prefix: ptr(""), want: []kv{{"a0", "o"}, {"a1", "d"}, {"a2", "o"}, {"a25", "o"}, {"c1", "d"}}},
		{name: "between a1 and a25", start: "a1", end: "a25", want: []kv{{"a1", "d"}, {"a2", "o"}}},
		{name: "between a2 and unbounded", start: "a2", want: []kv{{"a2", "o"}, {"a25", "o"}, {"c1", "d"}}},
		{name: "stop after two", prefix: ptr(""), stopAfter: 2, want: []kv{{"a0", "o"}, {"a1", "d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []kv
			fn := func(k, v []byte) bool {
				got = append(got, kv{string(k), string(v)})
				return tt.stopAfter == 0 || len(got) < tt.stopAfter
			}
			var err error
			if tt.prefix != nil {
				err = s.Range([]byte(*tt.prefix), fn)
			} else {
				var end []byte
				if tt.end != "" {
					end = []byte(tt.end)
				}
				err = s.RangeBetween([]byte(tt.start), end, fn)
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestRangeAllFFPrefix(t *testing.T) {
	s := openDB(t, "").Store("s", 0)
	apply(s, []op{{k: "\xff\xff", v: "1"}, {k: "\xff\xff\x01", v: "2"}, {k: "\xfe", v: "no"}})
	want := []kv{{"\xff\xff", "1"}, {"\xff\xff\x01", "2"}}
	if diff := cmp.Diff(want, collect(t, s, []byte("\xff\xff"))); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestStoresDoNotOverlap(t *testing.T) {
	db := openDB(t, t.TempDir())
	// "a" partition 0x61… and "ab": the length prefix keeps them apart.
	a, ab, a1 := db.Store("a", 0), db.Store("ab", 0), db.Store("a", 1)
	if db.Store("a", 0) != a {
		t.Fatal("Store returned a different *Store for the same id")
	}
	for _, s := range []*Store{a, ab, a1} {
		s.Put([]byte("k"), []byte(s.ID().String()))
		if err := s.Commit(Checkpoint{ChangelogOffset: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*Store{a, ab, a1} {
		want := []kv{{"k", s.ID().String()}}
		if diff := cmp.Diff(want, collect(t, s, nil)); diff != "" {
			t.Errorf("%v mismatch (-want +got):\n%s", s.ID(), diff)
		}
	}
}

func TestCommitWritesDataAndCheckpointTogether(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := db.Store("agg", 7)
	cp0, err := s.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Checkpoint{}, cp0); diff != "" {
		t.Errorf("checkpoint before any commit (-want +got):\n%s", diff)
	}
	apply(s, []op{{k: "x", v: "1"}, {k: "y", v: "2"}})
	if ids, _ := db.Stores(); len(ids) != 0 {
		t.Errorf("Stores() before commit = %v; overlay-only stores must not be listed", ids)
	}
	want := Checkpoint{ChangelogOffset: 42, SourceOffsets: map[string]int64{"in/7": 100, "other/7": 5}}
	if err := s.Commit(want); err != nil {
		t.Fatal(err)
	}
	if s.PendingCount() != 0 {
		t.Errorf("PendingCount after Commit = %d", s.PendingCount())
	}
	got, err := s.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Checkpoint() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]kv{{"x", "1"}, {"y", "2"}}, collect(t, s, nil)); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

func TestReopenSeesDataAndCheckpoint(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	s := db.Store("agg", 2)
	apply(s, []op{{k: "a", v: "1"}, {k: "b", v: "2"}})
	want := Checkpoint{ChangelogOffset: 9, SourceOffsets: map[string]int64{"in/2": 33}}
	if err := s.Commit(want); err != nil {
		t.Fatal(err)
	}
	s.Put([]byte("uncommitted"), []byte("lost"))
	db.Store("other", 0).Put([]byte("k"), []byte("v"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get([]byte("zzz")); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: err = %v, want ErrClosed", err)
	}

	db2 := openDB(t, dir)
	s2 := db2.Store("agg", 2)
	if diff := cmp.Diff([]kv{{"a", "1"}, {"b", "2"}}, collect(t, s2, nil)); diff != "" {
		t.Errorf("data after reopen (-want +got):\n%s", diff)
	}
	got, err := s2.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checkpoint after reopen (-want +got):\n%s", diff)
	}
	ids, err := db2.Stores()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]StoreID{{"agg", 2}}, ids); diff != "" {
		t.Errorf("Stores() (-want +got):\n%s", diff)
	}
}

func TestWipe(t *testing.T) {
	db := openDB(t, t.TempDir())
	keep, gone := db.Store("agg", 0), db.Store("agg", 1)
	for _, s := range []*Store{keep, gone} {
		apply(s, []op{{k: "a", v: "1"}, {k: "b", v: "2"}})
		if err := s.Commit(Checkpoint{ChangelogOffset: 2, SourceOffsets: map[string]int64{"t/0": 1}}); err != nil {
			t.Fatal(err)
		}
	}
	gone.Put([]byte("c"), []byte("3"))
	if err := gone.Wipe(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, gone, nil); len(got) != 0 {
		t.Errorf("wiped store still has %v", got)
	}
	if cp, _ := gone.Checkpoint(); !cmp.Equal(cp, Checkpoint{}) {
		t.Errorf("wiped store checkpoint = %+v, want zero", cp)
	}
	if diff := cmp.Diff([]kv{{"a", "1"}, {"b", "2"}}, collect(t, keep, nil)); diff != "" {
		t.Errorf("neighbour partition changed (-want +got):\n%s", diff)
	}
	ids, err := db.Stores()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]StoreID{{"agg", 0}}, ids); diff != "" {
		t.Errorf("Stores() (-want +got):\n%s", diff)
	}
}

func TestApproxBytesCountsOverlay(t *testing.T) {
	s := openDB(t, "").Store("agg", 0)
	s.Put([]byte("abc"), []byte("12345"))
	s.Put([]byte("abc"), []byte("1234567"))
	if got := s.ApproxBytes(); got != 10 {
		t.Errorf("ApproxBytes() = %d, want 10 (3 key + 7 value bytes)", got)
	}
}

func TestCheckpointEncodingRoundTrip(t *testing.T) {
	for _, cp := range []Checkpoint{
		{},
		{ChangelogOffset: 1},
		{ChangelogOffset: 1 << 40, SourceOffsets: map[string]int64{"a/0": 0, "b/12": 1 << 50}},
	} {
		got, err := decodeCheckpoint(encodeCheckpoint(cp))
		if err != nil {
			t.Fatalf("decode(%+v): %v", cp, err)
		}
		if diff := cmp.Diff(cp, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	for _, bad := range [][]byte{nil, {9}, {1}, {1, 2, 5}} {
		if _, err := decodeCheckpoint(bad); !errors.Is(err, errBadCheckpoint) {
			t.Errorf("decode(%x) err = %v, want errBadCheckpoint", bad, err)
		}
	}
}

func TestKeyPrefixRoundTrip(t *testing.T) {
	for _, c := range []struct {
		number    uint32
		partition int32
		len       int
	}{{1, 0, 6}, {127, 5, 6}, {128, 7, 7}, {300, 1 << 30, 7}, {1<<32 - 1, -1, 10}} {
		p := storePrefix(tagData, c.number, c.partition)
		tag, number, part, n, err := decodeStorePrefix(append(p, "user"...))
		if err != nil || tag != tagData || number != c.number || part != c.partition || n != len(p) || len(p) != c.len {
			t.Errorf("storePrefix(%d, %d) = %x: decode = %c %d %d %d %v, want %d bytes", c.number, c.partition, p, tag, number, part, n, err, c.len)
		}
	}
	for _, bad := range [][]byte{nil, {tagData}, {tagData, 0x80}, {tagData, 1, 0, 0, 0}} {
		if _, _, _, _, err := decodeStorePrefix(bad); err == nil {
			t.Errorf("decodeStorePrefix(%x) = nil error", bad)
		}
	}
}

// TestKeyPrefixesDisjoint: no store partition's prefix is a prefix of
// another's, across one-byte and two-byte store numbers, so a prefix
// scan or DropPrefix never reaches a neighbour.
func TestKeyPrefixesDisjoint(t *testing.T) {
	var prefixes [][]byte
	for _, number := range []uint32{1, 2, 127, 128, 129, 255, 256, 16383, 16384} {
		for _, part := range []int32{0, 1, 255, 256} {
			prefixes = append(prefixes, storePrefix(tagData, number, part))
		}
	}
	for i, a := range prefixes {
		for j, b := range prefixes {
			if i != j && bytes.HasPrefix(b, a) {
				t.Errorf("prefix %x is a prefix of %x", a, b)
			}
		}
	}
}

// TestStoreNumbersLastAcrossReopen: a store name keeps its number in the
// catalog, a name first seen after a reopen gets one no other name has,
// and Stores() names stores by their names.
func TestStoreNumbersLastAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	for i, name := range []string{"CTAS_AGG_1-Aggregate-Materialize", "CSAS_J_2-Join-left-store"} {
		s := db.Store(name, int32(i))
		s.Put([]byte("k"), []byte(name))
		if err := s.Commit(Checkpoint{ChangelogOffset: 1}); err != nil {
			t.Fatal(err)
		}
	}
	before := maps.Clone(db.numbers)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := openDB(t, dir)
	if diff := cmp.Diff(before, db2.numbers); diff != "" {
		t.Errorf("catalog after reopen (-want +got):\n%s", diff)
	}
	fresh := db2.Store("CTAS_OTHER_3-Materialize", 0)
	for name, n := range before {
		if n == db2.numbers["CTAS_OTHER_3-Materialize"] {
			t.Errorf("new store has %s's number %d", name, n)
		}
	}
	if got, ok := mustGet(t, fresh, "k"); ok {
		t.Errorf("new store reads %q written by another", got)
	}
	for i, name := range []string{"CTAS_AGG_1-Aggregate-Materialize", "CSAS_J_2-Join-left-store"} {
		if got, ok := mustGet(t, db2.Store(name, int32(i)), "k"); !ok || got != name {
			t.Errorf("%s/%d after reopen: %q %v", name, i, got, ok)
		}
	}
	ids, err := db2.Stores()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]StoreID{{"CSAS_J_2-Join-left-store", 1}, {"CTAS_AGG_1-Aggregate-Materialize", 0}}, ids); diff != "" {
		t.Errorf("Stores() (-want +got):\n%s", diff)
	}
}

// TestOpenDropsLegacyLayout: keys of the layout before store numbers
// (store names in every key) are dropped at Open, so their stores restore
// from their changelogs instead of being read under a misparsed prefix.
func TestOpenDropsLegacyLayout(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	legacy := func(tag byte, name string, part byte, rest string) []byte {
		return append(append(append([]byte{tag, byte(len(name))}, name...), 0, 0, 0, part), rest...)
	}
	err := db.update(func(txn *badger.Txn) error {
		if err := txn.Set(legacy('d', "agg", 0, "key"), []byte("value")); err != nil {
			return err
		}
		return txn.Set(legacy('c', "agg", 0, ""), encodeCheckpoint(Checkpoint{ChangelogOffset: 7}))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := openDB(t, dir)
	var left []string
	err = db2.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			left = append(left, fmt.Sprintf("%q", it.Item().Key()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("keys left after Open: %v", left)
	}
	s := db2.Store("agg", 0)
	if cp, err := s.Checkpoint(); err != nil || cp.ChangelogOffset != 0 {
		t.Errorf("Checkpoint() = %+v, %v; want the zero checkpoint (restore from the start)", cp, err)
	}
	if got, ok := mustGet(t, s, "key"); ok {
		t.Errorf("Get(key) = %q from the dropped layout", got)
	}
}

func BenchmarkOverlayPut(b *testing.B) {
	s := openDB(b, "").Store("bench", 0)
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte{byte(i >> 8), byte(i), 'k', 'e', 'y'}
	}
	val := []byte("value-of-some-sixteen+")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Put(keys[i%len(keys)], val)
	}
}

// TestCommitWritesInBackground checks what a store shows while a
// commit's write to Badger is under way and after: its data and
// checkpoint at once (from the commit being written), the next commit
// on top, and everything durable once the DB closes.
func TestCommitWritesInBackground(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	s := db.Store("agg", 1)
	steps := []struct {
		ops  []op
		cp   Checkpoint
		want []kv
	}{
		{[]op{{k: "a", v: "1"}, {k: "b", v: "2"}}, Checkpoint{ChangelogOffset: 2, SourceOffsets: map[string]int64{"in/1": 10}}, []kv{{"a", "1"}, {"b", "2"}}},
		{[]op{{k: "a", v: "3"}, {k: "b", del: true}, {k: "c", v: "4"}}, Checkpoint{ChangelogOffset: 5, SourceOffsets: map[string]int64{"in/1": 20}}, []kv{{"a", "3"}, {"c", "4"}}},
	}
	for i, st := range steps {
		apply(s, st.ops)
		if err := s.Commit(st.cp); err != nil {
			t.Fatalf("step %d: Commit: %v", i, err)
		}
		// Right after Commit, before anything waits for the write.
		for _, w := range st.want {
			if v, ok := mustGet(t, s, w.K); !ok || v != w.V {
				t.Errorf("step %d: Get(%q) = %q, %v; want %q", i, w.K, v, ok, w.V)
			}
		}
		if _, ok := mustGet(t, s, "b"); ok != (i == 0) {
			t.Errorf("step %d: Get(b) found = %v, want %v", i, ok, i == 0)
		}
		got, err := s.Checkpoint()
		if err != nil {
			t.Fatalf("step %d: Checkpoint: %v", i, err)
		}
		if diff := cmp.Diff(st.cp, got); diff != "" {
			t.Errorf("step %d: checkpoint (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(st.want, collectFrom(t, s.RangeCommitted, nil)); diff != "" {
			t.Errorf("step %d: RangeCommitted (-want +got):\n%s", i, diff)
		}
	}
	if ids, err := db.Stores(); err != nil || !cmp.Equal([]StoreID{{"agg", 1}}, ids) {
		t.Errorf("Stores() = %v, %v; want [{agg 1}]", ids, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openDB(t, dir).Store("agg", 1)
	if diff := cmp.Diff(steps[1].want, collect(t, s2, nil)); diff != "" {
		t.Errorf("data after reopen (-want +got):\n%s", diff)
	}
	if got, err := s2.Checkpoint(); err != nil || !cmp.Equal(steps[1].cp, got) {
		t.Errorf("checkpoint after reopen = %+v, %v; want %+v", got, err, steps[1].cp)
	}
}

// TestHold follows held writes (committed by Kafka, not yet in Badger)
// through reads, the changelog's pending set, Commit and Discard.
func TestHold(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := db.Store("counts", 0)
	pending := func() []kv {
		var out []kv
		for _, c := range s.Pending() {
			out = append(out, kv{string(c.Key), string(c.Value)})
		}
		return out
	}
	committed := func() []kv { return collectFrom(t, s.RangeCommitted, nil) }

	apply(s, []op{{k: "b", v: "1"}, {k: "a", v: "1"}})
	if diff := cmp.Diff([]kv{{"a", "1"}, {"b", "1"}}, pending()); diff != "" {
		t.Fatalf("pending before Hold (-want +got):\n%s", diff)
	}
	s.Hold(Checkpoint{ChangelogOffset: 2, SourceOffsets: map[string]int64{"in/0": 10}})
	if got := pending(); len(got) != 0 || s.PendingCount() != 0 {
		t.Fatalf("pending after Hold: %v (count %d)", got, s.PendingCount())
	}
	// A key written again after Hold is pending again, alone.
	apply(s, []op{{k: "b", v: "2"}, {k: "c", del: true}})
	if diff := cmp.Diff([]kv{{"b", "2"}, {"c", ""}}, pending()); diff != "" {
		t.Fatalf("pending after a second write (-want +got):\n%s", diff)
	}
	if v, ok := mustGet(t, s, "a"); !ok || v != "1" {
		t.Fatalf("held a = %q, %v", v, ok)
	}
	if diff := cmp.Diff([]kv{{"a", "1"}, {"b", "2"}}, collect(t, s, nil)); diff != "" {
		t.Fatalf("range over held and new writes (-want +got):\n%s", diff)
	}
	if got := committed(); len(got) != 0 {
		t.Fatalf("Badger holds %v before any Commit", got)
	}
	cp, err := s.Checkpoint()
	if err != nil || cp.ChangelogOffset != 2 || cp.SourceOffsets["in/0"] != 10 {
		t.Fatalf("checkpoint while held: %+v, %v", cp, err)
	}
	if err := s.CommitHeld(); err == nil {
		t.Fatal("CommitHeld with writes the changelog has not taken succeeded")
	}
	s.Hold(Checkpoint{ChangelogOffset: 4, SourceOffsets: map[string]int64{"in/0": 12}})
	if err := s.CommitHeld(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]kv{{"a", "1"}, {"b", "2"}}, committed()); diff != "" {
		t.Fatalf("Badger after CommitHeld (-want +got):\n%s", diff)
	}
	if cp, err := s.Checkpoint(); err != nil || cp.ChangelogOffset != 4 {
		t.Fatalf("checkpoint after CommitHeld: %+v, %v", cp, err)
	}

	// Discard drops held writes too: the checkpoint falls back to Badger's,
	// from which a restore would replay them.
	apply(s, []op{{k: "d", v: "1"}})
	s.Hold(Checkpoint{ChangelogOffset: 5})
	s.Discard()
	if _, ok := mustGet(t, s, "d"); ok {
		t.Fatal("d survived Discard")
	}
	if cp, err := s.Checkpoint(); err != nil || cp.ChangelogOffset != 4 {
		t.Fatalf("checkpoint after Discard: %+v, %v", cp, err)
	}
	if s.held != nil {
		t.Fatal("still held after Discard")
	}
}

// A range over more overlay keys than one cursor chunk sees every key
// written before it started, in order, interleaved with Badger's, and none
// of the keys its callback writes, whether they fall in the chunk being
// read or in a later one.
func TestRangeLongOverlayIsStableUnderWrites(t *testing.T) {
	s := openDB(t, t.TempDir()).Store("long", 0)
	var committed []op
	for i := 0; i < 3*cursorChunk; i += 3 {
		committed = append(committed, op{k: fmt.Sprintf("k%03d", i), v: "d"})
	}
	apply(s, committed)
	if err := s.Commit(Checkpoint{ChangelogOffset: 1}); err != nil {
		t.Fatal(err)
	}
	var want []kv
	for i := 0; i < 3*cursorChunk; i++ {
		if i%3 == 0 {
			want = append(want, kv{fmt.Sprintf("k%03d", i), "d"})
			continue
		}
		s.Put([]byte(fmt.Sprintf("k%03d", i)), []byte("o"))
		want = append(want, kv{fmt.Sprintf("k%03d", i), "o"})
	}
	var got []kv
	err := s.Range([]byte("k"), func(k, v []byte) bool {
		got = append(got, kv{string(k), string(v)})
		// Keys after every key seen so far, in this chunk and beyond.
		s.Put(append(append([]byte(nil), k...), 'x'), []byte("new"))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	// A range that stops early stops where it is told.
	got = nil
	if err := s.RangeBetween([]byte("k040"), []byte("k050"), func(k, v []byte) bool {
		got = append(got, kv{string(k), string(v)})
		return len(got) < 3
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]kv{{"k040", "o"}, {"k040x", "new"}, {"k041", "o"}}, got); diff != "" {
		t.Errorf("early stop mismatch (-want +got):\n%s", diff)
	}
}

// TestMemtableMemoryHonest: what the overlay says it holds
// (OverlayMemory) is its keys and values plus memtableEntryOverhead a
// key (and memtableTreeOverhead once a range has built its key order),
// and that is within a fifth of what its entries cost the Go heap (keys
// of 26 bytes and values of 18, as a windowed COUNT and SUM's). Counting
// the bytes alone, a bound on it let the heap grow four times past what
// it meant.
func TestMemtableMemoryHonest(t *testing.T) {
	const n = 50_000
	for _, c := range []struct {
		name     string
		ranged   bool
		overhead int64
	}{
		{"read by key", false, memtableEntryOverhead},
		{"ranged over", true, memtableEntryOverhead + memtableTreeOverhead},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openDB(t, "").Store("agg", 0)
			value := make([]byte, 18)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := range n {
				s.Put(fmt.Appendf(nil, "\x00\x00\x01\x8c%08dauction-%06d", i, i), value)
			}
			if c.ranged {
				if err := s.RangeBetween([]byte("\x00"), []byte("\x00\x00\x01\x8c00000001"), func(k, v []byte) bool { return true }); err != nil {
					t.Fatal(err)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if want := int64(n*(26+18)) + n*c.overhead; s.OverlayMemory() != want {
				t.Errorf("OverlayMemory = %d, want %d (keys and values, and the overhead of %d keys)", s.OverlayMemory(), want, n)
			}
			heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			if ratio := float64(s.OverlayMemory()) / float64(heap); ratio < 0.8 || ratio > 1.2 {
				t.Errorf("OverlayMemory %d against %d bytes of heap (%.2f); want within a fifth", s.OverlayMemory(), heap, ratio)
			} else {
				t.Logf("OverlayMemory %d, heap %d (%d a key)", s.OverlayMemory(), heap, heap/n)
			}
			runtime.KeepAlive(s)
		})
	}
}

// TestWritesAfterReopenWin: the DB gives Badger its commit timestamps,
// and after a reopen they go on past every version on disk, so a key
// written again after a restart reads its new value, not its first.
func TestWritesAfterReopenWin(t *testing.T) {
	dir := t.TempDir()
	for i, v := range []string{"first", "second", "third"} {
		db := openDB(t, dir)
		s := db.Store("agg", 0)
		if i > 0 {
			if got, _ := mustGet(t, s, "k"); got != []string{"first", "second", "third"}[i-1] {
				t.Errorf("reopen %d: Get(k) = %q", i, got)
			}
		}
		s.Put([]byte("k"), []byte(v))
		if err := s.Commit(Checkpoint{ChangelogOffset: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db := openDB(t, dir)
	if got, _ := mustGet(t, db.Store("agg", 0), "k"); got != "third" {
		t.Errorf("Get(k) = %q, want third", got)
	}
	if cp, err := db.Store("agg", 0).Checkpoint(); err != nil || cp.ChangelogOffset != 3 {
		t.Errorf("Checkpoint() = %+v, %v", cp, err)
	}
}

// TestRangeOverCommitInFlight: a range while a commit is on its way to
// Badger (its write held here: never started) merges three layers — the
// overlay over the commit over Badger — without waiting for the write:
// each layer's writes win over those below, and its tombstones hide
// them, within the range's bounds.
func TestRangeOverCommitInFlight(t *testing.T) {
	s := openDB(t, t.TempDir()).Store("w", 0)
	apply(s, []op{{k: "a", v: "1"}, {k: "b", v: "2"}, {k: "c", v: "3"}, {k: "d", v: "4"}, {k: "g", v: "7"}})
	if err := s.Commit(Checkpoint{ChangelogOffset: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.settle(); err != nil {
		t.Fatal(err)
	}
	inFlight := newMemtable()
	inFlight.put([]byte("b"), []byte("20"), 0)
	inFlight.set([]byte("c"), entry{del: true})
	inFlight.put([]byte("e"), []byte("5"), 0)
	inFlight.put([]byte("g"), []byte("70"), 0)
	held := &flush{table: inFlight, done: make(chan struct{})}
	s.flush.Store(held)
	apply(s, []op{{k: "a", v: "100"}, {k: "e", del: true}, {k: "f", v: "6"}})
	for _, c := range []struct {
		start, end string
		want       []kv
	}{
		{"", "", []kv{{"a", "100"}, {"b", "20"}, {"d", "4"}, {"f", "6"}, {"g", "70"}}},
		{"b", "e", []kv{{"b", "20"}, {"d", "4"}}},
		{"c", "g", []kv{{"d", "4"}, {"f", "6"}}},
		{"e", "", []kv{{"f", "6"}, {"g", "70"}}},
		{"h", "", nil},
	} {
		var end []byte
		if c.end != "" {
			end = []byte(c.end)
		}
		var got []kv
		err := s.RangeBetween([]byte(c.start), end, func(k, v []byte) bool {
			got = append(got, kv{string(k), string(v)})
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("RangeBetween(%q, %q) (-want +got):\n%s", c.start, c.end, diff)
		}
	}
	if s.flush.Load() != held {
		t.Error("a range waited for the commit in flight and dropped it")
	}
	if v, ok := mustGet(t, s, "c"); ok {
		t.Errorf("Get(c) = %q; the commit in flight deleted it", v)
	}
	close(held.done)
	s.Discard()
}

// TestCommitOverManyTransactions: a commit of more writes than one
// Badger transaction of writeTable takes (several of them, the last with
// the checkpoint) is all there after a reopen, tombstones included, and
// the checkpoint is the commit's; the transactions' timestamps stay
// ordered, so the next commit's writes and deletes win.
func TestCommitOverManyTransactions(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	s := db.Store("agg", 0)
	const n = 2*writeTxnKeys + 17
	for i := range n {
		s.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "v%d", i))
	}
	if err := s.Commit(Checkpoint{ChangelogOffset: 1}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 3 {
		s.Delete(fmt.Appendf(nil, "k%05d", i))
	}
	s.Put([]byte("k00001"), []byte("again"))
	if err := s.Commit(Checkpoint{ChangelogOffset: 2}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDB(t, dir).Store("agg", 0)
	for i := range n {
		key := fmt.Sprintf("k%05d", i)
		got, ok := mustGet(t, s, key)
		want, wantOK := fmt.Sprintf("v%d", i), i%3 != 0
		if i == 1 {
			want = "again"
		}
		if ok != wantOK || ok && got != want {
			t.Fatalf("Get(%s) = %q, %v; want %q, %v", key, got, ok, want, wantOK)
		}
	}
	if cp, err := s.Checkpoint(); err != nil || cp.ChangelogOffset != 2 {
		t.Errorf("Checkpoint() = %+v, %v; want offset 2", cp, err)
	}
}

// TestExpire: an expired key leaves the store without a changelog record
// unless the changelog has yet to take a write of it (then it takes the
// tombstone instead), and a later write of it is the changelog's again.
// The delete reaches Badger with the next Commit.
func TestExpire(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := db.Store("windows", 0)
	pending := func() []Change { return s.Pending() }
	apply(s, []op{{k: "w1", v: "1"}, {k: "w2", v: "2"}, {k: "w3", v: "3"}})
	s.Hold(Checkpoint{ChangelogOffset: 3})
	if err := s.CommitHeld(); err != nil {
		t.Fatal(err)
	}
	apply(s, []op{{k: "w2", v: "22"}})
	s.Expire([]byte("w1")) // taken by the changelog: no record
	s.Expire([]byte("w2")) // written since: its tombstone replaces the write
	s.Expire([]byte("w3"))
	s.Put([]byte("w3"), []byte("33")) // written again after expiring
	want := []Change{
		{Key: []byte("w2"), Delete: true},
		{Key: []byte("w3"), Value: []byte("33")},
	}
	if diff := cmp.Diff(want, pending()); diff != "" {
		t.Fatalf("pending (-want +got):\n%s", diff)
	}
	s.Expire([]byte("w9")) // never written: nothing
	if diff := cmp.Diff(want, pending()); diff != "" {
		t.Fatalf("pending after expiring an absent key (-want +got):\n%s", diff)
	}
	for _, k := range []string{"w1", "w2", "w9"} {
		if v, ok := mustGet(t, s, k); ok {
			t.Errorf("Get(%q) after Expire = %q, true", k, v)
		}
	}
	s.Hold(Checkpoint{ChangelogOffset: 5})
	if err := s.CommitHeld(); err != nil {
		t.Fatal(err)
	}
	s.Expire([]byte("w3"))
	if got := pending(); len(got) != 0 {
		t.Fatalf("pending after expiring a committed key: %v", got)
	}
	if err := s.Commit(Checkpoint{ChangelogOffset: 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.flushed(); err != nil {
		t.Fatal(err)
	}
	if got := collectFrom(t, s.RangeCommitted, nil); len(got) != 0 {
		t.Errorf("Badger after the expiries' commit holds %v, want nothing", got)
	}
}

// TestBoundedRangesFilterBeforeTree: a table's first filterPasses ranges
// read whole (ScanForExpiry's) pass over its map and sort what they find,
// and the next builds its tree, as any other range does at once; either
// way a range sees the keys in [start, end) in order, as they were when
// it began.
func TestBoundedRangesFilterBeforeTree(t *testing.T) {
	tbl := newMemtable()
	for i := range 100 {
		tbl.put(fmt.Appendf(nil, "k%03d", (i*37)%100), []byte("v"), 0)
	}
	walk := func(start, end string, write string) []string {
		var got []string
		c := tbl.cursor([]byte(start), []byte(end), true)
		if write != "" {
			tbl.put([]byte(write), []byte("new"), 0) // after the cursor began
		}
		for k, ok := c.peek(); ok; k, ok = c.peek() {
			got = append(got, k)
			c.advance()
		}
		return got
	}
	for pass := range filterPasses + 1 {
		start, end := fmt.Sprintf("k%02d0", pass), fmt.Sprintf("k%02d3", pass)
		want := []string{start, fmt.Sprintf("k%02d1", pass), fmt.Sprintf("k%02d2", pass)}
		if diff := cmp.Diff(want, walk(start, end, "")); diff != "" {
			t.Fatalf("range %d (-want +got):\n%s", pass, diff)
		}
		if tree := pass == filterPasses; tbl.ordered != tree {
			t.Fatalf("after range %d: ordered = %v, want %v", pass, tbl.ordered, tree)
		}
	}
	other := newMemtable()
	other.put([]byte("a"), []byte("v"), 0)
	if c := other.cursor([]byte("a"), []byte("b"), false); !other.ordered {
		t.Fatalf("a range that may stop early did not build the tree (%v)", c.chunk)
	}
	tbl = newMemtable()
	for _, k := range []string{"b", "a", "c"} {
		tbl.put([]byte(k), []byte("v"), 0)
	}
	if diff := cmp.Diff([]string{"a", "b"}, walk("a", "c", "ab")); diff != "" {
		t.Fatalf("a write during a filtered range (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "ab", "b"}, walk("a", "c", "")); diff != "" {
		t.Fatalf("the next range (-want +got):\n%s", diff)
	}
}
