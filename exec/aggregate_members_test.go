package exec

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// distinctRecord is one input record of the member tests: group K, value
// V (nil: NULL) at event time ts.
type distinctRecord struct {
	key string
	v   any
	ts  int64
}

// distinctNode is COUNT_DISTINCT(V) and COUNT(*) per K, over window w
// (nil: none).
func distinctNode(t *testing.T, w *WindowSpec, final bool, retention int64) *AggregateNode {
	t.Helper()
	distinct, err := expr.BindAggregate("COUNT_DISTINCT", []types.Type{types.StringType}, false)
	if err != nil {
		t.Fatal(err)
	}
	count, _ := countAndSum(t, types.BigIntType)
	return &AggregateNode{
		Store: "agg", KeyCols: []int{0}, KeyNames: []string{"K"},
		Aggs: []AggCall{
			{Agg: distinct, Args: []expr.Eval{func(row []any) any { return row[1] }}, Text: "COUNT_DISTINCT(V)"},
			{Agg: count, Text: "COUNT(*)"},
		},
		Window: w, EmitFinal: final, Retention: retention,
	}
}

// showDistinctRow prints an output row as "K [start] distinct count @ts"
// ("K distinct count @ts" unwindowed, "K tombstone @ts" for a deletion).
func showDistinctRow(r *Row) string {
	if r.Tombstone {
		return fmt.Sprintf("%v tombstone @%d", r.Cols[0], r.Ts)
	}
	if len(r.Cols) > 3 {
		return fmt.Sprintf("%v [%v] %v %v @%d", r.Cols[0], r.Cols[3], r.Cols[1], r.Cols[2], r.Ts)
	}
	return fmt.Sprintf("%v %v %v @%d", r.Cols[0], r.Cols[1], r.Cols[2], r.Ts)
}

// showDistinctEntry prints a store entry: a group's state as its output
// row, a member as "K [start] #aggregate value", the unwindowed time
// index as "index ts K".
func showDistinctEntry(t *testing.T, windowed bool, k, v []byte) string {
	t.Helper()
	group := func(gk []byte) (any, []byte) {
		vals, rest, err := types.DecodeValues(gk)
		if err != nil {
			t.Fatalf("group key %x: %v", gk, err)
		}
		return vals[0], rest
	}
	member := func(rest []byte) string {
		i, w := binary.Uvarint(rest)
		m, _, err := types.DecodeValue(rest[w:])
		if w <= 0 || err != nil {
			t.Fatalf("member %x: %v", rest, err)
		}
		return fmt.Sprintf("#%d %v", i, m)
	}
	state := func(v []byte) string {
		accs, maxTs, err := decodeAggState(v, "agg")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%v %v @%d", accs[0], accs[1], maxTs)
	}
	if windowed {
		start := int64(binary.BigEndian.Uint64(k) ^ (1 << 63))
		if isWindowMember(k) {
			g, rest := group(k[9:])
			return fmt.Sprintf("%v [%d] %s", g, start, member(rest))
		}
		g, _ := group(k[8:])
		return fmt.Sprintf("%v [%d] %s", g, start, state(v))
	}
	switch k[0] {
	case tableDataTag:
		g, _ := group(k[1:])
		return fmt.Sprintf("%v %s", g, state(v))
	case tableIndexTag:
		ts, gk, _ := splitExpiryKey(k)
		g, _ := group(gk)
		return fmt.Sprintf("index %d %v", ts, g)
	case tableMemberTag:
		g, rest := group(k[1:])
		return fmt.Sprintf("%v %s", g, member(rest))
	}
	t.Fatalf("unknown key %x", k)
	return ""
}

// runDistinct runs input through node, stopping after commitAfter records
// as stop says (as runAggregate does: "" runs straight; reopen, abort,
// abort-same, crash, restore; few-members, evicting, tiny-cache and
// no-cache run straight with a cache of one byte for the known members,
// for accumulators, for both, or none; "cache+stop" both, as
// "evicting+crash"), and returns the output, the store's entries at the
// end and the changelog records of the commit, sorted.
func runDistinct(t *testing.T, node *AggregateNode, input []distinctRecord, commitAfter int, stop string) (out, stored, changelog []string) {
	t.Helper()
	dir := t.TempDir()
	db := openState(t, dir)
	defer func() { _ = db.Close() }()
	cache := ""
	switch stop {
	case "few-members", "evicting", "tiny-cache", "no-cache":
		cache, stop = stop, ""
	default:
		if c, s, ok := strings.Cut(stop, "+"); ok {
			cache, stop = c, s
		}
	}
	if cache == "no-cache" {
		node.CacheBytes = -1
	}
	sink := &countingOp{fn: func(r *Row) { out = append(out, showDistinctRow(r)) }}
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
		if cache == "few-members" {
			// Accumulators kept, the members known forgotten at
			// every new one.
			op.(*aggregate).cache.memberLimit = 1
		}
		if cache == "evicting" {
			// Accumulators evicted at every record, the members they
			// knew kept.
			op.(*aggregate).cache.limit = 1
		}
		if cache == "tiny-cache" {
			// Accumulators and known members both forgotten at
			// every record: each member is looked up in the store.
			op.(*aggregate).cache.limit = 1
			op.(*aggregate).cache.memberLimit = 1
		}
	}
	process := func(from, to int) {
		for _, in := range input[from:to] {
			tc.StreamTime = max(tc.StreamTime, in.ts)
			if err := op.Process(tc, &Row{Cols: []any{in.key, in.v}, Ts: in.ts}); err != nil {
				t.Fatal(err)
			}
			if err := op.AdvanceTime(tc); err != nil {
				t.Fatal(err)
			}
		}
	}
	windowed := node.Window != nil
	tc.StreamTime = -1 << 63
	open()
	if stop == "" {
		process(0, len(input))
	} else {
		process(0, commitAfter)
		store := tc.stores["agg"]
		pending := store.Pending()
		for _, c := range pending {
			if c.Delete {
				changelog = append(changelog, "delete "+showDistinctEntry(t, windowed, c.Key, nil))
				continue
			}
			changelog = append(changelog, showDistinctEntry(t, windowed, c.Key, c.Value))
		}
		slices.Sort(changelog)
		if err := store.Commit(state.Checkpoint{}); err != nil {
			t.Fatal(err)
		}
		committed, committedTime := len(out), tc.StreamTime
		switch stop {
		case "reopen":
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		case "abort":
			process(commitAfter, len(input)-1)
			store.Discard()
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		case "abort-same":
			process(commitAfter, len(input)-1)
			store.Discard()
		case "crash":
			process(commitAfter, len(input)-1)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openState(t, dir)
		case "restore":
			process(commitAfter, len(input)-1)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openState(t, t.TempDir())
			fresh := db.Store("agg", 0)
			for _, c := range pending {
				if c.Delete {
					fresh.Delete(c.Key)
				} else {
					fresh.Put(c.Key, c.Value)
				}
			}
			if err := fresh.Commit(state.Checkpoint{}); err != nil {
				t.Fatal(err)
			}
		}
		out, tc.StreamTime = out[:committed], committedTime
		if stop != "abort-same" {
			open()
		}
		process(commitAfter, len(input))
	}
	err = tc.stores["agg"].Range(nil, func(k, v []byte) bool {
		stored = append(stored, showDistinctEntry(t, windowed, k, v))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, stored, changelog
}

// distinctStops are runDistinct's ways to run. The cache's members not
// yet in the store (written at its WriteBack or as it forgets their
// group) meet a commit, a crash, an abort and a restore with
// accumulators evicted at every record, with the members known forgotten
// at every new one, and both.
var distinctStops = []string{"", "reopen", "abort", "abort-same", "crash", "restore", "few-members", "evicting", "tiny-cache", "no-cache",
	"evicting+crash", "evicting+restore", "few-members+abort", "few-members+restore", "tiny-cache+crash", "tiny-cache+restore", "no-cache+restore"}

// TestCountDistinctMembersTumbling runs COUNT_DISTINCT in 10 ms tumbling
// windows with 5 ms of grace, straight and stopped after a commit in
// every way runAggregate knows: the counts, the windows and each window's
// members in the store, and the changelog of the commit (members as
// entries, not sets) must be exact. EMIT FINAL deletes a window's members
// as it emits the window; EMIT CHANGES when the window's retention ends.
func TestCountDistinctMembersTumbling(t *testing.T) {
	input := []distinctRecord{
		{"a", "x", 0}, {"a", "y", 3}, {"a", "x", 5}, {"b", "x", 6}, // commit after these
		{"a", nil, 8}, {"a", "z", 12}, {"b", "x", 13}, {"a", "z", 14},
		{"a", "y", 2}, // late, inside the grace
		{"b", "w", 19},
		{"a", "x", 31}, // expires [0,10), closes [10,20)
	}
	wantChanges := []string{
		"a [0] 1 1 @0", "a [0] 2 2 @3", "a [0] 2 3 @5", "b [0] 1 1 @6",
		"a [0] 2 4 @8", "a [10] 1 1 @12", "b [10] 1 1 @13", "a [10] 1 2 @14", "a [0] 2 5 @8",
		"b [10] 2 2 @19", "a [30] 1 1 @31",
	}
	storedChanges := []string{
		"a [10] 1 2 @14", "b [10] 2 2 @19", "a [10] #0 z", "b [10] #0 w", "b [10] #0 x",
		"a [30] 1 1 @31", "a [30] #0 x",
	}
	wantFinal := []string{"a [0] 2 5 @8", "b [0] 1 1 @6", "a [10] 1 2 @14", "b [10] 2 2 @19"}
	storedFinal := []string{"a [30] 1 1 @31", "a [30] #0 x"}
	wantChangelog := []string{"a [0] #0 x", "a [0] #0 y", "a [0] 2 3 @5", "b [0] #0 x", "b [0] 1 1 @6"}
	for _, final := range []bool{false, true} {
		want, wantStored := wantChanges, storedChanges
		if final {
			want, wantStored = wantFinal, storedFinal
		}
		for _, stop := range distinctStops {
			if final && stop == "abort-same" {
				continue // as in TestAggregateCacheFollowsStore
			}
			t.Run(fmt.Sprintf("final=%v/%s", final, stop), func(t *testing.T) {
				node := distinctNode(t, &WindowSpec{Kind: Tumbling, Size: 10, Grace: 5}, final, 0)
				got, stored, changelog := runDistinct(t, node, input, 4, stop)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("output (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(wantStored, stored); diff != "" {
					t.Fatalf("store (-want +got):\n%s", diff)
				}
				if changelog != nil {
					if diff := cmp.Diff(wantChangelog, changelog); diff != "" {
						t.Fatalf("changelog (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
}

// TestCountDistinctMembersHopping: in 10 ms windows advancing by 5 a value
// counts once in each window it falls in, and windows past retention
// leave no member behind.
func TestCountDistinctMembersHopping(t *testing.T) {
	input := []distinctRecord{
		{"a", "x", 0}, {"a", "y", 6}, {"b", "x", 7}, // commit after these
		{"a", "x", 9}, {"a", "x", 12},
		{"b", "y", 31}, // expires [0,10) and [5,15)
	}
	want := []string{
		"a [0] 1 1 @0", "a [0] 2 2 @6", "a [5] 1 1 @6", "b [0] 1 1 @7", "b [5] 1 1 @7",
		"a [0] 2 3 @9", "a [5] 2 2 @9", "a [5] 2 3 @12", "a [10] 1 1 @12",
		"b [25] 1 1 @31", "b [30] 1 1 @31",
	}
	wantStored := []string{
		"a [10] 1 1 @12", "a [10] #0 x",
		"b [25] 1 1 @31", "b [25] #0 y",
		"b [30] 1 1 @31", "b [30] #0 y",
	}
	for _, stop := range distinctStops {
		t.Run(stop, func(t *testing.T) {
			node := distinctNode(t, &WindowSpec{Kind: Hopping, Size: 10, Advance: 5, Grace: 5}, false, 0)
			got, stored, _ := runDistinct(t, node, input, 3, stop)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantStored, stored); diff != "" {
				t.Fatalf("store (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCountDistinctMembersUnwindowed: without windows the members sit
// under their own tag; a key expired by retention takes its members with
// it, so the key counts from scratch when it comes back (b's x counts
// again).
func TestCountDistinctMembersUnwindowed(t *testing.T) {
	input := []distinctRecord{
		{"a", "x", 0}, {"a", "y", 3}, {"b", "x", 5}, {"a", "x", 9}, // commit after these
		{"b", nil, 10}, {"c", "x", 12}, {"b", "y", 13}, {"c", "x", 14},
		{"a", "z", 40}, // expires b and c
		{"b", "x", 41},
	}
	want := []string{
		"a 1 1 @0", "a 2 2 @3", "b 1 1 @5", "a 2 3 @9",
		"b 1 2 @10", "c 1 1 @12", "b 2 3 @13", "c 1 2 @14",
		"a 3 4 @40", "b tombstone @40", "c tombstone @40",
		"b 1 1 @41",
	}
	wantStored := []string{
		"a 3 4 @40", "b 1 1 @41",
		"index 40 a", "index 41 b",
		"a #0 x", "a #0 y", "a #0 z", "b #0 x",
	}
	// The time index's entries for a's earlier times are deleted.
	wantChangelog := []string{"a #0 x", "a #0 y", "a 2 3 @9", "b #0 x", "b 1 1 @5", "delete index 0 a", "delete index 3 a", "index 5 b", "index 9 a"}
	for _, stop := range distinctStops {
		t.Run(stop, func(t *testing.T) {
			node := distinctNode(t, nil, false, 20)
			got, stored, changelog := runDistinct(t, node, input, 4, stop)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantStored, stored); diff != "" {
				t.Fatalf("store (-want +got):\n%s", diff)
			}
			if changelog != nil {
				if diff := cmp.Diff(wantChangelog, changelog); diff != "" {
					t.Fatalf("changelog (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestCountDistinctMembersFromWholeSet: a window whose state an earlier
// version wrote, the set whole in the accumulator, counts on from it; its
// members move to entries and the state is rewritten with the count.
func TestCountDistinctMembersFromWholeSet(t *testing.T) {
	db := openState(t, t.TempDir())
	defer func() { _ = db.Close() }()
	store := db.Store("agg", 0)
	old := map[string]any{string(types.AppendValue(nil, "x")): nil, string(types.AppendValue(nil, "y")): nil}
	gk := types.AppendValues(nil, []any{"a"})
	store.Put(windowKey(nil, 0, gk), appendAggState(nil, 3, []any{old, int64(2)}))
	if err := store.Commit(state.Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	node := distinctNode(t, &WindowSpec{Kind: Tumbling, Size: 10, Grace: 5}, false, 0)
	var out []string
	op, err := node.New(&countingOp{fn: func(r *Row) { out = append(out, showDistinctRow(r)) }})
	if err != nil {
		t.Fatal(err)
	}
	tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{"agg": store}, StreamTime: 3}
	if err := op.Open(tc); err != nil {
		t.Fatal(err)
	}
	for _, in := range []distinctRecord{{"a", "y", 4}, {"a", "z", 5}} {
		tc.StreamTime = in.ts
		if err := op.Process(tc, &Row{Cols: []any{in.key, in.v}, Ts: in.ts}); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"a [0] 2 3 @4", "a [0] 3 4 @5"}, out); diff != "" {
		t.Fatalf("output (-want +got):\n%s", diff)
	}
	var stored []string
	err = store.Range(nil, func(k, v []byte) bool {
		stored = append(stored, showDistinctEntry(t, true, k, v))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a [0] 3 4 @5", "a [0] #0 x", "a [0] #0 y", "a [0] #0 z"}
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Fatalf("store (-want +got):\n%s", diff)
	}
}
