package state

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRangeCommittedSeesHeldCommits follows what pull queries read
// (RangeCommitted, from another goroutine than the task's) through the
// exactly-once commit cycle: the open transaction's writes never, a
// committed transaction's at once, whether held in memory (Hold) or on
// their way to Badger (Commit), an aborted one's never, and deletions
// hide Badger's rows.
func TestRangeCommittedSeesHeldCommits(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := db.Store("counts", 0)
	committed := func() []kv { return collectFrom(t, s.RangeCommitted, nil) }
	// txn runs one transaction: writes, the changelog takes them
	// (ProduceChangelog without a client takes the delta only), then
	// end commits them (Hold or Commit) or aborts (Discard).
	txn := func(ops []op, end func()) {
		apply(s, ops)
		if _, err := s.ProduceChangelog(context.Background(), nil, Changelog{}, nil); err != nil {
			t.Fatal(err)
		}
		end()
	}
	hold := func() { s.Hold(Checkpoint{}) }
	for i, step := range []struct {
		name string
		ops  []op
		end  func()
		want []kv
	}{
		{"first commit, held", []op{{k: "a", v: "1"}, {k: "b", v: "1"}}, hold, []kv{{"a", "1"}, {"b", "1"}}},
		{"second, held on top", []op{{k: "b", v: "2"}, {k: "c", v: "1"}}, hold, []kv{{"a", "1"}, {"b", "2"}, {"c", "1"}}},
		{"written to Badger", []op{{k: "a", v: "2"}}, func() {
			if err := s.Commit(Checkpoint{ChangelogOffset: 3}); err != nil {
				t.Fatal(err)
			}
		}, []kv{{"a", "2"}, {"b", "2"}, {"c", "1"}}},
		{"a deletion, held", []op{{k: "c", del: true}, {k: "d", v: "1"}}, hold, []kv{{"a", "2"}, {"b", "2"}, {"d", "1"}}},
	} {
		txn(step.ops, step.end)
		if diff := cmp.Diff(step.want, committed()); diff != "" {
			t.Errorf("step %d (%s): RangeCommitted (-want +got):\n%s", i, step.name, diff)
		}
	}
	// The open transaction's writes stay unseen.
	apply(s, []op{{k: "b", v: "100"}})
	if diff := cmp.Diff([]kv{{"a", "2"}, {"b", "2"}, {"d", "1"}}, committed()); diff != "" {
		t.Errorf("open transaction: RangeCommitted (-want +got):\n%s", diff)
	}
	// Once Badger holds a commit, the view has forgotten it.
	if err := s.settle(); err != nil {
		t.Fatal(err)
	}
	s.view.mu.RLock()
	n := len(s.view.m)
	s.view.mu.RUnlock()
	if n != 2 { // the held deletion of c and write of d, not yet in Badger
		t.Errorf("view holds %d entries after the Badger write, want 2", n)
	}
	// An aborted transaction is never seen; Discard drops the held
	// writes from the view too (the restore that follows rebuilds them
	// from the changelog), leaving what Badger holds.
	txn([]op{{k: "a", v: "99"}, {k: "e", v: "99"}}, s.Discard)
	if diff := cmp.Diff([]kv{{"a", "2"}, {"b", "2"}, {"c", "1"}}, committed()); diff != "" {
		t.Errorf("after an abort: RangeCommitted (-want +got):\n%s", diff)
	}
}

// TestStoresListsHeldCommits: a store partition whose committed writes
// are all held in memory (its first commits under exactly-once, before
// any Badger write) is listed, so that pull queries, which scan the
// listed partitions, read it; one with only an open transaction is not.
func TestStoresListsHeldCommits(t *testing.T) {
	db := openDB(t, t.TempDir())
	open := db.Store("counts", 1)
	apply(open, []op{{k: "a", v: "1"}})
	held := db.Store("counts", 3)
	apply(held, []op{{k: "a", v: "1"}})
	if _, err := held.ProduceChangelog(context.Background(), nil, Changelog{}, nil); err != nil {
		t.Fatal(err)
	}
	held.Hold(Checkpoint{ChangelogOffset: 1})
	ids, err := db.Stores()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]StoreID{{Name: "counts", Partition: 3}}, ids); diff != "" {
		t.Errorf("Stores (-want +got):\n%s", diff)
	}
}

// TestCommittedViewFlushTable follows the view through a commit that
// writes Badger: the commit's flush table stands in for every entry
// published before it (no copy of it is kept), held deltas published
// after it are read over it, forgetting an older write leaves it, and
// forgetting its own write drops it and lets the map go.
func TestCommittedViewFlushTable(t *testing.T) {
	var v committedView
	type got struct {
		Keys    []string
		Entries map[string]viewEntry
	}
	read := func(prefix string) got {
		keys, entries, txn := v.snapshot(openDB(t, "").bdb, []byte(prefix))
		txn.Discard()
		return got{keys, entries}
	}
	held := v.publish([]Change{{Key: []byte("a1"), Value: []byte("1")}, {Key: []byte("b1"), Value: []byte("1")}})
	if held != 1 {
		t.Fatalf("first publication numbered %d, want 1", held)
	}
	table := newMemtable()
	table.set([]byte("a1"), entry{value: []byte("1")})
	table.set([]byte("a2"), entry{del: true})
	table.set([]byte("b1"), entry{value: []byte("2")})
	flushed := v.publishFlush(&table)
	if v.m != nil {
		t.Errorf("after publishFlush the view still copies %d entries", len(v.m))
	}
	v.publish([]Change{{Key: []byte("a1"), Value: []byte("3")}, {Key: []byte("a3"), Value: []byte("1")}})
	want := got{
		Keys: []string{"a1", "a2", "a3"},
		Entries: map[string]viewEntry{
			"a1": {value: []byte("3"), seq: 3},
			"a2": {del: true, seq: flushed},
			"a3": {value: []byte("1"), seq: 3},
		},
	}
	if diff := cmp.Diff(want, read("a"), cmp.AllowUnexported(viewEntry{})); diff != "" {
		t.Errorf("snapshot of a (-want +got):\n%s", diff)
	}
	// An earlier write finishing (its goroutine forgets after the next
	// commit began) must not drop the table being written now.
	v.forget(held)
	if !v.holds() || v.flushing != &table {
		t.Errorf("forget(%d) dropped the flush table published as %d", held, flushed)
	}
	v.forget(flushed)
	if v.flushing != nil {
		t.Errorf("forget(%d) kept the flush table", flushed)
	}
	want = got{Keys: []string{"a1", "a3"}, Entries: map[string]viewEntry{
		"a1": {value: []byte("3"), seq: 3},
		"a3": {value: []byte("1"), seq: 3},
	}}
	if diff := cmp.Diff(want, read("a"), cmp.AllowUnexported(viewEntry{})); diff != "" {
		t.Errorf("snapshot of a after the write (-want +got):\n%s", diff)
	}
	v.forget(3)
	if v.m != nil || v.holds() {
		t.Errorf("view after forgetting everything: map %v, holds %v; want nil, false", v.m, v.holds())
	}
}

// TestRangeCommittedBetween reads a key range of committed state, part
// of it in Badger and part held in the view (a newer value and a
// deletion on top of Badger's, a key only the view has): exactly the
// keys in [start, end), in order; a nil end reads to the store's end;
// the open transaction's writes stay unseen.
func TestRangeCommittedBetween(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := db.Store("t", 0)
	apply(s, []op{{k: "a", v: "1"}, {k: "b", v: "1"}, {k: "c", v: "1"}, {k: "d", v: "1"}, {k: "e", v: "1"}})
	if err := s.Commit(Checkpoint{ChangelogOffset: 5}); err != nil {
		t.Fatal(err)
	}
	apply(s, []op{{k: "b", v: "2"}, {k: "c", del: true}, {k: "cc", v: "2"}, {k: "f", v: "2"}})
	if _, err := s.ProduceChangelog(context.Background(), nil, Changelog{}, nil); err != nil {
		t.Fatal(err)
	}
	s.Hold(Checkpoint{})
	apply(s, []op{{k: "bb", v: "open"}})
	between := func(start, end []byte) []kv {
		var out []kv
		if err := s.RangeCommittedBetween(start, end, func(k, v []byte) bool {
			out = append(out, kv{string(k), string(v)})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		start, end string
		want       []kv
	}{
		{"b", "d", []kv{{"b", "2"}, {"cc", "2"}}},
		{"a", "b", []kv{{"a", "1"}}},
		{"c", "cd", []kv{{"cc", "2"}}},
		{"d", "", []kv{{"d", "1"}, {"e", "1"}, {"f", "2"}}},
		{"g", "", nil},
	} {
		var end []byte
		if tc.end != "" {
			end = []byte(tc.end)
		}
		if diff := cmp.Diff(tc.want, between([]byte(tc.start), end)); diff != "" {
			t.Errorf("[%q, %q) (-want +got):\n%s", tc.start, tc.end, diff)
		}
	}
}
