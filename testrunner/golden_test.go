package testrunner

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGolden runs our own query-validation files in testdata: every case
// must pass, none may be skipped, and every positive case must also pass
// when its queries restart halfway, on local state and on state rebuilt
// from the changelog. Their expected outputs were computed by
// hand from the semantics in each file's comments, not recorded from the
// engine.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no golden files in testdata")
	}
	for _, path := range paths {
		f, err := LoadQTT(path)
		if err != nil {
			t.Fatalf("LoadQTT: %v", err)
		}
		if len(f.Cases) == 0 {
			t.Errorf("%s: no cases", path)
		}
		file := filepath.Base(path)
		for i := range f.Cases {
			c := &f.Cases[i]
			t.Run(strings.TrimSuffix(file, ".json")+"/"+c.Name, func(t *testing.T) {
				if c.ExpectedError == nil && len(c.Outputs) == 0 {
					t.Fatal("a positive golden case must expect output records, or it cannot fail")
				}
				r := RunCase(file, c)
				if r.Status != Passed {
					t.Fatalf("%s\n%s", r.Status, report(r))
				}
				if c.ExpectedError != nil {
					return
				}
				for _, mode := range []Restart{RestartLocal, RestartWiped} {
					if r := RunCaseWith(file, c, mode); r.Status != Passed {
						t.Errorf("%s\n%s", r.Status, report(r))
					}
				}
				// The same case with its last expected record removed must
				// fail: proof that the comparison saw the engine's output.
				short := *c
				short.Outputs = c.Outputs[:len(c.Outputs)-1]
				if r := RunCase(file, &short); r.Status != Failed {
					t.Errorf("with the last expected record removed the case still gives %s", r.Status)
				}
			})
		}
	}
}

// report prints a result's reason and differences as WriteReport would.
func report(r Result) string {
	var b strings.Builder
	WriteReport(&b, []Result{r})
	return b.String()
}
