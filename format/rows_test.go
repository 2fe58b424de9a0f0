package format

import (
	"errors"
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/types"
)

// rowsCols has a column of every SQL type, for the round trips below.
var rowsCols = []types.Column{
	col("B", types.BooleanType), col("I", types.IntegerType), col("L", types.BigIntType),
	col("D", types.DoubleType), col("DEC", types.Type{Kind: types.Decimal, Precision: 5, Scale: 2}),
	col("S", types.StringType), col("BY", types.BytesType), col("TS", types.TimestampType),
	col("DT", types.DateType), col("TM", types.TimeType),
	col("ARR", types.ArrayOf(types.DoubleType)), col("M", types.MapOf(types.StringType, types.BigIntType)),
	col("ST", structT),
}

func rowsRow(t *testing.T) []any {
	t.Helper()
	dec, err := types.ParseDecimal("3.40")
	if err != nil {
		t.Fatal(err)
	}
	return []any{true, int32(-7), int64(9007199254740993), 0.1 + 0.2, dec, "a\"b{\x00é", []byte{0, 0xB5, 0xff},
		int64(1700000000123), int32(19700), int32(45296789),
		[]any{math.Inf(-1), nil, 2.5}, map[string]any{"z": int64(1), "a": nil}, []any{int32(7), "x"}}
}

func TestRowsRoundTrip(t *testing.T) {
	c, err := NewValueCodec(Rows, rowsCols, Props{})
	if err != nil {
		t.Fatal(err)
	}
	row := rowsRow(t)
	enc, err := c.Encode(row)
	if err != nil {
		t.Fatal(err)
	}
	if enc[0] != rowsMagic {
		t.Fatalf("first byte %#x, want the magic %#x", enc[0], rowsMagic)
	}
	appended, err := c.(Appender).AppendEncode([]byte("prefix"), row)
	if err != nil || string(appended) != "prefix"+string(enc) {
		t.Fatalf("AppendEncode = %q, %v; want the prefix then Encode's bytes", appended, err)
	}
	dst := make([]any, len(rowsCols))
	if err := c.Decode(enc, dst); err != nil {
		t.Fatal(err)
	}
	// Exact: the decimal keeps its scale (its text), the double its bits.
	want := rowsRow(t)
	if diff := cmp.Diff(want, dst, cmp.Comparer(func(a, b *apd.Decimal) bool { return a.Text('f') == b.Text('f') })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got := dst[4].(*apd.Decimal).Text('f'); got != "3.40" {
		t.Errorf("decimal = %s, want 3.40", got)
	}
	// Select leaves the unneeded columns NULL without building them.
	sel := make([]bool, len(rowsCols))
	sel[1], sel[12] = true, true
	c.(Selective).Select(sel)
	dst = make([]any, len(rowsCols))
	if err := c.Decode(enc, dst); err != nil {
		t.Fatal(err)
	}
	wantSel := make([]any, len(rowsCols))
	wantSel[1], wantSel[12] = int32(-7), []any{int32(7), "x"}
	if diff := cmp.Diff(wantSel, dst); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
}

func TestRowsNullsAndTombstone(t *testing.T) {
	cols := []types.Column{col("A", types.IntegerType), col("B", types.StringType)}
	c, err := NewValueCodec(Rows, cols, Props{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := c.Encode(nil); b != nil || err != nil {
		t.Errorf("Encode(nil) = %v, %v; want no bytes (a tombstone)", b, err)
	}
	enc, err := c.Encode([]any{nil, nil})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{rowsMagic, 2, 0, 0}; string(enc) != string(want) {
		t.Errorf("Encode(NULL, NULL) = %v, want %v", enc, want)
	}
	dst := []any{"old", "old"}
	if err := c.Decode(nil, dst); err != nil || dst[0] != nil || dst[1] != nil {
		t.Errorf("Decode(empty) = %v, %v; want NULLs", dst, err)
	}
	if _, err := c.Encode([]any{int32(1)}); !errors.Is(err, ErrEncode) {
		t.Errorf("Encode of 1 value for 2 columns: %v, want ErrEncode", err)
	}
}

// TestRowsReadsLegacyJSON: repartition topics written by an older Sluice
// hold JSON objects; the codec reads them beside its own records, and
// anything else is malformed.
func TestRowsReadsLegacyJSON(t *testing.T) {
	cols := []types.Column{col("ID", types.BigIntType), col("NAME", types.StringType), col("PRICE", types.DoubleType)}
	c, err := NewValueCodec(Rows, cols, Props{})
	if err != nil {
		t.Fatal(err)
	}
	bin, err := c.Encode([]any{int64(2), "b", 2.5})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		data    []byte
		want    []any
		missing int
		err     error
	}{
		{"json", []byte(`{"ID":1,"NAME":"a","PRICE":1.5}`), []any{int64(1), "a", 1.5}, 0, nil},
		{"json lacking a field", []byte(` {"ID":3,"NAME":"c"}`), []any{int64(3), "c", nil}, 1, nil},
		{"binary after json", bin, []any{int64(2), "b", 2.5}, 0, nil},
		{"json null", []byte(`null`), []any{nil, nil, nil}, 0, nil},
		{"unknown leading byte", []byte{0x01, 3, 0, 0, 0}, nil, 0, ErrMalformed},
		{"json array", []byte(`[1,"a",1.5]`), nil, 0, ErrMalformed},
		{"truncated binary", bin[:len(bin)-3], nil, 0, ErrMalformed},
		{"binary with trailing bytes", append(append([]byte(nil), bin...), 0), nil, 0, ErrMalformed},
		{"binary of another width", []byte{rowsMagic, 1, 0}, nil, 0, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]any, len(cols))
			err := c.Decode(tc.data, dst)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Decode(%q) = %v, want %v", tc.data, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, dst); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got := c.(MissingReporter).Missing(); got != tc.missing {
				t.Errorf("Missing() = %d, want %d", got, tc.missing)
			}
		})
	}
}

func TestRowsIsInternal(t *testing.T) {
	if !IsInternal("sluice_rows") || IsInternal(JSON) {
		t.Errorf("IsInternal: want true for %s only", Rows)
	}
	for _, f := range Supported {
		if IsInternal(f) {
			t.Errorf("%s is both supported and internal", f)
		}
	}
	if _, err := NewKeyCodec(Rows, []types.Column{col("K", types.StringType)}, Props{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("NewKeyCodec(%s) = %v, want ErrUnsupported", Rows, err)
	}
}

// BenchmarkRepartitionRow writes and reads a Nexmark bid as a repartition
// topic carries it, in the Rows format and in JSON (what it was before).
func BenchmarkRepartitionRow(b *testing.B) {
	cols := []types.Column{col("AUCTION", types.BigIntType), col("BIDDER", types.BigIntType), col("PRICE", types.BigIntType),
		col("CHANNEL", types.StringType), col("URL", types.StringType), col("DATE_TIME", types.TimestampType), col("EXTRA", types.StringType)}
	row := []any{int64(1000123), int64(2000456), int64(73512), "Google", "https://www.nexmark.com/gyl/uvc/item.htm?query=1&channel_id=1543503872",
		int64(1700000000123), "aeiouaeiouaeiouaeiouaeiouaeiou"}
	for _, f := range []string{Rows, JSON} {
		c, err := NewValueCodec(f, cols, Props{})
		if err != nil {
			b.Fatal(err)
		}
		enc, err := c.Encode(row)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f+"/encode", func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			var buf []byte
			for b.Loop() {
				if buf, err = c.(Appender).AppendEncode(buf[:0], row); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(f+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			dst := make([]any, len(cols))
			for b.Loop() {
				if err := c.Decode(enc, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRowsReadsLegacyLayout: a codec given the wider layout an older plan
// wrote (Props.RowsLegacy) reads a record of exactly that width by taking
// its own columns out of it by name, honours Select on it, and still
// reads its own width; any other width is malformed.
func TestRowsReadsLegacyLayout(t *testing.T) {
	wideCols := []types.Column{col("A", types.StringType), col("B", types.BigIntType), col("C", types.StringType), col("D", types.DoubleType)}
	narrowCols := []types.Column{col("D", types.DoubleType), col("B", types.BigIntType)}
	wide, err := newRowsCodec(wideCols, Props{}, false)
	if err != nil {
		t.Fatal(err)
	}
	old, err := wide.Encode([]any{"a", int64(7), "c", 2.5})
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := newRowsCodec(narrowCols, Props{RowsLegacy: wideCols}, false)
	if err != nil {
		t.Fatal(err)
	}
	own, err := narrow.Encode([]any{1.5, int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]any, 2)
	if err := narrow.Decode(old, dst); err != nil {
		t.Fatalf("legacy-width record: %v", err)
	}
	if want := []any{2.5, int64(7)}; !cmp.Equal(dst, want) {
		t.Errorf("legacy-width record read %v, want %v", dst, want)
	}
	if err := narrow.Decode(own, dst); err != nil {
		t.Fatalf("own-width record: %v", err)
	}
	if want := []any{1.5, int64(3)}; !cmp.Equal(dst, want) {
		t.Errorf("own-width record read %v, want %v", dst, want)
	}
	narrow.Select([]bool{false, true})
	if err := narrow.Decode(old, dst); err != nil {
		t.Fatalf("legacy-width record, selected: %v", err)
	}
	if want := []any{nil, int64(7)}; !cmp.Equal(dst, want) {
		t.Errorf("legacy-width record, selected, read %v, want %v", dst, want)
	}
	three, err := newRowsCodec(wideCols[:3], Props{}, false)
	if err != nil {
		t.Fatal(err)
	}
	other, err := three.Encode([]any{"a", int64(7), "c"})
	if err != nil {
		t.Fatal(err)
	}
	if err := narrow.Decode(other, dst); !errors.Is(err, ErrMalformed) {
		t.Errorf("a record of neither width: %v, want ErrMalformed", err)
	}
	if _, err := newRowsCodec([]types.Column{col("E", types.StringType)}, Props{RowsLegacy: wideCols}, false); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a column missing from the legacy layout: %v, want ErrUnsupported", err)
	}
}

// TestRowsStringsOwnTheirBytes: a record's strings, decoded from one copy
// of its bytes, stay as they were when the record's buffer is reused and
// when the next record is decoded, with and without a selection.
func TestRowsStringsOwnTheirBytes(t *testing.T) {
	cols := []types.Column{col("A", types.StringType), col("N", types.BigIntType), col("B", types.StringType), col("C", types.StringType)}
	for _, sel := range [][]bool{nil, {true, true, false, true}, {false, true, true, false}} {
		c, err := NewValueCodec(Rows, cols, Props{})
		if err != nil {
			t.Fatal(err)
		}
		if sel != nil {
			c.(Selective).Select(sel)
		}
		want := func(r []any) []any {
			out := make([]any, len(r))
			for i := range r {
				if sel == nil || sel[i] {
					out[i] = r[i]
				}
			}
			return out
		}
		first, second := []any{"channel-1", int64(7), "https://x/y", ""}, []any{"é", int64(8), nil, "zz"}
		enc, err := c.Encode(first)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]any, len(cols))
		if err := c.Decode(enc, got); err != nil {
			t.Fatal(err)
		}
		for i := range enc {
			enc[i] = 0xff // the fetched batch's buffer, reused
		}
		enc2, err := c.Encode(second)
		if err != nil {
			t.Fatal(err)
		}
		got2 := make([]any, len(cols))
		if err := c.Decode(enc2, got2); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want(first), got); diff != "" {
			t.Errorf("select %v: first record after its buffer changed (-want +got):\n%s", sel, diff)
		}
		if diff := cmp.Diff(want(second), got2); diff != "" {
			t.Errorf("select %v: second record (-want +got):\n%s", sel, diff)
		}
	}
}
