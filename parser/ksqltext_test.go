package parser_test

import (
	"testing"

	"github.com/sluice-sql/sluice/parser"
)

func TestKsqlText(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"F1 * SUM(F2)", "(F1 * SUM(F2))"},
		{"F1 - F0", "(F1 - F0)"},
		{"a + b * c", "(A + (B * C))"},
		{"COUNT(*)", "COUNT(*)"},
		{"ABS(x - 1)", "ABS((X - 1))"},
		{"name", "NAME"},
		{"true", "true"},
		{"ARRAY[v1, 1]", "ARRAY[V1, 1]"},
		{"MAP('a' := v1, 'b' := 2)", "MAP('a':=V1, 'b':=2)"},
		{"STRUCT(f0 := v1, `f1` := 'x')", "STRUCT(F0:=V1, `f1`:='x')"},
	} {
		st, err := parser.ParseOne("SELECT " + tc.src + " FROM s;")
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		got := parser.KsqlText(st.(*parser.Select).Items[0].Expr)
		if got != tc.want {
			t.Errorf("KsqlText(%s) = %q, want %q", tc.src, got, tc.want)
		}
	}
}
