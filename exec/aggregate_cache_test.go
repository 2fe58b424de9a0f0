package exec

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// aggInput is a run of priced records of three keys through COUNT(*) and
// SUM(PRICE) in 10 ms tumbling windows with 5 ms grace: a key bid on
// twice in a window, a record late but inside the grace, one beyond it,
// and a last record that closes and expires the windows before it.
var aggInput = []struct {
	key   string
	ts    int64
	price int64
}{
	{"a", 0, 1}, {"b", 3, 2}, {"a", 8, 3}, {"a", 12, 4}, // commit after these
	{"b", 14, 5},
	{"a", 2, 6},  // late, inside the grace: [0,10) closes at 15
	{"c", 16, 7}, // closes [0,10)
	{"a", 5, 8},  // beyond the grace: dropped
	{"b", 19, 9},
	{"a", 31, 10}, // closes [10,20), expires [0,10)
}

// aggCommitAfter is how many records of aggInput the stopped runs commit
// before they stop.
const aggCommitAfter = 4

// TestAggregateCacheFollowsStore runs aggInput through the windowed
// aggregate, whose accumulators live in its cache between commits,
// straight and stopped after a commit: closed and reopened on the same
// store; the writes since discarded (an aborted transaction) and the
// records after the commit processed again, by a new operator or by the
// same one; Badger closed without those writes (a crash); local state
// lost and rebuilt from the changelog the commit produced (a restore);
// with a cache of one byte, which writes back and evicts at every
// record; and with the cache turned off (CacheBytes below 0, the property
// statestore.cache.max.bytes at 0). Every run must give the same output and leave the same windows
// with the same state in the store.
func TestAggregateCacheFollowsStore(t *testing.T) {
	wantChanges := []string{
		"a [0] 1 1 @0", "b [0] 1 2 @3", "a [0] 2 4 @8", "a [10] 1 4 @12",
		"b [10] 1 5 @14", "a [0] 3 10 @8", "c [10] 1 7 @16", "b [10] 2 14 @19",
		"a [30] 1 10 @31",
	}
	wantFinal := []string{
		"a [0] 3 10 @8", "b [0] 1 2 @3", // closed at stream time 16
		"a [10] 1 4 @12", "b [10] 2 14 @19", "c [10] 1 7 @16", // closed at 31
	}
	// EMIT CHANGES keeps [10,20) until its retention (15 ms) ends;
	// EMIT FINAL deletes a window as it emits it.
	storedChanges := []string{"a [10] 1 4 @12", "b [10] 2 14 @19", "c [10] 1 7 @16", "a [30] 1 10 @31"}
	storedFinal := []string{"a [30] 1 10 @31"}
	for _, final := range []bool{false, true} {
		want, wantStored := wantChanges, storedChanges
		if final {
			want, wantStored = wantFinal, storedFinal
		}
		for _, stop := range []string{"", "reopen", "abort", "abort-same", "crash", "restore", "tiny-cache", "no-cache"} {
			if final && stop == "abort-same" {
				// EMIT FINAL's scan for closed windows has moved past
				// [0,10) in the discarded work: the runner reopens its
				// operators after an abort, and abort-same is there to
				// check the cache's Discard alone.
				continue
			}
			t.Run(fmt.Sprintf("final=%v/%s", final, stop), func(t *testing.T) {
				got, stored, _ := runAggregate(t, final, stop)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("output (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(wantStored, stored); diff != "" {
					t.Fatalf("windows in the store (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestAggregateCacheChangelog checks what the changelog takes at a
// commit: one record per window written since the last, with the state a
// restore needs (three windows for the first four records, a[0] written
// twice), and nothing more when nothing changed.
func TestAggregateCacheChangelog(t *testing.T) {
	_, _, changelog := runAggregate(t, false, "restore")
	want := []string{"a [0] 2 4 @8", "b [0] 1 2 @3", "a [10] 1 4 @12"}
	if diff := cmp.Diff(want, changelog); diff != "" {
		t.Fatalf("changelog at the commit (-want +got):\n%s", diff)
	}
}

// TestAggregateCacheBytes checks that the node's CacheBytes (the property
// statestore.cache.max.bytes) bounds the cache: by default every window
// of aggInput stays decoded between commits; below 0 the cache keeps no
// entry beyond the record being folded, so the others are in the store's
// overlay, encoded, as before the cache; a bound of a few entries keeps
// at most that many.
func TestAggregateCacheBytes(t *testing.T) {
	for _, tc := range []struct {
		bytes      int64
		wantLimit  int64
		maxEntries int // held after any record
		entries    int // held after the last record
	}{
		{0, DefaultAggCacheBytes, 5, 4},
		{-1, 0, 1, 1},
		// Room for two entries (about 200 bytes each, their keys and
		// values short): a third fits in while the two take less than
		// the bound, and the next add evicts down to half of it.
		{2 * (aggEntryOverhead + 40), 2 * (aggEntryOverhead + 40), 3, 2},
	} {
		t.Run(fmt.Sprint(tc.bytes), func(t *testing.T) {
			db := openState(t, t.TempDir())
			defer func() { _ = db.Close() }()
			node := countSumNode(t, false)
			node.CacheBytes = tc.bytes
			var out []string
			op, err := node.New(&countingOp{fn: func(r *Row) {
				out = append(out, fmt.Sprintf("%v [%v] %v %v @%d", r.Cols[0], r.Cols[3], r.Cols[1], r.Cols[2], r.Ts))
			}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{"agg": db.Store("agg", 0)}, StreamTime: -1 << 63}
			if err := op.Open(ctx); err != nil {
				t.Fatal(err)
			}
			cache := op.(*aggregate).cache
			if cache.limit != tc.wantLimit {
				t.Fatalf("cache limit %d, want %d", cache.limit, tc.wantLimit)
			}
			most := 0
			for _, in := range aggInput {
				ctx.StreamTime = max(ctx.StreamTime, in.ts)
				if err := op.Process(ctx, &Row{Cols: []any{in.key, in.price}, Ts: in.ts}); err != nil {
					t.Fatal(err)
				}
				if err := op.AdvanceTime(ctx); err != nil {
					t.Fatal(err)
				}
				most = max(most, len(cache.entries))
			}
			if most != tc.maxEntries || len(cache.entries) != tc.entries {
				t.Errorf("cache held up to %d entries, %d at the end; want %d and %d", most, len(cache.entries), tc.maxEntries, tc.entries)
			}
			want := []string{
				"a [0] 1 1 @0", "b [0] 1 2 @3", "a [0] 2 4 @8", "a [10] 1 4 @12",
				"b [10] 1 5 @14", "a [0] 3 10 @8", "c [10] 1 7 @16", "b [10] 2 14 @19",
				"a [30] 1 10 @31",
			}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Fatalf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// countSumNode is the aggregate the cache tests run: COUNT(*) and
// SUM(PRICE) per K over 10 ms tumbling windows with 5 ms of grace.
func countSumNode(t *testing.T, final bool) *AggregateNode {
	t.Helper()
	count, sum := countAndSum(t, types.BigIntType)
	return &AggregateNode{
		Store: "agg", KeyCols: []int{0}, KeyNames: []string{"K"},
		Aggs: []AggCall{
			{Agg: count, Text: "COUNT(*)"},
			{Agg: sum, Args: []expr.Eval{func(row []any) any { return row[1] }}, Text: "SUM(PRICE)"},
		},
		Window:    &WindowSpec{Kind: Tumbling, Size: 10, Grace: 5},
		EmitFinal: final,
	}
}

// runAggregate runs aggInput, stopping after aggCommitAfter records as
// stop says ("" runs straight), and returns the output, the windows the
// store holds at the end and the changelog records of the commit.
func runAggregate(t *testing.T, final bool, stop string) (out, stored, changelog []string) {
	t.Helper()
	dir := t.TempDir()
	db := openState(t, dir)
	defer func() { _ = db.Close() }()
	node := countSumNode(t, final)
	if stop == "no-cache" {
		node.CacheBytes = -1
	}
	sink := &countingOp{fn: func(r *Row) {
		out = append(out, fmt.Sprintf("%v [%v] %v %v @%d", r.Cols[0], r.Cols[3], r.Cols[1], r.Cols[2], r.Ts))
	}}
	tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{}}
	var op Operator
	var err error
	open := func() {
		tc.stores["agg"] = db.Store("agg", 0)
		if op, err = node.New(sink); err != nil {
			t.Fatal(err)
		}
		if err := op.Open(tc); err != nil {
			t.Fatal(err)
		}
		if stop == "tiny-cache" {
			op.(*aggregate).cache.limit = 1
		}
	}
	process := func(from, to int) {
		for _, in := range aggInput[from:to] {
			tc.StreamTime = max(tc.StreamTime, in.ts)
			if err := op.Process(tc, &Row{Cols: []any{in.key, in.price}, Ts: in.ts}); err != nil {
				t.Fatal(err)
			}
			if err := op.AdvanceTime(tc); err != nil {
				t.Fatal(err)
			}
		}
	}
	// show decodes a window's key and value as the outputs show them.
	show := func(k, v []byte) string {
		w, maxTs := showWindow(t, k, v)
		return fmt.Sprintf("%s @%d", w, maxTs)
	}
	tc.StreamTime = -1 << 63
	open()
	if stop == "" || stop == "tiny-cache" || stop == "no-cache" {
		process(0, len(aggInput))
	} else {
		process(0, aggCommitAfter)
		store := tc.stores["agg"]
		pending := store.Pending()
		for _, c := range pending {
			changelog = append(changelog, show(c.Key, c.Value))
		}
		if err := store.Commit(state.Checkpoint{}); err != nil {
			t.Fatal(err)
		}
		if n := store.PendingCount(); n != 0 {
			t.Fatalf("%d writes pending right after a commit", n)
		}
		committed, committedTime := len(out), tc.StreamTime
		switch stop {
		case "reopen":
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		case "abort":
			process(aggCommitAfter, len(aggInput)-1)
			store.Discard()
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		case "abort-same":
			process(aggCommitAfter, len(aggInput)-1)
			store.Discard()
		case "crash":
			process(aggCommitAfter, len(aggInput)-1)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openState(t, dir)
		case "restore":
			process(aggCommitAfter, len(aggInput)-1)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			// Local state is gone: a fresh store takes the changelog.
			db = openState(t, t.TempDir())
			fresh := db.Store("agg", 0)
			for _, c := range pending {
				fresh.Put(c.Key, c.Value)
			}
			if err := fresh.Commit(state.Checkpoint{}); err != nil {
				t.Fatal(err)
			}
		}
		// What was not committed is gone, output included; stream time
		// comes back from the checkpoint.
		out, tc.StreamTime = out[:committed], committedTime
		if stop != "abort-same" {
			// abort-same goes on with the operator: its cache must
			// have dropped what the store discarded.
			open()
		}
		process(aggCommitAfter, len(aggInput))
	}
	err = tc.stores["agg"].Range(nil, func(k, v []byte) bool {
		stored = append(stored, show(k, v))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, stored, changelog
}

// showWindow decodes a COUNT(*), SUM windowed store's entry as
// "group [start] count sum", with its latest event time.
func showWindow(t *testing.T, k, v []byte) (string, int64) {
	t.Helper()
	start, gk, ok := splitWindowKey(k)
	group, _, err := types.DecodeValues(gk)
	if !ok || err != nil {
		t.Fatalf("window key %x: %v", k, err)
	}
	accs, maxTs, err := decodeAggState(v, "agg")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%v [%d] %v %v", group[0], start, accs[0], accs[1]), maxTs
}
