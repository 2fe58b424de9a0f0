package types_test

import (
	"math"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

func TestCompare(t *testing.T) {
	nan := math.NaN()
	inf := math.Inf(1)
	cases := []struct {
		name   string
		a, b   any
		want   int
		wantOK bool
	}{
		{"int32 lt", int32(1), int32(2), -1, true},
		{"int32 eq", int32(5), int32(5), 0, true},
		{"int32 gt", int32(-1), int32(-2), 1, true},
		{"int32 vs int64", int32(3), int64(3), 0, true},
		{"int32 vs int64 beyond int32", int32(math.MaxInt32), int64(math.MaxInt32) + 1, -1, true},
		{"int64 vs int32", int64(-5), int32(-4), -1, true},
		{"int64 extremes", int64(math.MinInt64), int64(math.MaxInt64), -1, true},
		{"int32 vs float64 eq", int32(7), 7.0, 0, true},
		{"int32 vs float64 fraction", int32(7), 7.5, -1, true},
		{"float64 vs int64", 2.5, int64(2), 1, true},
		{"float64 vs int32", -0.5, int32(0), -1, true},
		{"float64 eq", 0.1, 0.1, 0, true},
		{"negative zero equals zero", math.Copysign(0, -1), 0.0, 0, true},
		{"inf vs max int64", inf, int64(math.MaxInt64), 1, true},
		{"-inf vs float", math.Inf(-1), -1e308, -1, true},
		// NaN sorts after everything, and equals itself, like Java's Double.compare.
		{"NaN vs NaN", nan, nan, 0, true},
		{"NaN vs float", nan, 1.0, 1, true},
		{"float vs NaN", 1.0, nan, -1, true},
		{"NaN vs +Inf", nan, inf, 1, true},
		{"+Inf vs NaN", inf, nan, -1, true},
		{"NaN vs int32", nan, int32(0), 1, true},
		{"int64 vs NaN", int64(math.MaxInt64), nan, -1, true},
		{"strings", "a", "b", -1, true},
		{"strings bytewise, upper before lower", "Z", "a", -1, true},
		{"string prefix", "ab", "abc", -1, true},
		{"empty strings", "", "", 0, true},
		{"strings utf8 order", "é", "z", 1, true},
		{"bool false < true", false, true, -1, true},
		{"bool true > false", true, false, 1, true},
		{"bool eq", true, true, 0, true},
		{"bytes", []byte{1, 2}, []byte{1, 3}, -1, true},
		{"bytes prefix", []byte{1}, []byte{1, 0}, -1, true},
		{"bytes nil vs empty", []byte(nil), []byte{}, 0, true},
		{"string vs int32", "1", int32(1), 0, false},
		{"int64 vs string", int64(1), "1", 0, false},
		{"bool vs int32", true, int32(1), 0, false},
		{"string vs bytes", "a", []byte("a"), 0, false},
		{"bytes vs string", []byte("a"), "a", 0, false},
		{"float vs bool", 1.0, true, 0, false},
		{"nil vs nil", nil, nil, 0, false},
		{"nil vs int32", nil, int32(1), 0, false},
		{"int32 vs nil", int32(1), nil, 0, false},
		{"lists", []any{int32(1)}, []any{int32(1)}, 0, false},
		{"maps", map[string]any{}, map[string]any{}, 0, false},
		{"go int is not a SQL value", 1, 1, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := types.Compare(tc.a, tc.b)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Compare(%#v, %#v) = %d, %v; want %d, %v", tc.a, tc.b, got, ok, tc.want, tc.wantOK)
			}
			if !tc.wantOK {
				return
			}
			// Compare is antisymmetric.
			back, ok := types.Compare(tc.b, tc.a)
			if !ok || back != -tc.want {
				t.Errorf("Compare(%#v, %#v) = %d, %v; want %d, true", tc.b, tc.a, back, ok, -tc.want)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b any
		want bool
	}{
		{int32(1), int64(1), true},
		{int64(2), 2.0, true},
		{int32(2), 2.5, false},
		{"x", "x", true},
		{"x", "X", false},
		{math.NaN(), math.NaN(), true},
		{"1", int32(1), false},
		{nil, nil, false},
		{true, true, true},
		{[]byte("ab"), []byte("ab"), true},
	}
	for _, tc := range cases {
		if got := types.Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestAsFloatAsInt64(t *testing.T) {
	floats := []struct {
		v    any
		want float64
		ok   bool
	}{
		{int32(-3), -3, true},
		{int64(1 << 40), 1 << 40, true},
		{2.5, 2.5, true},
		{"2.5", 0, false},
		{nil, 0, false},
		{true, 0, false},
	}
	for _, tc := range floats {
		got, ok := types.AsFloat(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("AsFloat(%#v) = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
	ints := []struct {
		v    any
		want int64
		ok   bool
	}{
		{int32(math.MinInt32), math.MinInt32, true},
		{int64(math.MaxInt64), math.MaxInt64, true},
		{2.0, 0, false}, // doubles are not silently truncated
		{"2", 0, false},
		{nil, 0, false},
	}
	for _, tc := range ints {
		got, ok := types.AsInt64(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("AsInt64(%#v) = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFormatDouble(t *testing.T) {
	tenth := 0.1
	cases := []struct {
		in   float64
		want string
	}{
		{125, "125.0"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{0.1, "0.1"},
		{-2.5, "-2.5"},
		{1.0 / 3, "0.3333333333333333"},
		{0.001, "0.001"}, // Java switches to E notation below 1e-3
		{9999999, "9999999.0"},
		{9999999.5, "9999999.5"},
		{tenth + 0.2, "0.30000000000000004"}, // a runtime sum, not an exact constant
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tc := range cases {
		if got := types.FormatDouble(tc.in); got != tc.want {
			t.Errorf("FormatDouble(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{"text", "text"},
		{"", ""},
		{int32(-7), "-7"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{2.0, "2.0"},
		{true, "true"},
		{false, "false"},
		{[]byte{0xde, 0xad}, "dead"},
		{[]any{int32(1), "a"}, "[1 a]"},
	}
	for _, tc := range cases {
		if got := types.FormatValue(tc.in); got != tc.want {
			t.Errorf("FormatValue(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSchema(t *testing.T) {
	s := types.Schema{Columns: []types.Column{
		{Name: "ID", Type: types.StringType, Key: true},
		{Name: "Price", Type: types.DoubleType},
		{Name: "TAGS", Type: types.ArrayOf(types.StringType)},
	}}
	finds := map[string]int{"id": 0, "ID": 0, "PRICE": 1, "price": 1, "tags": 2, "nope": -1, "": -1}
	for name, want := range finds {
		if got := s.Find(name); got != want {
			t.Errorf("Find(%q) = %d, want %d", name, got, want)
		}
	}
	if got := len(s.Keys()); got != 1 || s.Keys()[0].Name != "ID" {
		t.Errorf("Keys() = %v", s.Keys())
	}
	if got := s.Values(); len(got) != 2 || got[0].Name != "Price" || got[1].Name != "TAGS" {
		t.Errorf("Values() = %v", got)
	}
	if got, want := s.String(), "ID STRING KEY, Price DOUBLE, TAGS ARRAY<STRING>"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestTypeStringAndEqual(t *testing.T) {
	st := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "a", Type: types.IntegerType}, {Name: "B", Type: types.MapOf(types.StringType, types.DoubleType)}}}
	cases := []struct {
		t    types.Type
		want string
	}{
		{types.IntegerType, "INTEGER"},
		{types.BigIntType, "BIGINT"},
		{types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}, "DECIMAL(10, 2)"},
		{types.ArrayOf(types.ArrayOf(types.BooleanType)), "ARRAY<ARRAY<BOOLEAN>>"},
		{types.MapOf(types.StringType, types.BigIntType), "MAP<STRING, BIGINT>"},
		{st, "STRUCT<`a` INTEGER, `B` MAP<STRING, DOUBLE>>"},
		{types.Type{Kind: 200}, "Kind(200)"},
	}
	for _, tc := range cases {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
		if !tc.t.Equal(tc.t) {
			t.Errorf("%s not Equal to itself", tc.want)
		}
	}
	unequal := [][2]types.Type{
		{types.IntegerType, types.BigIntType},
		{types.ArrayOf(types.IntegerType), types.ArrayOf(types.BigIntType)},
		{types.ArrayOf(types.IntegerType), types.IntegerType},
		{types.MapOf(types.StringType, types.IntegerType), types.MapOf(types.IntegerType, types.IntegerType)},
		{types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}, types.Type{Kind: types.Decimal, Precision: 10, Scale: 3}},
		{st, types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "a", Type: types.IntegerType}}}},
		{st, types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.IntegerType}, st.Fields[1]}}},
	}
	for _, p := range unequal {
		if p[0].Equal(p[1]) || p[1].Equal(p[0]) {
			t.Errorf("%s and %s compare Equal", p[0], p[1])
		}
	}
}

func TestParseScalar(t *testing.T) {
	cases := map[string]types.Type{
		"int": types.IntegerType, "INTEGER": types.IntegerType, "bigint": types.BigIntType, "Long": types.BigIntType,
		"double": types.DoubleType, "FLOAT": types.DoubleType, "real": types.DoubleType,
		"varchar": types.StringType, "STRING": types.StringType, "bool": types.BooleanType, "BOOLEAN": types.BooleanType,
		"bytes": types.BytesType, "timestamp": types.TimestampType, "date": types.DateType, "time": types.TimeType,
	}
	for name, want := range cases {
		got, ok := types.ParseScalar(name)
		if !ok || !got.Equal(want) {
			t.Errorf("ParseScalar(%q) = %s, %v; want %s", name, got, ok, want)
		}
	}
	for _, bad := range []string{"", "ARRAY", "DECIMAL", "text", "int32"} {
		if got, ok := types.ParseScalar(bad); ok {
			t.Errorf("ParseScalar(%q) = %s, true; want false", bad, got)
		}
	}
	numeric := map[types.Kind]bool{types.Integer: true, types.BigInt: true, types.Double: true, types.Decimal: true}
	for k := types.Unknown; k <= types.Struct; k++ {
		if got := (types.Type{Kind: k}).IsNumeric(); got != numeric[k] {
			t.Errorf("%s.IsNumeric() = %v", k, got)
		}
	}
}
