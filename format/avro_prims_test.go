package format

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2"

	"github.com/sluice-sql/sluice/types"
)

// The record fast path (avroPrim) against hamba/avro's generic one: the
// same values, bytes and errors. (A payload error says what hamba/avro's
// reader says; the generic path puts the type it decoded into,
// "map[string]interface {}: ", before it.)

// sameErr says whether two decode errors are alike: both nil, or both
// ErrMalformed for the same reason (a column's, or the payload's).
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	const payload = "AVRO payload for schema id"
	if strings.Contains(a.Error(), payload) || strings.Contains(b.Error(), payload) {
		return errors.Is(a, ErrMalformed) && errors.Is(b, ErrMalformed) &&
			strings.Contains(a.Error(), payload) && strings.Contains(b.Error(), payload)
	}
	return a.Error() == b.Error()
}

// primSchema has every avroPrim shape: each primitive bare and nullable,
// the union both ways round, and a field no column names.
const primSchema = `{"type":"record","name":"P","fields":[
{"name":"b","type":"boolean"},
{"name":"i","type":["null","int"]},
{"name":"l","type":["long","null"]},
{"name":"f","type":["null","float"]},
{"name":"d","type":"double"},
{"name":"s","type":["null","string"]},
{"name":"by","type":"bytes"},
{"name":"il","type":"int"},
{"name":"ld","type":["null","long"]},
{"name":"sb","type":"string"},
{"name":"bs","type":["null","bytes"]},
{"name":"bad","type":"boolean"},
{"name":"unused","type":["null","string"]}]}`

// primCols read primSchema's fields as their own types and, for the
// last few, as others: int as BIGINT, long as DOUBLE, string as BYTES,
// bytes as STRING, and a boolean as INTEGER (a conversion error).
func primCols() []types.Column {
	return []types.Column{
		{Name: "B", Type: types.BooleanType}, {Name: "I", Type: types.IntegerType}, {Name: "L", Type: types.TimestampType},
		{Name: "F", Type: types.DoubleType}, {Name: "D", Type: types.DoubleType}, {Name: "S", Type: types.StringType},
		{Name: "BY", Type: types.BytesType}, {Name: "IL", Type: types.BigIntType}, {Name: "LD", Type: types.DoubleType},
		{Name: "SB", Type: types.BytesType}, {Name: "BS", Type: types.StringType}, {Name: "BAD", Type: types.IntegerType},
	}
}

func randPrimRecord(rng *rand.Rand) map[string]any {
	str := func() string { return fmt.Sprintf("s%d", rng.IntN(1<<20))[:1+rng.IntN(3)] }
	maybe := func(v any) any {
		if rng.IntN(3) == 0 {
			return nil
		}
		return v
	}
	return map[string]any{
		"b": rng.IntN(2) == 0, "i": maybe(int32(rng.Int32() - 1<<30)), "l": maybe(rng.Int64() - 1<<62),
		"f": maybe(rng.Float32()), "d": rng.NormFloat64() * 1e6, "s": maybe(str()), "by": []byte(str()),
		"il": int32(rng.IntN(1000) - 500), "ld": maybe(rng.Int64N(1 << 40)), "sb": str(), "bs": maybe([]byte(str())),
		"bad": rng.IntN(2) == 0, "unused": maybe(str()),
	}
}

// decodeBoth decodes data with the fast path and with the generic one.
func decodeBoth(t *testing.T, c *avroCodec, data []byte) (fast, generic []any, fastErr, genericErr error) {
	t.Helper()
	fast, generic = make([]any, len(c.cols)), make([]any, len(c.cols))
	fastErr = c.Decode(data, fast)
	rd, err := c.reader(1)
	if err != nil {
		t.Fatal(err)
	}
	if rd.prims == nil {
		t.Fatal("the schema did not take the fast path")
	}
	slow := *rd
	slow.prims = nil
	c.readers.Store(1, &slow)
	genericErr = c.Decode(data, generic)
	c.readers.Store(1, rd)
	return fast, generic, fastErr, genericErr
}

func TestAvroPrimsDecodeLikeGeneric(t *testing.T) {
	schema := avro.MustParse(primSchema)
	cols := primCols()
	// Without the failing column, then with it.
	for _, n := range []int{len(cols) - 1, len(cols)} {
		cd, err := NewValueCodec("AVRO", cols[:n], Props{Registry: schemaMap{1: primSchema}})
		if err != nil {
			t.Fatal(err)
		}
		c := cd.(*avroCodec)
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		for k := range 300 {
			body, err := avro.Marshal(schema, randPrimRecord(rng))
			if err != nil {
				t.Fatal(err)
			}
			data := append(appendWireHeader(nil, 1), body...)
			if k%10 == 0 {
				// Cut short, at every length: both fail alike.
				for cut := wireHeaderLen; cut < len(data); cut++ {
					_, _, fe, ge := decodeBoth(t, c, data[:cut])
					if !sameErr(fe, ge) {
						t.Fatalf("%d columns, cut at %d: fast %v, generic %v", n, cut, fe, ge)
					}
				}
			}
			fast, generic, fe, ge := decodeBoth(t, c, data)
			if !sameErr(fe, ge) {
				t.Fatalf("%d columns: fast %v, generic %v", n, fe, ge)
			}
			if fe != nil {
				continue
			}
			if diff := cmp.Diff(generic, fast); diff != "" {
				t.Fatalf("%d columns (-generic +fast):\n%s", n, diff)
			}
		}
	}
}

func TestAvroPrimsEncodeLikeGeneric(t *testing.T) {
	cols := []types.Column{
		{Name: "B", Type: types.BooleanType}, {Name: "I", Type: types.IntegerType}, {Name: "L", Type: types.BigIntType},
		{Name: "D", Type: types.DoubleType}, {Name: "S", Type: types.StringType}, {Name: "BY", Type: types.BytesType},
		{Name: "TS", Type: types.TimestampType},
	}
	// The generated schema makes TIMESTAMP a timestamp-millis (not an
	// avroPrim): generate it as if TS were a BIGINT.
	asBigInt := append([]types.Column(nil), cols...)
	asBigInt[6].Type = types.BigIntType
	generated, err := GenerateAvroSchema(asBigInt, "", false)
	if err != nil {
		t.Fatal(err)
	}
	// A registered schema of the sink's subject: not nullable, a float, a
	// field the columns lack.
	registered := `{"type":"record","name":"W","fields":[{"name":"B","type":"boolean"},{"name":"I","type":"int"},{"name":"L","type":["long","null"]},
{"name":"D","type":"float"},{"name":"S","type":"string"},{"name":"BY","type":["null","bytes"]},{"name":"TS","type":"long"},{"name":"X","type":["null","string"]}]}`
	rng := rand.New(rand.NewPCG(2, 3))
	values := [][]any{
		{true, false, nil},
		{int32(-7), int32(1 << 30), nil, int64(3)}, // an int64 in an INTEGER column: the generic path's to refuse
		{int64(-1) << 50, int64(0), nil, int32(4)},
		{2.5, -0.0, nil, float32(1.5)},
		{"", "héllo", nil, []byte("x")},
		{[]byte{}, []byte{0, 255}, nil, "y"},
		{int64(1700000000123), nil},
	}
	for _, schema := range []string{generated, registered} {
		cd, err := NewValueCodec("AVRO", cols, Props{Registry: schemaMap{}, Schema: schema, SchemaID: 3})
		if err != nil {
			t.Fatal(err)
		}
		c := cd.(*avroCodec)
		if c.writePrims == nil {
			t.Fatal("the schema did not take the fast path")
		}
		var taken int
		for range 2000 {
			row := make([]any, len(cols))
			for i := range row {
				row[i] = values[i][rng.IntN(len(values[i]))]
			}
			if _, ok := c.encodePrims(nil, row); ok {
				taken++
			}
			fast, fe := c.Encode(row)
			generic, ge := c.encodeGeneric(row)
			if fmt.Sprint(fe) != fmt.Sprint(ge) || string(fast) != string(generic) {
				t.Fatalf("row %v:\nfast    % x %v\ngeneric % x %v", row, fast, fe, generic, ge)
			}
			// Appended after other bytes, the record is the same.
			app, ae := c.AppendEncode([]byte("pre"), row)
			if want := append([]byte("pre"), fast...); fmt.Sprint(ae) != fmt.Sprint(fe) || (fe == nil && string(app) != string(want)) || (fe != nil && app != nil) {
				t.Fatalf("row %v:\nappended % x %v\nwant     % x %v", row, app, ae, want, fe)
			}
		}
		if taken == 0 {
			t.Errorf("no row took the fast path")
		}
		t.Logf("%d of 2000 rows on the fast path", taken)
	}
}

// bidSchema is the Avro bid of the nexmark benchmark (bench/nexmark_avro.go).
const bidSchema = `{"type":"record","name":"Bid","namespace":"nexmark","fields":[
{"name":"auction","type":"long"},{"name":"bidder","type":"long"},{"name":"price","type":"long"},
{"name":"channel","type":"string"},{"name":"url","type":"string"},{"name":"dateTime","type":"long"},
{"name":"extra","type":"string"}]}`

// BenchmarkAvroDecodeBid reads a nexmark bid into the columns of q1's
// source, on the fast path and the generic one.
func BenchmarkAvroDecodeBid(b *testing.B) {
	cols := []types.Column{
		{Name: "AUCTION", Type: types.BigIntType}, {Name: "BIDDER", Type: types.BigIntType}, {Name: "PRICE", Type: types.BigIntType},
		{Name: "CHANNEL", Type: types.StringType}, {Name: "URL", Type: types.StringType}, {Name: "dateTime", Type: types.BigIntType},
		{Name: "EXTRA", Type: types.StringType},
	}
	body, err := avro.Marshal(avro.MustParse(bidSchema), map[string]any{"auction": int64(1234), "bidder": int64(5678), "price": int64(4321),
		"channel": "Google", "url": "https://www.nexmark.com/item.htm?query=1&channel_id=123456", "dateTime": int64(1700000000123),
		"extra": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"})
	if err != nil {
		b.Fatal(err)
	}
	data := append(appendWireHeader(nil, 1), body...)
	for _, path := range []string{"fast", "generic"} {
		b.Run(path, func(b *testing.B) {
			cd, err := NewValueCodec("AVRO", cols, Props{Registry: schemaMap{1: bidSchema}})
			if err != nil {
				b.Fatal(err)
			}
			c := cd.(*avroCodec)
			dst := make([]any, len(cols))
			if err := c.Decode(data, dst); err != nil {
				b.Fatal(err)
			}
			if path == "generic" {
				rd, _ := c.reader(1)
				rd.prims = nil
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Decode(data, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAvroEncodeQ1 writes a row of q1's output with the schema the
// sink generates, on the fast path and the generic one.
func BenchmarkAvroEncodeQ1(b *testing.B) {
	cols := []types.Column{
		{Name: "AUCTION", Type: types.BigIntType}, {Name: "BIDDER", Type: types.BigIntType},
		{Name: "PRICE", Type: types.DoubleType}, {Name: "dateTime", Type: types.BigIntType},
	}
	schema, err := GenerateAvroSchema(cols, "", false)
	if err != nil {
		b.Fatal(err)
	}
	row := []any{int64(1234), int64(5678), 4321 * 0.908, int64(1700000000123)}
	for _, path := range []string{"fast", "generic"} {
		b.Run(path, func(b *testing.B) {
			cd, err := NewValueCodec("AVRO", cols, Props{Registry: schemaMap{}, Schema: schema, SchemaID: 2})
			if err != nil {
				b.Fatal(err)
			}
			c := cd.(*avroCodec)
			if path == "generic" {
				c.writePrims = nil
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Encode(row); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
