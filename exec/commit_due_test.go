package exec

import (
	"testing"
	"time"
)

// TestCommitDue checks when the loop commits: a query behind its input
// processes at least commitWorkShare times as long as its last commit
// took (so commits hold the loop at most a quarter of the time), never
// stretching the interval past commitStretchMax intervals or a quarter of
// the transaction timeout; a query that has caught
// up commits at the interval, early under a transaction.
func TestCommitDue(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name                  string
		since, interval, took time.Duration
		holding, caughtUp     bool
		want                  bool
	}{
		{"behind, fast commits: the interval", 100 * ms, 100 * ms, 10 * ms, true, false, true},
		{"behind, fast commits: not before the interval", 99 * ms, 100 * ms, 10 * ms, true, false, false},
		{"behind, a 100 ms commit: not at the interval", 150 * ms, 100 * ms, 100 * ms, true, false, false},
		{"behind, a 100 ms commit: three times its duration", 300 * ms, 100 * ms, 100 * ms, true, false, true},
		{"behind, at-least-once stretches the same way", 1500 * ms, time.Second, 600 * ms, false, false, false},
		{"behind, at-least-once after three commit durations", 1800 * ms, time.Second, 600 * ms, false, false, true},
		{"behind, a stuck commit stretches at most four intervals", 400 * ms, 100 * ms, 5 * time.Second, true, false, true},
		{"behind, a stuck commit: not before four intervals", 399 * ms, 100 * ms, 5 * time.Second, true, false, false},
		{"behind, stretched at most to a quarter of the transaction timeout", transactionTimeout / 4, 2 * time.Second, 2 * time.Second, true, false, true},
		{"behind, not before a quarter of the transaction timeout", transactionTimeout/4 - ms, 2 * time.Second, 2 * time.Second, true, false, false},
		{"behind, a longer interval set is not shortened", 5 * time.Second, 5 * time.Second, 5 * time.Second, true, false, true},
		{"behind, nor a longer interval's commit made early", 5*time.Second - ms, 5 * time.Second, 5 * time.Second, true, false, false},
		{"caught up in a transaction: a quarter interval", 25 * ms, 100 * ms, 100 * ms, true, true, true},
		{"caught up in a transaction: not before", 24 * ms, 100 * ms, 100 * ms, true, true, false},
		{"caught up, no transaction: the interval", 999 * ms, time.Second, 600 * ms, false, true, false},
		{"caught up, no transaction: at the interval", time.Second, time.Second, 600 * ms, false, true, true},
	} {
		if got := commitDue(c.since, c.interval, c.took, c.holding, c.caughtUp); got != c.want {
			t.Errorf("%s: commitDue(%v, %v, %v, holding %v, caught up %v) = %v, want %v",
				c.name, c.since, c.interval, c.took, c.holding, c.caughtUp, got, c.want)
		}
	}
}
