package expr_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

func TestStructs(t *testing.T) {
	addr := types.Type{Kind: types.Struct, Fields: []types.Field{
		{Name: "STREET", Type: types.StringType}, {Name: "TOWN", Type: types.StringType},
	}}
	schema := types.Schema{Columns: []types.Column{
		{Name: "A", Type: addr}, {Name: "N", Type: addr}, {Name: "I", Type: types.IntegerType},
	}}
	row := []any{[]any{"1st Street", "Oxford"}, nil, int32(3)}
	ab := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.StringType}, {Name: "B", Type: types.IntegerType}}}
	cases := []struct {
		src      string
		wantType types.Type
		want     any
		wantErr  string
	}{
		{src: "A->TOWN", wantType: types.StringType, want: "Oxford"},
		{src: "a->street", wantType: types.StringType, want: "1st Street"},
		{src: "N->TOWN", wantType: types.StringType, want: nil},
		{src: "STRUCT(a := A->TOWN, b := I + 1)", wantType: ab, want: []any{"Oxford", int32(4)}},
		{src: "STRUCT(a := A->TOWN, b := I)->B", wantType: types.IntegerType, want: int32(3)},
		{src: "A->CITY", wantErr: "line 1:1: type error: A has no field CITY"},
		{src: "I->X", wantErr: "line 1:1: type error: I is INTEGER, not a STRUCT: -> needs a STRUCT"},
		{src: "STRUCT(a := NULL)", wantErr: "line 1:13: type error: cannot infer the type of STRUCT field A (a bare NULL); use CAST"},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			e, err := parser.ParseExpr(tc.src)
			if err != nil {
				t.Fatalf("ParseExpr: %v", err)
			}
			c, err := expr.Compile(e, expr.SchemaScope(schema))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Compile error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if !c.Type.Equal(tc.wantType) {
				t.Errorf("type = %s, want %s", c.Type, tc.wantType)
			}
			if diff := cmp.Diff(tc.want, c.Eval(row)); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}
