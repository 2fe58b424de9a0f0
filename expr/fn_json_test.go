package expr_test

import (
	"testing"

	"github.com/sluice-sql/sluice/types"
)

var jsonFunctionCases = []evalCase{
	{`EXTRACTJSONFIELD('{"a": {"b": "x"}}', '$.a.b')`, tString, "x"},
	{`EXTRACTJSONFIELD('{"a": {"b": [1, 2.50, {"c": true}]}}', '$.a.b[2]')`, tString, `{"c":true}`},
	{`EXTRACTJSONFIELD('{"a": {"b": [1, 2.50]}}', '$.a.b[1]')`, tString, "2.50"},
	{`EXTRACTJSONFIELD('{"a": {"b": [1, 2]}}', '$.a.b')`, tString, "[1,2]"},
	{`EXTRACTJSONFIELD('{"a b": 1}', '$[''a b'']')`, tString, "1"},
	{`EXTRACTJSONFIELD('{"a": 1}', '$["a"]')`, tString, "1"},
	{`EXTRACTJSONFIELD('{"a": null}', '$.a')`, tString, "null"},
	{`EXTRACTJSONFIELD('{"a": "x\ny"}', '$.a')`, tString, "x\ny"}, // SQL keeps the backslash; JSON unescapes it
	{`EXTRACTJSONFIELD('{"a": "q\"<"}', '$.a')`, tString, `q"<`},
	{`EXTRACTJSONFIELD('{"a": 1}', '$.b')`, tString, nil},
	{`EXTRACTJSONFIELD('[10, 20]', '$[1]')`, tString, "20"},
	{`EXTRACTJSONFIELD('[10, 20]', '$[2]')`, tString, nil},
	{`EXTRACTJSONFIELD('[10, 20]', '$.x')`, tString, nil},
	{`EXTRACTJSONFIELD('{"a": 1}', '$')`, tString, `{"a":1}`},
	{`EXTRACTJSONFIELD('{"a": 1e2}', '$.a')`, tString, "100"},
	{`EXTRACTJSONFIELD('not json', '$.a')`, tString, nil},
	{`EXTRACTJSONFIELD('{"a": 1}', 'a')`, tString, nil}, // a path starts with $
	{`EXTRACTJSONFIELD(ns, '$.a')`, tString, nil},
	{`EXTRACTJSONFIELD('{"a": 1}', ns)`, tString, nil},

	{`JSON_ARRAY_LENGTH('[1, [2, 3], {}]')`, tInt, int32(3)},
	{`JSON_ARRAY_LENGTH('[]')`, tInt, int32(0)},
	{`JSON_ARRAY_LENGTH('{"a": 1}')`, tInt, nil},
	{`JSON_ARRAY_LENGTH('[1,')`, tInt, nil},
	{`JSON_ARRAY_LENGTH(ns)`, tInt, nil},

	{`JSON_CONCAT('{"a": 1, "b": 2}', '{"b": 3, "c": [4]}')`, tString, `{"a":1,"b":3,"c":[4]}`},
	{`JSON_CONCAT('[1, 2]', '[3]')`, tString, `[1,2,3]`},
	{`JSON_CONCAT('[1]', '{"a": 1}', '"x"')`, tString, `[1,{"a":1},"x"]`},
	{`JSON_CONCAT('1', '2')`, tString, `[1,2]`},
	{`JSON_CONCAT('{ "a" : 1 }')`, tString, `{"a":1}`},
	{`JSON_CONCAT('{"a": 1}', 'oops')`, tString, nil},
	{`JSON_CONCAT('{"a": 1}', ns)`, tString, nil},

	{`JSON_KEYS('{"b": 1, "a": {"c": 2}}')`, tArrString, []any{"b", "a"}},
	{`JSON_KEYS('{}')`, tArrString, []any{}},
	{`JSON_KEYS('[1]')`, tArrString, nil},
	{`JSON_KEYS('')`, tArrString, nil},
	{`JSON_KEYS(ns)`, tArrString, nil},

	{`JSON_RECORDS('{"a": "x", "b": [1, true], "c": null}')`, types.MapOf(tString, tString), map[string]any{"a": "x", "b": "[1,true]", "c": "null"}},
	{`JSON_RECORDS('{"White": "Seven", "q": "say \"hi\""}')`, types.MapOf(tString, tString), map[string]any{"White": "Seven", "q": `say "hi"`}},
	{`JSON_RECORDS('"s"')`, types.MapOf(tString, tString), nil},
	{`JSON_RECORDS('{bad}')`, types.MapOf(tString, tString), nil},
	{`JSON_RECORDS(ns)`, types.MapOf(tString, tString), nil},

	{`JSON_ITEMS('[{"a": 1}, {"b": [2]}]')`, tArrString, []any{`{"a":1}`, `{"b":[2]}`}},
	{`JSON_ITEMS('[{"a": 1}, 2]')`, tArrString, nil},
	{`JSON_ITEMS('[]')`, tArrString, []any{}},
	{`JSON_ITEMS(ns)`, tArrString, nil},

	{`JSON_ARRAY_CONTAINS('[1, 2, 3]', 2)`, tBool, true},
	{`JSON_ARRAY_CONTAINS('[1, 2, 3]', b)`, tBool, false},
	{`JSON_ARRAY_CONTAINS('[1, 10]', b)`, tBool, true},
	{`JSON_ARRAY_CONTAINS('[1.0, 2]', 1.0E0)`, tBool, true},
	{`JSON_ARRAY_CONTAINS('[1, 2]', 1.0)`, tBool, false}, // a DOUBLE matches only non-integer tokens
	{`JSON_ARRAY_CONTAINS('[1.0]', 1)`, tBool, false},
	{`JSON_ARRAY_CONTAINS('["abc", [7]]', s)`, tBool, true},
	{`JSON_ARRAY_CONTAINS('[[7], {"a": 7}]', i)`, tBool, false}, // nested values never match
	{`JSON_ARRAY_CONTAINS('[false, true]', t)`, tBool, true},
	{`JSON_ARRAY_CONTAINS('[1, null]', ni)`, tBool, true},
	{`JSON_ARRAY_CONTAINS('[1]', ni)`, tBool, false},
	{`JSON_ARRAY_CONTAINS('{"a": 1}', 1)`, tBool, false},
	{`JSON_ARRAY_CONTAINS('[1, oops', 1)`, tBool, true}, // streaming: stops at the match
	{`JSON_ARRAY_CONTAINS('[2, oops', 1)`, tBool, false},
	{`JSON_ARRAY_CONTAINS(ns, 1)`, tBool, nil},

	{`IS_JSON_STRING('{"a": [1, "x"]}')`, tBool, true},
	{`IS_JSON_STRING('"x"')`, tBool, true},
	{`IS_JSON_STRING('12')`, tBool, true},
	{`IS_JSON_STRING('abc')`, tBool, false},
	{`IS_JSON_STRING('{"a": }')`, tBool, false},
	{`IS_JSON_STRING('')`, tBool, false},
	{`IS_JSON_STRING(ns)`, tBool, false},

	{`TO_JSON_STRING(i)`, tString, "7"},
	{`TO_JSON_STRING(d)`, tString, "2.5"},
	{`TO_JSON_STRING(CAST(1 AS DOUBLE))`, tString, "1.0"},
	{`TO_JSON_STRING(1e7)`, tString, "1.0E7"},
	{`TO_JSON_STRING(0E0/0)`, tString, `"NaN"`},
	{`TO_JSON_STRING('a"b<')`, tString, `"a\"b<"`},
	{`TO_JSON_STRING(t)`, tString, "true"},
	{`TO_JSON_STRING(ts)`, tString, `"2024-01-01T00:00:00.000"`},
	{`TO_JSON_STRING(ARRAY[1, ni])`, tString, "[1,null]"},
	{`TO_JSON_STRING(MAP('b' := 1, 'a' := 2))`, tString, `{"a":2,"b":1}`},
	{`TO_JSON_STRING(STRUCT(z := 1, a := 'x', m := ARRAY[d]))`, tString, `{"A":"x","M":[2.5],"Z":1}`},
	{"TO_JSON_STRING(STRUCT(`b` := i, `A` := 'y\tz'))", tString, `{"A":"y\tz","b":7}`},
	{`TO_JSON_STRING(CAST(1.5 AS DECIMAL(4, 2)))`, tString, "1.50"},
	{`JSON_ARRAY_CONTAINS('[1.5]', CAST(1.5 AS DECIMAL(4, 2)))`, tBool, false},
	{`JSON_ARRAY_CONTAINS('[[1]]', ARRAY[1])`, tBool, false},
	{`TO_JSON_STRING(ns)`, tString, "null"},
	{`TO_JSON_STRING(NULL)`, tString, "null"},
}

func init() { functionCaseSets = append(functionCaseSets, jsonFunctionCases) }

func TestJSONTypeErrors(t *testing.T) {
	for _, src := range []string{"EXTRACTJSONFIELD(1, '$')", "JSON_KEYS(i)", "JSON_CONCAT()", "IS_JSON_STRING('a', 'b')", "TO_JSON_STRING()"} {
		if _, err := compileExpr(t, src); err == nil {
			t.Errorf("%s compiled; want a type error", src)
		}
	}
}
