package format

import (
	"errors"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

// TestAppendEncode checks that each Appender writes, after whatever dst
// holds, exactly the bytes its Encode returns, and nil (not dst) where
// Encode returns nil: a null key or value must stay a null.
func TestAppendEncode(t *testing.T) {
	col := func(name string, k types.Kind) types.Column {
		return types.Column{Name: name, Type: types.Type{Kind: k}}
	}
	unwrap := false
	cases := []struct {
		name, format string
		cols         []types.Column
		props        Props
		vals         []any
		want         []byte // nil: a null
		err          error
	}{
		{"json", "JSON", []types.Column{col("A", types.BigInt), col("B", types.String), col("C", types.Double)}, Props{}, []any{int64(7), "x", 1.5}, []byte(`{"A":7,"B":"x","C":1.5}`), nil},
		{"json null column", "JSON", []types.Column{col("A", types.BigInt)}, Props{}, []any{nil}, []byte(`{"A":null}`), nil},
		{"json tombstone", "JSON", []types.Column{col("A", types.BigInt)}, Props{}, nil, nil, nil},
		{"json unwrapped", "JSON", []types.Column{col("A", types.String)}, Props{WrapSingleValue: &unwrap}, []any{"v"}, []byte(`"v"`), nil},
		{"json unwrapped null", "JSON", []types.Column{col("A", types.String)}, Props{WrapSingleValue: &unwrap}, []any{nil}, nil, nil},
		{"json wrong count", "JSON", []types.Column{col("A", types.BigInt)}, Props{}, []any{int64(1), int64(2)}, nil, ErrEncode},
		{"json_sr", "JSON_SR", []types.Column{col("A", types.Integer)}, Props{Registry: schemaMap{}, SchemaID: 5}, []any{int32(3)}, []byte("\x00\x00\x00\x00\x05{\"A\":3}"), nil},
		{"json_sr tombstone", "JSON_SR", []types.Column{col("A", types.Integer)}, Props{Registry: schemaMap{}, SchemaID: 5}, nil, nil, nil},
		{"kafka string", "KAFKA", []types.Column{col("K", types.String)}, Props{}, []any{"abc"}, []byte("abc"), nil},
		{"kafka empty string", "KAFKA", []types.Column{col("K", types.String)}, Props{}, []any{""}, []byte{}, nil},
		{"kafka null", "KAFKA", []types.Column{col("K", types.String)}, Props{}, []any{nil}, nil, nil},
		{"kafka bigint", "KAFKA", []types.Column{col("K", types.BigInt)}, Props{}, []any{int64(258)}, []byte{0, 0, 0, 0, 0, 0, 1, 2}, nil},
		{"kafka int in bigint", "KAFKA", []types.Column{col("K", types.BigInt)}, Props{}, []any{int32(-1)}, []byte{255, 255, 255, 255, 255, 255, 255, 255}, nil},
		{"kafka int", "KAFKA", []types.Column{col("K", types.Integer)}, Props{}, []any{int32(258)}, []byte{0, 0, 1, 2}, nil},
		{"kafka double", "KAFKA", []types.Column{col("K", types.Double)}, Props{}, []any{1.0}, []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, nil},
		{"kafka bytes", "KAFKA", []types.Column{col("K", types.Bytes)}, Props{}, []any{[]byte{1, 2}}, []byte{1, 2}, nil},
		{"kafka wrong type", "KAFKA", []types.Column{col("K", types.Integer)}, Props{}, []any{"x"}, nil, ErrEncode},
		{"delimited", "DELIMITED", []types.Column{col("A", types.BigInt), col("B", types.String)}, Props{}, []any{int64(1), "a,b"}, []byte(`1,"a,b"`), nil},
		{"delimited nulls", "DELIMITED", []types.Column{col("A", types.BigInt), col("B", types.String)}, Props{}, []any{nil, nil}, []byte(","), nil},
		{"delimited one null", "DELIMITED", []types.Column{col("A", types.BigInt)}, Props{}, []any{nil}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewValueCodec(tc.format, tc.cols, tc.props)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := c.Encode(tc.vals)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("Encode: error %v, want %v", err, tc.err)
			}
			if string(enc) != string(tc.want) || (enc == nil) != (tc.want == nil) {
				t.Fatalf("Encode = %q (nil %t), want %q (nil %t)", enc, enc == nil, tc.want, tc.want == nil)
			}
			app, ok := c.(Appender)
			if !ok {
				t.Fatalf("%s codec is no Appender", tc.format)
			}
			for _, dst := range [][]byte{nil, []byte("prefix|"), make([]byte, 3, 4)} {
				got, err := app.AppendEncode(dst, tc.vals)
				if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
					t.Fatalf("AppendEncode(%q): error %v, want %v", dst, err, tc.err)
				}
				switch {
				case tc.want == nil && got != nil:
					t.Fatalf("AppendEncode(%q) = %q, want nil", dst, got)
				case tc.want != nil && (got == nil || string(got) != string(dst)+string(tc.want)):
					t.Fatalf("AppendEncode(%q) = %q (nil %t), want %q", dst, got, got == nil, string(dst)+string(tc.want))
				}
			}
		})
	}
}
