package shell

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// SHOW TYPES prints the same table from both backends: the embedded
// engine's TypeList and the server's type_list.
func TestTypeTable(t *testing.T) {
	address := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "NUMBER", Type: types.IntegerType}, {Name: "STREET", Type: types.StringType}}}
	want := &Table{Columns: []string{"Type Name", "Schema"}, Rows: [][]string{
		{"ADDRESS", "STRUCT<NUMBER INTEGER, STREET STRING>"},
		{"IDS", "ARRAY<BIGINT>"},
	}}
	for _, tc := range []struct {
		name string
		got  func() *Result
	}{
		{"embedded", func() *Result {
			return entityResult(parser.Parsed{}, &engine.TypeList{Types: []planner.CustomType{
				{Name: "ADDRESS", Type: address}, {Name: "IDS", Type: types.ArrayOf(types.BigIntType)}}})
		}},
		{"remote", func() *Result {
			body := `{"@type":"type_list","statementText":"SHOW TYPES;","types":{
				"IDS":{"type":"ARRAY","fields":null,"memberSchema":{"type":"BIGINT","fields":null,"memberSchema":null}},
				"ADDRESS":{"type":"STRUCT","fields":[{"name":"NUMBER","schema":{"type":"INTEGER"}},{"name":"STREET","schema":{"type":"STRING"}}]}},"warnings":[]}`
			e, err := ksqlwire.DecodeEntity([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			return wireResult(e, parser.Parsed{})
		}},
	} {
		if diff := cmp.Diff(want, tc.got().Table); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// SHOW FUNCTIONS and DESCRIBE FUNCTION lay out the same from both
// backends: the engine's FunctionList and FunctionDescription, the
// server's function_names and describe_function.
func TestFunctionResults(t *testing.T) {
	remote := func(body string) *Result {
		t.Helper()
		e, err := ksqlwire.DecodeEntity([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return wireResult(e, parser.Parsed{})
	}
	list := &Result{Table: &Table{Columns: []string{"Function Name", "Type", "Category"}, Rows: [][]string{
		{"ABS", "SCALAR", "MATHEMATICAL"},
		{"SUM", "AGGREGATE", "AGGREGATE"},
	}}}
	addOne := &Result{Text: "Name          : ADD_ONE\nType          : SCALAR\nOverview      : A user-defined function (LANGUAGE WASM).\nVariations    :\n" +
		"\n\tVariation   : ADD_ONE(X BIGINT)\n\tReturns     : BIGINT\n\tDescription : LANGUAGE WASM, sha256:ab export:add_one, version 2, deterministic\n" +
		"\n\tVariation   : ADD_ONE(X INTEGER, Y INTEGER)\n\tReturns     : INTEGER\n\tDescription : LANGUAGE WASM, sha256:ab export:add_ints, version 1, not deterministic\n"}
	sum := &Result{Text: "Name          : SUM\nType          : AGGREGATE\nOverview      : The sum of the non-NULL values.\n"}
	for _, tc := range []struct {
		name      string
		got, want *Result
	}{
		{"embedded list", entityResult(parser.Parsed{}, &engine.FunctionList{Functions: []expr.FunctionInfo{
			{Name: "SUM", Type: "AGGREGATE", Category: "AGGREGATE"}, {Name: "ABS", Type: "SCALAR", Category: "MATHEMATICAL"}}}), list},
		{"remote list", remote(`{"@type":"function_names","statementText":"SHOW FUNCTIONS;","functions":[
			{"name":"ABS","type":"scalar","category":"MATHEMATICAL"},{"name":"SUM","type":"aggregate","category":"AGGREGATE"}],"warnings":[]}`), list},
		{"embedded describe", entityResult(parser.Parsed{}, &engine.FunctionDescription{FunctionInfo: expr.FunctionInfo{
			Name: "SUM", Type: "AGGREGATE", Category: "AGGREGATE", Description: "The sum of the non-NULL values."}}), sum},
		{"remote describe", remote(`{"@type":"describe_function","statementText":"DESCRIBE FUNCTION sum;","name":"SUM",
			"description":"The sum of the non-NULL values.","author":"sluice","version":"","path":"internal","type":"aggregate","functions":[],"warnings":[]}`), sum},
		{"embedded describe, user-defined", entityResult(parser.Parsed{}, &engine.FunctionDescription{
			FunctionInfo: expr.FunctionInfo{Name: "ADD_ONE", Type: "SCALAR", Category: "USER-DEFINED", Description: "A user-defined function (LANGUAGE WASM)."},
			Overloads: []*expr.UserFunction{
				{Name: "ADD_ONE", Params: []string{"X"}, Args: []types.Type{types.BigIntType}, Result: types.BigIntType, Language: "WASM",
					Origin: "sha256:ab export:add_one", Version: 2, Deterministic: true},
				{Name: "ADD_ONE", Params: []string{"X", "Y"}, Args: []types.Type{types.IntegerType, types.IntegerType}, Result: types.IntegerType,
					Language: "WASM", Origin: "sha256:ab export:add_ints", Version: 1},
			}}), addOne},
		{"remote describe, user-defined", remote(`{"@type":"describe_function","statementText":"DESCRIBE FUNCTION add_one;","name":"ADD_ONE",
			"description":"A user-defined function (LANGUAGE WASM).","author":"user","version":"","path":"user-defined","type":"scalar","functions":[
			{"arguments":[{"name":"X","type":"BIGINT","description":"","isVariadic":false}],"returnType":"BIGINT",
			 "description":"LANGUAGE WASM, sha256:ab export:add_one, version 2, deterministic"},
			{"arguments":[{"name":"X","type":"INTEGER","description":"","isVariadic":false},{"name":"Y","type":"INTEGER","description":"","isVariadic":false}],
			 "returnType":"INTEGER","description":"LANGUAGE WASM, sha256:ab export:add_ints, version 1, not deterministic"}],"warnings":[]}`), addOne},
		{"remote, unknown entity", remote(`{"@type":"expression_evaluation","statementText":"x;","warnings":[]}`),
			&Result{Message: `(the server answered a "expression_evaluation" entity, which this shell cannot print)`}},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
