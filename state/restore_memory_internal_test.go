package state

import "testing"

// TestDefaultRestoreMemory sizes the cold-restore budget from the
// memory the process may use, within its bounds.
func TestDefaultRestoreMemory(t *testing.T) {
	got := defaultRestoreMemory()
	if got < minDefaultRestoreMemory || got > maxDefaultRestoreMemory {
		t.Fatalf("defaultRestoreMemory() = %d, want within [%d, %d]", got, minDefaultRestoreMemory, maxDefaultRestoreMemory)
	}
	if avail := availableMemory(); avail > 0 {
		want := min(max(avail/8, minDefaultRestoreMemory), maxDefaultRestoreMemory)
		if got != want {
			t.Errorf("defaultRestoreMemory() = %d with %d bytes available, want %d", got, avail, want)
		}
	}
}
