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
		{Name: "L", Type: types.ArrayOf(types.StringType)}, {Name: "M", Type: types.MapOf(types.StringType, types.BigIntType)},
	}}
	row := []any{[]any{"1st Street", "Oxford"}, nil, int32(3), []any{"x", "y", "z"}, map[string]any{"k1": int64(7)}}
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
		{src: "CAST(M AS MAP<STRING, STRING>)", wantType: types.MapOf(types.StringType, types.StringType), want: map[string]any{"k1": "7"}},
		{src: "CAST(M AS STRING)", wantType: types.StringType, want: "{k1=7}"},
		{src: "CAST(L AS STRING)", wantType: types.StringType, want: "[x, y, z]"},
		{src: "CAST(A AS STRING)", wantType: types.StringType, want: "Struct{STREET=1st Street,TOWN=Oxford}"},
		{src: "CAST(A AS STRUCT<TOWN STRING, ZIP INT>)", wantType: types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "TOWN", Type: types.StringType}, {Name: "ZIP", Type: types.IntegerType}}}, want: []any{"Oxford", nil}},
		{src: "CAST(L AS ARRAY<INT>)", wantType: types.ArrayOf(types.IntegerType), want: []any{nil, nil, nil}},
		{src: "CAST(NULL AS ARRAY<INT>)", wantType: types.ArrayOf(types.IntegerType), want: nil},
		{src: "CAST(I AS ARRAY<INT>)", wantErr: "line 1:1: type error: Invalid Select: Cast of INTEGER to ARRAY<INTEGER> is not supported"},
		{src: "L[1]", wantType: types.StringType, want: "x"},
		{src: "L[I]", wantType: types.StringType, want: "z"},
		{src: "L[-1]", wantType: types.StringType, want: "z"},
		{src: "L[4]", wantType: types.StringType, want: nil},
		{src: "L[0]", wantType: types.StringType, want: nil},
		{src: "M['k1']", wantType: types.BigIntType, want: int64(7)},
		{src: "M['k2']", wantType: types.BigIntType, want: nil},
		{src: "L['a']", wantErr: "line 1:1: type error: an ARRAY index must be an integer, not STRING"},
		{src: "I[1]", wantErr: "line 1:1: type error: I is INTEGER: [ ] needs an ARRAY or a MAP"},
		{src: "A->CITY", wantErr: "line 1:1: type error: A has no field CITY"},
		{src: "I->X", wantErr: "line 1:1: type error: I is INTEGER, not a STRUCT: -> needs a STRUCT"},
		{src: "STRUCT(a := NULL)", wantErr: "line 1:13: type error: Can't infer a type of null. Please explicitly cast it to a required type, e.g. CAST(null AS VARCHAR). (STRUCT field A is a bare NULL)"},
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
