package expr_test

import (
	"errors"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

func TestResolveTypeWith(t *testing.T) {
	address := types.Type{Kind: types.Struct, Fields: []types.Field{
		{Name: "NUMBER", Type: types.IntegerType}, {Name: "STREET", Type: types.StringType},
	}}
	custom := map[string]types.Type{"ADDRESS": address, "lower": types.BigIntType}
	lookup := func(name string) (types.Type, bool) { t, ok := custom[name]; return t, ok }
	for _, tc := range []struct {
		sql  string // a CAST target
		want string // the resolved type, or the error
	}{
		{"ADDRESS", "STRUCT<`NUMBER` INTEGER, `STREET` STRING>"},
		{"address", "STRUCT<`NUMBER` INTEGER, `STREET` STRING>"},
		{"ARRAY<address>", "ARRAY<STRUCT<`NUMBER` INTEGER, `STREET` STRING>>"},
		{"MAP<STRING, STRUCT<home ADDRESS>>", "MAP<STRING, STRUCT<`HOME` STRUCT<`NUMBER` INTEGER, `STREET` STRING>>>"},
		{"`lower`", "BIGINT"},
		{"lower", "type error: unknown type LOWER"},
		{"ADDRESS(2)", "type error: custom type ADDRESS takes no parameters"},
		{"DECIMAL(4, 2)", "DECIMAL(4, 2)"},
	} {
		x, err := parser.ParseExpr("CAST(x AS " + tc.sql + ")")
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		tn := x.(*parser.Cast).Type
		got, err := expr.ResolveTypeWith(tn, lookup)
		gotS := got.String()
		if err != nil {
			if !errors.Is(err, expr.ErrType) {
				t.Errorf("%s: error %v is not ErrType", tc.sql, err)
			}
			gotS = err.Error()
		}
		if gotS != tc.want {
			t.Errorf("%s: got %s, want %s", tc.sql, gotS, tc.want)
			continue
		}
		if err == nil {
			// Written back, the type resolves the same with no custom types.
			again, err := expr.ResolveType(expr.TypeNameOf(got))
			if err != nil || !again.Equal(got) {
				t.Errorf("%s: TypeNameOf gives %s (%v)", tc.sql, expr.TypeNameOf(got), err)
			}
		}
	}
}
