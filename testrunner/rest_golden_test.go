package testrunner

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRESTGolden runs our own REST query-validation files in
// testdata/rest against a real server (embedded broker, Badger): every
// case must pass, a case with one expected row fewer must fail, and so
// must one with its last expected record changed: proof that
// the comparison saw the server's answers and records.
func TestRESTGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "rest", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no REST golden files: %v", err)
	}
	for _, path := range paths {
		f, err := LoadREST(path)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Base(path)
		for i := range f.Cases {
			c := &f.Cases[i]
			t.Run(strings.TrimSuffix(file, ".json")+"/"+c.Name, func(t *testing.T) {
				t.Parallel()
				if r := RunREST(file, c); r.Status != Passed {
					t.Fatalf("%s\n%s", r.Status, report(r))
				}
				if c.ExpectedError != nil {
					wrong := *c
					wrong.ExpectedError = &RESTError{Message: c.ExpectedError.Message + " (not this)"}
					if r := RunREST(file, &wrong); r.Status != Failed {
						t.Errorf("with a different expected error the case still gives %s", r.Status)
					}
					return
				}
				short := *c
				if len(c.Outputs) > 0 {
					short.Outputs = append([]Record{}, c.Outputs...)
					short.Outputs[len(c.Outputs)-1].Value = "not this"
					if r := RunREST(file, &short); r.Status != Failed {
						t.Errorf("with the last expected record changed the case still gives %s", r.Status)
					}
					short = *c
				}
				last := len(c.Responses) - 1
				short.Responses = append(append([]map[string]any{}, c.Responses[:last]...), map[string]any{"query": dropLastRow(c.Responses[last]["query"])})
				if r := RunREST(file, &short); r.Status != Failed {
					t.Errorf("with the last expected row removed the case still gives %s", r.Status)
				}
			})
		}
	}
}

func dropLastRow(q any) any {
	rows, _ := q.([]any)
	if len(rows) == 0 {
		return rows
	}
	return rows[:len(rows)-1]
}
