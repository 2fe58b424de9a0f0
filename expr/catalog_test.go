package expr_test

import (
	"testing"

	"github.com/sluice-sql/sluice/expr"
)

// TestFunctionCatalog: every function has a category (aggregates also a
// description), so SHOW FUNCTIONS lists none without.
func TestFunctionCatalog(t *testing.T) {
	fs := expr.Functions()
	if len(fs) < 100 {
		t.Errorf("%d functions, want at least 100", len(fs))
	}
	for _, f := range fs {
		if f.Category == "" {
			t.Errorf("function %s has no category in expr/catalog.go", f.Name)
		}
		if f.Type == "AGGREGATE" && f.Description == "" {
			t.Errorf("aggregate %s has no description in expr/catalog.go", f.Name)
		}
	}
	if f, ok := expr.LookupFunction("substring"); !ok || f.Type != "SCALAR" || f.Category != "STRING" {
		t.Errorf("LookupFunction(substring) = %+v, %v", f, ok)
	}
	for _, name := range []string{"TRANSFORM", "reduce", "Filter"} {
		if f, ok := expr.LookupFunction(name); !ok || f.Type != "SCALAR" || f.Category != "LAMBDA" || f.Description == "" {
			t.Errorf("LookupFunction(%s) = %+v, %v; want a described LAMBDA scalar", name, f, ok)
		}
	}
	if _, ok := expr.LookupFunction("NO_SUCH"); ok {
		t.Error("LookupFunction found NO_SUCH")
	}
}
