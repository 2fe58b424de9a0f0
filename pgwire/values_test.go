package pgwire

import (
	"math"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

// TestFloat8Text: float8 as Postgres 12+ prints it (shortest exact
// digits; exponent form below 1e-4 and from 1e15).
func TestFloat8Text(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{1.5, "1.5"}, {0.1, "0.1"}, {-2, "-2"}, {0, "0"}, {math.Copysign(0, -1), "-0"},
		{1e14, "100000000000000"}, {1e15, "1e+15"}, {1.25e20, "1.25e+20"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {1.5e-300, "1.5e-300"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
		{123456.789, "123456.789"},
	} {
		if got := string(appendFloat8(nil, c.in)); got != c.want {
			t.Errorf("appendFloat8(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestArrayText: arrays as Postgres prints them, elements quoted where
// its array parser needs it, NULL bare.
func TestArrayText(t *testing.T) {
	str := types.Type{Kind: types.Array, Elem: &types.StringType}
	nested := types.Type{Kind: types.Array, Elem: &str}
	byt := types.Type{Kind: types.Array, Elem: &types.BytesType}
	ts := types.Type{Kind: types.Array, Elem: &types.TimestampType}
	for _, c := range []struct {
		v    []any
		t    types.Type
		want string
	}{
		{[]any{"a", "", "null", "NULL", nil, `x"y`, `b\c`, "a,b", "{}", "sp ace"}, str, `{a,"","null","NULL",NULL,"x\"y","b\\c","a,b","{}","sp ace"}`},
		{[]any{[]any{"a", nil}, nil}, nested, `{{a,NULL},NULL}`},
		{[]any{[]byte{1, 0xab}}, byt, `{"\\x01ab"}`},
		{[]any{int64(1704164645678)}, ts, `{"2024-01-02 03:04:05.678"}`},
		{[]any{}, str, `{}`},
	} {
		if got := string(appendSluiceText(nil, c.v, c.t, false)); got != c.want {
			t.Errorf("%v: %s, want %s", c.v, got, c.want)
		}
	}
}

// TestLiteral: parameters become literals of their column's type; text
// is always one quoted string.
func TestLiteral(t *testing.T) {
	dec := types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}
	date, tm := types.Type{Kind: types.Date}, types.Type{Kind: types.Time}
	for _, c := range []struct {
		v    any
		t    *types.Type
		want string
	}{
		{"' OR 1=1 --", &types.StringType, `''' OR 1=1 --'`},
		{"' OR 1=1 --", nil, `''' OR 1=1 --'`},
		{"-5", &types.IntegerType, "(-5)"},
		{int64(7), &types.BigIntType, "7"},
		{"2.5", &types.DoubleType, "2.5E+00"},
		{-0.5, &types.DoubleType, "(-5E-01)"},
		{"12.3", &dec, "12.3"},
		{"t", &types.BooleanType, "TRUE"},
		{nil, &types.IntegerType, "CAST(NULL AS INTEGER)"},
		{nil, nil, "NULL"},
		{`\x00ff`, &types.BytesType, "TO_BYTES('00ff', 'hex')"},
		{"2024-01-02 03:04:05.678", &types.TimestampType, "FROM_UNIXTIME(1704164645678)"},
		{"2024-01-02", &date, "FROM_DAYS(19724)"},
		{"03:04:05.5", &tm, "PARSE_TIME('03:04:05.500', 'HH:mm:ss.SSS')"},
	} {
		got, err := literal(c.v, c.t)
		if err != nil || got != c.want {
			t.Errorf("literal(%q, %v) = %q, %v; want %q", c.v, c.t, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		v any
		t *types.Type
	}{{"1; DROP STREAM X", &types.IntegerType}, {"yes please", &types.BooleanType}, {"1e5x", &dec}} {
		if got, err := literal(bad.v, bad.t); err == nil {
			t.Errorf("literal(%q, %v) = %q, want an error", bad.v, bad.t, got)
		}
	}
}

// TestScanParams: $n outside strings, quoted names and comments.
func TestScanParams(t *testing.T) {
	sql := "SELECT '$1', \"$2\", `$3` -- $4\n, $5 /* $6 */ FROM t WHERE a=$7 AND b$8 = $10"
	var got []int
	for _, r := range scanParams(sql) {
		got = append(got, r.n)
	}
	if len(got) != 3 || got[0] != 5 || got[1] != 7 || got[2] != 10 {
		t.Errorf("scanParams = %v, want [5 7 10]", got)
	}
}
