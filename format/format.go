package format

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/types"
)

// Codec serialises the columns of one side (key or value) of a Kafka record.
// A Codec is safe for concurrent use: it holds no per-call state.
type Codec interface {
	// Encode serialises vals, given in the order of the codec's columns.
	// It returns nil for codecs without columns (a NONE or column-less key)
	// and for a nil vals slice (a tombstone).
	Encode(vals []any) ([]byte, error)
	// Decode fills dst[0:len(cols)] from data. A null or empty record sets
	// every column to nil (SQL NULL), as does a JSON field that is missing.
	Decode(data []byte, dst []any) error
}

// Appender is implemented by codecs that can encode into a buffer the
// caller provides: AppendEncode appends what Encode would return to dst
// and returns the extended slice, or nil wherever Encode returns nil (a
// null: no bytes to write) whatever dst holds. A sink appends the keys
// and values of many records to one chunk this way instead of
// allocating each (exec's outArena).
type Appender interface {
	AppendEncode(dst []byte, vals []any) ([]byte, error)
}

// Selective is implemented by codecs that can leave columns undecoded:
// Select(needed) makes Decode convert only the columns marked needed and
// leave the others NULL (and not count them missing).
type Selective interface {
	Select(needed []bool)
}

// MissingReporter is implemented by codecs that can tell a column absent
// from a record apart from one that is present and null (JSON objects).
// The count refers to the last Decode.
type MissingReporter interface {
	Missing() int
}

// Props are the serialisation options from a statement's WITH clause.
type Props struct {
	// WrapSingleValue is WRAP_SINGLE_VALUE. nil means the format's default:
	// values are wrapped in an object, single JSON keys are not.
	WrapSingleValue *bool
	// Delimiter is VALUE_DELIMITER / KEY_DELIMITER for DELIMITED: one
	// character, or TAB or SPACE. Empty means ','.
	Delimiter string
	// Registry resolves the schema ids in records of the Schema Registry
	// formats (AVRO).
	Registry Schemas
	// Schema and SchemaID are the schema records are written with and its
	// registered id (a sink's, registered when it is created); References
	// are the texts of the files a PROTOBUF Schema imports.
	Schema     string
	SchemaID   int
	References map[string]string
	// FullName is KEY_/VALUE_SCHEMA_FULL_NAME: the record or message
	// written (and, for PROTOBUF, the message of a schema read).
	FullName string
	// Nullable is KEY_/VALUE_PROTOBUF_NULLABLE_REPRESENTATION: OPTIONAL
	// or WRAPPER give a generated schema's primitive fields presence.
	Nullable string
	// RowsLegacy is, for the Rows format, the wider layout an older plan
	// wrote to the same topic (a join input's repartition before the
	// join-column-pruning rule carried every column): a binary record of
	// exactly its width is read by taking the codec's columns out of it
	// by name. Nil: only records of the codec's own width are read.
	RowsLegacy []types.Column
	// Envelope is VALUE_ENVELOPE: the change-data-capture envelope the
	// value's row comes in (EnvelopeDebezium), empty for none. The
	// codec reads and writes the row itself; exec takes it out of, and
	// puts it into, its envelope (ReadDebeziumJSON, DebeziumWriter).
	Envelope string
}

// Format names, as written in KEY_FORMAT / VALUE_FORMAT / FORMAT.
const (
	JSON      = "JSON"
	Kafka     = "KAFKA"
	Delimited = "DELIMITED"
	None      = "NONE"
	Avro      = "AVRO"
)

// Supported lists the formats this package implements.
var Supported = []string{JSON, Kafka, Delimited, None, Avro, Protobuf, ProtobufNoSR, JSONSR}

// UsesRegistry reports whether a format's records carry schema ids of a
// Schema Registry.
func UsesRegistry(format string) bool {
	switch strings.ToUpper(format) {
	case Avro, Protobuf, JSONSR:
		return true
	}
	return false
}

// Error kinds; the returned errors wrap one of these, for errors.Is.
var (
	// ErrUnknownFormat: the format name is not one of Supported.
	ErrUnknownFormat = errors.New("Unknown format") // ksqlDB's words, capital and all
	// ErrUnsupported: the format cannot carry these columns (for example
	// KAFKA with two columns, or DELIMITED with an ARRAY column).
	ErrUnsupported = errors.New("unsupported by format")
	// ErrMalformed: the record bytes cannot be decoded. exec counts such
	// records and skips them.
	ErrMalformed = errors.New("malformed record")
	// ErrEncode: a value cannot be encoded (wrong column count or Go type).
	ErrEncode = errors.New("cannot encode")
	// ErrRegistryUnavailable: the schema a record names could not be
	// fetched because the registry did not answer (or answered with an
	// error other than "not found"). The record is not malformed: exec
	// reads it again later.
	ErrRegistryUnavailable = errors.New("schema registry unavailable")
	// ErrSchemaNotFound: the registry has no schema of the id a record
	// names. Such a record is malformed.
	ErrSchemaNotFound = errors.New("schema not found")
)

// schemaLookupErr classifies a failed lookup of a record's schema id: a
// registry that is away is retried, anything else makes the record
// malformed.
func schemaLookupErr(id int, err error) error {
	if errors.Is(err, ErrRegistryUnavailable) {
		return fmt.Errorf("schema id %d: %w", id, err)
	}
	return fmt.Errorf("%w: schema id %d: %w", ErrMalformed, id, err)
}

// SchemaError is a format refusing the columns it was given, with
// ksqlDB's reason (for example "The 'DELIMITED' format does not support
// type 'ARRAY', column: `K`"). It wraps ErrUnsupported; the planner adds
// the format and the schema around the reason.
type SchemaError struct {
	Format string
	Reason string
}

func (e *SchemaError) Error() string { return ErrUnsupported.Error() + ": " + e.Reason }
func (e *SchemaError) Unwrap() error { return ErrUnsupported }

// ColumnList prints columns as ksqlDB prints a physical schema:
// [`K` INTEGER KEY, `V` STRING].
func ColumnList(cols []types.Column) string {
	s := make([]string, len(cols))
	for i, c := range cols {
		s[i] = fmt.Sprintf("`%s` %s", c.Name, c.Type)
		if c.Key {
			s[i] += " KEY"
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// NewKeyCodec returns the codec for the key columns of a source or sink.
func NewKeyCodec(format string, cols []types.Column, p Props) (Codec, error) {
	return newCodec(format, cols, p, true)
}

// NewValueCodec returns the codec for the value columns of a source or sink.
func NewValueCodec(format string, cols []types.Column, p Props) (Codec, error) {
	return newCodec(format, cols, p, false)
}

func newCodec(format string, cols []types.Column, p Props, key bool) (Codec, error) {
	switch strings.ToUpper(format) {
	case JSON:
		if err := checkJSONMapKeys(cols); err != nil {
			return nil, err
		}
		return newJSONCodec(cols, p, key), nil
	case Kafka:
		return newKafkaCodec(cols, key)
	case Delimited:
		return newDelimitedCodec(cols, p)
	case Avro:
		if p.Registry == nil {
			return nil, fmt.Errorf("%w: format AVRO needs a Schema Registry, and none is configured", ErrUnsupported)
		}
		return newAvroCodec(cols, p, key)
	case Protobuf:
		if p.Registry == nil {
			return nil, fmt.Errorf("%w: format PROTOBUF needs a Schema Registry, and none is configured", ErrUnsupported)
		}
		return newProtoCodec(cols, p, key, true)
	case ProtobufNoSR:
		return newProtoCodec(cols, p, key, false)
	case JSONSR:
		if p.Registry == nil {
			return nil, fmt.Errorf("%w: format JSON_SR needs a Schema Registry, and none is configured", ErrUnsupported)
		}
		return newJSONSRCodec(cols, p, key)
	case Rows:
		return newRowsCodec(cols, p, key)
	case None:
		if len(cols) > 0 {
			return nil, &SchemaError{Format: None, Reason: "The 'NONE' format can only be used when no columns are defined. Got: " + ColumnList(cols)}
		}
		return noneCodec{}, nil
	}
	return nil, fmt.Errorf("%w: %s (supported formats are %s)", ErrUnknownFormat, format, strings.Join(Supported, ", "))
}

// noneCodec is the NONE format: no columns, no bytes.
type noneCodec struct{}

func (noneCodec) Encode([]any) ([]byte, error) { return nil, nil }
func (noneCodec) Decode([]byte, []any) error   { return nil }

func checkEncodeLen(vals []any, n int) error {
	if len(vals) != n {
		return fmt.Errorf("%w: %d values for %d columns", ErrEncode, len(vals), n)
	}
	return nil
}

func setNull(dst []any, n int) {
	for i := range dst[:n] {
		dst[i] = nil
	}
}
