package types_test

import (
	"errors"
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

func dec(t *testing.T, s string) *apd.Decimal {
	t.Helper()
	d, err := types.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFitDecimal(t *testing.T) {
	tests := []struct {
		in        string
		p, s      int
		want      string // "" when the value overflows
		wantExact string // FitDecimalExact: "" when it fails
	}{
		{"3.4", 3, 2, "3.40", "3.40"},
		{"01.00", 5, 3, "1.000", "1.000"},
		{"0", 2, 1, "0.0", "0.0"},
		{"-0.0", 2, 1, "0.0", "0.0"}, // BigDecimal has no -0
		{"0.99", 2, 1, "1.0", ""},    // HALF_UP
		{"0.05", 2, 1, "0.1", ""},
		{"-0.05", 2, 1, "-0.1", ""}, // half away from zero
		{"0.04", 2, 1, "0.0", ""},
		{"10", 2, 1, "", ""}, // 10.0 needs three digits
		{"9.95", 2, 1, "", ""},
		{"9.94", 2, 1, "9.9", ""},
		{"12345678901234567890.5", 38, 0, "12345678901234567891", ""},
		{"1E+3", 4, 0, "1000", "1000"},
		{"1E+3", 3, 0, "", ""},
	}
	for _, tc := range tests {
		got, err := types.FitDecimal(dec(t, tc.in), tc.p, tc.s)
		switch {
		case tc.want == "" && !errors.Is(err, types.ErrDecimalOverflow):
			t.Errorf("FitDecimal(%s, %d, %d) = %v, %v; want overflow", tc.in, tc.p, tc.s, got, err)
		case tc.want != "" && (err != nil || types.FormatDecimal(got) != tc.want):
			t.Errorf("FitDecimal(%s, %d, %d) = %v, %v; want %s", tc.in, tc.p, tc.s, got, err, tc.want)
		}
		got, err = types.FitDecimalExact(dec(t, tc.in), tc.p, tc.s)
		switch {
		case tc.wantExact == "" && err == nil:
			t.Errorf("FitDecimalExact(%s, %d, %d) = %v; want an error", tc.in, tc.p, tc.s, got)
		case tc.wantExact != "" && (err != nil || types.FormatDecimal(got) != tc.wantExact):
			t.Errorf("FitDecimalExact(%s, %d, %d) = %v, %v; want %s", tc.in, tc.p, tc.s, got, err, tc.wantExact)
		}
	}
}

func TestDecimalConversions(t *testing.T) {
	if d, _ := types.DecimalFromFloat(0.1); types.FormatDecimal(d) != "0.1" {
		t.Errorf("DecimalFromFloat(0.1) = %s, want 0.1 (BigDecimal.valueOf)", d)
	}
	if f := types.DecimalFloat(dec(t, "10.01")); f != 10.01 {
		t.Errorf("DecimalFloat(10.01) = %v", f)
	}
	for in, want := range map[string]int64{"10.99": 10, "-10.99": -10, "0.5": 0, "123": 123} {
		if n, ok := types.DecimalToInt(dec(t, in)); !ok || n != want {
			t.Errorf("DecimalToInt(%s) = %d, %v; want %d", in, n, ok, want)
		}
	}
	if _, err := types.ParseDecimal("NaN"); err == nil {
		t.Error("ParseDecimal(NaN) should fail: BigDecimal has no NaN")
	}
	if s := types.FormatDecimal(dec(t, "1.2E+3")); s != "1200" {
		t.Errorf("FormatDecimal(1.2E+3) = %s, want 1200 (toPlainString)", s)
	}
	if s := types.FormatValue(dec(t, "3.40")); s != "3.40" {
		t.Errorf("FormatValue(3.40) = %s", s)
	}
	if f, ok := types.AsFloat(dec(t, "-2.5")); !ok || f != -2.5 {
		t.Errorf("AsFloat(-2.5) = %v, %v", f, ok)
	}
}

func TestCompareDecimal(t *testing.T) {
	tests := []struct {
		a, b any
		want int
	}{
		{dec(t, "3.40"), dec(t, "3.4"), 0}, // by value, whatever the scale
		{dec(t, "3.41"), dec(t, "3.4"), 1},
		{dec(t, "-1"), dec(t, "0.00"), -1},
		{dec(t, "2.00"), int32(2), 0},
		{int32(3), dec(t, "2.99"), 1},
		{dec(t, "5"), int64(6), -1},
		{int64(7), dec(t, "7.0"), 0},
		{dec(t, "0.1"), 0.1, 0}, // through BigDecimal.valueOf, like ksqlDB
		{0.25, dec(t, "0.5"), -1},
		{dec(t, "0.30000000000000001"), 0.3, 1}, // equal as doubles, not as decimals
		{0.3, dec(t, "0.30000000000000001"), -1},
		{dec(t, "1E+400"), math.Inf(1), -1},
		{math.Inf(-1), dec(t, "-5"), -1},
		{math.NaN(), dec(t, "5"), 1},
	}
	for _, tc := range tests {
		c, ok := types.Compare(tc.a, tc.b)
		if !ok || c != tc.want {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d", tc.a, tc.b, c, ok, tc.want)
		}
	}
	if _, ok := types.Compare(dec(t, "1"), "1"); ok {
		t.Error("a decimal and a string should not compare")
	}
	if !types.Equal(dec(t, "1.50"), dec(t, "1.5")) {
		t.Error("1.50 should equal 1.5")
	}
}

func TestDecimalEncodingRoundTrip(t *testing.T) {
	for _, s := range []string{"0", "0.00", "3.40", "-123.456", "99999999999999999999999999999999999999", "0.00000000000000000000000000000000000001", "1E+5"} {
		in := dec(t, s)
		buf := types.AppendValue(nil, in)
		out, rest, err := types.DecodeValue(buf)
		if err != nil || len(rest) != 0 {
			t.Fatalf("%s: DecodeValue: %v (rest %d)", s, err, len(rest))
		}
		d, ok := out.(*apd.Decimal)
		if !ok || d.Cmp(in) != 0 || d.Exponent != in.Exponent {
			t.Errorf("%s: round trip gave %v (%T)", s, out, out)
		}
	}
	// Inside a row, a list and a map, next to other values.
	row := []any{dec(t, "1.10"), []any{dec(t, "-2.5"), nil}, map[string]any{"k": dec(t, "7.000")}, int32(4)}
	buf := types.AppendValues(nil, row)
	got, _, err := types.DecodeValues(buf)
	if err != nil {
		t.Fatal(err)
	}
	if types.FormatValue(got[0]) != "1.10" || types.FormatValue(got[1].([]any)[0]) != "-2.5" ||
		types.FormatValue(got[2].(map[string]any)["k"]) != "7.000" || got[3] != int32(4) {
		t.Errorf("row round trip gave %v", got)
	}
	// A corrupt decimal payload is an error, not a panic.
	bad := types.AppendValue(nil, "x")
	bad[0] = buf[1] // the decimal tag
	if _, _, err := types.DecodeValue(bad); !errors.Is(err, types.ErrCorrupt) {
		t.Errorf("corrupt decimal: err = %v", err)
	}
}

func TestContainsDecimal(t *testing.T) {
	d := types.DecimalOf(4, 2)
	if !types.ArrayOf(d).ContainsDecimal() || !types.MapOf(types.StringType, d).ContainsDecimal() ||
		!(types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: d}}}).ContainsDecimal() {
		t.Error("nested DECIMAL not found")
	}
	if types.ArrayOf(types.DoubleType).ContainsDecimal() {
		t.Error("ARRAY<DOUBLE> holds no DECIMAL")
	}
	if d.String() != "DECIMAL(4, 2)" {
		t.Errorf("String() = %s", d)
	}
}

// TestRoundDecimal rounds as BigDecimal.setScale and writes the result at
// the given scale, exactly, also where the rounding position lies far
// beyond the value's first digit (CEIL of 1E-16 is 1).
func TestRoundDecimal(t *testing.T) {
	cases := []struct {
		in       string
		places   int
		rounding apd.Rounder
		scale    int
		want     string
	}{
		{"1234567898765432123.4567898765432150", 2, apd.RoundHalfUp, 16, "1234567898765432123.4600000000000000"},
		{"1234567898765432123.4567898765432150", 0, apd.RoundHalfUp, 0, "1234567898765432123"},
		{"1234567898765432123.4567898765432150", -3, apd.RoundHalfUp, 16, "1234567898765432000.0000000000000000"},
		{"1234567898765432123.4567898765432150", 30, apd.RoundHalfUp, 16, "1234567898765432123.4567898765432150"},
		{"-2.5", 0, apd.RoundHalfDown, 0, "-2"},
		{"2.5", 0, apd.RoundHalfUp, 0, "3"},
		{"0.0000000000000001", 0, apd.RoundCeiling, 16, "1.0000000000000000"},
		{"0.0000000000000001", 0, apd.RoundFloor, 16, "0.0000000000000000"},
		{"-0.0000000000000001", 0, apd.RoundFloor, 16, "-1.0000000000000000"},
		{"-0.0000000000000001", 0, apd.RoundCeiling, 16, "0.0000000000000000"}, // no -0
		{"0.0000000000000001", 0, apd.RoundUp, 0, "1"},
		{"0.0000000000000001", 0, apd.RoundHalfUp, 0, "0"},
		{"-0.0000000000000001", 0, apd.RoundDown, 0, "0"},
		{"9999999999999999999999.9999999999999999", 0, apd.RoundCeiling, 16, "10000000000000000000000.0000000000000000"},
		{"-12.35", 1, apd.RoundFloor, 2, "-12.40"},
		{"12.30", 1, apd.RoundCeiling, 2, "12.30"}, // exact: nothing added
		{"-5", -100, apd.RoundHalfDown, 0, "0"},    // rounded at 76 places: the same
	}
	for _, tc := range cases {
		got, err := types.RoundDecimal(dec(t, tc.in), tc.places, tc.rounding, tc.scale)
		if err != nil || types.FormatDecimal(got) != tc.want || got.Negative && got.IsZero() {
			t.Errorf("RoundDecimal(%s, %d, %s, %d) = %v, %v; want %s", tc.in, tc.places, tc.rounding, tc.scale, got, err, tc.want)
		}
	}
	// A result with more digits than any DECIMAL is an error, not a panic.
	if got, err := types.RoundDecimal(dec(t, "5"), -100, apd.RoundCeiling, 0); err == nil {
		t.Errorf("CEIL of 5 at 10^76: %s, want an error", got)
	}
}
