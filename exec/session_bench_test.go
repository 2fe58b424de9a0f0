package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sluice-sql/sluice/state"

	"github.com/sluice-sql/sluice/types"
)

// BenchmarkSessionAggregate counts rows into session windows (2 s gap, 2 s
// grace) through the session operator and a real Badger store committed
// every 1,000 rows, as a task commits: 1,000 keys drawn at random, event
// time 1 ms per row, so a key's next row comes about a second later and
// most rows extend a session while some start one and others close it.
// Before each row's cost counts, the output is checked against a model
// of the sessions kept apart from the operator.
func BenchmarkSessionAggregate(b *testing.B) {
	eachEmitMode(b, benchSessions)
}

func benchSessions(b *testing.B, final bool) {
	const (
		keys        = 1000
		gap, grace  = 2000, 2000
		commitEvery = 1000
	)
	db := openState(b, b.TempDir())
	defer db.Close()
	count, _ := countAndSum(b, types.BigIntType)
	node := &AggregateNode{
		Store: "bench", KeyCols: []int{0}, KeyNames: []string{"BIDDER"},
		Aggs:      []AggCall{{Agg: count, Text: "COUNT(*)"}},
		Window:    &WindowSpec{Kind: Session, Size: gap, Grace: grace},
		EmitFinal: final,
	}
	var updates, tombstones, finals int64
	op, store, tc := openBenchOp(b, db, node, &countingOp{fn: func(r *Row) {
		switch {
		case r.Tombstone:
			tombstones++
		case final:
			finals++
		default:
			updates++
		}
	}})
	names := make([]string, keys)
	for i := range names {
		names[i] = fmt.Sprintf("bidder-%d", i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// The model: per key the end of its open session. Event time only
	// grows, so no row is late and a row within the gap of its key's
	// last one extends that session (a tombstone for the old bounds).
	last := map[int]int64{}
	var wantTombstones, wantFinals int64
	row := &Row{Cols: []any{nil}}
	var ts int64 = 1_000_000
	b.ReportAllocs()
	for b.Loop() {
		k := rng.IntN(keys)
		ts++
		if end, ok := last[k]; ok && ts-end <= gap {
			wantTombstones++
		}
		last[k] = ts
		row.Cols[0], row.Ts = names[k], ts
		tc.StreamTime = ts
		if err := op.Process(tc, row); err != nil {
			b.Fatal(err)
		}
		if err := op.AdvanceTime(tc); err != nil {
			b.Fatal(err)
		}
		if ts%commitEvery == 0 {
			store.Pending() // the changelog's read of the writes, as in a task
			if err := store.Commit(state.Checkpoint{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	n := ts - 1_000_000
	if final {
		// Every session whose end + gap + grace has passed was emitted
		// once; count them by replaying the keys' row times.
		wantFinals = countClosedSessions(n, keys, gap, ts-gap-grace)
		if finals != wantFinals || tombstones != 0 {
			b.Fatalf("after %d rows: %d final sessions and %d tombstones, want %d and 0", n, finals, tombstones, wantFinals)
		}
		return
	}
	if updates != n || tombstones != wantTombstones {
		b.Fatalf("after %d rows: %d updates and %d tombstones, want %d and %d", n, updates, tombstones, n, wantTombstones)
	}
}

// countClosedSessions replays the benchmark's draw of n rows over keys
// and counts the sessions (gap apart) that end at or before closedBy.
func countClosedSessions(n int64, keys int, gap, closedBy int64) int64 {
	rng := rand.New(rand.NewPCG(1, 2))
	last := map[int]int64{}
	var closed int64
	ts := int64(1_000_000)
	for range n {
		k := rng.IntN(keys)
		ts++
		if end, ok := last[k]; ok && ts-end > gap && end <= closedBy {
			closed++
		}
		last[k] = ts
	}
	for _, end := range last {
		if end <= closedBy {
			closed++
		}
	}
	return closed
}
