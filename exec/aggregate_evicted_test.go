package exec

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/state"
)

// TestAggCacheAbsentAfterEvictions checks the cache's rule for keys the
// store cannot hold once it has evicted some: an evicted key is read from
// the store, a key it never had is known absent even among evicted ones
// (a new group of a window whose other groups were evicted), and when the
// evicted keys fill their bound the rule falls back to every key at or
// below the greatest of them being read.
func TestAggCacheAbsentAfterEvictions(t *testing.T) {
	db := openState(t, t.TempDir())
	defer func() { _ = db.Close() }()
	s := db.Store("agg", 0)
	// Room for some ten new entries; evicted keys may take a quarter of
	// it, some ten keys of 20 bytes.
	const limit = 2000
	c, err := newAggCache(s, limit, appendAggState)
	if err != nil {
		t.Fatal(err)
	}
	key := func(start int64, g string) []byte { return windowKey(nil, start, []byte(g)) }
	add := func(start int64, g string) {
		if !c.absent(key(start, g)) {
			t.Fatalf("window %d of %s: not known absent before any write", start, g)
		}
		e := c.add(key(start, g), []any{int64(1)}, start, false, 0)
		e.existed = true // as the aggregate's update marks a folded entry
		c.changedEntry(e)
	}
	// Add windows until the cache is full and evicts the oldest down to
	// half its bound.
	added := int64(0)
	for ; len(c.entries) == int(added); added++ {
		add(added, "a")
	}
	evicted := int(added) - len(c.entries)
	if evicted == 0 || len(c.evicted) != evicted {
		t.Fatalf("%d entries left and %d evicted keys noted, want every evicted key noted", len(c.entries), len(c.evicted))
	}
	for start := range int64(evicted) {
		if c.absent(key(start, "a")) {
			t.Errorf("evicted window %d of a: known absent, but the store has it", start)
		}
		if _, ok, err := s.Get(key(start, "a")); err != nil || !ok {
			t.Errorf("evicted window %d of a: not in the store (%v)", start, err)
		}
		if !c.absent(key(start, "b")) {
			t.Errorf("window %d of b, never written: not known absent", start)
		}
	}
	// Deleting an evicted key (a window closed) takes it off the notes.
	c.drop(key(0, "a"))
	s.Delete(key(0, "a"))
	if !c.absent(key(0, "a")) {
		t.Error("window 0 of a, deleted: not known absent")
	}
	// Evicting more fills the notes' bound: every key at or below the
	// greatest evicted one is then read, the rest still known absent.
	for start := added; len(c.evicted) > 0 && start < 100; start++ {
		add(start, "a")
	}
	if len(c.evicted) > 0 {
		t.Fatalf("%d evicted keys noted after many evictions: the bound never fell back", len(c.evicted))
	}
	if c.absent(key(1, "b")) {
		t.Error("window 1 of b after the fallback: known absent, but it lies below the bound")
	}
	if !c.absent(key(1000, "a")) {
		t.Error("window 1000 of a after the fallback: not known absent")
	}
}

// TestAggregateHoppingEvictionsExact runs COUNT and SUM in hopping windows
// (five windows a record) over twenty groups with a cache that keeps a
// few dozen entries, so that groups and windows leave it all the time and
// new ones arrive among evicted ones, and checks every output row and the
// store's final state against an independent count, and against the run
// with the cache off.
func TestAggregateHoppingEvictionsExact(t *testing.T) {
	type window struct {
		group string
		start int64
	}
	type totals struct{ N, Sum, MaxTs int64 }
	const records = 600
	run := func(cacheBytes int64) (out []string, stored map[window]totals) {
		db := openState(t, t.TempDir())
		defer func() { _ = db.Close() }()
		node := countSumNode(t, false)
		node.Window = &WindowSpec{Kind: Hopping, Size: 50, Advance: 10, Grace: 10_000} // none expires
		node.CacheBytes = cacheBytes
		op, err := node.New(&countingOp{fn: func(r *Row) {
			out = append(out, fmt.Sprintf("%v [%v] %v %v @%d", r.Cols[0], r.Cols[3], r.Cols[1], r.Cols[2], r.Ts))
		}})
		if err != nil {
			t.Fatal(err)
		}
		tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{"agg": db.Store("agg", 0)}, StreamTime: -1 << 63}
		if err := op.Open(tc); err != nil {
			t.Fatal(err)
		}
		for i := range int64(records) {
			group := fmt.Sprintf("g%02d", (i*7+i/13)%20)
			ts := i * 3
			tc.StreamTime = max(tc.StreamTime, ts)
			if err := op.Process(tc, &Row{Cols: []any{group, i % 17}, Ts: ts}); err != nil {
				t.Fatal(err)
			}
			if err := op.AdvanceTime(tc); err != nil {
				t.Fatal(err)
			}
			if i%100 == 99 {
				if err := tc.stores["agg"].Commit(state.Checkpoint{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		stored = map[window]totals{}
		err = tc.stores["agg"].Range(nil, func(k, v []byte) bool {
			start, gk, _ := splitWindowKey(k)
			accs, maxTs, err := decodeAggState(v, "agg")
			if err != nil {
				t.Fatal(err)
			}
			stored[window{string(gk[len(gk)-3:]), start}] = totals{accs[0].(int64), accs[1].(int64), maxTs}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, stored
	}

	// The independent count: each record joins the windows starting on a
	// multiple of 10 within 50 ms before it.
	var want []string
	wantStored := map[window]totals{}
	for i := range int64(records) {
		group := fmt.Sprintf("g%02d", (i*7+i/13)%20)
		ts := i * 3
		for start := ts - ts%10 - 40; start <= ts; start += 10 {
			if start < 0 {
				continue
			}
			w := window{group, start}
			t := wantStored[w]
			t = totals{t.N + 1, t.Sum + i%17, ts}
			wantStored[w] = t
			want = append(want, fmt.Sprintf("%s [%d] %d %d @%d", group, start, t.N, t.Sum, t.MaxTs))
		}
	}

	small, smallStored := run(30 * (aggEntryOverhead + 40))
	if diff := cmp.Diff(want, small); diff != "" {
		t.Fatalf("output with a small cache (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantStored, smallStored); diff != "" {
		t.Fatalf("stored windows with a small cache (-want +got):\n%s", diff)
	}
	none, _ := run(-1)
	if diff := cmp.Diff(want, none); diff != "" {
		t.Fatalf("output with the cache off (-want +got):\n%s", diff)
	}
}
