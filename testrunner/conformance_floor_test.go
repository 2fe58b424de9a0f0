package testrunner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/testudf"
)

// conformanceFloor reads how many of ksqlDB's conformance cases pass
// today, from scripts/conformance.floor (which scripts/conformance checks
// too). It only goes up: raise it when a change makes more cases pass.
func conformanceFloor(t *testing.T) int {
	b, err := os.ReadFile(filepath.Join("..", "scripts", "conformance.floor"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("scripts/conformance.floor: %v", err)
	}
	return n
}

// TestConformanceFloor runs every case of ../shared/conformance/ksqldb
// and fails if fewer pass than the floor, so no change can quietly break
// ksqlDB behaviour that already worked.
func TestConformanceFloor(t *testing.T) {
	dir := conformanceDir(t)
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no conformance files in %s: %v", dir, err)
	}
	floor := conformanceFloor(t)
	// ksqlDB runs its cases with its test-only functions on the
	// classpath; Sluice loads them as a --udf-dir.
	udfDir := t.TempDir()
	testudf.KsqlFunctionsDir(t, udfDir)
	UDFDir = udfDir
	defer func() { UDFDir = "" }()
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
	if passed < floor {
		t.Errorf("%d conformance cases pass, fewer than the floor of %d (scripts/conformance.floor)", passed, floor)
	}
	if passed > floor {
		t.Logf("%d conformance cases pass: raise scripts/conformance.floor from %d", passed, floor)
	}
}
