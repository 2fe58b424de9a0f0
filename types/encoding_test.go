package types_test

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sluice-sql/sluice/types"
)

// roundTripValues covers every Go type the encoding supports.
var roundTripValues = []struct {
	name string
	v    any
}{
	{"nil", nil},
	{"false", false},
	{"true", true},
	{"int32 zero", int32(0)},
	{"int32 min", int32(math.MinInt32)},
	{"int32 max", int32(math.MaxInt32)},
	{"int32 -1", int32(-1)},
	{"int64 zero", int64(0)},
	{"int64 min", int64(math.MinInt64)},
	{"int64 max", int64(math.MaxInt64)},
	{"float64", 2.5},
	{"float64 tiny", math.SmallestNonzeroFloat64},
	{"float64 -0", math.Copysign(0, -1)},
	{"float64 +Inf", math.Inf(1)},
	{"float64 -Inf", math.Inf(-1)},
	{"float64 NaN", math.NaN()},
	{"empty string", ""},
	{"string", "hello"},
	{"unicode string", "héllo, 世界"},
	{"string with NUL", "a\x00b"},
	{"long string", string(make([]byte, 300))}, // two-byte length varint
	{"bytes", []byte{0, 1, 0xff}},
	{"empty list", []any{}},
	{"list", []any{int32(1), "two", 3.0, nil, true}},
	{"nested list", []any{[]any{int64(1), []any{}}, []any{nil}}},
	{"empty map", map[string]any{}},
	{"map", map[string]any{"a": int32(1), "": "empty key", "nil": nil}},
	{"nested map", map[string]any{"m": map[string]any{"l": []any{int64(2), map[string]any{"x": false}}}}},
	{"list of maps", []any{map[string]any{"k": []byte("v")}, map[string]any{}}},
	{"AVG accumulator", []any{float64(10.5), int64(3)}},
}

var cmpOpts = []cmp.Option{cmpopts.EquateNaNs()}

func TestValueRoundTrip(t *testing.T) {
	for _, tc := range roundTripValues {
		t.Run(tc.name, func(t *testing.T) {
			trailer := []byte{0xAA, 0xBB}
			buf := append(types.AppendValue([]byte("prefix"), tc.v), trailer...)
			got, rest, err := types.DecodeValue(buf[len("prefix"):])
			if err != nil {
				t.Fatalf("DecodeValue: %v", err)
			}
			if diff := cmp.Diff(tc.v, got, cmpOpts...); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			if string(rest) != string(trailer) {
				t.Errorf("rest = %x, want %x", rest, trailer)
			}
		})
	}
}

func TestFloatRoundTripKeepsBits(t *testing.T) {
	for _, f := range []float64{math.Copysign(0, -1), math.NaN(), math.Float64frombits(0x7ff8000000000123)} {
		got, _, err := types.DecodeValue(types.AppendValue(nil, f))
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got.(float64)) != math.Float64bits(f) {
			t.Errorf("bits %x came back as %x", math.Float64bits(f), math.Float64bits(got.(float64)))
		}
	}
}

func TestEmptyBytesStayBytes(t *testing.T) {
	got, _, err := types.DecodeValue(types.AppendValue(nil, []byte{}))
	if err != nil {
		t.Fatal(err)
	}
	b, ok := got.([]byte)
	if !ok || len(b) != 0 {
		t.Fatalf("empty BYTES decoded as %#v, want an empty []byte (not NULL)", got)
	}
}

func TestDecodedBytesDoNotAliasBuffer(t *testing.T) {
	buf := types.AppendValue(nil, []byte("abc"))
	got, _, err := types.DecodeValue(buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 0
	}
	if string(got.([]byte)) != "abc" {
		t.Errorf("decoded bytes changed with the buffer: %q", got)
	}
}

func TestUnknownGoTypeEncodesAsText(t *testing.T) {
	got, _, err := types.DecodeValue(types.AppendValue(nil, 42)) // a Go int is not a SQL value
	if err != nil {
		t.Fatal(err)
	}
	if got != "42" {
		t.Errorf("got %#v, want \"42\"", got)
	}
}

func TestValuesRoundTrip(t *testing.T) {
	rows := [][]any{
		{},
		{nil},
		{"k", int32(1), int64(2), 3.5, nil, []any{"x"}, map[string]any{"y": true}},
	}
	for _, row := range rows {
		buf := types.AppendValues(nil, row)
		buf = types.AppendValue(buf, "next")
		got, rest, err := types.DecodeValues(buf)
		if err != nil {
			t.Fatalf("DecodeValues(%v): %v", row, err)
		}
		if diff := cmp.Diff(row, got, cmpOpts...); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
		next, rest, err := types.DecodeValue(rest)
		if err != nil || next != "next" || len(rest) != 0 {
			t.Errorf("after the row: %v, %x, %v", next, rest, err)
		}
	}
}

// Each value's encoding is self-delimiting, so every strict prefix of it
// is corrupt.
func TestDecodeTruncated(t *testing.T) {
	for _, tc := range roundTripValues {
		full := types.AppendValue(nil, tc.v)
		for n := range len(full) {
			v, rest, err := types.DecodeValue(full[:n])
			if !errors.Is(err, types.ErrCorrupt) {
				t.Errorf("%s truncated to %d of %d bytes: got %#v, rest %x, err %v; want ErrCorrupt", tc.name, n, len(full), v, rest, err)
			}
		}
	}
	row := types.AppendValues(nil, []any{"a", int64(1), []any{2.0}})
	for n := range len(row) {
		if _, _, err := types.DecodeValues(row[:n]); !errors.Is(err, types.ErrCorrupt) {
			t.Errorf("row truncated to %d of %d bytes: err %v, want ErrCorrupt", n, len(row), err)
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	cases := []struct {
		name string
		buf  []byte
	}{
		{"empty", nil},
		{"unknown tag", []byte{0x0a}},
		{"tag 0xff", []byte{0xff, 0, 0, 0, 0}},
		{"string length beyond buffer", []byte{6, 5, 'a', 'b'}},
		{"string length varint overflows", []byte{6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"string length unterminated varint", []byte{6, 0x80}},
		{"huge string length", []byte{6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
		{"bytes length beyond buffer", []byte{7, 3, 1}},
		{"list count beyond buffer", []byte{8, 100, 0}},
		{"list element missing", []byte{8, 2, 0}},
		{"list element corrupt", []byte{8, 1, 0x0c}},
		{"map count beyond buffer", []byte{9, 50}},
		{"map key length beyond buffer", []byte{9, 1, 9, 'k'}},
		{"map value missing", []byte{9, 1, 1, 'k'}},
		{"map value corrupt", []byte{9, 1, 1, 'k', 3, 0}},
		{"huge map count", []byte{9, 0xff, 0xff, 0xff, 0xff, 0x0f}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, rest, err := types.DecodeValue(tc.buf)
			if !errors.Is(err, types.ErrCorrupt) {
				t.Errorf("got %#v, rest %x, err %v; want ErrCorrupt", v, rest, err)
			}
		})
	}
	if _, _, err := types.DecodeValues([]byte{0x80}); !errors.Is(err, types.ErrCorrupt) {
		t.Errorf("DecodeValues with a bad count: err %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeValue(f *testing.F) {
	for _, tc := range roundTripValues {
		f.Add(types.AppendValue(nil, tc.v))
	}
	f.Add([]byte{})
	f.Add([]byte{8, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, rest, err := types.DecodeValue(data)
		if err != nil {
			if !errors.Is(err, types.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if len(rest) > len(data) {
			t.Fatalf("rest longer than input")
		}
		// A decoded value encodes again to something that decodes to it.
		again, rest2, err := types.DecodeValue(types.AppendValue(nil, v))
		if err != nil || len(rest2) != 0 {
			t.Fatalf("re-encoding %#v: rest %x, err %v", v, rest2, err)
		}
		if diff := cmp.Diff(v, again, cmpOpts...); diff != "" {
			t.Fatalf("re-encoded value differs (-first +second):\n%s", diff)
		}
	})
}

// TestMapEncodesKeysInOrder: a map's encoding does not depend on Go's
// random iteration order, so equal maps encode to equal bytes, and the
// keys come sorted.
func TestMapEncodesKeysInOrder(t *testing.T) {
	keys := []string{"q", "b", "z", "a", "m", "c", "y", "d"}
	m := map[string]any{}
	for _, k := range keys {
		m[k] = true
	}
	first := types.AppendValue(nil, m)
	for i := 0; i < 50; i++ {
		if got := types.AppendValue(nil, m); string(got) != string(first) {
			t.Fatalf("encoding %d differs: %q, first %q", i, got, first)
		}
	}
	slices.Sort(keys)
	at := -1
	for _, k := range keys {
		i := bytes.Index(first, []byte{1, k[0]}) // the key's length, then the key
		if i <= at {
			t.Fatalf("key %q at %d, after the previous key at %d: %q", k, i, at, first)
		}
		at = i
	}
}
