package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// slicedRecord is one input record of the sliced-window tests: a group,
// a BIGINT and a STRING value, and an event time.
type slicedRecord struct {
	key string
	n   any // int64 or nil
	s   any // string or nil
	ts  int64
}

// slicedInput makes n records of four groups whose event times move on
// by up to 3 ms, one in four going back by up to 20 ms (some past the
// grace, so turned away as late), with NULLs among the values.
func slicedInput(seed uint64, n int) []slicedRecord {
	r := rand.New(rand.NewPCG(seed, 1))
	var out []slicedRecord
	ts := int64(0)
	for range n {
		ts += r.Int64N(4)
		rec := slicedRecord{key: string(rune('a' + r.IntN(4))), ts: ts}
		if r.IntN(4) == 0 {
			rec.ts = max(0, ts-r.Int64N(21))
		}
		if r.IntN(6) != 0 {
			rec.n = r.Int64N(100) - 50
		}
		if r.IntN(6) != 0 {
			rec.s = fmt.Sprintf("v%02d", r.IntN(40))
		}
		out = append(out, rec)
	}
	return out
}

// slicedAggs binds COUNT(*), COUNT(n), SUM(n), MIN(n) and MAX(s): the
// aggregates a sliced window merges.
func slicedAggs(t *testing.T) []AggCall {
	t.Helper()
	var calls []AggCall
	for _, c := range []struct {
		name string
		arg  *types.Type
		col  int
	}{{"COUNT", nil, 0}, {"COUNT", &types.BigIntType, 1}, {"SUM", &types.BigIntType, 1}, {"MIN", &types.BigIntType, 1}, {"MAX", &types.StringType, 2}} {
		var args []types.Type
		var evals []expr.Eval
		if c.arg != nil {
			args = []types.Type{*c.arg}
			col := c.col
			evals = []expr.Eval{func(cols []any) any { return cols[col] }}
		}
		agg, err := expr.BindAggregate(c.name, args, c.arg == nil)
		if err != nil {
			t.Fatal(err)
		}
		if !agg.Sliceable {
			t.Fatalf("%s(%v) is not sliceable", c.name, args)
		}
		calls = append(calls, AggCall{Agg: agg, Args: evals, Text: c.name})
	}
	return calls
}

// runHopping runs records through a HOPPING EMIT FINAL aggregation,
// sliced or not, and returns every result row it emits, in order, and
// the entries left in its store. stopAt > 0 commits after that many
// records and goes on as stop says: "reopen" closes the operator and
// opens a new one on the store; "crash" processes the rest once, closes
// Badger without committing, and opens it again, the records after the
// commit processed again by a new operator (their output of the first
// try lost, as a transaction's would be).
func runHopping(t *testing.T, w WindowSpec, sliced bool, records []slicedRecord, stopAt int, stop string) (out []string, left int, late int64) {
	t.Helper()
	dir := t.TempDir()
	db := openState(t, dir)
	defer func() { _ = db.Close() }()
	node := &AggregateNode{
		Store: "hop", KeyCols: []int{0}, KeyNames: []string{"K"},
		Aggs: slicedAggs(t), Window: &w, EmitFinal: true, Sliced: sliced,
	}
	// A borrower, as a projection is: closing windows reuse one Row.
	sink := &borrowingOp{countingOp: countingOp{fn: func(r *Row) {
		out = append(out, fmt.Sprintf("%v", append(r.Cols, r.Ts)))
	}}}
	tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{}}
	var op Operator
	open := func() {
		tc.stores["hop"] = db.Store("hop", 0)
		var err error
		if op, err = node.New(sink); err != nil {
			t.Fatal(err)
		}
		if err := op.Open(tc); err != nil {
			t.Fatal(err)
		}
	}
	process := func(recs []slicedRecord) {
		for _, in := range recs {
			tc.StreamTime = max(tc.StreamTime, in.ts)
			if err := op.Process(tc, &Row{Cols: []any{in.key, in.n, in.s}, Ts: in.ts}); err != nil {
				t.Fatal(err)
			}
			if err := op.AdvanceTime(tc); err != nil {
				t.Fatal(err)
			}
		}
	}
	tc.StreamTime = -1 << 63
	open()
	if stopAt == 0 {
		process(records)
	} else {
		process(records[:stopAt])
		tc.stores["hop"].Pending()
		if err := tc.stores["hop"].Commit(state.Checkpoint{}); err != nil {
			t.Fatal(err)
		}
		committed, committedTime := len(out), tc.StreamTime
		switch stop {
		case "reopen":
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		case "crash":
			process(records[stopAt:])
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openState(t, dir)
		}
		out, tc.StreamTime = out[:committed], committedTime
		open()
		process(records[stopAt:])
	}
	// A record far ahead closes every window.
	process([]slicedRecord{{key: "z", ts: records[len(records)-1].ts + 1_000}})
	err := tc.stores["hop"].Range(nil, func(k, _ []byte) bool {
		if start, _, ok := splitWindowKey(k); ok && start < records[len(records)-1].ts+1_000-w.Size {
			left++
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, left, tc.Metrics.LateDropped.Load()
}

// TestSlicedHoppingMatchesWindows: a sliced HOPPING aggregation emits
// exactly what one keeping every window does, row for row and in the
// same order, with out-of-order and late records, NULLs, the first
// windows (none starts before time 0), and a restart after a commit (reopened, or
// crashed and replayed); and, once a record far ahead closed every
// window, it leaves no slice behind.
func TestSlicedHoppingMatchesWindows(t *testing.T) {
	windows := []WindowSpec{
		{Kind: Hopping, Size: 10, Advance: 2, Grace: 4},
		{Kind: Hopping, Size: 9, Advance: 3, Grace: 0},
		{Kind: Hopping, Size: 20, Advance: 5, Grace: 12, Retention: 60},
	}
	for _, w := range windows {
		for seed := range uint64(4) {
			records := slicedInput(seed, 300)
			want, _, wantLate := runHopping(t, w, false, records, 0, "")
			if len(want) < 100 {
				t.Fatalf("%v seed %d: only %d windows emitted", w.String(), seed, len(want))
			}
			for _, run := range []struct {
				stopAt int
				stop   string
			}{{0, ""}, {137, "reopen"}, {211, "crash"}} {
				t.Run(fmt.Sprintf("%s/seed=%d/%s", w.String(), seed, run.stop), func(t *testing.T) {
					got, left, late := runHopping(t, w, true, records, run.stopAt, run.stop)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("sliced output (-windows +sliced):\n%s", diff)
					}
					if run.stop == "" && late != wantLate {
						t.Fatalf("%d records dropped as late, want %d", late, wantLate)
					}
					if left != 0 {
						t.Fatalf("%d slices left in the store after every window closed", left)
					}
				})
			}
		}
	}
}

// TestSlicedHoppingDropsLate: a record whose own slice's window has
// closed is late, counted and not folded; one whose earlier windows
// closed but whose slice's window is open folds into the open ones only.
func TestSlicedHoppingDropsLate(t *testing.T) {
	w := WindowSpec{Kind: Hopping, Size: 10, Advance: 5, Grace: 0}
	records := []slicedRecord{
		{key: "a", n: int64(1), ts: 3},
		{key: "a", n: int64(2), ts: 12}, // closes [0,10)
		{key: "a", n: int64(4), ts: 7},  // [0,10) closed, [5,15) open
		{key: "a", n: int64(8), ts: 16}, // closes [5,15)
		{key: "a", n: int64(16), ts: 9}, // every window holding it closed: late
	}
	for _, sliced := range []bool{false, true} {
		got, _, late := runHopping(t, w, sliced, records, 0, "")
		if late != 1 {
			t.Errorf("sliced=%v: %d records dropped as late, want 1", sliced, late)
		}
		want := []string{
			// K, COUNT(*), COUNT(n), SUM(n), MIN(n), MAX(s), WINDOWSTART, WINDOWEND, ROWTIME
			"[a 1 1 1 1 <nil> 0 10 3]",
			"[a 2 2 6 2 <nil> 5 15 12]",
			"[a 2 2 10 2 <nil> 10 20 16]",
			"[a 1 1 8 8 <nil> 15 25 16]",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sliced=%v (-want +got):\n%s", sliced, diff)
		}
	}
}
