package exec

import (
	"io"
	"log/slog"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// BenchmarkAggregateUpdate folds rows of one key into COUNT(*) and
// SUM(PRICE) through the aggregate operator and its state store overlay:
// the per-record cost of a stateful query without decoding or Kafka.
func BenchmarkAggregateUpdate(b *testing.B) {
	db, err := state.Open(state.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	count, err := expr.BindAggregate("COUNT", nil, true)
	if err != nil {
		b.Fatal(err)
	}
	sum, err := expr.BindAggregate("SUM", []types.Type{types.DoubleType}, false)
	if err != nil {
		b.Fatal(err)
	}
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

type countingOp struct{ fn func(*Row) }

func (c *countingOp) Open(*TaskContext) error        { return nil }
func (c *countingOp) AdvanceTime(*TaskContext) error { return nil }
func (c *countingOp) Close() error                   { return nil }
func (c *countingOp) Process(_ *TaskContext, r *Row) error {
	c.fn(r)
	return nil
}
