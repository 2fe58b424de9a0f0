package format

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/types"
)

// The Confluent wire format, shared by the Schema Registry formats: a
// record's bytes are a zero magic byte, the id of the schema it was
// written with as a 4-byte big-endian integer, and the payload (for
// PROTOBUF, message indexes come first).

const wireMagic = 0

// wireHeaderLen is the magic byte and the schema id.
const wireHeaderLen = 5

// registryTimeout bounds one schema lookup while decoding.
const registryTimeout = 10 * time.Second

// Schemas resolves the schema ids records carry: what a Schema Registry
// client does (registry.Client wraps franz-go's sr.Client).
type Schemas interface {
	// Schema returns the schema registered under id, with the schemas it
	// references.
	Schema(ctx context.Context, id int) (Schema, error)
}

// Schema is a registered schema.
type Schema struct {
	// Type is the registry's schema type: AVRO, PROTOBUF or JSON.
	Type string
	// Text is the schema: Avro JSON, .proto source or JSON Schema.
	Text string
	// References are the texts of the schemas Text imports, transitively,
	// by the name it imports them with (a .proto file name).
	References map[string]string
}

// Registry schema types, as the Schema Registry API names them.
const (
	SchemaAvro     = "AVRO"
	SchemaProtobuf = "PROTOBUF"
	SchemaJSON     = "JSON"
)

func appendWireHeader(b []byte, id int) []byte {
	b = append(b, wireMagic)
	return binary.BigEndian.AppendUint32(b, uint32(id))
}

// readWireHeader splits a record into its schema id and payload.
func readWireHeader(data []byte) (id int, payload []byte, err error) {
	if len(data) < wireHeaderLen {
		return 0, nil, fmt.Errorf("%w: %d bytes, too short for the schema registry wire format (magic byte and schema id)", ErrMalformed, len(data))
	}
	if data[0] != wireMagic {
		return 0, nil, fmt.Errorf("%w: magic byte %d, want %d (not written with a schema registry serializer)", ErrMalformed, data[0], wireMagic)
	}
	return int(binary.BigEndian.Uint32(data[1:wireHeaderLen])), data[wireHeaderLen:], nil
}

// GenerateSchema returns the schema a sink in a Schema Registry format
// registers for its columns, as ksqlDB generates it (p.FullName names
// the record or message; p.Nullable is PROTOBUF's null representation).
func GenerateSchema(formatName string, cols []types.Column, p Props, key bool) (Schema, error) {
	switch strings.ToUpper(formatName) {
	case Avro:
		text, err := GenerateAvroSchema(cols, p.FullName, Unwrapped(cols, p, key))
		return Schema{Type: SchemaAvro, Text: text}, err
	case Protobuf:
		text, err := GenerateProtobufSchema(cols, p.FullName, p.Nullable)
		return Schema{Type: SchemaProtobuf, Text: text}, err
	case JSONSR:
		text, err := GenerateJSONSchema(cols, Unwrapped(cols, p, key))
		return Schema{Type: SchemaJSON, Text: text}, err
	}
	return Schema{}, fmt.Errorf("%w: format %s registers no schema", ErrUnsupported, formatName)
}

// SchemaColumns returns the columns a source declared without a column
// list takes from its registered schema (fullName picks a PROTOBUF
// message). As in ksqlDB, a key in a format that writes single keys bare
// (AVRO, JSON_SR) is one column, ROWKEY, of the schema's type, a record
// being a STRUCT; a PROTOBUF key, always a message, has a column per
// field. A value declared WRAP_SINGLE_VALUE=false (unwrapped) is one
// column too, ROWVAL, whatever its schema.
func SchemaColumns(formatName string, s Schema, fullName string, key, unwrapped bool) ([]types.Column, error) {
	want := RegistryType(formatName)
	if s.Type != want {
		return nil, fmt.Errorf("%w: the registered schema is %s, not %s", ErrUnsupported, s.Type, want)
	}
	var cols []types.Column
	var record bool
	var err error
	switch want {
	case SchemaProtobuf:
		cols, err = ProtobufColumns(s, fullName, key)
	case SchemaJSON:
		cols, record, err = jsonSchemaColumns(s.Text, key)
	default:
		cols, record, err = avroColumns(s.Text, key)
	}
	if err != nil {
		return nil, err
	}
	// ksqlDB names inferred columns and fields in upper case.
	for i := range cols {
		cols[i].Name = strings.ToUpper(cols[i].Name)
		cols[i].Type = upperFields(cols[i].Type)
	}
	if !(key || unwrapped) || !record || want == SchemaProtobuf {
		return cols, nil
	}
	st := types.Type{Kind: types.Struct, Fields: make([]types.Field, len(cols))}
	for i, c := range cols {
		st.Fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	return soleColumn(st, key), nil
}

// soleColumn is the one column a schema that is not a record infers:
// ROWKEY for a key, ROWVAL for a value, as ksqlDB names them.
func soleColumn(t types.Type, key bool) []types.Column {
	name := "ROWVAL"
	if key {
		name = "ROWKEY"
	}
	return []types.Column{{Name: name, Type: t, Key: key}}
}

// upperFields upper-cases the names of t's struct fields, deeply.
func upperFields(t types.Type) types.Type {
	switch t.Kind {
	case types.Struct:
		fields := make([]types.Field, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = types.Field{Name: strings.ToUpper(f.Name), Type: upperFields(f.Type)}
		}
		t.Fields = fields
	case types.Array:
		return types.ArrayOf(upperFields(*t.Elem))
	case types.Map:
		return types.MapOf(*t.Key, upperFields(*t.Elem))
	}
	return t
}

// RegistryType is the registry schema type of a format's records.
func RegistryType(formatName string) string {
	switch strings.ToUpper(formatName) {
	case Protobuf:
		return SchemaProtobuf
	case JSONSR:
		return SchemaJSON
	}
	return SchemaAvro
}
