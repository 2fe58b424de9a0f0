package format_test

import (
	"encoding/json"
	"testing"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// AppendJSONValue writes what ToJSON gives as ksqlDB's REST API does:
// Jackson's string escapes (HTML characters and U+2028 as they are), keys
// sorted, numbers as their text.
func TestAppendJSONValue(t *testing.T) {
	structT := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "Z", Type: types.StringType}, {Name: "A", Type: types.DoubleType}}}
	for _, tc := range []struct {
		name string
		v    any
		t    types.Type
		want string
	}{
		{"null", nil, types.StringType, `null`},
		{"bool", true, types.BooleanType, `true`},
		{"bigint", int64(-7), types.BigIntType, `-7`},
		{"int", int32(3), types.IntegerType, `3`},
		{"double", 30.0, types.DoubleType, `30.0`},
		{"number", json.Number("1"), types.UnknownType, `1`},
		{"string", "<a&b>\u2028\x1f\b\"", types.StringType, "\"<a&b>\u2028\\u001F\\b\\\"\""},
		{"bytes", []byte{1, 2}, types.BytesType, `"AQI="`},
		{"array", []any{"x", nil}, types.ArrayOf(types.StringType), `["x",null]`},
		{"map", map[string]any{"b<": int64(1), "a": int64(2)}, types.MapOf(types.StringType, types.BigIntType), `{"a":2,"b<":1}`},
		{"struct", []any{"s", 1.5}, structT, `{"A":1.5,"Z":"s"}`},
	} {
		got, err := format.AppendJSONValue([]byte("x:"), format.ToJSON(tc.v, tc.t))
		if err != nil || string(got) != "x:"+tc.want {
			t.Errorf("%s: AppendJSONValue = %s, %v; want x:%s", tc.name, got, err, tc.want)
		}
	}
	if _, err := format.AppendJSONValue(nil, struct{}{}); err == nil || err.Error() != "cannot encode: Go value of type struct {} is not one ToJSON gives" {
		t.Errorf("AppendJSONValue(struct{}{}) error = %v", err)
	}
}
