package exec_test

import (
	"fmt"
	"testing"

	"github.com/sluice-sql/sluice/exec"
)

// windowKeys counts the windows a windowed count's store holds.
func windowKeys(t testing.TB, m *exec.MemoryRunner) int {
	t.Helper()
	n := 0
	if err := m.DB.Store("CTAS_W-Aggregate-Materialize", 0).Range(nil, func(_, _ []byte) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}

// Windows past retention leave the store without changelog tombstones
// (the windowed changelog is compact,delete and ages them out). A restore
// from the changelog brings them back; the task drops them again as it
// opens, and a record for one of them is late, as before the restart.
func TestExpiredWindowsWriteNoTombstones(t *testing.T) {
	for _, wipe := range []bool{false, true} {
		t.Run(fmt.Sprintf("wipe=%v", wipe), func(t *testing.T) {
			m := exec.NewMemoryRunner(openDB(t), quiet)
			if err := m.Add(windowedCountTopology(t, false)); err != nil {
				t.Fatal(err)
			}
			// Size 10s, grace 2s: a window is kept until stream time
			// reaches its end + 12s.
			runScript(t, m, []booking{
				{"ritz", 10, 1_000, []out{hotelOut("ritz", 0, 1, "10.0", 1_000)}},
				{"savoy", 7, 5_000, []out{hotelOut("savoy", 0, 1, "7.0", 5_000)}},
				{"ritz", 5, 11_000, []out{hotelOut("ritz", 10_000, 1, "5.0", 11_000)}},
				// Cutoff 13000: both windows at 0 expire.
				{"ritz", 1, 25_000, []out{hotelOut("ritz", 20_000, 1, "1.0", 25_000)}},
			}, -1, false)
			if got := m.Metrics("CTAS_W").Expired.Load(); got != 2 {
				t.Errorf("Expired = %d, want 2", got)
			}
			for _, c := range exec.ChangelogRecords(m, "CTAS_W-changelog") {
				if c.Delete {
					t.Errorf("changelog holds a tombstone for %x", c.Key)
				}
			}
			if got := windowKeys(t, m); got != 2 {
				t.Errorf("store holds %d windows after expiry, want 2", got)
			}
			if err := m.Restart(wipe); err != nil {
				t.Fatal(err)
			}
			// From the changelog the two expired windows come back, and
			// the task drops them as it opens (stream time is in the
			// checkpoint): counted as expired again.
			if got := windowKeys(t, m); got != 2 {
				t.Errorf("store holds %d windows after the restart, want 2", got)
			}
			expired := int64(2)
			if wipe {
				expired = 4
			}
			if got := m.Metrics("CTAS_W").Expired.Load(); got != expired {
				t.Errorf("Expired after the restart = %d, want %d", got, expired)
			}
			runScript(t, m, []booking{
				{"savoy", 2, 25_001, []out{hotelOut("savoy", 20_000, 1, "2.0", 25_001)}},
				{"ritz", 50, 9_000, nil}, // window 0: too late, not revived
			}, -1, false)
			if got := windowKeys(t, m); got != 3 {
				t.Errorf("store holds %d windows after the first record, want 3", got)
			}
			if got := m.Metrics("CTAS_W").LateDropped.Load(); got != 1 {
				t.Errorf("LateDropped = %d, want 1", got)
			}
		})
	}
}
