package exec

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/state"
)

// BenchmarkJoin runs the join operator on its store, in process: auction
// and bid rows as in Nexmark (one auction, then nine bids of it), every
// bid matching its auction, the stores committed every 1,000 records.
// stream-stream is q20's shape (INNER JOIN WITHIN 1 s), stream-table
// S-join's (bids LEFT JOIN a table of auctions). The joined rows are
// counted and checked; "-borrowed" hands them to an operator that
// borrows rows (a projection, a sink), as in a query.
func BenchmarkJoin(b *testing.B) {
	for _, name := range []string{"stream-stream", "stream-table", "stream-stream-borrowed", "stream-table-borrowed"} {
		kind, borrowed := strings.CutSuffix(name, "-borrowed")
		b.Run(name, func(b *testing.B) {
			node := &JoinNode{
				Type:  InnerJoin,
				Left:  JoinSide{Name: "bids", Width: 3, Store: "bids"},
				Right: JoinSide{Name: "auctions", Width: 3, Store: "auctions"},
				After: 1000, Before: 1000,
			}
			if kind == "stream-table" {
				node.Type = LeftJoin
				node.Left.Store = ""
				node.Right.Table = true
			}
			db := openState(b, b.TempDir())
			defer func() { _ = db.Close() }()
			tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{}}
			for _, name := range node.StoreNames() {
				tc.stores[name] = db.Store(name, 0)
			}
			var joined int
			sink := &countingOp{fn: func(r *Row) {
				if r.Cols[0] != r.Cols[3] {
					b.Fatalf("bid of %v joined auction %v", r.Cols[0], r.Cols[3])
				}
				joined++
			}}
			var next Operator = sink
			if borrowed {
				next = &borrowingOp{countingOp: *sink}
			}
			o, err := node.New(next)
			if err != nil {
				b.Fatal(err)
			}
			op := o.(SideOperator)
			if err := op.Open(tc); err != nil {
				b.Fatal(err)
			}
			tc.StreamTime = -1 << 63
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				ts := int64(i)
				id := int64(i / 10)
				side, row := 0, &Row{Cols: []any{id, int64(i), "bidder"}, Ts: ts}
				if i%10 == 0 {
					side, row = 1, &Row{Cols: []any{id, "item", "seller"}, Ts: ts}
				}
				tc.StreamTime = max(tc.StreamTime, ts)
				if err := op.ProcessSide(tc, side, row); err != nil {
					b.Fatal(err)
				}
				if err := op.AdvanceTime(tc); err != nil {
					b.Fatal(err)
				}
				if i%1000 == 999 {
					for _, name := range node.StoreNames() {
						if err := tc.stores[name].Commit(state.Checkpoint{}); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.StopTimer()
			if want := b.N - (b.N+9)/10; joined != want {
				b.Fatalf("%d rows joined, want %d", joined, want)
			}
			b.ReportMetric(float64(joined), "joined")
		})
	}
}
