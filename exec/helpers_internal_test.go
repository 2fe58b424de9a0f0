package exec

import (
	"io"
	"log/slog"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// quietLog discards the state package's logging in tests.
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// openState opens a state DB in dir ("" for one in memory) for a test,
// which closes (and may reopen) it itself.
func openState(tb testing.TB, dir string) *state.DB {
	tb.Helper()
	db, err := state.Open(state.Options{Dir: dir, Logger: quietLog})
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// countAndSum binds COUNT(*) and SUM over a column of type sumType.
func countAndSum(tb testing.TB, sumType types.Type) (count, sum *expr.Aggregate) {
	tb.Helper()
	count, err := expr.BindAggregate("COUNT", nil, true)
	if err != nil {
		tb.Fatal(err)
	}
	if sum, err = expr.BindAggregate("SUM", []types.Type{sumType}, false); err != nil {
		tb.Fatal(err)
	}
	return count, sum
}

// eachEmitMode runs bench under EMIT CHANGES ("changes") and EMIT FINAL
// ("final").
func eachEmitMode(b *testing.B, bench func(b *testing.B, final bool)) {
	for _, final := range []bool{false, true} {
		name := "changes"
		if final {
			name = "final"
		}
		b.Run(name, func(b *testing.B) { bench(b, final) })
	}
}
