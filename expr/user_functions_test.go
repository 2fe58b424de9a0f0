package expr_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// overloads is a set of user-defined functions whose implementation says
// which overload ran and the arguments it got, for the resolution tests.
type overloads []*expr.UserFunction

func (o overloads) Overloads(name string) []*expr.UserFunction {
	var out []*expr.UserFunction
	for _, f := range o {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}
func (o overloads) Persistent() bool { return false }
func (o overloads) Bind(f *expr.UserFunction) (func([]any) (any, error), error) {
	sig := f.Signature()
	return func(args []any) (any, error) { return fmt.Sprintf("%s %v", sig, args), nil }, nil
}

func fn(name string, variadic bool, args ...types.Type) *expr.UserFunction {
	f := &expr.UserFunction{Name: name, Args: args, Result: types.StringType, Variadic: variadic}
	for i := range args {
		f.Params = append(f.Params, fmt.Sprintf("P%d", i))
	}
	return f
}

// TestUserFunctionResolution picks overloads by ksqlDB's rules (its
// UdfIndex and TestUdf's overloads): an exact match first, then the
// fewest widenings; a fixed signature before a VARIADIC one; a VARIADIC
// parameter takes any number of its element type, none too, or the ARRAY
// itself; a NULL fits any type.
func TestUserFunctionResolution(t *testing.T) {
	arrBig := types.ArrayOf(types.BigIntType)
	st := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.StringType}}}
	fns := overloads{
		fn("TEST_UDF", false, types.IntegerType, types.StringType),
		fn("TEST_UDF", false, types.BigIntType, types.StringType),
		fn("TEST_UDF", false, types.BigIntType, types.BigIntType, types.StringType),
		fn("TEST_UDF", true, arrBig),
		fn("TEST_UDF", false, st),
		fn("TEST_UDF", false),
		fn("GLUE", true, types.StringType, types.ArrayOf(types.StringType)),
		fn("PICK", true, types.ArrayOf(types.DoubleType)),
		fn("PICK", true, types.IntegerType, types.ArrayOf(types.DoubleType)),
		fn("AMB", false, types.BigIntType, types.DoubleType),
		fn("AMB", false, types.DoubleType, types.BigIntType),
	}
	schema := types.Schema{Columns: []types.Column{
		{Name: "I", Type: types.IntegerType}, {Name: "B", Type: types.BigIntType}, {Name: "S", Type: types.StringType},
		{Name: "ST", Type: st}, {Name: "ARR", Type: arrBig}, {Name: "D", Type: types.DoubleType},
	}}
	row := []any{int32(1), int64(2), "s", map[string]any{"A": "a"}, []any{int64(7)}, 1.5}
	for _, c := range []struct{ call, want string }{
		{"TEST_UDF(I, 'foo')", "TEST_UDF(P0 INTEGER, P1 STRING) [1 foo]"},
		{"TEST_UDF(B, 'foo')", "TEST_UDF(P0 BIGINT, P1 STRING) [2 foo]"},
		{"TEST_UDF(B, NULL)", "TEST_UDF(P0 BIGINT, P1 STRING) [2 <nil>]"},
		{"TEST_UDF(B, B, NULL)", "TEST_UDF(P0 BIGINT, P1 BIGINT, P2 STRING) [2 2 <nil>]"},
		{"TEST_UDF(B, B, B, B, B)", "TEST_UDF(VARIADIC P0 ARRAY<BIGINT>) [[2 2 2 2 2]]"},
		{"TEST_UDF(I, B)", "TEST_UDF(VARIADIC P0 ARRAY<BIGINT>) [[1 2]]"},
		{"TEST_UDF(B)", "TEST_UDF(VARIADIC P0 ARRAY<BIGINT>) [[2]]"},
		{"TEST_UDF(ARR)", "TEST_UDF(VARIADIC P0 ARRAY<BIGINT>) [[7]]"},
		{"TEST_UDF(ST)", "TEST_UDF(P0 STRUCT<`A` STRING>) [map[A:a]]"},
		{"TEST_UDF()", "TEST_UDF() []"},
		{"GLUE(S)", "GLUE(P0 STRING, VARIADIC P1 ARRAY<STRING>) [s []]"},
		{"GLUE(S, S, NULL)", "GLUE(P0 STRING, VARIADIC P1 ARRAY<STRING>) [s [s <nil>]]"},
		// Fewer widenings win: the second PICK's INT is exact.
		{"PICK(I, I)", "PICK(P0 INTEGER, VARIADIC P1 ARRAY<DOUBLE>) [1 [1]]"},
		{"PICK(D, I)", "PICK(VARIADIC P0 ARRAY<DOUBLE>) [[1.5 1]]"},
	} {
		t.Run(c.call, func(t *testing.T) {
			e, err := parser.ParseExpr(c.call)
			if err != nil {
				t.Fatal(err)
			}
			compiled, err := expr.Compile(e, expr.WithUserFunctions(expr.SchemaScope(schema), fns))
			if err != nil {
				t.Fatal(err)
			}
			if got := compiled.Eval(row); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	for _, c := range []struct{ call, want string }{
		{"TEST_UDF(S)", "Function 'TEST_UDF' does not accept parameters (STRING)"},
		{"AMB(I, I)", "Function 'AMB' cannot be resolved due to ambiguous method parameters (INTEGER, INTEGER)"},
		{"GLUE()", "Function 'GLUE' does not accept parameters ()"},
	} {
		e, err := parser.ParseExpr(c.call)
		if err != nil {
			t.Fatal(err)
		}
		_, err = expr.Compile(e, expr.WithUserFunctions(expr.SchemaScope(schema), fns))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.call, err, c.want)
		}
	}
}
