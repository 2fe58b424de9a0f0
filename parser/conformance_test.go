package parser

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// conformanceDir holds ksqlDB's query-validation test files; CI places
// shared/ beside the clone, so it is resolved from the repository root.
func conformanceDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(wd), "..", "shared", "conformance", "ksqldb")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("ksqlDB conformance files missing: %v", err)
	}
	return dir
}

// ksqldbStatements returns every statement of every test case, with the
// {FORMAT} placeholder replaced by JSON.
func ksqldbStatements(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(conformanceDir(t), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests []struct {
				Statements []string `json:"statements"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range doc.Tests {
			for _, s := range tc.Statements {
				out = append(out, strings.ReplaceAll(s, "{FORMAT}", "JSON"))
			}
		}
	}
	return out
}

// minConformanceParsed is how many ksqlDB statements must parse; raise it
// when the grammar learns more, never lower it.
const minConformanceParsed = 1605

func TestKsqlDBConformanceParses(t *testing.T) {
	stmts := ksqldbStatements(t)
	parsed := 0
	kinds := map[string]int{}
	for _, s := range stmts {
		st, err := ParseOne(s)
		if err != nil {
			kinds[err.(*Error).Msg]++
			t.Logf("%s\n    %v", s, err)
			continue
		}
		parsed++
		assertRoundTrip(t, s, st)
	}
	var msgs []string
	for m, n := range kinds {
		msgs = append(msgs, m+" ×"+itoa(n))
	}
	sort.Strings(msgs)
	t.Logf("parsed %d of %d ksqlDB statements; failures:\n%s", parsed, len(stmts), strings.Join(msgs, "\n"))
	if parsed < minConformanceParsed {
		t.Errorf("parsed %d of %d ksqlDB statements, want at least %d", parsed, len(stmts), minConformanceParsed)
	}
}
