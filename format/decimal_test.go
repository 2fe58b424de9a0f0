package format

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

func mustDec(t *testing.T, s string) *apd.Decimal {
	t.Helper()
	d, err := types.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDecimalFormats writes DECIMAL values in each format that supports
// them and reads them back: the scale survives (3.40 stays 3.40).
func TestDecimalFormats(t *testing.T) {
	d32 := types.DecimalOf(3, 2)
	tests := []struct {
		format string
		key    bool
		cols   []types.Column
		vals   []any
		want   string
	}{
		{"JSON", false, []types.Column{col("A", d32), col("B", types.DecimalOf(5, 0)), col("C", d32)},
			[]any{mustDec(t, "3.40"), mustDec(t, "-12345"), nil}, `{"A":3.40,"B":-12345,"C":null}`},
		{"JSON", false, []types.Column{col("L", types.ArrayOf(d32)), col("S", types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "X", Type: d32}}})},
			[]any{[]any{mustDec(t, "0.00"), nil}, []any{mustDec(t, "1.05")}}, `{"L":[0.00,null],"S":{"X":1.05}}`},
		{"JSON", true, []types.Column{col("K", types.DecimalOf(4, 1))}, []any{mustDec(t, "12.3")}, `12.3`},
		{"DELIMITED", false, []types.Column{col("A", types.DecimalOf(5, 3)), col("B", d32)},
			[]any{mustDec(t, "10.120"), mustDec(t, "-0.01")}, `10.120,-0.01`},
		{"DELIMITED", false, []types.Column{col("A", types.DecimalOf(5, 3)), col("B", d32)},
			[]any{mustDec(t, "0.000"), nil}, `0.000,`},
	}
	for _, tc := range tests {
		var c Codec
		var err error
		if tc.key {
			c, err = NewKeyCodec(tc.format, tc.cols, Props{})
		} else {
			c, err = NewValueCodec(tc.format, tc.cols, Props{})
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Encode(tc.vals)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s Encode = %s, %v; want %s", tc.format, b, err, tc.want)
			continue
		}
		got := make([]any, len(tc.cols))
		if err := c.Decode(b, got); err != nil {
			t.Errorf("%s Decode(%s): %v", tc.format, b, err)
			continue
		}
		again, err := c.Encode(got)
		if err != nil || string(again) != tc.want {
			t.Errorf("%s round trip = %s, %v; want %s", tc.format, again, err, tc.want)
		}
	}
}

func TestDecimalFromJSON(t *testing.T) {
	d32 := types.DecimalOf(3, 2)
	tests := []struct {
		in   any
		want string // "" for an ErrMalformed error
	}{
		{json.Number("3.4"), "3.40"},
		{"3.4", "3.40"}, // ksqlDB reads numeric strings too
		{" 01.5 ", "1.50"},
		{json.Number("3"), "3.00"},
		{2.5, "2.50"},
		{int64(-9), "-9.00"},
		{json.Number("3.456"), ""}, // would need rounding
		{json.Number("10.0"), ""},  // too many integer digits
		{"abc", ""},
		{true, ""},
	}
	for _, tc := range tests {
		got, err := FromJSON(tc.in, d32)
		if tc.want == "" {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("FromJSON(%v) = %v, %v; want ErrMalformed", tc.in, got, err)
			}
			continue
		}
		d, ok := got.(*apd.Decimal)
		if err != nil || !ok || types.FormatDecimal(d) != tc.want {
			t.Errorf("FromJSON(%v) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if v := ToJSON(mustDec(t, "3.40"), d32); v != json.Number("3.40") {
		t.Errorf("ToJSON(3.40) = %#v, want json.Number 3.40", v)
	}
	b, _ := json.Marshal(ToJSON([]any{mustDec(t, "1.10")}, types.ArrayOf(d32)))
	if string(b) != `[1.10]` {
		t.Errorf("marshalled ToJSON = %s", b)
	}
}

func TestKafkaRefusesDecimal(t *testing.T) {
	_, err := NewValueCodec("KAFKA", []types.Column{col("V", types.DecimalOf(4, 2))}, Props{})
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("KAFKA DECIMAL: err = %v, want ErrUnsupported (as ksqlDB)", err)
	}
}

func TestDoubleFromDecimal(t *testing.T) {
	// An INSERT or an internal path may hand a DOUBLE column a decimal.
	v, err := FromJSON(mustDec(t, "2.50"), types.DoubleType)
	if err != nil || v != 2.5 {
		t.Errorf("FromJSON(2.50, DOUBLE) = %v, %v", v, err)
	}
}
