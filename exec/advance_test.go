package exec_test

import (
	"testing"

	"github.com/sluice-sql/sluice/exec"
)

// Windows that EMIT FINAL closes during AdvanceAll reach Produced(), and
// a later Send does not lose them.
func TestAdvanceAllDeliversOutput(t *testing.T) {
	m := exec.NewMemoryRunner(openDB(t), quiet)
	if err := m.Add(windowedCountTopology(t, true)); err != nil {
		t.Fatal(err)
	}
	send(t, m, "bookings", "ritz", `{"PRICE":1}`, 1_000)
	if _, err := m.AdvanceAll(12_000); err != nil {
		t.Fatal(err)
	}
	send(t, m, "bookings", "ritz", `{"PRICE":1}`, 13_000)
	if got := len(m.Produced()); got != 1 {
		t.Errorf("Produced() has %d records after window 0 closed via AdvanceAll, want 1", got)
	}
}
