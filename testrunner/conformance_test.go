package testrunner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// conformanceDir finds shared/conformance/ksqldb next to the repository
// root (the directory holding go.mod).
func conformanceDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
	return filepath.Join(dir, "..", "shared", "conformance", "ksqldb")
}

// TestLoadConformanceFiles loads the first 25 upstream QTT files (the
// set the conformance work started from; the files added to the folder
// later are counted by scripts/conformance, docs/conformance.md). The
// expected numbers were checked against the README's table: the runnable
// count of every file is its "Runnable with JSON/DELIMITED/KAFKA" column
// (610 in all) plus its AVRO cases (93: 55 format variants and 38 cases
// whose statements name AVRO), and 833 = 691 upstream cases + 142 extra
// format variants.
func TestLoadConformanceFiles(t *testing.T) {
	var paths []string
	for name := range firstConformanceFiles {
		paths = append(paths, filepath.Join(conformanceDir(t), name))
	}
	runnable := map[string]int{}
	reasons := map[string]int{}
	var cases, negative int
	for _, p := range paths {
		f, err := LoadQTT(p)
		if err != nil {
			t.Fatalf("LoadQTT: %v", err)
		}
		name := filepath.Base(p)
		runnable[name] += 0
		for _, c := range f.Cases {
			cases++
			if c.Skip != "" {
				reasons[c.Skip]++
				continue
			}
			runnable[name]++
			if c.ExpectedError != nil {
				negative++
			}
			if len(c.Statements) == 0 {
				t.Errorf("%s: %s: no statements", name, c.Name)
			}
			for _, s := range c.Statements {
				if strings.Contains(s, "{FORMAT}") {
					t.Errorf("%s: %s: unexpanded {FORMAT}", name, c.Name)
				}
			}
			for _, r := range c.Inputs {
				if r.Timestamp == nil {
					t.Errorf("%s: %s: input without timestamp", name, c.Name)
				}
			}
			for _, r := range append(c.Inputs, c.Outputs...) {
				if r.Window != nil && r.Window.Type != "time" && r.Window.Type != "session" {
					t.Errorf("%s: %s: window type %q", name, c.Name, r.Window.Type)
				}
			}
		}
	}
	if cases != 833 {
		t.Errorf("cases after expansion = %d, want 833", cases)
	}
	if negative != 133 {
		t.Errorf("runnable negative cases = %d, want 133", negative)
	}
	wantRunnable := firstConformanceFiles
	if diff := cmp.Diff(wantRunnable, runnable); diff != "" {
		t.Errorf("runnable cases per file (-want +got):\n%s", diff)
	}
	wantReasons := map[string]int{
		"disabled upstream (enabled: false)": 1,
	}
	if diff := cmp.Diff(wantReasons, reasons); diff != "" {
		t.Errorf("skip reasons (-want +got):\n%s", diff)
	}
}

// firstConformanceFiles are the first 25 files and their runnable cases.
var firstConformanceFiles = map[string]int{
	"average-udaf.json": 5, "case-expression.json": 11, "cast.json": 29, "collect-list.json": 68,
	"concat.json": 7, "count-distinct.json": 1, "count.json": 7, "fk-join.json": 32,
	"group-by.json": 158, "having.json": 2, "hopping-windows.json": 9, "insert-into.json": 22,
	"joins.json": 216, "latest-offset-udaf.json": 23, "operators.json": 14, "partition-by.json": 85,
	"project-filter.json": 32, "session-windows.json": 6, "substring.json": 9, "sum.json": 15,
	"suppress.json": 18, "timestamp-extractor.json": 9, "topk-group-by.json": 34,
	"tumbling-windows.json": 7, "window-bounds.json": 13,
}
