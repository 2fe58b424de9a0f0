package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// TestPlans runs the datadriven files in testdata/. Commands:
//
//	ddl     — CREATE STREAM/TABLE statements that fill the catalog; prints the schema;
//	          CREATE TYPE and DROP TYPE print the type registered or dropped
//	plan    — a query; prints its physical topology (EXPLAIN's tree) or the error;
//	          the argument new-query-planner sets Options.NewQueryPlanner
//
// Regenerate with: go test ./planner -run TestPlans -rewrite
func TestPlans(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		cat := planner.NewCatalog()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "ddl":
				return ddl(cat, d.Input)
			case "plan":
				return plan(cat, d.Input, planner.Options{ServiceID: "test", NewQueryPlanner: d.HasArg("new-query-planner")})
			}
			return fmt.Sprintf("unknown command %q", d.Cmd)
		})
	})
}

func ddl(cat *planner.Catalog, sql string) string {
	stmts, err := parser.ParseScript(sql)
	if err != nil {
		return engine.FormatError(sql, err)
	}
	var b strings.Builder
	for _, p := range stmts {
		resolved, err := planner.ResolveTypes(cat, p.Stmt)
		if err != nil {
			b.WriteString(engine.FormatError(sql, err) + "\n")
			continue
		}
		switch st := resolved.(type) {
		case *parser.CreateType:
			t, exists, err := planner.CreateType(cat, st)
			switch {
			case err != nil:
				b.WriteString(engine.FormatError(sql, err) + "\n")
			case exists:
				fmt.Fprintf(&b, "TYPE %s already %s\n", st.Name, t)
			default:
				cat.RegisterType(st.Name, t)
				fmt.Fprintf(&b, "TYPE %s: %s\n", st.Name, t)
			}
			continue
		case *parser.DropType:
			exists, err := planner.CheckDropType(cat, st)
			if err != nil {
				b.WriteString(engine.FormatError(sql, err) + "\n")
			} else {
				fmt.Fprintf(&b, "dropped TYPE %s: %t\n", st.Name, exists && cat.DropType(st.Name))
			}
			continue
		}
		st, ok := resolved.(*parser.CreateSource)
		if !ok || st.Query != nil {
			return "ddl takes CREATE STREAM/TABLE with columns"
		}
		src, err := planner.CreateSource(cat, st, p.Text)
		if err != nil {
			b.WriteString(engine.FormatError(sql, err) + "\n")
			continue
		}
		if src.Partitions == 0 {
			src.Partitions = 1
		}
		if err := cat.Add(src, st.OrReplace); err != nil {
			b.WriteString(err.Error() + "\n")
			continue
		}
		fmt.Fprintf(&b, "%s %s: %s (topic %s, key %s, value %s%s)\n", src.Kind, src.Name, src.Schema, src.Topic, src.KeyFormat, src.ValueFormat, windowNote(src))
	}
	return b.String()
}

func plan(cat *planner.Catalog, sql string, opts planner.Options) string {
	st, err := parser.ParseOne(sql)
	if err != nil {
		return engine.FormatError(sql, err)
	}
	if st, err = planner.ResolveTypes(cat, st); err != nil {
		return engine.FormatError(sql, err)
	}
	var sel *parser.Select
	var target *planner.Target
	id := "TRANSIENT"
	switch s := st.(type) {
	case *parser.Select:
		sel = s
	case *parser.CreateSource:
		t, err := planner.TargetOf(s, sql)
		if err != nil {
			return engine.FormatError(sql, err)
		}
		sel, target = s.Query, t
		id = "Q_" + strings.ToUpper(s.Name)
	case *parser.InsertSelect:
		existing, err := cat.Lookup(s.Target)
		if err != nil {
			return err.Error()
		}
		sel, target, id = s.Query, &planner.Target{Name: existing.Name, Existing: existing}, "INSERT"
	default:
		return "plan takes a query"
	}
	q, err := planner.PlanQuery(cat, sel, target, id, opts)
	if err != nil {
		return engine.FormatError(sql, err)
	}
	out := q.Explain()
	if q.Sink != nil {
		out += fmt.Sprintf("result %s %s: %s (topic %s, key %s, value %s)\n", q.Sink.Kind, q.Sink.Name, q.Sink.Schema, q.Sink.Topic, q.Sink.KeyFormat, q.Sink.ValueFormat)
		if target.Existing == nil {
			_ = cat.Add(q.Sink, true)
		}
	} else {
		out += fmt.Sprintf("rows: %s\n", q.Output)
	}
	return out
}

// windowNote describes a source's windowed keys for ddl output.
func windowNote(src *planner.Source) string {
	switch src.Window {
	case exec.TimeWindowed:
		return fmt.Sprintf(", time-windowed keys of %dms", src.WindowSize)
	case exec.SessionWindowed:
		return ", session-windowed keys"
	}
	return ""
}
