package format

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/types"
)

// temporalCols are the columns the span reader reads from numbers as
// FromJSON does, beside a BIGINT.
var temporalCols = []types.Column{
	col("TS", types.TimestampType), col("D", types.DateType), col("T", types.TimeType), col("B", types.BigIntType),
}

// TestJSONSpansTemporal: TIMESTAMP, DATE and TIME columns written as
// integers are read by the span reader, to the values the parser gives;
// their text forms, fractions and out-of-range numbers are left to the
// parser, which reads or refuses them as before.
func TestJSONSpansTemporal(t *testing.T) {
	for _, c := range []struct {
		data  string
		spans bool // the span reader takes the record
		want  []any
	}{
		{`{"TS":1700000000123,"D":19700,"T":3600000,"B":7}`, true, []any{int64(1700000000123), int32(19700), int32(3600000), int64(7)}},
		{`{"ts":-1,"d":-2,"t":0,"b":null}`, true, []any{int64(-1), int32(-2), int32(0), nil}},
		{`{"TS":null,"D":null}`, true, []any{nil, nil, nil, nil}},
		{`{"TS":"2023-11-14T22:13:20.123","D":"2023-11-14","T":1,"B":1}`, false, []any{int64(1700000000123), int32(19675), int32(1), int64(1)}},
		{`{"TS":1.9,"D":2.5}`, false, []any{int64(1), int32(2), nil, nil}},
		{`{"TS":9223372036854775807,"T":2147483647}`, true, []any{int64(9223372036854775807), nil, int32(2147483647), nil}},
		{`{"D":2147483648}`, false, nil}, // overflows DATE's INT: an error on both paths
		{`{"TS":-0}`, false, []any{int64(0), nil, nil, nil}},
	} {
		spans, parser := newJSONCodec(temporalCols, Props{}, false), newJSONCodec(temporalCols, Props{}, false)
		parser.noSpans = true
		if got := spans.spanReader().read([]byte(c.data)); got != c.spans {
			t.Errorf("%s: span reader takes it %v, want %v", c.data, got, c.spans)
		}
		a, b := make([]any, len(temporalCols)), make([]any, len(temporalCols))
		errA, errB := spans.Decode([]byte(c.data), a), parser.Decode([]byte(c.data), b)
		if c.want == nil {
			if errA == nil || errB == nil {
				t.Errorf("%s: errors %v (spans) and %v (parser), want both", c.data, errA, errB)
			}
			continue
		}
		if errA != nil || errB != nil {
			t.Errorf("%s: errors %v (spans) and %v (parser)", c.data, errA, errB)
			continue
		}
		if diff := cmp.Diff(c.want, a); diff != "" {
			t.Errorf("%s: spans (-want +got):\n%s", c.data, diff)
		}
		if diff := cmp.Diff(c.want, b); diff != "" {
			t.Errorf("%s: parser (-want +got):\n%s", c.data, diff)
		}
	}
}

// FuzzJSONDecodeSpansTemporal: over temporal columns too, the span
// reader decodes exactly what the parser does.
func FuzzJSONDecodeSpansTemporal(f *testing.F) {
	f.Add([]byte(`{"TS":1700000000123,"D":19700,"T":3600000,"B":7}`))
	f.Add([]byte(`{"TS":"2023-11-14T22:13:20.123","D":"2023-11-14"}`))
	f.Add([]byte(`{"D":2147483648,"TS":1e3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, parser := newJSONCodec(temporalCols, Props{}, false), newJSONCodec(temporalCols, Props{}, false)
		parser.noSpans = true
		a, b := make([]any, len(temporalCols)), make([]any, len(temporalCols))
		errA, errB := spans.Decode(data, a), parser.Decode(data, b)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("span path error %v, parser %v", errA, errB)
		}
		if errA == nil && (!cmp.Equal(a, b) || spans.Missing() != parser.Missing()) {
			t.Fatalf("span path %#v (missing %d), parser %#v (missing %d)", a, spans.Missing(), b, parser.Missing())
		}
	})
}

// TestJSONSpansStringsOwnTheirBytes: the strings of a record the span
// reader decodes share one copy of their bytes, not the record's buffer:
// they stay as they were when it is reused.
func TestJSONSpansStringsOwnTheirBytes(t *testing.T) {
	cols := []types.Column{col("A", types.StringType), col("N", types.BigIntType), col("B", types.StringType), col("C", types.StringType)}
	c := newJSONCodec(cols, Props{}, false)
	data := []byte(`{"A":"channel-1","N":7,"B":"https://x/y","C":""}`)
	if c.spanReader() == nil || !c.spanReader().read(data) {
		t.Fatal("the span reader declined the record")
	}
	got := make([]any, len(cols))
	if err := c.Decode(data, got); err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 'x'
	}
	if diff := cmp.Diff([]any{"channel-1", int64(7), "https://x/y", ""}, got); diff != "" {
		t.Errorf("after the record's buffer changed (-want +got):\n%s", diff)
	}
}
