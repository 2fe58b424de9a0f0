package parser

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that no input panics, and that whatever parses prints
// back to text that parses to the same tree (ignoring positions).
func FuzzParse(f *testing.F) {
	for _, tc := range roundTripCases {
		f.Add(tc.in)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		// Each datadriven input block sits between a command line and "----".
		for _, block := range strings.Split(string(data), "\n\n") {
			lines := strings.Split(strings.TrimSpace(block), "\n")
			var in []string
			for _, l := range lines[min(1, len(lines)):] {
				if l == "----" {
					break
				}
				in = append(in, l)
			}
			if len(in) > 0 {
				f.Add(strings.Join(in, "\n"))
			}
		}
	}
	// The example queries, and every statement of ksqlDB's conformance
	// files when the shared folder is beside the repository.
	sqls, _ := filepath.Glob(filepath.Join("..", "queries", "*.sql"))
	for _, file := range sqls {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(string(data))
		}
	}
	qtts, _ := filepath.Glob(filepath.Join("..", "..", "shared", "conformance", "ksqldb", "*.json"))
	for _, file := range qtts {
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		var qtt struct {
			Tests []struct{ Statements []string } `json:"tests"`
		}
		if json.Unmarshal(data, &qtt) != nil {
			continue
		}
		for _, tc := range qtt.Tests {
			for _, st := range tc.Statements {
				f.Add(st)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := Parse(src)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			return
		}
		for _, st := range stmts {
			printed := st.String()
			again, err := ParseOne(printed)
			if err != nil {
				t.Fatalf("%q printed as %q, which does not parse: %v", src, printed, err)
			}
			if d := astDiff(st, again); d != "" {
				t.Fatalf("%q printed as %q parses to a different tree:\n%s", src, printed, d)
			}
		}
		if x, err := ParseExpr(src); err == nil {
			again, err := ParseExpr(x.String())
			if err != nil {
				t.Fatalf("expr %q printed as %q, which does not parse: %v", src, x, err)
			}
			if d := astDiff(x, again); d != "" {
				t.Fatalf("expr %q printed as %q parses to a different tree:\n%s", src, x, d)
			}
		}
	})
}
