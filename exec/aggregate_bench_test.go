package exec

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// BenchmarkAggregateUpdate folds rows of one key into COUNT(*) and
// SUM(PRICE) through the aggregate operator and its state store overlay:
// the per-record cost of a stateful query without decoding or Kafka.
func BenchmarkAggregateUpdate(b *testing.B) {
	db := openState(b, "")
	defer db.Close()
	count, sum := countAndSum(b, types.DoubleType)
	node := &AggregateNode{
		Store: "bench", KeyCols: []int{0}, KeyNames: []string{"HOTEL"},
		Aggs: []AggCall{
			{Agg: count, Text: "COUNT(*)"},
			{Agg: sum, Args: []expr.Eval{func(row []any) any { return row[1] }}, Text: "SUM(PRICE)"},
		},
	}
	var emitted int
	var last *Row
	sinkOp := &countingOp{fn: func(r *Row) { emitted++; last = r }}
	op, err := node.New(sinkOp)
	if err != nil {
		b.Fatal(err)
	}
	tc := &TaskContext{QueryID: "bench", Metrics: &Metrics{}, Log: slog.Default(),
		stores: map[string]*state.Store{"bench": db.Store("bench", 0)}}
	if err := op.Open(tc); err != nil {
		b.Fatal(err)
	}
	row := &Row{Cols: []any{"ritz", 2.0}, Ts: 1}
	b.ReportAllocs()
	for b.Loop() {
		if err := op.Process(tc, row); err != nil {
			b.Fatal(err)
		}
	}
	if emitted == 0 || last.Cols[1] != int64(emitted) || last.Cols[2] != 2.0*float64(emitted) {
		b.Fatalf("after %d updates the result is %v", emitted, last.Cols)
	}
}

// BenchmarkAggregateWindowedCommit is the Nexmark aggregation's state
// path: COUNT(*) and SUM(PRICE) per auction in 10 s tumbling windows,
// 2,000 auctions bid on in turn, event time 1 ms a record, the store's
// writes taken (Pending, as the changelog does) and committed every
// 5,000 records, as a commit interval would.
func BenchmarkAggregateWindowedCommit(b *testing.B) {
	eachEmitMode(b, benchWindowedCommit)
}

func benchWindowedCommit(b *testing.B, final bool) {
	benchWindowed(b, WindowSpec{Kind: Tumbling, Size: 10_000}, final, false, nil)
}

// BenchmarkAggregateHoppingFinal folds bids of 2,000 auctions, one a
// millisecond, into 10 s windows sliding by 2 s under EMIT FINAL (q5's
// counts), keeping windows or slices of the advance, the results going to
// a borrower (as a projection): a record is five windows' updates or one
// slice's, and changelog/op counts the state entries each commit writes.
func BenchmarkAggregateHoppingFinal(b *testing.B) {
	for _, sliced := range []bool{false, true} {
		name := "windows"
		if sliced {
			name = "sliced"
		}
		b.Run(name, func(b *testing.B) {
			benchWindowed(b, WindowSpec{Kind: Hopping, Size: 10_000, Advance: 2_000}, true, sliced, &borrowingOp{})
		})
	}
}

// benchWindowed runs COUNT(*) and SUM over bids of 2,000 auctions, one a
// millisecond, through an aggregation over windows w, committing every
// 5,000 records, into sink (nil: one that keeps rows) and reports the
// state entries each record writes (changelog/op) and the results it
// emits (results/op).
func benchWindowed(b *testing.B, w WindowSpec, final, sliced bool, sink *borrowingOp) {
	db := openState(b, "")
	defer db.Close()
	count, sum := countAndSum(b, types.BigIntType)
	node := &AggregateNode{
		Store: "bench", KeyCols: []int{0}, KeyNames: []string{"AUCTION"},
		Aggs: []AggCall{
			{Agg: count, Text: "COUNT(*)"},
			{Agg: sum, Args: []expr.Eval{func(row []any) any { return row[1] }}, Text: "SUM(PRICE)"},
		},
		Window:    &w,
		EmitFinal: final, Sliced: sliced,
	}
	var emitted int
	var next Operator = &countingOp{fn: func(*Row) { emitted++ }}
	if sink != nil {
		sink.fn = func(*Row) { emitted++ }
		next = sink
	}
	op, store, tc := openBenchOp(b, db, node, next)
	const auctions = 2000
	keys := make([]any, auctions)
	for i := range keys {
		keys[i] = int64(1000 + i)
	}
	row := &Row{Cols: []any{nil, int64(0)}}
	changelog, n := 0, int64(0)
	b.ReportAllocs()
	for b.Loop() {
		n++
		row.Cols[0], row.Cols[1], row.Ts = keys[n%auctions], n%997, n
		tc.StreamTime = n
		if err := op.Process(tc, row); err != nil {
			b.Fatal(err)
		}
		if err := op.AdvanceTime(tc); err != nil {
			b.Fatal(err)
		}
		if n%5000 == 0 {
			changelog += len(store.Pending())
			if err := store.Commit(state.Checkpoint{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	if final && n > 20_000 && emitted == 0 || !final && emitted != int(n) {
		b.Fatalf("%d records gave %d results", n, emitted)
	}
	b.ReportMetric(float64(changelog)/float64(n), "changelog/op")
	b.ReportMetric(float64(emitted)/float64(n), "results/op")
}

type countingOp struct{ fn func(*Row) }

func (c *countingOp) Open(*TaskContext) error        { return nil }
func (c *countingOp) AdvanceTime(*TaskContext) error { return nil }
func (c *countingOp) Close() error                   { return nil }
func (c *countingOp) Process(_ *TaskContext, r *Row) error {
	c.fn(r)
	return nil
}

// BenchmarkAggregateCountDistinct is q16's state path: COUNT(*) and
// COUNT_DISTINCT of bidders and of auctions per channel, half the bids on
// four hot channels (sets of thousands), half on 10,000 others (a few
// each), committing every 5,000 records, the changelog taking each
// commit's writes (Pending). changelog/op counts the state entries each
// record writes. With 10,000 groups in one partition the default cache
// of decoded state (1 MiB) holds a third of them.
func BenchmarkAggregateCountDistinct(b *testing.B) {
	db := openState(b, b.TempDir())
	defer db.Close()
	count, _ := countAndSum(b, types.BigIntType)
	distinct, err := expr.BindAggregate("COUNT_DISTINCT", []types.Type{types.BigIntType}, false)
	if err != nil {
		b.Fatal(err)
	}
	node := &AggregateNode{
		Store: "bench", KeyCols: []int{0}, KeyNames: []string{"CHANNEL"},
		Aggs: []AggCall{
			{Agg: count, Text: "COUNT(*)"},
			{Agg: distinct, Args: []expr.Eval{func(row []any) any { return row[1] }}, Text: "COUNT_DISTINCT(BIDDER)"},
			{Agg: distinct, Args: []expr.Eval{func(row []any) any { return row[2] }}, Text: "COUNT_DISTINCT(AUCTION)"},
		},
	}
	var emitted int
	op, store, tc := openBenchOp(b, db, node, &borrowingOp{countingOp: countingOp{fn: func(*Row) { emitted++ }}})
	channels := make([]any, 10_004)
	for i := range channels {
		channels[i] = fmt.Sprintf("channel-%d", i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	row := &Row{Cols: []any{nil, int64(0), int64(0)}}
	changelog, n := 0, int64(0)
	b.ReportAllocs()
	for b.Loop() {
		n++
		ch := 10_000 + rng.IntN(4)
		if n%2 == 0 {
			ch = rng.IntN(10_000)
		}
		row.Cols[0], row.Cols[1], row.Cols[2], row.Ts = channels[ch], int64(rng.IntN(4_000)), int64(rng.IntN(13_000)), n
		tc.StreamTime = n
		if err := op.Process(tc, row); err != nil {
			b.Fatal(err)
		}
		if n%5000 == 0 {
			changelog += len(store.Pending())
			if err := store.Commit(state.Checkpoint{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	if emitted != int(n) {
		b.Fatalf("%d records gave %d results", n, emitted)
	}
	b.ReportMetric(float64(changelog)/float64(n), "changelog/op")
}

// openBenchOp opens node's operator, feeding next, on store partition 0
// of "bench" in db: the operator, its store and its task context.
func openBenchOp(b *testing.B, db *state.DB, node interface {
	New(Operator) (Operator, error)
}, next Operator) (Operator, *state.Store, *TaskContext) {
	b.Helper()
	op, err := node.New(next)
	if err != nil {
		b.Fatal(err)
	}
	store := db.Store("bench", 0)
	tc := &TaskContext{QueryID: "bench", Metrics: &Metrics{}, Log: slog.Default(),
		stores: map[string]*state.Store{"bench": store}}
	if err := op.Open(tc); err != nil {
		b.Fatal(err)
	}
	return op, store, tc
}
