package format

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sluice-sql/sluice/types"
)

func col(name string, t types.Type) types.Column { return types.Column{Name: name, Type: t} }

func boolp(b bool) *bool { return &b }

var structT = types.Type{Kind: types.Struct, Fields: []types.Field{
	{Name: "A", Type: types.IntegerType}, {Name: "b", Type: types.StringType},
}}

func TestEncode(t *testing.T) {
	tests := []struct {
		name   string
		format string
		key    bool
		cols   []types.Column
		props  Props
		vals   []any
		want   string // "<nil>" for nil bytes
	}{
		{"json object", "json", false,
			[]types.Column{col("ID", types.BigIntType), col("NAME", types.StringType), col("PRICE", types.DoubleType), col("OK", types.BooleanType)},
			Props{}, []any{int64(9007199254740993), "a\"b\\c\n\x01<>", float64(125), true},
			`{"ID":9007199254740993,"NAME":"a\"b\\c\n\u0001<>","PRICE":125.0,"OK":true}`},
		{"json nulls", "JSON", false,
			[]types.Column{col("A", types.IntegerType), col("B", types.StringType)},
			Props{}, []any{nil, nil}, `{"A":null,"B":null}`},
		{"json doubles java style", "JSON", false,
			[]types.Column{col("A", types.DoubleType), col("B", types.DoubleType), col("C", types.DoubleType), col("D", types.DoubleType), col("E", types.DoubleType), col("F", types.DoubleType)},
			Props{}, []any{0.1, 1e7, 1.5e-5, -2.0, 0.0, math.NaN()},
			`{"A":0.1,"B":1.0E7,"C":1.5E-5,"D":-2.0,"E":0.0,"F":"NaN"}`},
		{"json nested", "JSON", false,
			[]types.Column{col("ARR", types.ArrayOf(types.DoubleType)), col("M", types.MapOf(types.StringType, types.BigIntType)), col("S", structT), col("BY", types.BytesType)},
			Props{}, []any{[]any{int64(1), 2.5, nil}, map[string]any{"z": int64(1), "a": int64(2)}, []any{int32(7), "x"}, []byte{1, 2, 3}},
			`{"ARR":[1.0,2.5,null],"M":{"a":2,"z":1},"S":{"A":7,"b":"x"},"BY":"AQID"}`},
		{"json wrapped single value", "json", false, []types.Column{col("V", types.BigIntType)}, Props{}, []any{int64(5)}, `{"V":5}`},
		{"json unwrapped single value", "json", false, []types.Column{col("V", types.BigIntType)}, Props{WrapSingleValue: boolp(false)}, []any{int64(5)}, `5`},
		{"json single key unwrapped", "json", true, []types.Column{col("K", types.StringType)}, Props{}, []any{"k1"}, `"k1"`},
		{"json single key null", "json", true, []types.Column{col("K", types.StringType)}, Props{}, []any{nil}, `<nil>`},
		{"json multi key object", "json", true, []types.Column{col("K1", types.StringType), col("K2", types.IntegerType)}, Props{}, []any{"a", int32(1)}, `{"K1":"a","K2":1}`},
		{"json no key columns", "json", true, nil, Props{}, []any{}, `<nil>`},
		{"json tombstone", "json", false, []types.Column{col("V", types.BigIntType)}, Props{}, nil, `<nil>`},
		// Jackson's escapes: \b \t \n \f \r by name, other control characters as upper-case \u00XX,
		// '/', '<' and non-ASCII as they are; invalid UTF-8 is U+FFFD, as Java decodes it.
		{"json string escapes", "json", false, []types.Column{col("V", types.StringType)}, Props{}, []any{"\b\t\n\f\r\x00\x1f\x7f\"\\/<é"}, `{"V":"\b\t\n\f\r\u0000\u001F` + "\x7f" + `\"\\/<é"}`},
		{"json invalid utf8", "json", false, []types.Column{col("V", types.StringType)}, Props{}, []any{"a\xffb"}, "{\"V\":\"a\uFFFDb\"}"},
		{"kafka string", "KAFKA", true, []types.Column{col("K", types.StringType)}, Props{}, []any{"héllo"}, "héllo"},
		{"kafka int", "kafka", true, []types.Column{col("K", types.IntegerType)}, Props{}, []any{int32(-2)}, "\xff\xff\xff\xfe"},
		{"kafka bigint", "kafka", false, []types.Column{col("V", types.BigIntType)}, Props{}, []any{int64(258)}, "\x00\x00\x00\x00\x00\x00\x01\x02"},
		{"kafka double", "kafka", false, []types.Column{col("V", types.DoubleType)}, Props{}, []any{1.0}, "\x3f\xf0\x00\x00\x00\x00\x00\x00"},
		{"kafka bytes", "kafka", false, []types.Column{col("V", types.BytesType)}, Props{}, []any{[]byte{0, 1}}, "\x00\x01"},
		{"kafka no key", "kafka", true, nil, Props{}, []any{}, `<nil>`},
		{"kafka null", "kafka", true, []types.Column{col("K", types.BigIntType)}, Props{}, []any{nil}, `<nil>`},
		{"delimited", "DELIMITED", false,
			[]types.Column{col("A", types.BigIntType), col("B", types.StringType), col("C", types.DoubleType), col("D", types.BooleanType), col("E", types.IntegerType)},
			Props{}, []any{int64(1), `x, "y"`, 2.0, false, nil}, `1,"x, ""y""",2.0,false,`},
		{"delimited tab", "delimited", false, []types.Column{col("A", types.StringType), col("B", types.StringType)}, Props{Delimiter: "TAB"}, []any{"a,b", "c"}, "a,b\tc"},
		{"delimited pipe", "delimited", false, []types.Column{col("A", types.StringType), col("B", types.StringType)}, Props{Delimiter: "|"}, []any{"a", "c"}, "a|c"},
		{"none", "NONE", true, nil, Props{}, []any{}, `<nil>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCodec(t, tc.format, tc.key, tc.cols, tc.props)
			got, err := c.Encode(tc.vals)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			gs := string(got)
			if got == nil {
				gs = "<nil>"
			}
			if gs != tc.want {
				t.Errorf("Encode = %q, want %q", gs, tc.want)
			}
		})
	}
}

func newTestCodec(t *testing.T, format string, key bool, cols []types.Column, p Props) Codec {
	t.Helper()
	var c Codec
	var err error
	if key {
		c, err = NewKeyCodec(format, cols, p)
	} else {
		c, err = NewValueCodec(format, cols, p)
	}
	if err != nil {
		t.Fatalf("new codec: %v", err)
	}
	return c
}

func TestDecode(t *testing.T) {
	bid := []types.Column{col("AUCTION", types.BigIntType), col("PRICE", types.DoubleType), col("CHANNEL", types.StringType), col("OK", types.BooleanType), col("N", types.IntegerType)}
	tests := []struct {
		name   string
		format string
		key    bool
		cols   []types.Column
		props  Props
		data   []byte
		want   []any
	}{
		{"json exact names", "json", false, bid, Props{}, []byte(`{"AUCTION":9223372036854775807,"PRICE":1,"CHANNEL":"web","OK":true,"N":3}`),
			[]any{int64(math.MaxInt64), 1.0, "web", true, int32(3)}},
		{"json case-insensitive and missing", "json", false, bid, Props{}, []byte(`{"auction":1,"price":2.5}`),
			[]any{int64(1), 2.5, nil, nil, nil}},
		{"json exact wins over folded", "json", false, []types.Column{col("ID", types.BigIntType)}, Props{}, []byte(`{"id":1,"ID":2,"Id":3}`),
			[]any{int64(2)}},
		{"json lenient coercions", "json", false, bid, Props{}, []byte(`{"AUCTION":"12","PRICE":"1.5","CHANNEL":42.50,"OK":"TRUE","N":7.9}`),
			[]any{int64(12), 1.5, "42.50", true, int32(7)}},
		{"json string from bool and object", "json", false, []types.Column{col("A", types.StringType), col("B", types.StringType)}, Props{}, []byte(`{"A":false,"B":{"x":[1,"y"]}}`),
			[]any{"false", `{"x":[1,"y"]}`}},
		{"json null record", "json", false, bid, Props{}, nil, []any{nil, nil, nil, nil, nil}},
		{"json null literal", "json", false, bid, Props{}, []byte(" null "), []any{nil, nil, nil, nil, nil}},
		{"json nested", "json", false, []types.Column{col("ARR", types.ArrayOf(types.IntegerType)), col("M", types.MapOf(types.StringType, types.DoubleType)), col("S", structT), col("TS", types.TimestampType)}, Props{},
			[]byte(`{"arr":[1,null,"3"],"m":{"k":1},"s":{"a":1,"B":"z"},"ts":1700000000000}`),
			[]any{[]any{int32(1), nil, int32(3)}, map[string]any{"k": 1.0}, []any{int32(1), "z"}, int64(1700000000000)}},
		{"json timestamp text", "json", false, []types.Column{col("TS", types.TimestampType)}, Props{}, []byte(`{"TS":"1970-01-01T00:00:01.5Z"}`), []any{int64(1500)}},
		{"json unwrapped value", "json", false, []types.Column{col("V", types.StringType)}, Props{WrapSingleValue: boolp(false)}, []byte(`"x"`), []any{"x"}},
		{"json single key", "json", true, []types.Column{col("K", types.BigIntType)}, Props{}, []byte(`123`), []any{int64(123)}},
		{"json multi key", "json", true, []types.Column{col("K1", types.StringType), col("K2", types.IntegerType)}, Props{}, []byte(`{"k1":"a","K2":1}`), []any{"a", int32(1)}},
		{"kafka int", "kafka", true, []types.Column{col("K", types.IntegerType)}, Props{}, []byte("\xff\xff\xff\xfe"), []any{int32(-2)}},
		{"kafka bigint", "kafka", true, []types.Column{col("K", types.BigIntType)}, Props{}, []byte("\x00\x00\x00\x00\x00\x00\x01\x02"), []any{int64(258)}},
		{"kafka double", "kafka", true, []types.Column{col("K", types.DoubleType)}, Props{}, []byte("\x3f\xf0\x00\x00\x00\x00\x00\x00"), []any{1.0}},
		{"kafka string", "kafka", true, []types.Column{col("K", types.StringType)}, Props{}, []byte("k"), []any{"k"}},
		{"kafka empty string", "kafka", true, []types.Column{col("K", types.StringType)}, Props{}, []byte{}, []any{""}},
		{"kafka null", "kafka", true, []types.Column{col("K", types.StringType)}, Props{}, nil, []any{nil}},
		{"delimited", "delimited", false, bid, Props{}, []byte(`1,2.5,"a,""b""",true,`), []any{int64(1), 2.5, `a,"b"`, true, nil}},
		{"delimited empty string is null", "delimited", false, []types.Column{col("A", types.StringType), col("B", types.StringType)}, Props{}, []byte(`,x`), []any{nil, "x"}},
		{"delimited space", "delimited", false, []types.Column{col("A", types.StringType), col("B", types.IntegerType)}, Props{Delimiter: "space"}, []byte(`a 1`), []any{"a", int32(1)}},
		{"delimited null record", "delimited", false, []types.Column{col("A", types.StringType)}, Props{}, nil, []any{nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCodec(t, tc.format, tc.key, tc.cols, tc.props)
			dst := make([]any, len(tc.cols))
			for i := range dst {
				dst[i] = "stale"
			}
			if err := c.Decode(tc.data, dst); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tc.want, dst); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		format  string
		cols    []types.Column
		data    string
		wantMsg string
	}{
		{"json syntax", "json", []types.Column{col("A", types.BigIntType)}, `{"A":1,}`, "invalid JSON at byte"},
		{"json truncated", "json", []types.Column{col("A", types.BigIntType)}, `{"A":1`, "truncated JSON"},
		{"json trailing", "json", []types.Column{col("A", types.BigIntType)}, `{"A":1} x`, "unexpected data after"},
		{"json not object", "json", []types.Column{col("A", types.BigIntType)}, `[1]`, "expected a JSON object with fields A, got array"},
		{"json bad number", "json", []types.Column{col("A", types.BigIntType)}, `{"A":"abc"}`, `column A: malformed record: cannot read JSON string "abc" as BIGINT`},
		{"json int overflow", "json", []types.Column{col("A", types.IntegerType)}, `{"A":3000000000}`, "overflows INT"},
		{"json bool", "json", []types.Column{col("A", types.BooleanType)}, `{"A":1}`, "cannot read JSON number 1 as BOOLEAN"},
		{"kafka length", "kafka", []types.Column{col("A", types.IntegerType)}, "\x00\x01", "needs 4 bytes, got 2"},
		{"delimited count", "delimited", []types.Column{col("A", types.BigIntType), col("B", types.StringType)}, "1,a,b", "has 3 fields, expected 2 (A, B)"},
		{"delimited quote", "delimited", []types.Column{col("A", types.StringType)}, `"a`, "invalid DELIMITED record"},
		{"delimited type", "delimited", []types.Column{col("A", types.BigIntType)}, `x`, `cannot read JSON string "x" as BIGINT`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCodec(t, tc.format, false, tc.cols, Props{})
			err := c.Decode([]byte(tc.data), make([]any, len(tc.cols)))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode error = %v, want ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("Decode error = %q, want it to contain %q", err, tc.wantMsg)
			}
		})
	}
}

func TestNewCodecErrors(t *testing.T) {
	two := []types.Column{col("A", types.StringType), col("B", types.StringType)}
	yes := true
	tests := []struct {
		format string
		cols   []types.Column
		props  Props
		kind   error
		msg    string
	}{
		{"XML", two, Props{}, ErrUnknownFormat, `Unknown format: XML (supported formats are JSON, KAFKA, DELIMITED, NONE, AVRO, PROTOBUF, PROTOBUF_NOSR, JSON_SR)`},
		{"AVRO", two, Props{}, ErrUnsupported, "format AVRO needs a Schema Registry, and none is configured"},
		{"json_sr", []types.Column{col("M", types.MapOf(types.IntegerType, types.StringType))}, Props{Registry: noSchemas{}}, ErrUnsupported, "JSON only supports MAP types with STRING keys"},
		{"kafka", two, Props{}, ErrUnsupported, "The 'KAFKA' format only supports a single field. Got: [`A` STRING, `B` STRING]"},
		{"kafka", []types.Column{col("A", types.BooleanType)}, Props{}, ErrUnsupported, "does not support type 'BOOLEAN'"},
		{"delimited", []types.Column{col("A", types.ArrayOf(types.StringType))}, Props{}, ErrUnsupported, "The 'DELIMITED' format does not support type 'ARRAY', column: `A`"},
		{"delimited", []types.Column{col("A", types.MapOf(types.StringType, types.IntegerType))}, Props{}, ErrUnsupported, "does not support type 'MAP', column: `A`"},
		{"delimited", two, Props{WrapSingleValue: &yes}, ErrUnsupported, "Format 'DELIMITED' does not support 'WRAP_SINGLE_VALUE' set to 'true'."},
		{"delimited", two, Props{Delimiter: "ab"}, ErrUnsupported, `invalid delimiter "ab"`},
		{"none", two, Props{}, ErrUnsupported, "The 'NONE' format can only be used when no columns are defined. Got: [`A` STRING, `B` STRING]"},
	}
	for _, tc := range tests {
		_, err := NewValueCodec(tc.format, tc.cols, tc.props)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("NewValueCodec(%s) error = %v, want %v containing %q", tc.format, err, tc.kind, tc.msg)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	c := newTestCodec(t, "json", false, []types.Column{col("A", types.BigIntType)}, Props{})
	if _, err := c.Encode([]any{int64(1), int64(2)}); !errors.Is(err, ErrEncode) {
		t.Errorf("wrong count: %v", err)
	}
	if _, err := c.Encode([]any{struct{}{}}); !errors.Is(err, ErrEncode) {
		t.Errorf("wrong Go type: %v", err)
	}
	k := newTestCodec(t, "kafka", false, []types.Column{col("A", types.IntegerType)}, Props{})
	if _, err := k.Encode([]any{"x"}); !errors.Is(err, ErrEncode) {
		t.Errorf("kafka wrong Go type: %v", err)
	}
}

// Round trips through every format must give back the same Go values.
func TestRoundTrip(t *testing.T) {
	cols := []types.Column{col("A", types.BigIntType), col("B", types.StringType), col("C", types.DoubleType), col("D", types.BooleanType), col("E", types.IntegerType)}
	row := []any{int64(-5), "x,\"y\"\n", 0.1, true, nil}
	for _, f := range []string{"json", "delimited"} {
		c := newTestCodec(t, f, false, cols, Props{})
		b, err := c.Encode(row)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]any, len(cols))
		if err := c.Decode(b, got); err != nil {
			t.Fatalf("%s: %v (%q)", f, err, b)
		}
		if diff := cmp.Diff(row, got); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", f, diff)
		}
	}
}

func TestWindowedKeys(t *testing.T) {
	tw := EncodeTimeWindowedKey([]byte("k"), 30000)
	if want := "k\x00\x00\x00\x00\x00\x00\x75\x30"; string(tw) != want {
		t.Errorf("time windowed = %q, want %q", tw, want)
	}
	k, start, err := DecodeTimeWindowedKey(tw)
	if err != nil || string(k) != "k" || start != 30000 {
		t.Errorf("DecodeTimeWindowedKey = %q, %d, %v", k, start, err)
	}
	sw := EncodeSessionWindowedKey([]byte("k"), 1, 2)
	if want := "k\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01"; string(sw) != want {
		t.Errorf("session windowed = %q, want %q (end before start)", sw, want)
	}
	k, start, end, err := DecodeSessionWindowedKey(sw)
	if err != nil || string(k) != "k" || start != 1 || end != 2 {
		t.Errorf("DecodeSessionWindowedKey = %q, %d, %d, %v", k, start, end, err)
	}
	if _, _, err := DecodeTimeWindowedKey([]byte("short")); !errors.Is(err, ErrMalformed) {
		t.Errorf("short time key: %v", err)
	}
	if _, _, _, err := DecodeSessionWindowedKey(make([]byte, 15)); !errors.Is(err, ErrMalformed) {
		t.Errorf("short session key: %v", err)
	}
}

func TestJSONConversions(t *testing.T) {
	mt := types.MapOf(types.StringType, types.ArrayOf(types.BytesType))
	tests := []struct {
		name string
		json any
		t    types.Type
		goV  any
		back any // ToJSON(goV); nil means same as json
	}{
		{"bigint exact", json.Number("9223372036854775807"), types.BigIntType, int64(math.MaxInt64), int64(math.MaxInt64)},
		{"bigint from float", 12.0, types.BigIntType, int64(12), int64(12)},
		{"int from string", "12", types.IntegerType, int32(12), int64(12)},
		{"double from int", int64(3), types.DoubleType, 3.0, json.Number("3.0")}, // as Jackson writes it
		{"double large", 1e7, types.DoubleType, 1e7, json.Number("1.0E7")},
		{"double small", 1.5e-4, types.DoubleType, 1.5e-4, json.Number("1.5E-4")},
		{"double NaN is a string", "NaN", types.DoubleType, math.NaN(), "NaN"},
		{"decimal keeps every digit", json.Number("-1234567898765432123.4567898765432150"), types.DecimalOf(38, 16),
			decimalOf(t, "-1234567898765432123.4567898765432150"), json.Number("-1234567898765432123.4567898765432150")},
		{"decimal from int has its scale", int64(3), types.DecimalOf(38, 16), decimalOf(t, "3.0000000000000000"), json.Number("3.0000000000000000")},
		{"string from number", json.Number("1.50"), types.StringType, "1.50", "1.50"},
		{"bool from string", "false", types.BooleanType, false, false},
		{"struct", map[string]any{"a": json.Number("1"), "B": "x"}, structT, []any{int32(1), "x"}, map[string]any{"A": int64(1), "b": "x"}},
		{"map of arrays of bytes", map[string]any{"k": []any{"AQI="}}, mt, map[string]any{"k": []any{[]byte{1, 2}}}, map[string]any{"k": []any{"AQI="}}},
		{"null", nil, types.BigIntType, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromJSON(tc.json, tc.t)
			if err != nil {
				t.Fatalf("FromJSON: %v", err)
			}
			if diff := cmp.Diff(tc.goV, got, cmpopts.EquateNaNs(), cmp.Comparer(sameDecimal)); diff != "" {
				t.Errorf("FromJSON (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.back, ToJSON(got, tc.t)); diff != "" {
				t.Errorf("ToJSON (-want +got):\n%s", diff)
			}
		})
	}
}

// An integer value in a DOUBLE or DECIMAL column is written as a value of
// the column's type.
func TestToJSONIntegerAsColumnType(t *testing.T) {
	if got := ToJSON(int32(30), types.DoubleType); got != json.Number("30.0") {
		t.Errorf("INT 30 as DOUBLE: %#v", got)
	}
	if got := ToJSON(int64(30), types.DecimalOf(4, 2)); got != json.Number("30.00") {
		t.Errorf("BIGINT 30 as DECIMAL(4, 2): %#v", got)
	}
}

func decimalOf(t *testing.T, s string) *apd.Decimal {
	t.Helper()
	d, err := types.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sameDecimal is equality of value and scale.
func sameDecimal(a, b *apd.Decimal) bool { return a.Cmp(b) == 0 && a.Exponent == b.Exponent }

var bidCols = []types.Column{
	col("AUCTION", types.BigIntType), col("BIDDER", types.BigIntType), col("PRICE", types.BigIntType),
	col("CHANNEL", types.StringType), col("URL", types.StringType), col("DATETIME", types.BigIntType), col("EXTRA", types.StringType),
}

var bidJSON = []byte(`{"auction":1000,"bidder":2001,"price":1851412,"channel":"Google","url":"https://www.nexmark.com/xpl/iiv/item.htm?query=1&channel_id=1234","dateTime":1700000000123,"extra":"zazgrwwwvpkrffcnvlfppwfu"}`)

func FuzzJSONDecode(f *testing.F) {
	f.Add(bidJSON)
	f.Add([]byte(`{"A":[1,{"b":null}],"S":{"a":"1"}}`))
	f.Add([]byte(`"x"`))
	f.Add([]byte(`{"a":1e400}`))
	cols := append([]types.Column{col("A", types.ArrayOf(types.StringType)), col("S", structT), col("I", types.IntegerType)}, bidCols...)
	wrapped := newJSONCodec(cols, Props{}, false)
	single := newJSONCodec([]types.Column{col("D", types.DoubleType)}, Props{}, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		dst := make([]any, len(cols))
		if err := wrapped.Decode(data, dst); err == nil {
			if _, err := wrapped.Encode(dst); err != nil {
				t.Errorf("decoded row does not encode: %v", err)
			}
		}
		_ = single.Decode(data, dst[:1])
	})
}

func BenchmarkJSONDecodeRow(b *testing.B) { benchDecodeRow(b, false) }

// BenchmarkJSONDecodeRowParser decodes through fastjson, the path of
// records the span scanner declines.
func BenchmarkJSONDecodeRowParser(b *testing.B) { benchDecodeRow(b, true) }

func benchDecodeRow(b *testing.B, parser bool) {
	c := newJSONCodec(bidCols, Props{}, false)
	c.noSpans = parser
	dst := make([]any, len(bidCols))
	b.ReportAllocs()
	b.SetBytes(int64(len(bidJSON)))
	for b.Loop() {
		if err := c.Decode(bidJSON, dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONEncodeRow(b *testing.B) {
	c := newJSONCodec(bidCols, Props{}, false)
	row := make([]any, len(bidCols))
	if err := c.Decode(bidJSON, row); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(bidJSON)))
	for b.Loop() {
		if _, err := c.Encode(row); err != nil {
			b.Fatal(err)
		}
	}
}

// DELIMITED fields are quoted as ksqlDB's CSV printer quotes them, so
// that its readers (and ours) read them back.
func TestDelimitedQuoting(t *testing.T) {
	tests := []struct {
		name  string
		delim string
		vals  []any
		want  string
	}{
		{"plain", "", []any{"ab", "cd"}, "ab,cd"},
		{"null is empty and bare", "", []any{nil, nil}, ","},
		{"empty first field", "", []any{"", "x"}, `"",x`},
		{"empty later field", "", []any{"x", ""}, "x,"},
		{"first field starts with a sign", "", []any{"-5", "-5"}, `"-5",-5`},
		{"first field starts with a dot", "", []any{".5", "x"}, `".5",x`},
		{"first field starts with a letter", "", []any{"é", "é"}, `"é",é`},
		{"any field starting up to #", "", []any{"a", "!x", "#", "$"}, `a,"!x","#",$`},
		{"trailing space", "", []any{"a ", "b"}, `"a ",b`},
		{"delimiter", "|", []any{"a|b", "a,b"}, `"a|b"|a,b`},
		{"quote doubled", "", []any{`a"b`}, `"a""b"`},
		{"line break", "", []any{"a\nb"}, "\"a\nb\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols := make([]types.Column, len(tc.vals))
			for i := range cols {
				cols[i] = col(fmt.Sprintf("C%d", i), types.StringType)
			}
			c := newTestCodec(t, "delimited", false, cols, Props{Delimiter: tc.delim})
			got, err := c.Encode(tc.vals)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("Encode = %q, want %q", got, tc.want)
			}
			dst := make([]any, len(cols))
			if err := c.Decode(got, dst); err != nil {
				t.Fatalf("Decode(%q): %v", got, err)
			}
			for i, v := range tc.vals {
				if v == "" {
					v = nil // an empty field reads as NULL
				}
				if dst[i] != v {
					t.Errorf("Decode(%q)[%d] = %v, want %v", got, i, dst[i], v)
				}
			}
		})
	}
}

func TestCheckDelimiter(t *testing.T) {
	tests := []struct{ in, err string }{
		{"|", ""},
		{"TAB", ""},
		{"space", ""},
		{"", "Delimiter cannot be empty"},
		{" ", "Delimiter cannot be empty"},
		{"\t", "Delimiter cannot be empty"},
		{"<~>", "Invalid delimiter value: '<~>'. Delimiter must be a single character or TAB,SPACE"},
	}
	for _, tc := range tests {
		err := CheckDelimiter(tc.in)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckDelimiter(%q) = %v, want %q", tc.in, err, tc.err)
		}
	}
}

// noSchemas is a registry with no schema: JSON_SR codecs never ask it.
type noSchemas struct{}

func (noSchemas) Schema(context.Context, int) (Schema, error) { return Schema{}, ErrSchemaNotFound }
