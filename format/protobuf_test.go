package format

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

// Columns a source without a column list takes from a registered .proto
// schema: ksqlDB's type mapping, well-known messages, the message
// SCHEMA_FULL_NAME names.
func TestProtobufColumns(t *testing.T) {
	cases := []struct {
		name, schema, fullName string
		want                   string
	}{
		{"scalars", `syntax = "proto3"; message M {bool c1 = 1; int32 c2 = 2; int64 c3 = 3; double c4 = 4; string c5 = 5; float f = 6; uint32 u = 7; sint64 s = 8; bytes b = 9;}`, "",
			"c1 BOOLEAN, c2 INTEGER, c3 BIGINT, c4 DOUBLE, c5 STRING, f DOUBLE, u BIGINT, s BIGINT, b BYTES"},
		{"wrappers", `syntax = "proto3"; import 'google/protobuf/wrappers.proto'; message M {google.protobuf.BoolValue c1 = 1; google.protobuf.Int32Value c2 = 2; google.protobuf.StringValue c5 = 5;}`, "",
			"c1 BOOLEAN, c2 INTEGER, c5 STRING"},
		{"decimal", `syntax = "proto3"; import "confluent/type/decimal.proto"; message M {confluent.type.Decimal c6 = 6 [(confluent.field_meta) = { params: [{ value: "4", key: "precision" }, { value: "2", key: "scale" }]}];}`, "",
			"c6 DECIMAL(4, 2)"},
		{"time types", `syntax = "proto3"; import "google/protobuf/timestamp.proto"; import "google/type/date.proto"; import "google/type/timeofday.proto"; message M {google.protobuf.Timestamp ts = 1; google.type.Date d = 2; google.type.TimeOfDay t = 3;}`, "",
			"ts TIMESTAMP, d DATE, t TIME"},
		{"containers", `syntax = "proto3"; message M {enum Suit {SPADES = 0; HEARTS = 1;} message N {int32 f1 = 1;} repeated string a = 1; map<string, double> m = 2; N n = 3; Suit s = 4;}`, "",
			"a ARRAY<STRING>, m MAP<STRING, DOUBLE>, n STRUCT<`f1` INTEGER>, s STRING"},
		{"named message", `syntax = "proto3"; message A {uint32 k1 = 1;} message B {string k1 = 1;}`, "B", "k1 STRING"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := ProtobufColumns(Schema{Type: SchemaProtobuf, Text: tc.schema}, tc.fullName, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cols {
				got = append(got, c.Name+" "+c.Type.String())
			}
			if g := join(got); g != tc.want {
				t.Errorf("columns %s, want %s", g, tc.want)
			}
		})
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// A row written with the schema ksqlDB would generate reads back the
// same, in the wire format (PROTOBUF) and bare (PROTOBUF_NOSR); NULLs of
// fields without presence read as proto3 defaults.
func TestProtobufRoundTrip(t *testing.T) {
	dec, _ := types.ParseDecimal("-12.30")
	cols := []types.Column{
		{Name: "ID", Type: types.BigIntType}, {Name: "NAME", Type: types.StringType},
		{Name: "PRICE", Type: types.DecimalOf(5, 2)}, {Name: "TS", Type: types.TimestampType},
		{Name: "D", Type: types.DateType}, {Name: "T", Type: types.TimeType},
		{Name: "TAGS", Type: types.ArrayOf(types.StringType)}, {Name: "M", Type: types.MapOf(types.StringType, types.IntegerType)},
		{Name: "S", Type: types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.IntegerType}, {Name: "B", Type: types.BooleanType}}}},
	}
	schema, err := GenerateProtobufSchema(cols, "", "")
	if err != nil {
		t.Fatal(err)
	}
	row := []any{int64(7), "x", dec, int64(1700000000123), int32(19000), int32(3723004), []any{"a", "b"}, map[string]any{"k": int32(2)}, []any{int32(5), nil}}
	nulls := []any{nil, nil, nil, nil, nil, nil, nil, nil, nil}
	wantNulls := []any{int64(0), "", nil, nil, nil, nil, []any{}, map[string]any{}, nil}
	for _, f := range []string{Protobuf, ProtobufNoSR} {
		t.Run(f, func(t *testing.T) {
			p := Props{Registry: schemaMap{3: schema}, Schema: schema, SchemaID: 3}
			c, err := NewValueCodec(f, cols, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct{ in, want []any }{
				{row, []any{int64(7), "x", dec, int64(1700000000123), int32(19000), int32(3723004), []any{"a", "b"}, map[string]any{"k": int32(2)}, []any{int32(5), false}}},
				{nulls, wantNulls},
			} {
				b, err := c.Encode(tc.in)
				if err != nil {
					t.Fatal(err)
				}
				if f == Protobuf && !slices.Equal(b[:6], []byte{0, 0, 0, 0, 3, 0}) {
					t.Errorf("header % x, want magic, id 3, message index 0", b[:6])
				}
				got := make([]any, len(cols))
				if err := c.Decode(b, got); err != nil {
					t.Fatal(err)
				}
				for i := range cols {
					g, _ := json.Marshal(ToJSON(got[i], cols[i].Type))
					w, _ := json.Marshal(ToJSON(tc.want[i], cols[i].Type))
					if string(g) != string(w) {
						t.Errorf("%s: %s, want %s", cols[i].Name, g, w)
					}
				}
			}
		})
	}
}

// A STRING column reads a message's number or boolean field as Java
// prints it, as ksqlDB does: a float as a float (1.1); a timestamp
// message stays unreadable as a STRING.
func TestProtobufReadsScalarsIntoStrings(t *testing.T) {
	schema := `syntax = "proto3";
import "google/protobuf/timestamp.proto";
message R { int32 I = 1; int64 L = 2; float F = 3; double D = 4; bool B = 5; google.protobuf.Timestamp TS = 6; }`
	p := Props{Registry: schemaMap{4: schema}, Schema: schema, SchemaID: 4}
	written := []types.Column{{Name: "I", Type: types.IntegerType}, {Name: "L", Type: types.BigIntType}, {Name: "F", Type: types.DoubleType},
		{Name: "D", Type: types.DoubleType}, {Name: "B", Type: types.BooleanType}, {Name: "TS", Type: types.TimestampType}}
	w, err := NewValueCodec(Protobuf, written, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Encode([]any{int32(10), int64(-7), 1.1, 1.5e10, true, int64(1000)})
	if err != nil {
		t.Fatal(err)
	}
	read := make([]types.Column, 5)
	for i := range read {
		read[i] = types.Column{Name: written[i].Name, Type: types.StringType}
	}
	r, err := NewValueCodec(Protobuf, read, p)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]any, len(read))
	if err := r.Decode(b, got); err != nil {
		t.Fatal(err)
	}
	if want := []any{"10", "-7", "1.1", "1.5E10", "true"}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	ts, err := NewValueCodec(Protobuf, []types.Column{{Name: "TS", Type: types.StringType}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Decode(b, make([]any, 1)); err == nil {
		t.Error("a Timestamp message read into a STRING column; want an error")
	}
}
