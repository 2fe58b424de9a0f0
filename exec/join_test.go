package exec

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// joinIn is one record into a join: its side (0 left, 1 right), key,
// value, event time, and whether it is a tombstone (tables only).
type joinIn struct {
	side int
	key  string
	val  string
	ts   int64
	tomb bool
}

// joinCommitAfter is how many records of each case the restarted runs
// commit before they stop.
const joinCommitAfter = 5

var joinCases = []struct {
	name string
	node *JoinNode
	in   []joinIn
	want []string
	// stored lists, per store, the rows (data keys) it holds at the end.
	stored map[string][]string
}{{
	// A LEFT JOIN WITHIN 10 ms GRACE 5 ms: matches both ways, a left row
	// whose window closes without a match (emitted when it is due), rows
	// forgotten as their sides' event time moves on.
	name: "stream-stream",
	node: &JoinNode{
		Type:   LeftJoin,
		Left:   JoinSide{Name: "L", Width: 2, Store: "L"},
		Right:  JoinSide{Name: "R", Width: 2, Store: "R"},
		Before: 10, After: 10, Grace: 5,
	},
	in: []joinIn{
		{0, "a", "l1", 0, false}, {1, "a", "r1", 5, false}, {0, "b", "l2", 6, false},
		{1, "c", "r2", 8, false}, {0, "a", "l3", 12, false}, // commit after these
		{0, "c", "l4", 30, false}, // l2's window closes; r2 is too old to match
		{1, "a", "r3", 31, false}, // l1 is forgotten
		{0, "a", "l5", 33, false},
		{1, "x", "r4", 100, false}, // l4's window closes
		{0, "y", "l6", 101, false},
	},
	want: []string{"l1 r1 @5", "l3 r1 @12", "l2 <nil> @6", "l5 r3 @33", "l4 <nil> @30"},
	stored: map[string][]string{
		"L": {"data y@101", "pending y@101", "newest @101"},
		"R": {"data x@100", "newest @100"},
	},
}, {
	// A LEFT JOIN WITHIN 0 BEFORE, 10 AFTER, GRACE 5: a left row's time
	// passes retention (before + after + grace) as its window closes, so
	// it is kept until the row has been emitted alone.
	name: "stream-stream-no-lookback",
	node: &JoinNode{
		Type:   LeftJoin,
		Left:   JoinSide{Name: "L", Width: 2, Store: "L"},
		Right:  JoinSide{Name: "R", Width: 2, Store: "R"},
		Before: 0, After: 10, Grace: 5,
	},
	in: []joinIn{
		{0, "a", "l1", 0, false}, {0, "b", "l2", 15, false}, // l1 past retention, its window still open
		{1, "x", "r1", 16, false},                            // l1's window closes
		{1, "y", "r2", 40, false}, {0, "c", "l3", 41, false}, // commit after these
		{1, "c", "r3", 45, false}, // matches l3
		{0, "d", "l4", 80, false},
	},
	want: []string{"l1 <nil> @0", "l2 <nil> @15", "l3 r3 @45"},
	stored: map[string][]string{
		"L": {"data d@80", "pending d@80", "newest @80"},
		"R": {"data c@45", "data y@40", "newest @45"},
	},
}, {
	// A stream LEFT JOIN a table: the table's row changes and goes between
	// the stream's lookups of it.
	name: "stream-table",
	node: &JoinNode{
		Type:  LeftJoin,
		Left:  JoinSide{Name: "S", Width: 2},
		Right: JoinSide{Name: "T", Width: 2, Table: true, Store: "T"},
	},
	in: []joinIn{
		{1, "a", "t1", 0, false}, {0, "a", "s1", 1, false}, {0, "b", "s2", 2, false},
		{1, "a", "t2", 3, false}, {0, "a", "s3", 4, false}, // commit after these
		{1, "a", "", 5, true}, {0, "a", "s4", 6, false},
		{1, "b", "t3", 7, false}, {0, "b", "s5", 8, false}, {0, "b", "s6", 9, false},
	},
	want:   []string{"s1 t1 @1", "s2 <nil> @2", "s3 t2 @4", "s4 <nil> @6", "s5 t3 @8", "s6 t3 @9"},
	stored: map[string][]string{"T": {"b t3"}},
}, {
	// Two tables INNER JOINed: each change emits the key's new result, or a
	// tombstone when a result existed and no longer does.
	name: "table-table",
	node: &JoinNode{
		Type:  InnerJoin,
		Left:  JoinSide{Name: "TL", Width: 2, Table: true, Store: "TL"},
		Right: JoinSide{Name: "TR", Width: 2, Table: true, Store: "TR"},
	},
	in: []joinIn{
		{0, "a", "x1", 0, false}, {1, "a", "y1", 1, false}, {0, "a", "x2", 2, false},
		{1, "b", "y2", 3, false}, {0, "b", "x3", 4, false}, // commit after these
		{1, "a", "", 5, true}, {0, "a", "x4", 6, false}, {1, "a", "y3", 7, false},
		{0, "b", "", 8, true}, {1, "b", "y4", 9, false},
	},
	want: []string{
		"x1 y1 @1", "x2 y1 @2", "x3 y2 @4",
		"x2 y1 tombstone @5", "x4 y3 @7", "x3 y2 tombstone @8",
	},
	stored: map[string][]string{"TL": {"a x4"}, "TR": {"a y3", "b y4"}},
}}

// TestJoinAcrossStops runs each join kind straight, and with the task
// stopped after a commit in three ways: closed and reopened on the same
// store; the writes since the commit discarded (an aborted transaction)
// and the records after it processed again; Badger closed without those
// writes (a crash) and opened again. What the operator keeps in memory
// (decoded table rows, the times of the next due rows) is rebuilt from
// the store by each new operator: every run must give the same output and
// leave the same rows in the stores.
func TestJoinAcrossStops(t *testing.T) {
	for _, c := range joinCases {
		for _, stop := range []string{"", "reopen", "abort", "crash"} {
			t.Run(c.name+"/"+stop, func(t *testing.T) {
				got, stored := runJoin(t, c.node, c.in, stop)
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Fatalf("output (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(c.stored, stored); diff != "" {
					t.Fatalf("stores (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// joinBeforeReopen, when set, runs before runJoin opens the operator again.
var joinBeforeReopen func()

// joinRows, when set, collects every Row runJoin's sink is handed;
// joinBorrow makes that sink one that borrows rows (rowBorrower).
var (
	joinRows   *[]*Row
	joinBorrow bool
)

func runJoin(t *testing.T, node *JoinNode, in []joinIn, stop string) (out []string, stored map[string][]string) {
	t.Helper()
	dir := t.TempDir()
	db := openState(t, dir)
	defer func() { _ = db.Close() }()
	base := node.Left.Width + node.Right.Width
	sink := &countingOp{fn: func(r *Row) {
		s := fmt.Sprintf("%v %v", r.Cols[1], r.Cols[3])
		if r.Tombstone {
			s += " tombstone"
		}
		if r.Cols[base+1] != r.Ts {
			t.Errorf("row %s: ROWTIME %v, record time %d", s, r.Cols[base+1], r.Ts)
		}
		out = append(out, fmt.Sprintf("%s @%d", s, r.Ts))
		if joinRows != nil {
			*joinRows = append(*joinRows, r)
		}
	}}
	var next Operator = sink
	if joinBorrow {
		next = &borrowingOp{countingOp: *sink}
	}
	tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{}}
	var op SideOperator
	open := func() {
		for _, name := range node.StoreNames() {
			tc.stores[name] = db.Store(name, 0)
		}
		o, err := node.New(next)
		if err != nil {
			t.Fatal(err)
		}
		op = o.(SideOperator)
		if err := op.Open(tc); err != nil {
			t.Fatal(err)
		}
	}
	process := func(from, to int) {
		for _, r := range in[from:to] {
			tc.StreamTime = max(tc.StreamTime, r.ts)
			row := &Row{Cols: []any{r.key, r.val}, Ts: r.ts, Tombstone: r.tomb}
			if r.tomb {
				row.Cols[1] = nil
			}
			if err := op.ProcessSide(tc, r.side, row); err != nil {
				t.Fatal(err)
			}
			if err := op.AdvanceTime(tc); err != nil {
				t.Fatal(err)
			}
		}
	}
	each := func(fn func(*state.Store)) {
		for _, name := range node.StoreNames() {
			fn(tc.stores[name])
		}
	}
	tc.StreamTime = -1 << 63
	open()
	if stop == "" {
		process(0, len(in))
	} else {
		process(0, joinCommitAfter)
		each(func(s *state.Store) {
			// What the changelog takes first (a join's WriteBack writes
			// then), then the commit.
			_ = s.Pending()
			if err := s.Commit(state.Checkpoint{}); err != nil {
				t.Fatal(err)
			}
		})
		committed, committedTime := len(out), tc.StreamTime
		switch stop {
		case "reopen":
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		case "abort":
			process(joinCommitAfter, len(in))
			each(func(s *state.Store) { s.Discard() })
		case "crash":
			process(joinCommitAfter, len(in))
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openState(t, dir)
		}
		out, tc.StreamTime = out[:committed], committedTime
		if joinBeforeReopen != nil {
			joinBeforeReopen()
		}
		open()
		process(joinCommitAfter, len(in))
	}
	if j := op.(*joinOp); node.streams() {
		checkKeptIndex(t, j)
	}
	stored = map[string][]string{}
	for _, name := range node.StoreNames() {
		table := name == node.Left.Store && node.Left.Table || name == node.Right.Store && node.Right.Table
		err := tc.stores[name].Range(nil, func(k, v []byte) bool {
			if table {
				cols, _, _, err := decodeTableRow(v)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return false
				}
				stored[name] = append(stored[name], fmt.Sprintf("%v %v", cols[0], cols[1]))
				return true
			}
			var what string
			var key []byte
			var ts int64
			switch k[0] {
			case joinDataTag:
				what, key, ts = "data", k[1:len(k)-16], readTime(k[len(k)-16:])
			case joinPendingTag:
				what, key, ts = "pending", k[9:len(k)-8], readTime(k[1:9])
			case joinObserved:
				stored[name] = append(stored[name], fmt.Sprintf("newest @%d", readTime(v)))
				return true
			default:
				return true // the expiry index mirrors data
			}
			kv, _, err := types.DecodeValue(key)
			if err != nil {
				t.Errorf("%s key %x: %v", name, k, err)
				return false
			}
			stored[name] = append(stored[name], fmt.Sprintf("%s %v@%d", what, kv, ts))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, stored
}

// TestJoinIndexBounds runs the stream-stream case across its stops with
// the index's bounds at their edges: no row held decoded (every match read
// from the store, a point read each or one range over the key's rows);
// no index at all (every match scanned in the store, the
// index dropped as the first row is kept); the index dropped midway (the
// rows it kept get their expiry keys then); rows kept with an index and
// reopened without one, and the other way round.
func TestJoinIndexBounds(t *testing.T) {
	c := joinCases[0]
	for _, bound := range []struct {
		name          string
		decoded, rows int
		// reopenRows, when set, is the index's bound once the task
		// reopens: its rows were kept with an index, without their
		// expiry keys, and the side now has none, or the other way round.
		reopenRows int
		// scan, when set, is keptScanRows: 1 reads every match not
		// decoded with a range over its key's rows.
		scan int
	}{
		{"none decoded", 0, keptIndexRows, 0, 0},
		{"none decoded, read by range", 0, keptIndexRows, 0, 1},
		{"one decoded", 1, keptIndexRows, 0, 0},
		{"one decoded, read by range", 1, keptIndexRows, 0, 1},
		{"no index", 0, 0, 0, 0},
		{"dropped at 2 rows", keptDecodedRows, 2, 0, 0},
		{"dropped on reopen", keptDecodedRows, keptIndexRows, 1, 0},
		{"index on reopen", keptDecodedRows, 0, keptIndexRows, 0},
	} {
		for _, stop := range []string{"", "reopen", "abort", "crash"} {
			t.Run(bound.name+"/"+stop, func(t *testing.T) {
				defer func(d, r, sc int) { keptDecodedRows, keptIndexRows, keptScanRows = d, r, sc }(keptDecodedRows, keptIndexRows, keptScanRows)
				keptDecodedRows, keptIndexRows = bound.decoded, bound.rows
				if bound.scan > 0 {
					keptScanRows = bound.scan
				}
				defer func() { joinBeforeReopen = nil }()
				if bound.reopenRows != 0 {
					joinBeforeReopen = func() { keptIndexRows = bound.reopenRows }
				}
				got, stored := runJoin(t, c.node, c.in, stop)
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Fatalf("output (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(c.stored, stored); diff != "" {
					t.Fatalf("stores (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// checkKeptIndex compares what a stream-stream join's indexes hold with
// the data keys of its stores, and the rows they hold decoded with the
// stored values: after a reopen, an abort or a crash, the index must be
// the store's, not what the operator wrote before.
func checkKeptIndex(t *testing.T, j *joinOp) {
	t.Helper()
	for side, s := range j.stores {
		x := j.kept[side]
		var want, got, wantExpiry []string
		decoded := map[string]string{}
		err := s.Range([]byte{joinDataTag}, func(k, v []byte) bool {
			want = append(want, fmt.Sprintf("%x", k))
			decoded[fmt.Sprintf("%x", k)] = fmt.Sprintf("%x", v)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		// The expiry keys name the rows the index knows to have one, or
		// every row when the side has no index.
		var expiry []string
		err = s.Range([]byte{joinExpiryTag}, func(k, _ []byte) bool {
			dk := append([]byte{joinDataTag}, k[9:len(k)-8]...)
			dk = append(dk, k[1:9]...)
			expiry = append(expiry, fmt.Sprintf("%x", append(dk, k[len(k)-8:]...)))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(expiry)
		if x == nil {
			if diff := cmp.Diff(want, expiry); diff != "" {
				t.Errorf("side %d without an index: expiry keys (-data +expiry):\n%s", side, diff)
			}
			continue
		}
		n, d := 0, 0
		for key, kk := range x.keys {
			for _, r := range kk.rows {
				k := appendTime(append([]byte{joinDataTag}, key...), r.ts)
				k = append(k, r.off[:]...)
				got = append(got, fmt.Sprintf("%x", k))
				if r.expiry {
					wantExpiry = append(wantExpiry, fmt.Sprintf("%x", k))
				}
				n++
				if r.cols != nil {
					d++
					if v := fmt.Sprintf("%x", types.AppendValues(nil, r.cols)); v != decoded[fmt.Sprintf("%x", k)] {
						t.Errorf("side %d row %x: decoded %s, stored %s", side, k, v, decoded[fmt.Sprintf("%x", k)])
					}
				}
			}
		}
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("side %d index (-store +index):\n%s", side, diff)
		}
		var byTime []string
		for _, e := range x.byTime {
			k := appendTime(append([]byte{joinDataTag}, e.k.key...), e.ts)
			byTime = append(byTime, fmt.Sprintf("%x", append(k, e.off[:]...)))
		}
		slices.Sort(byTime)
		slices.Sort(wantExpiry)
		if diff := cmp.Diff(wantExpiry, expiry); diff != "" {
			t.Errorf("side %d expiry keys (-index's +store's):\n%s", side, diff)
		}
		if diff := cmp.Diff(want, byTime); diff != "" {
			t.Errorf("side %d index by time (-data +index):\n%s", side, diff)
		}
		if n != x.rows || d != x.decoded || d > keptDecodedRows {
			t.Errorf("side %d: index counts %d rows, %d decoded; holds %d, %d decoded (bound %d)", side, x.rows, x.decoded, n, d, keptDecodedRows)
		}
	}
}

// TestKeptHeapOrder pushes rows in a scrambled order of time, with
// repeats, popping some on the way, and checks every pop is the oldest
// row left.
func TestKeptHeapOrder(t *testing.T) {
	var h keptHeap
	var left []int64
	popOldest := func() {
		t.Helper()
		slices.Sort(left)
		got := h.pop().ts
		if got != left[0] {
			t.Fatalf("popped %d, oldest left %d (of %v)", got, left[0], left)
		}
		left = left[1:]
	}
	for i := int64(0); i < 200; i++ {
		ts := (i * 7919) % 61 // a permutation of 0..60, repeated
		h.push(keptTime{ts: ts})
		left = append(left, ts)
		if i%5 == 4 {
			popOldest()
		}
	}
	for len(left) > 0 {
		popOldest()
	}
	if len(h) != 0 {
		t.Fatalf("%d rows left in the heap", len(h))
	}
}

// TestJoinReadsRowsOfTheUnprunedLayout: a stream-stream join's stores
// written by an operator whose rows had every column (a plan before the
// join-column-pruning rule: [K, X, V], no layout recorded) are opened by
// one whose rows are narrower ([K, V]): it rewrites the kept rows into
// its layout by name and records it, so the new rows match the old ones
// exactly. The rewrite is committed with the task's first commit; an
// abort or a crash before it drops it and the next open makes it again.
func TestJoinReadsRowsOfTheUnprunedLayout(t *testing.T) {
	wide := []string{"K", "X", "V"}
	narrow := []string{"K", "V"}
	oldNode := &JoinNode{Type: InnerJoin, Before: 10, After: 10, Grace: 5,
		Left:  JoinSide{Name: "L", Width: 3, Store: "L"},
		Right: JoinSide{Name: "R", Width: 3, Store: "R"}}
	newNode := &JoinNode{Type: InnerJoin, Before: 10, After: 10, Grace: 5,
		Left:  JoinSide{Name: "L", Width: 2, Store: "L", Columns: narrow, LegacyColumns: wide},
		Right: JoinSide{Name: "R", Width: 2, Store: "R", Columns: narrow, LegacyColumns: wide}}
	type rec struct {
		side int
		cols []any
		ts   int64
	}
	before := []rec{{0, []any{"a", "x1", "l1"}, 0}, {0, []any{"b", "x2", "l2"}, 1}, {1, []any{"c", "y", "r0"}, 2}}
	after := []rec{{1, []any{"a", "r1"}, 5}, {0, []any{"c", "l3"}, 6}, {1, []any{"b", "r2"}, 7}}
	want := []string{"l1 r1 @5", "l3 r0 @6", "l2 r2 @7"}
	for _, stop := range []string{"open", "commit", "abort", "crash"} {
		t.Run(stop, func(t *testing.T) {
			dir := t.TempDir()
			db := openState(t, dir)
			defer func() { _ = db.Close() }()
			var out []string
			var node *JoinNode
			sink := &countingOp{fn: func(r *Row) {
				out = append(out, fmt.Sprintf("%v %v @%d", r.Cols[node.Left.Width-1], r.Cols[node.Left.Width+node.Right.Width-1], r.Ts))
			}}
			tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{}, StreamTime: -1 << 63}
			var op SideOperator
			open := func(n *JoinNode) {
				node = n
				for _, name := range n.StoreNames() {
					tc.stores[name] = db.Store(name, 0)
				}
				o, err := n.New(sink)
				if err != nil {
					t.Fatal(err)
				}
				op = o.(SideOperator)
				if err := op.Open(tc); err != nil {
					t.Fatal(err)
				}
			}
			process := func(recs []rec) {
				for _, r := range recs {
					tc.StreamTime = max(tc.StreamTime, r.ts)
					if err := op.ProcessSide(tc, r.side, &Row{Cols: slices.Clone(r.cols), Ts: r.ts}); err != nil {
						t.Fatal(err)
					}
					if err := op.AdvanceTime(tc); err != nil {
						t.Fatal(err)
					}
				}
			}
			commit := func() {
				for _, name := range node.StoreNames() {
					s := tc.stores[name]
					_ = s.Pending()
					if err := s.Commit(state.Checkpoint{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			open(oldNode)
			process(before)
			commit()
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
			if len(out) != 0 {
				t.Fatalf("the unpruned operator emitted %q, want nothing", out)
			}
			committedTime := tc.StreamTime
			open(newNode)
			switch stop {
			case "commit":
				process(after[:1])
				commit()
				if err := op.Close(); err != nil {
					t.Fatal(err)
				}
				open(newNode)
				process(after[1:])
			case "abort":
				process(after[:1])
				for _, name := range node.StoreNames() {
					tc.stores[name].Discard()
				}
				out, tc.StreamTime = nil, committedTime
				open(newNode)
				process(after)
			case "crash":
				process(after[:1])
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				db = openState(t, dir)
				out, tc.StreamTime = nil, committedTime
				open(newNode)
				process(after)
			default:
				process(after)
			}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Fatalf("output (-want +got):\n%s", diff)
			}
			checkKeptIndex(t, op.(*joinOp))
			// Every kept row is in the narrow layout, which the stores
			// record.
			for _, name := range node.StoreNames() {
				var rows []string
				err := tc.stores[name].Range(nil, func(k, v []byte) bool {
					switch k[0] {
					case joinDataTag:
						vals, _, err := types.DecodeValues(v)
						if err != nil {
							t.Errorf("%s row %x: %v", name, k, err)
						}
						rows = append(rows, fmt.Sprint(vals))
					case joinLayoutKey:
						vals, _, err := types.DecodeValues(v)
						if err != nil {
							t.Errorf("%s layout %x: %v", name, v, err)
						}
						rows = append(rows, fmt.Sprint("layout ", vals))
					}
					return true
				})
				if err != nil {
					t.Fatal(err)
				}
				wantRows := map[string][]string{
					"L": {"[a l1]", "[b l2]", "[c l3]", "layout [K V]"},
					"R": {"[a r1]", "[b r2]", "[c r0]", "layout [K V]"},
				}[name]
				if diff := cmp.Diff(wantRows, rows); diff != "" {
					t.Errorf("store %s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// TestJoinRowReuse runs each join kind, straight and across an aborted
// commit, into an operator that borrows rows: the join hands it one Row
// for every joined row, filled anew (a missing side's columns NULL again
// after a match filled them), with the same output as into one that
// keeps rows, where every joined row is a Row of its own.
func TestJoinRowReuse(t *testing.T) {
	defer func() { joinRows, joinBorrow = nil, false }()
	for _, c := range joinCases {
		for _, stop := range []string{"", "abort"} {
			for _, borrow := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/borrow=%v", c.name, stop, borrow), func(t *testing.T) {
					var rows []*Row
					joinRows, joinBorrow = &rows, borrow
					got, _ := runJoin(t, c.node, c.in, stop)
					if diff := cmp.Diff(c.want, got); diff != "" {
						t.Fatalf("output (-want +got):\n%s", diff)
					}
					seen := map[*Row]bool{}
					for _, r := range rows {
						seen[r] = true
					}
					// Across the abort the operator is opened again, a new
					// one with a Row of its own.
					want := len(rows)
					if borrow {
						want = 1
						if stop != "" {
							want = 2
						}
					}
					if len(seen) != want {
						t.Fatalf("%d rows handed on in %d Rows, want %d", len(rows), len(seen), want)
					}
				})
			}
		}
	}
}

// TestJoinOpenKeepsRowsWaitingToBeEmitted: a task may commit a left row
// whose window has closed before closeWindows emitted it alone (its
// pending key). The next open must not expire it with the rows past
// retention: the first AdvanceTime emits it, then forgets it.
func TestJoinOpenKeepsRowsWaitingToBeEmitted(t *testing.T) {
	node := &JoinNode{
		Type:   LeftJoin,
		Left:   JoinSide{Name: "L", Width: 2, Store: "L"},
		Right:  JoinSide{Name: "R", Width: 2, Store: "R"},
		Before: 0, After: 10, Grace: 5,
	}
	db := openState(t, t.TempDir())
	defer func() { _ = db.Close() }()
	var out []string
	sink := &countingOp{fn: func(r *Row) { out = append(out, fmt.Sprintf("%v %v @%d", r.Cols[1], r.Cols[3], r.Ts)) }}
	tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{}}
	open := func() SideOperator {
		for _, name := range node.StoreNames() {
			tc.stores[name] = db.Store(name, 0)
		}
		op, err := node.New(sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Open(tc); err != nil {
			t.Fatal(err)
		}
		return op.(SideOperator)
	}
	op := open()
	// Processed, committed, stopped before an AdvanceTime: l1's window
	// closes at stream time 16, where its time is past retention too.
	for _, r := range []joinIn{{0, "a", "l1", 0, false}, {0, "b", "l2", 15, false}} {
		tc.StreamTime = r.ts
		if err := op.ProcessSide(tc, r.side, &Row{Cols: []any{r.key, r.val}, Ts: r.ts}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range node.StoreNames() {
		_ = tc.stores[name].Pending()
		if err := tc.stores[name].Commit(state.Checkpoint{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	tc.StreamTime = 16
	op = open()
	if err := op.AdvanceTime(tc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"l1 <nil> @0"}, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
