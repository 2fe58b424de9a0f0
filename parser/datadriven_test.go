package parser

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs the files in testdata/. Commands:
//
//	parse   each statement printed back normalized, one per line
//	expr    one expression printed back normalized
//	script  each statement's source text as ParseScript returns it
//	window  the WINDOW clause of each SELECT, field by field
//
// Errors are printed with the source line and a caret. Regenerate the
// expected output with `go test ./parser -run DataDriven -rewrite`.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "parse":
				stmts, err := Parse(d.Input)
				if err != nil {
					return errorOutput(t, err)
				}
				var b strings.Builder
				for _, st := range stmts {
					assertRoundTrip(t, d.Input, st)
					b.WriteString(st.String() + "\n")
				}
				return b.String()
			case "expr":
				x, err := ParseExpr(d.Input)
				if err != nil {
					return errorOutput(t, err)
				}
				again, err := ParseExpr(x.String())
				if err != nil {
					t.Fatalf("%s: printed %q does not parse: %v", d.Pos, x, err)
				}
				if diff := astDiff(x, again); diff != "" {
					t.Fatalf("%s: round trip changed the tree:\n%s", d.Pos, diff)
				}
				return x.String() + "\n"
			case "script":
				ps, err := ParseScript(d.Input)
				if err != nil {
					return errorOutput(t, err)
				}
				var b strings.Builder
				for i, p := range ps {
					fmt.Fprintf(&b, "[%d] %s\n", i, p.Text)
				}
				return b.String()
			case "window":
				stmts, err := Parse(d.Input)
				if err != nil {
					return errorOutput(t, err)
				}
				var b strings.Builder
				for _, st := range stmts {
					sel, ok := st.(*Select)
					if !ok || sel.Window == nil {
						t.Fatalf("%s: want a SELECT with a WINDOW", d.Pos)
					}
					w := *sel.Window
					w.Pos = Pos{}
					fmt.Fprintf(&b, "%s size=%s advance=%s grace=%s/%t retention=%s/%t compact=%t\n",
						w.Kind, w.Size, w.Advance, w.Grace, w.HasGrace, w.Retention, w.HasRetention, w.Compact)
				}
				return b.String()
			}
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			return ""
		})
	})
}

func errorOutput(t *testing.T, err error) string {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *parser.Error", err, err)
	}
	return "error: " + pe.Pretty() + "\n"
}
