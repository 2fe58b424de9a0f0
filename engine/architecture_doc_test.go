package engine_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// TestArchitectureExplainExamples keeps ARCHITECTURE.md's EXPLAIN
// examples what the engine prints: it runs the doc's setup block (the
// ```sql block before them) and every ``` block that starts with
// EXPLAIN, and compares the whole output, line for line.
func TestArchitectureExplainExamples(t *testing.T) {
	doc, err := os.ReadFile("../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(sql)?\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, ServiceID: "svc", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	setup, examples := false, 0
	for _, b := range blocks {
		text := b[2]
		switch {
		case b[1] == "sql" && strings.Contains(text, "CREATE STREAM clicks"):
			for _, st := range strings.SplitAfter(strings.TrimSpace(text), ";") {
				if st = strings.TrimSpace(st); st != "" {
					if _, err := e.Execute(ctx, st); err != nil {
						t.Fatalf("setup %s: %v", st, err)
					}
				}
			}
			setup = true
		case strings.HasPrefix(text, "EXPLAIN "):
			if !setup {
				t.Fatal("an EXPLAIN example comes before the setup block")
			}
			sql, want, _ := strings.Cut(text, "\n")
			res, err := e.Execute(ctx, sql)
			if err != nil {
				t.Errorf("%s: %v", sql, err)
				continue
			}
			if got := shown(res[0]); strings.TrimRight(got, "\n") != strings.TrimRight(want, "\n") {
				t.Errorf("%s: the engine prints\n%s\nARCHITECTURE.md says\n%s", sql, got, want)
			}
			examples++
		}
	}
	// A persistent query, an aggregation, a push query, a scalable push
	// query and a pull query.
	if examples != 5 {
		t.Errorf("%d EXPLAIN examples in ARCHITECTURE.md, want 5", examples)
	}
}
