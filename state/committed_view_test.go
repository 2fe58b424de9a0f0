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
