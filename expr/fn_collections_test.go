package expr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

var (
	tArrInt    = types.ArrayOf(types.IntegerType)
	tArrBig    = types.ArrayOf(types.BigIntType)
	tArrDouble = types.ArrayOf(types.DoubleType)
	tArrString = types.ArrayOf(types.StringType)
	tArrBool   = types.ArrayOf(types.BooleanType)
	tMapInt    = types.MapOf(types.StringType, types.IntegerType)
)

var collectionFunctionCases = []evalCase{
	{"ARRAY_LENGTH(ARRAY[1, 2, 3])", tInt, int32(3)},
	{"ARRAY_LENGTH(ARRAY[ni])", tInt, int32(1)},
	{"ARRAY_LENGTH(CAST(NULL AS ARRAY<INT>))", tInt, nil},
	{"ARRAY_LENGTH(ARRAY_REMOVE(ARRAY[1], 1))", tInt, int32(0)},

	{"ARRAY_CONTAINS(ARRAY[1, 2, 3], 2)", tBool, true},
	{"ARRAY_CONTAINS(ARRAY[1, 2, 3], 4)", tBool, false},
	{"ARRAY_CONTAINS(ARRAY['a', ns], ns)", tBool, true}, // NULL finds NULL
	{"ARRAY_CONTAINS(ARRAY['a'], ns)", tBool, false},
	{"ARRAY_CONTAINS(CAST(NULL AS ARRAY<INT>), 1)", tBool, false},
	{"ARRAY_CONTAINS(ARRAY[ARRAY[1], ARRAY[2, 3]], ARRAY[2, 3])", tBool, true},
	{"ARRAY_CONTAINS(ARRAY[b, 2], i)", tBool, false},

	{"ARRAY_JOIN(ARRAY[1, 2, 3])", tString, "1,2,3"},
	{"ARRAY_JOIN(ARRAY['a', ns, 'c'], '|')", tString, "a|null|c"},
	{"ARRAY_JOIN(ARRAY[1.5, 1e7], ' ')", tString, "1.5 1.0E7"},
	{"ARRAY_JOIN(ARRAY[t, f], ns)", tString, "truefalse"},
	{"ARRAY_JOIN(ARRAY_REMOVE(ARRAY[1], 1), '-')", tString, ""},
	{"ARRAY_JOIN(CAST(NULL AS ARRAY<STRING>))", tString, nil},

	{"ARRAY_DISTINCT(ARRAY[1, 2, 1, ni, 3, ni])", tArrInt, []any{int32(1), int32(2), nil, int32(3)}},
	{"ARRAY_DISTINCT(ARRAY['b', 'a', 'b'])", tArrString, []any{"b", "a"}},
	{"ARRAY_DISTINCT(CAST(NULL AS ARRAY<INT>))", tArrInt, nil},

	{"ARRAY_EXCEPT(ARRAY[1, 2, 2, 3, ni], ARRAY[3])", tArrInt, []any{int32(1), int32(2), nil}},
	{"ARRAY_EXCEPT(ARRAY[1, ni], ARRAY[ni])", tArrInt, []any{int32(1)}},
	{"ARRAY_EXCEPT(ARRAY[1], CAST(NULL AS ARRAY<INT>))", tArrInt, nil},
	{"ARRAY_EXCEPT(ARRAY[1, 2], ARRAY[b])", tArrBig, []any{int64(1), int64(2)}}, // widened

	{"ARRAY_INTERSECT(ARRAY[3, 1, 2, 1], ARRAY[1, 3])", tArrInt, []any{int32(3), int32(1)}},
	{"ARRAY_INTERSECT(ARRAY[1, ni], ARRAY[ni])", tArrInt, []any{nil}},
	{"ARRAY_INTERSECT(ARRAY[1], ARRAY[2])", tArrInt, []any{}},
	{"ARRAY_INTERSECT(CAST(NULL AS ARRAY<INT>), ARRAY[1])", tArrInt, nil},

	{"ARRAY_UNION(ARRAY[1, 2, 1], ARRAY[3, 2])", tArrInt, []any{int32(1), int32(2), int32(3)}},
	{"ARRAY_UNION(ARRAY[1], ARRAY[2.5E0])", tArrDouble, []any{1.0, 2.5}},
	{"ARRAY_UNION(ARRAY[1], CAST(NULL AS ARRAY<INT>))", tArrInt, nil},

	{"ARRAY_CONCAT(ARRAY[1, 2], ARRAY[2, 3])", tArrInt, []any{int32(1), int32(2), int32(2), int32(3)}},
	{"ARRAY_CONCAT(ARRAY[1], CAST(NULL AS ARRAY<INT>))", tArrInt, []any{int32(1)}},
	{"ARRAY_CONCAT(CAST(NULL AS ARRAY<INT>), ARRAY[ni])", tArrInt, []any{nil}},
	{"ARRAY_CONCAT(CAST(NULL AS ARRAY<INT>), CAST(NULL AS ARRAY<INT>))", tArrInt, nil},

	{"ARRAY_MAX(ARRAY[1, 7, ni, 3])", tInt, int32(7)},
	{"ARRAY_MAX(ARRAY['b', 'c', 'a'])", tString, "c"},
	{"ARRAY_MAX(ARRAY[f, t])", tBool, true},
	{"ARRAY_MAX(ARRAY[ni])", tInt, nil},
	{"ARRAY_MAX(CAST(NULL AS ARRAY<INT>))", tInt, nil},
	{"ARRAY_MIN(ARRAY[4, -1.5E0, ni])", tDouble, -1.5},
	{"ARRAY_MIN(ARRAY['b', 'a'])", tString, "a"},
	{"ARRAY_MIN(ARRAY_REMOVE(ARRAY[1], 1))", tInt, nil},
	{"ARRAY_MIN(CAST(NULL AS ARRAY<BIGINT>))", tBig, nil},

	{"ARRAY_REMOVE(ARRAY[1, 2, 1, ni], 1)", tArrInt, []any{int32(2), nil}},
	{"ARRAY_REMOVE(ARRAY[1, ni, 2], ni)", tArrInt, []any{int32(1), int32(2)}},
	{"ARRAY_REMOVE(ARRAY['a'], 'b')", tArrString, []any{"a"}},
	{"ARRAY_REMOVE(CAST(NULL AS ARRAY<INT>), 1)", tArrInt, nil},

	{"ARRAY_SORT(ARRAY[3, ni, 1, 2])", tArrInt, []any{int32(1), int32(2), int32(3), nil}},
	{"ARRAY_SORT(ARRAY[3, ni, 1, 2], 'desc')", tArrInt, []any{int32(3), int32(2), int32(1), nil}},
	{"ARRAY_SORT(ARRAY['b', 'A', 'a'], 'ASCENDING')", tArrString, []any{"A", "a", "b"}},
	{"ARRAY_SORT(ARRAY[t, f], 'DESCENDING')", tArrBool, []any{true, false}},
	{"ARRAY_SORT(ARRAY[1], 'up')", tArrInt, nil},
	{"ARRAY_SORT(ARRAY[1], ns)", tArrInt, nil},
	{"ARRAY_SORT(CAST(NULL AS ARRAY<INT>))", tArrInt, nil},

	{"SLICE(ARRAY[1, 2, 3, 4], 2, 3)", tArrInt, []any{int32(2), int32(3)}},
	{"SLICE(ARRAY[1, 2, 3], ni, 2)", tArrInt, []any{int32(1), int32(2)}},
	{"SLICE(ARRAY[1, 2, 3], 2, ni)", tArrInt, []any{int32(2), int32(3)}},
	{"SLICE(ARRAY[1, 2, 3], 3, 2)", tArrInt, []any{}},
	{"SLICE(ARRAY[1, 2, 3], 0, 2)", tArrInt, nil},
	{"SLICE(ARRAY[1, 2, 3], 1, 4)", tArrInt, nil},
	{"SLICE(CAST(NULL AS ARRAY<INT>), 1, 2)", tArrInt, nil},

	{"MAP_KEYS(MAP('b' := 1, 'a' := 2))", tArrString, []any{"a", "b"}},
	{"MAP_KEYS(CAST(NULL AS MAP<STRING, INT>))", tArrString, nil},
	{"MAP_VALUES(MAP('b' := 1, 'a' := 2, 'c' := ni))", tArrInt, []any{int32(2), int32(1), nil}},
	{"MAP_VALUES(CAST(NULL AS MAP<STRING, INT>))", tArrInt, nil},

	{"MAP_UNION(MAP('a' := 1, 'b' := 2), MAP('b' := 3))", tMapInt, map[string]any{"a": int32(1), "b": int32(3)}},
	{"MAP_UNION(MAP('a' := 1), CAST(NULL AS MAP<STRING, INT>))", tMapInt, map[string]any{"a": int32(1)}},
	{"MAP_UNION(CAST(NULL AS MAP<STRING, INT>), CAST(NULL AS MAP<STRING, INT>))", tMapInt, nil},

	{"ENTRIES(MAP('b' := 1, 'a' := 2), true)", types.ArrayOf(types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "K", Type: tString}, {Name: "V", Type: tInt}}}),
		[]any{[]any{"a", int32(2)}, []any{"b", int32(1)}}},
	{"ENTRIES(MAP('x' := 'y'), false)", types.ArrayOf(types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "K", Type: tString}, {Name: "V", Type: tString}}}),
		[]any{[]any{"x", "y"}}},
	{"ENTRIES(CAST(NULL AS MAP<STRING, INT>), true)", types.ArrayOf(types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "K", Type: tString}, {Name: "V", Type: tInt}}}), nil},

	{`ARRAY_JOIN(ARRAY[CAST(1.5 AS DECIMAL(4, 2)), CAST(2 AS DECIMAL(4, 2))])`, tString, "1.50,2.00"},
	{"AS_MAP(ARRAY['a', 'b'], ARRAY[1, 2])", tMapInt, map[string]any{"a": int32(1), "b": int32(2)}},
	{"AS_MAP(ARRAY['a', 'b', 'a'], ARRAY[1])", tMapInt, map[string]any{"a": nil, "b": nil}},
	{"AS_MAP(ARRAY['a', ns], ARRAY[1, 2, 3])", tMapInt, map[string]any{"a": int32(1)}},
	{"AS_MAP(ARRAY['a'], CAST(NULL AS ARRAY<INT>))", tMapInt, nil},
}

func init() { functionCaseSets = append(functionCaseSets, collectionFunctionCases) }

func TestCollectionConstructors(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ARRAY[1, 2]", tArrInt, []any{int32(1), int32(2)}},
		{"ARRAY[1, b, ni]", tArrBig, []any{int64(1), int64(10), nil}},
		{"ARRAY[i, 2.5E0]", tArrDouble, []any{7.0, 2.5}},
		{"ARRAY[ARRAY[1], ARRAY[2.5E0]]", types.ArrayOf(tArrDouble), []any{[]any{1.0}, []any{2.5}}},
		{"MAP('a' := 1, 'b' := 2.5E0)", types.MapOf(tString, tDouble), map[string]any{"a": 1.0, "b": 2.5}},
		// A decimal literal makes the elements DECIMAL: INT widens exactly.
		{"ARRAY[i, 2.5]", types.ArrayOf(types.Type{Kind: types.Decimal, Precision: 11, Scale: 1}), []any{dec("7.0"), dec("2.5")}},
		// A NULL key is kept, under the text ksqlDB's JSON writes for it.
		{"MAP(1 := 'x', ni := 'y')", types.MapOf(tInt, tString), map[string]any{"1": "x", "null": "y"}},
		{"MAP(CAST(NULL AS STRING) := 10)", types.MapOf(tString, tInt), map[string]any{"null": int32(10)}},
		{"MAP('a' := 1)['a']", tInt, int32(1)},
		{"ARRAY[5, 6][2]", tInt, int32(6)},
		// Literals coerce to the type the other elements give.
		{"ARRAY[NULL, 10, '2e1', i]", tArrInt, []any{nil, int32(10), int32(20), int32(7)}},
		{"ARRAY['1', b]", tArrBig, []any{int64(1), int64(10)}},
		{"ARRAY[d, ' 1.5 ']", tArrDouble, []any{2.5, 1.5}},
		{"ARRAY['a', 'b']", tStrArray, []any{"a", "b"}},
		{"ARRAY[s, 1, TRUE, 2.50]", tStrArray, []any{"abc", "1", "true", "2.50"}},
		{"ARRAY[t, 'no', 'YES']", types.ArrayOf(tBool), []any{true, false, true}},
		{"MAP(s := 1, 10 := '2')", types.MapOf(tString, tInt), map[string]any{"abc": int32(1), "10": int32(2)}},
		// STRUCTs unify to the union of their fields, shared fields to
		// their common type; a value lacks what its own struct lacked.
		{"ARRAY[NULL, STRUCT(x := i, y := b), STRUCT(y := i, z := b)]", types.ArrayOf(types.Type{Kind: types.Struct, Fields: []types.Field{
			{Name: "X", Type: tInt}, {Name: "Y", Type: types.BigIntType}, {Name: "Z", Type: types.BigIntType}}}),
			[]any{nil, []any{int32(7), int64(10), nil}, []any{nil, int64(7), int64(10)}}},
		{"MAP('a' := STRUCT(x := 1), 'b' := STRUCT(x := 2.5E0))", types.MapOf(tString, types.Type{Kind: types.Struct, Fields: []types.Field{
			{Name: "X", Type: tDouble}}}), map[string]any{"a": []any{1.0}, "b": []any{2.5}}},
	})
	for _, tc := range []struct{ src, want string }{
		{"ARRAY[1, 'not a number']", `invalid input syntax for type INTEGER: "not a number"`},
		{"ARRAY[i, '1.5']", `invalid input syntax for type INTEGER: "1.5"`},
		{"ARRAY[1, '3000000000']", `invalid input syntax for type INTEGER: "3000000000"`},
		{"MAP('a' := t, 'b' := 'maybe')", `invalid input syntax for type BOOLEAN: "maybe"`},
		{"ARRAY[s, i]", "invalid array constructor: elements of types STRING and INTEGER"},
		{"ARRAY[STRUCT(x := s), STRUCT(x := i)]", "invalid array constructor: elements of types STRUCT<`X` STRING> and STRUCT<`X` INTEGER>"},
	} {
		_, err := compileExpr(t, tc.src)
		if err == nil || !errors.Is(err, expr.ErrType) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want a type error containing %q", tc.src, err, tc.want)
		}
	}
	for _, src := range []string{"ARRAY[]", "ARRAY[NULL]", "ARRAY[1, 'a']", "MAP('a' := 1, 'b' := 'c')",
		"ARRAY_LENGTH(1)", "ARRAY_SORT(ARRAY[ARRAY[1]])", "ARRAY_JOIN(ARRAY[ARRAY[1]])", "ARRAY_UNION(ARRAY[1], ARRAY['a'])",
		"MAP_KEYS(ARRAY[1])", "AS_MAP(ARRAY[1], ARRAY[1])", "SLICE(ARRAY[1], 'a', 2)"} {
		if _, err := compileExpr(t, src); err == nil {
			t.Errorf("%s compiled; want a type error", src)
		}
	}
	// ksqlDB's texts for constructors with no element type to infer.
	for _, tc := range []struct{ src, want string }{
		{"ARRAY[]", "Array constructor cannot be empty. Please supply at least one element"},
		{"ARRAY[NULL, NULL]", "Cannot construct an array with all NULL elements"},
		{"MAP()", "Map constructor cannot be empty. Please supply at least one key value pair"},
		{"MAP(NULL := 1)", "Cannot construct a map with all NULL keys"},
		{"MAP(NULL := NULL)", "Cannot construct a map with all NULL keys"},
		{"MAP('a' := NULL, 'b' := NULL)", "Cannot construct a map with all NULL values"},
	} {
		_, err := compileExpr(t, tc.src)
		if err == nil || !errors.Is(err, expr.ErrType) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want a type error containing %q", tc.src, err, tc.want)
		}
	}
}
