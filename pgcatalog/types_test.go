package pgcatalog

import (
	"testing"

	"github.com/sluice-sql/sluice/types"
)

func TestTypeOf(t *testing.T) {
	dec := types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}
	cases := []struct {
		in   types.Type
		oid  uint32
		name string
		mod  int32
	}{
		{types.BooleanType, OIDBool, "bool", -1},
		{types.IntegerType, OIDInt4, "int4", -1},
		{types.BigIntType, OIDInt8, "int8", -1},
		{types.DoubleType, OIDFloat8, "float8", -1},
		{dec, OIDNumeric, "numeric", 10<<16 | 2 + 4},
		{types.StringType, OIDText, "text", -1},
		{types.BytesType, OIDBytea, "bytea", -1},
		{types.TimestampType, OIDTimestamp, "timestamp", -1},
		{types.Type{Kind: types.Date}, OIDDate, "date", -1},
		{types.Type{Kind: types.Time}, OIDTime, "time", -1},
		{types.Type{Kind: types.Array, Elem: &types.StringType}, OIDTextArray, "_text", -1},
		{types.Type{Kind: types.Array, Elem: &dec}, OIDNumericArray, "_numeric", -1},
		{types.Type{Kind: types.Map, Key: &types.StringType, Elem: &types.BigIntType}, OIDJSONB, "jsonb", -1},
		{types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.IntegerType}}}, OIDJSONB, "jsonb", -1},
		{types.Type{Kind: types.Array, Elem: &types.Type{Kind: types.Map, Key: &types.StringType, Elem: &types.StringType}}, OIDJSONB, "jsonb", -1},
	}
	for _, c := range cases {
		got := TypeOf(c.in)
		if got.OID != c.oid || got.Name != c.name || got.TypeMod != c.mod {
			t.Errorf("TypeOf(%s) = %+v, want oid %d %s mod %d", c.in, got, c.oid, c.name, c.mod)
		}
	}
}
