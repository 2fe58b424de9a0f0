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
		txnTimeout            time.Duration // 0: DefaultTransactionTimeout
	}{
		{"behind, fast commits: the interval", 100 * ms, 100 * ms, 10 * ms, true, false, true, 0},
		{"behind, fast commits: not before the interval", 99 * ms, 100 * ms, 10 * ms, true, false, false, 0},
		{"behind, a 100 ms commit: not at the interval", 150 * ms, 100 * ms, 100 * ms, true, false, false, 0},
		{"behind, a 100 ms commit: three times its duration", 300 * ms, 100 * ms, 100 * ms, true, false, true, 0},
		{"behind, at-least-once stretches the same way", 1500 * ms, time.Second, 600 * ms, false, false, false, 0},
		{"behind, at-least-once after three commit durations", 1800 * ms, time.Second, 600 * ms, false, false, true, 0},
		{"behind, a stuck commit stretches at most four intervals", 400 * ms, 100 * ms, 5 * time.Second, true, false, true, 0},
		{"behind, a stuck commit: not before four intervals", 399 * ms, 100 * ms, 5 * time.Second, true, false, false, 0},
		{"behind, stretched at most to a quarter of the transaction timeout", DefaultTransactionTimeout / 4, 2 * time.Second, 2 * time.Second, true, false, true, 0},
		{"behind, not before a quarter of the transaction timeout", DefaultTransactionTimeout/4 - ms, 2 * time.Second, 2 * time.Second, true, false, false, 0},
		{"behind, a 4 s transaction timeout (transaction.timeout.ms): a quarter of it", time.Second, 400 * ms, time.Second, true, false, true, 4 * time.Second},
		{"behind, a 4 s transaction timeout: not before a quarter of it", time.Second - ms, 400 * ms, time.Second, true, false, false, 4 * time.Second},
		{"behind, a longer interval set is not shortened", 5 * time.Second, 5 * time.Second, 5 * time.Second, true, false, true, 0},
		{"behind, nor a longer interval's commit made early", 5*time.Second - ms, 5 * time.Second, 5 * time.Second, true, false, false, 0},
		{"caught up in a transaction: a quarter interval", 25 * ms, 100 * ms, 100 * ms, true, true, true, 0},
		{"caught up in a transaction: not before", 24 * ms, 100 * ms, 100 * ms, true, true, false, 0},
		{"caught up, no transaction: the interval", 999 * ms, time.Second, 600 * ms, false, true, false, 0},
		{"caught up, no transaction: at the interval", time.Second, time.Second, 600 * ms, false, true, true, 0},
	} {
		txn := c.txnTimeout
		if txn == 0 {
			txn = DefaultTransactionTimeout
		}
		if got := commitDue(c.since, c.interval, txn, c.took, c.holding, c.caughtUp); got != c.want {
			t.Errorf("%s: commitDue(%v, %v, %v, holding %v, caught up %v) = %v, want %v",
				c.name, c.since, c.interval, c.took, c.holding, c.caughtUp, got, c.want)
		}
	}
}
