package planner

import (
	"testing"

	"github.com/sluice-sql/sluice/parser"
)

// TestLiteralDecimal checks the DECIMAL each number literal is typed as
// for INSERT INTO's implicit casts: its digits and fraction digits.
func TestLiteralDecimal(t *testing.T) {
	for _, tc := range []struct {
		expr            string
		precision, scal int
		ok              bool
	}{
		{"1", 1, 0, true},
		{"120", 3, 0, true},
		{"2.0", 2, 1, true},
		{"-2.50", 3, 2, true},
		{"0.05", 2, 2, true},
		{"1e3", 5, 1, true},
		{"'1'", 0, 0, false},
		{"A", 0, 0, false},
		{"1 + 2", 0, 0, false},
	} {
		e, err := parser.ParseExpr(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		p, s, ok := literalDecimal(e)
		if p != tc.precision || s != tc.scal || ok != tc.ok {
			t.Errorf("%s: got (%d, %d, %t), want (%d, %d, %t)", tc.expr, p, s, ok, tc.precision, tc.scal, tc.ok)
		}
	}
}
