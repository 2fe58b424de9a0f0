package testrunner

import (
	"path/filepath"
	"testing"
)

// conformanceFloor is how many of ksqlDB's conformance cases pass today.
// It only goes up: raise it when a change makes more cases pass.
const conformanceFloor = 508

// TestConformanceFloor runs every case of ../shared/conformance/ksqldb
// and fails if fewer pass than the floor, so no change can quietly break
// ksqlDB behaviour that already worked.
func TestConformanceFloor(t *testing.T) {
	dir := conformanceDir(t)
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no conformance files in %s: %v", dir, err)
	}
	passed := 0
	for _, path := range paths {
		f, err := LoadQTT(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range f.Cases {
			if RunCase(filepath.Base(path), &f.Cases[i]).Status == Passed {
				passed++
			}
		}
	}
	if passed < conformanceFloor {
		t.Errorf("%d conformance cases pass, fewer than the floor of %d", passed, conformanceFloor)
	}
	if passed > conformanceFloor {
		t.Logf("%d conformance cases pass: raise conformanceFloor from %d", passed, conformanceFloor)
	}
}
