package format

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2"

	"github.com/sluice-sql/sluice/types"
)

// schemaMap serves schema texts by id, as a registry does.
type schemaMap map[int]string

func (m schemaMap) Schema(_ context.Context, id int) (Schema, error) {
	s, ok := m[id]
	if !ok {
		return Schema{}, fmt.Errorf("schema %d not found", id)
	}
	typ := SchemaAvro
	if strings.Contains(s, "syntax") {
		typ = SchemaProtobuf
	}
	return Schema{Type: typ, Text: s}, nil
}

func avroCols() []types.Column {
	dec := types.DecimalOf(5, 2)
	return []types.Column{
		{Name: "B", Type: types.BooleanType},
		{Name: "I", Type: types.IntegerType},
		{Name: "L", Type: types.BigIntType},
		{Name: "D", Type: types.DoubleType},
		{Name: "S", Type: types.StringType},
		{Name: "BY", Type: types.BytesType},
		{Name: "DEC", Type: dec},
		{Name: "TS", Type: types.TimestampType},
		{Name: "DT", Type: types.DateType},
		{Name: "TM", Type: types.TimeType},
		{Name: "ARR", Type: types.ArrayOf(types.StringType)},
		{Name: "M", Type: types.MapOf(types.StringType, types.BigIntType)},
		{Name: "ST", Type: types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "X", Type: types.IntegerType}, {Name: "Y", Type: types.StringType}}}},
	}
}

// TestAvroRoundTrip writes every SQL type with the schema ksqlDB would
// generate and reads it back, nulls included.
func TestAvroRoundTrip(t *testing.T) {
	cols := avroCols()
	schema, err := GenerateAvroSchema(cols, "", false)
	if err != nil {
		t.Fatal(err)
	}
	reg := schemaMap{7: schema}
	c, err := NewValueCodec("avro", cols, Props{Registry: reg, Schema: schema, SchemaID: 7})
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := types.ParseDecimal("12.30")
	rows := [][]any{
		{true, int32(-3), int64(1) << 40, 2.5, "héllo", []byte{0, 1}, dec, int64(1700000000123), int32(19000), int32(3600_000),
			[]any{"a", nil}, map[string]any{"k": int64(9)}, []any{int32(1), "y"}},
		{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	for _, row := range rows {
		b, err := c.Encode(row)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != 0 || b[4] != 7 {
			t.Fatalf("header % x, want magic 0 and schema id 7", b[:5])
		}
		got := make([]any, len(cols))
		if err := c.Decode(b, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(row, got, cmp.Comparer(func(a, b *apd.Decimal) bool { return a.Cmp(b) == 0 && a.Exponent == b.Exponent })); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

// TestAvroGeneratedSchema pins the schema ksqlDB's users know: a record
// io.confluent.ksql.avro_schemas.KsqlDataSourceSchema of optional fields.
func TestAvroGeneratedSchema(t *testing.T) {
	cols := []types.Column{{Name: "ID", Type: types.BigIntType}, {Name: "AMOUNT", Type: types.DecimalOf(4, 2)}}
	got, err := GenerateAvroSchema(cols, "", false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"fields":[{"default":null,"name":"ID","type":["null","long"]},{"default":null,"name":"AMOUNT","type":["null",{"logicalType":"decimal","precision":4,"scale":2,"type":"bytes"}]}],"name":"KsqlDataSourceSchema","namespace":"io.confluent.ksql.avro_schemas","type":"record"}`
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	if got, _ = GenerateAvroSchema(cols[:1], "com.acme.Key", true); got != `["null","long"]` {
		t.Errorf("unwrapped schema %s", got)
	}
	if got, _ = GenerateAvroSchema(cols[:1], "com.acme.Order", false); got != `{"fields":[{"default":null,"name":"ID","type":["null","long"]}],"name":"Order","namespace":"com.acme","type":"record"}` {
		t.Errorf("named schema %s", got)
	}
}

// TestAvroEvolution reads records written with an older and a newer
// schema than the declared columns: fields match by name (case folded), a
// missing field is NULL, an unknown one is ignored, int widens to BIGINT.
func TestAvroEvolution(t *testing.T) {
	older := `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"}]}`
	newer := `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"note","type":["null","string"]},{"name":"extra","type":"double"}]}`
	reg := schemaMap{1: older, 2: newer}
	cols := []types.Column{{Name: "ID", Type: types.BigIntType}, {Name: "NOTE", Type: types.StringType}}
	c, err := NewValueCodec("AVRO", cols, Props{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   int
		val  map[string]any
		want []any
	}{
		{1, map[string]any{"id": 5}, []any{int64(5), nil}},
		{2, map[string]any{"id": 6, "note": "hi", "extra": 1.5}, []any{int64(6), "hi"}},
	} {
		body, err := avro.Marshal(avro.MustParse(reg[tc.id]), tc.val)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]any, 2)
		if err := c.Decode(append(appendWireHeader(nil, tc.id), body...), got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("schema %d (-want +got):\n%s", tc.id, diff)
		}
	}
}

// TestAvroReadsScalarsIntoStrings: a STRING column reads a number or a
// boolean its writer's schema has as Java prints it, as ksqlDB does
// (an Avro float as a float: 1.1, not 1.100000023841858), through the
// record fast path, the generic path (a map's values) and a bare value.
func TestAvroReadsScalarsIntoStrings(t *testing.T) {
	record := `{"type":"record","name":"R","fields":[{"name":"I","type":"int"},{"name":"L","type":["null","long"]},{"name":"F","type":"float"},{"name":"D","type":"double"},{"name":"B","type":"boolean"},{"name":"BIG","type":"double"}]}`
	mapped := `{"type":"record","name":"M","fields":[{"name":"M","type":{"type":"map","values":["null","int"]}}]}`
	reg := schemaMap{1: record, 2: mapped, 3: `"int"`}
	str := types.StringType
	for _, tc := range []struct {
		name  string
		id    int
		cols  []types.Column
		props Props
		val   any
		want  []any
	}{
		{"record", 1, []types.Column{{Name: "I", Type: str}, {Name: "L", Type: str}, {Name: "F", Type: str}, {Name: "D", Type: str}, {Name: "B", Type: str}, {Name: "BIG", Type: str}}, Props{},
			map[string]any{"I": 10, "L": int64(-7), "F": float32(1.1), "D": 2.5, "B": true, "BIG": 1.5e10},
			[]any{"10", "-7", "1.1", "2.5", "true", "1.5E10"}},
		{"map values", 2, []types.Column{{Name: "M", Type: types.MapOf(str, str)}}, Props{},
			map[string]any{"M": map[string]any{"a": 1, "b": nil}},
			[]any{map[string]any{"a": "1", "b": nil}}},
		{"bare", 3, []types.Column{{Name: "FOO", Type: str}}, Props{WrapSingleValue: new(bool)}, 10, []any{"10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.props.Registry = reg
			c, err := NewValueCodec("AVRO", tc.cols, tc.props)
			if err != nil {
				t.Fatal(err)
			}
			body, err := avro.Marshal(avro.MustParse(reg[tc.id]), tc.val)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]any, len(tc.cols))
			if err := c.Decode(append(appendWireHeader(nil, tc.id), body...), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAvroBadRecords: what a source cannot read is ErrMalformed (counted,
// logged, sent to the error topic by exec), with the reason.
func TestAvroBadRecords(t *testing.T) {
	schema := `{"type":"record","name":"R","fields":[{"name":"ID","type":"long"}]}`
	c, err := NewValueCodec("AVRO", []types.Column{{Name: "ID", Type: types.BigIntType}}, Props{Registry: schemaMap{1: schema}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"too short", []byte{0, 0, 1}, "3 bytes, too short"},
		{"wrong magic", []byte{1, 0, 0, 0, 1, 2}, "magic byte 1"},
		{"unknown schema id", []byte{0, 0, 0, 0, 9, 2}, "schema id 9: schema 9 not found"},
		{"undecodable payload", []byte{0, 0, 0, 0, 1}, "AVRO payload for schema id 1"},
	} {
		err := c.Decode(tc.data, make([]any, 1))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrMalformed saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewValueCodec("AVRO", nil, Props{}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "needs a Schema Registry") {
		t.Errorf("without a registry: %v", err)
	}
}

// TestAvroNullTakesDefault writes a NULL into fields of a registered
// schema that cannot hold one: a field with a default gets it (top level
// and in a nested record), one without is an encode error.
func TestAvroNullTakesDefault(t *testing.T) {
	schema := `{"type":"record","name":"T","fields":[
		{"name":"N","type":"long","default":10},
		{"name":"S","type":{"type":"record","name":"In","fields":[{"name":"V","type":"long","default":7},{"name":"E","type":"string"}]}},
		{"name":"R","type":"string"}]}`
	st := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "E", Type: types.StringType}}}
	cols := []types.Column{{Name: "N", Type: types.BigIntType}, {Name: "S", Type: st}, {Name: "R", Type: types.StringType}}
	c, err := NewValueCodec("AVRO", cols, Props{Registry: schemaMap{3: schema}, Schema: schema, SchemaID: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Encode([]any{nil, []any{"e"}, "r"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := avro.Unmarshal(avro.MustParse(schema), b[5:], &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"N": int64(10), "S": map[string]any{"V": int64(7), "E": "e"}, "R": "r"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if _, err := c.Encode([]any{int64(1), []any{"e"}, nil}); !errors.Is(err, ErrEncode) {
		t.Errorf("NULL into a string without default: err = %v, want ErrEncode", err)
	}
}
