package format

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/types"
)

// copyCols covers every type JSONCopy copies.
var copyCols = []types.Column{
	col("S", types.StringType), col("I", types.IntegerType), col("B", types.BigIntType),
	col("D", types.DoubleType), col("F", types.BooleanType),
}

// appendCopy appends the copy of data to dst when every output column is
// copied; ok false: the record takes the general path (dst unchanged).
func appendCopy(c *JSONCopy, dst, data []byte) (out []byte, ok bool) {
	if !c.Read(data) {
		return dst, false
	}
	out, err := c.Write(dst, data, nil)
	if err != nil {
		return dst, false
	}
	return out, true
}

// generalPath is what the engine writes without the copy: decode into
// values, encode the selected ones.
func generalPath(t testing.TB, in, out *jsonCodec, from []int, data []byte) ([]byte, bool) {
	t.Helper()
	vals := make([]any, len(in.cols))
	if err := in.Decode(data, vals); err != nil || in.Missing() > 0 {
		return nil, false
	}
	sel := make([]any, len(from))
	for o, i := range from {
		sel[o] = vals[i]
	}
	b, err := out.Encode(sel)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b, true
}

func TestJSONCopy(t *testing.T) {
	all := []int{0, 1, 2, 3, 4}
	outAll := []types.Column{
		col("S", types.StringType), col("I", types.IntegerType), col("B", types.BigIntType),
		col("D", types.DoubleType), col("F", types.BooleanType),
	}
	cases := []struct {
		name string
		in   string
		from []int
		out  []types.Column
		want string // "" : declined
	}{
		{"select star", `{"S":"x","I":1,"B":2,"D":1.5,"F":true}`, all, outAll, `{"S":"x","I":1,"B":2,"D":1.5,"F":true}`},
		{"field order and case, unknown fields, spaces", ` { "f" : false , "x" : [1, {"y": "\u00e9"}], "d":-2.5E-7, "b":-9223372036854775808, "i":2147483647, "s":"é ü", "z":null } `, all, outAll,
			`{"S":"é ü","I":2147483647,"B":-9223372036854775808,"D":-2.5E-7,"F":false}`},
		{"nulls", `{"S":null,"I":null,"B":null,"D":null,"F":null}`, all, outAll, `{"S":null,"I":null,"B":null,"D":null,"F":null}`},
		{"subset renamed and reordered", `{"S":"x","I":1,"B":2,"D":1.5,"F":true}`, []int{3, 0},
			[]types.Column{col("PRICE", types.DoubleType), col("NAME", types.StringType)}, `{"PRICE":1.5,"NAME":"x"}`},
		{"double in the engine's spelling", `{"S":"","I":0,"B":0,"D":1.0E7,"F":true}`, all, outAll, `{"S":"","I":0,"B":0,"D":1.0E7,"F":true}`},
		{"double written otherwise", `{"S":"x","I":1,"B":2,"D":1,"F":true}`, all, outAll, ""},
		{"double with exponent written otherwise", `{"S":"x","I":1,"B":2,"D":1e7,"F":true}`, all, outAll, ""},
		{"escaped string", `{"S":"a\"b","I":1,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"escape a decode would change", `{"S":"\u0041","I":1,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"invalid utf-8", "{\"S\":\"\xff\",\"I\":1,\"B\":2,\"D\":1.5,\"F\":true}", all, outAll, ""},
		{"control character", "{\"S\":\"a\tb\",\"I\":1,\"B\":2,\"D\":1.5,\"F\":true}", all, outAll, ""},
		{"integer out of range", `{"S":"x","I":2147483648,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"bigint out of range", `{"S":"x","I":1,"B":9223372036854775808,"D":1.5,"F":true}`, all, outAll, ""},
		{"integer with fraction", `{"S":"x","I":1.0,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"minus zero", `{"S":"x","I":-0,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"leading zero", `{"S":"x","I":01,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"number as string", `{"S":"x","I":"1","B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"string as number", `{"S":1,"I":1,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"missing column", `{"S":"x","I":1,"B":2,"D":1.5}`, all, outAll, ""},
		{"repeated column", `{"S":"x","s":"y","I":1,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"nested column", `{"S":["x"],"I":1,"B":2,"D":1.5,"F":true}`, all, outAll, ""},
		{"trailing text", `{"S":"x","I":1,"B":2,"D":1.5,"F":true} x`, all, outAll, ""},
		{"bad unknown field", `{"S":"x","I":1,"B":2,"D":1.5,"F":true,"X":[1,]}`, all, outAll, ""},
		{"bad escape in unknown field", `{"S":"x","I":1,"B":2,"D":1.5,"F":true,"X":"\q"}`, all, outAll, ""},
		{"not an object", `["x"]`, all, outAll, ""},
		{"NaN", `{"S":"x","I":1,"B":2,"D":NaN,"F":true}`, all, outAll, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewJSONCopy(copyCols, Props{}, tc.out, Props{}, tc.from, nil)
			if c == nil {
				t.Fatal("NewJSONCopy declined the columns")
			}
			got, ok := appendCopy(c, []byte("prefix:"), []byte(tc.in))
			if tc.want == "" {
				if ok || string(got) != "prefix:" {
					t.Fatalf("copied %q, want a decline", got)
				}
				return
			}
			if !ok || string(got) != "prefix:"+tc.want {
				t.Fatalf("got %q (ok %v), want %q", got, ok, tc.want)
			}
			general, gok := generalPath(t, newJSONCodec(copyCols, Props{}, false), newJSONCodec(tc.out, Props{}, false), tc.from, []byte(tc.in))
			if !gok || string(general) != tc.want {
				t.Fatalf("the general path writes %q (ok %v), the copy %q", general, gok, tc.want)
			}
		})
	}
}

func TestNewJSONCopyDeclines(t *testing.T) {
	s := []types.Column{col("S", types.StringType)}
	two := []types.Column{col("S", types.StringType), col("T", types.StringType)}
	cases := []struct {
		name    string
		in, out []types.Column
		inProps Props
		from    []int
		needed  []bool
	}{
		{"unwrapped input", s, two, Props{WrapSingleValue: boolp(false)}, []int{0, 0}, nil},
		{"type change", two, []types.Column{col("S", types.BigIntType)}, Props{}, []int{0}, nil},
		{"decimal", []types.Column{col("M", types.Type{Kind: types.Decimal, Precision: 4, Scale: 2})}, []types.Column{col("M", types.Type{Kind: types.Decimal, Precision: 4, Scale: 2})}, Props{}, []int{0}, nil},
		{"array", []types.Column{col("A", types.ArrayOf(types.StringType))}, []types.Column{col("A", types.ArrayOf(types.StringType))}, Props{}, []int{0}, nil},
		{"input out of range", two, s, Props{}, []int{2}, nil},
		{"unneeded input", two, s, Props{}, []int{1}, []bool{true, false}},
		{"no output", two, nil, Props{}, nil, nil},
	}
	for _, tc := range cases {
		if c := NewJSONCopy(tc.in, tc.inProps, tc.out, Props{}, tc.from, tc.needed); c != nil {
			t.Errorf("%s: NewJSONCopy accepted", tc.name)
		}
	}
}

// Columns a query does not read are skipped like unknown fields: a
// record may lack them or hold anything valid there.
func TestJSONCopyUnneeded(t *testing.T) {
	two := []types.Column{col("S", types.StringType), col("B", types.BigIntType)}
	c := NewJSONCopy(two, Props{}, []types.Column{col("S", types.StringType)}, Props{}, []int{0}, []bool{true, false})
	for in, want := range map[string]string{
		`{"S":"x"}`:              `{"S":"x"}`,
		`{"S":"x","B":"nope"}`:   `{"S":"x"}`,
		`{"B":1.5e3,"S":"x"}`:    `{"S":"x"}`,
		`{"B":{"y":[]},"S":"x"}`: `{"S":"x"}`,
	} {
		got, ok := appendCopy(c, nil, []byte(in))
		if !ok || string(got) != want {
			t.Errorf("%s: got %q (ok %v), want %q", in, got, ok, want)
		}
	}
}

// The copy never writes what the general path would not: for any record
// it copies, decoding and encoding gives the same bytes.
func FuzzJSONCopy(f *testing.F) {
	f.Add([]byte(`{"S":"x","I":1,"B":2,"D":1.5,"F":true}`))
	f.Add([]byte(`{"s":"é","i":-7,"b":0,"d":1.0E-5,"f":false,"x":{"a":[1,2,{"b":null}]}}`))
	f.Add([]byte(`{"S":null,"I":null,"B":null,"D":0.001,"F":null}`))
	f.Add([]byte(`{"S":"x","I":1,"B":2,"D":123456.789,"F":true}`))
	f.Add(bidJSON)
	from := []int{4, 3, 2, 1, 0}
	out := []types.Column{
		col("F", types.BooleanType), col("D", types.DoubleType), col("B", types.BigIntType),
		col("I", types.IntegerType), col("S", types.StringType),
	}
	c := NewJSONCopy(copyCols, Props{}, out, Props{}, from, nil)
	in, enc := newJSONCodec(copyCols, Props{}, false), newJSONCodec(out, Props{}, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := appendCopy(c, nil, data)
		if !ok {
			return
		}
		want, gok := generalPath(t, in, enc, from, data)
		if !gok || string(got) != string(want) {
			t.Fatalf("copy %q, general path %q (ok %v)", got, want, gok)
		}
	})
}

func BenchmarkJSONCopyRow(b *testing.B) {
	from := make([]int, len(bidCols))
	for i := range from {
		from[i] = i
	}
	c := NewJSONCopy(bidCols, Props{}, bidCols, Props{}, from, nil)
	var dst []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(bidJSON)))
	for b.Loop() {
		var ok bool
		if dst, ok = appendCopy(c, dst[:0], bidJSON); !ok {
			b.Fatal("declined")
		}
	}
}

// The span reader decodes exactly what the parser does: same values,
// same missing count, and an error only where the parser has one.
func FuzzJSONDecodeSpans(f *testing.F) {
	f.Add([]byte(`{"S":"x","I":1,"B":2,"D":1.5,"F":true}`))
	f.Add([]byte(`{"s":"é","i":-7,"b":-9223372036854775808,"d":1e-5,"f":false,"x":{"a":[1,2,{"b":null}]}}`))
	f.Add([]byte(`{"S":null,"D":1e400,"F":null}`))
	f.Add([]byte(`{"S":"x","I":2147483647,"B":9223372036854775807,"D":-0.0,"F":true,"S":"y"}`))
	f.Add([]byte(`{"I":"1","B":1.0,"D":"2"}`))
	f.Add(bidJSON)
	needed := []bool{true, false, true, true, true}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sel := range [][]bool{nil, needed} {
			spans, parser := newJSONCodec(copyCols, Props{}, false), newJSONCodec(copyCols, Props{}, false)
			spans.Select(sel)
			parser.Select(sel)
			parser.noSpans = true
			a, b := make([]any, len(copyCols)), make([]any, len(copyCols))
			errA, errB := spans.Decode(data, a), parser.Decode(data, b)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("select %v: span path error %v, parser %v", sel, errA, errB)
			}
			if errA != nil {
				continue
			}
			if !cmp.Equal(a, b) || spans.Missing() != parser.Missing() {
				t.Fatalf("select %v: span path %#v (missing %d), parser %#v (missing %d)", sel, a, spans.Missing(), b, parser.Missing())
			}
		}
	})
}
