package format

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/types"
)

// kafkaCodec is the KAFKA format: one primitive column in the encoding of
// Kafka's own serializers (StringSerializer, IntegerSerializer, …).
type kafkaCodec struct {
	col  types.Column
	none bool // no columns: a key-less stream
}

var (
	_ Codec    = kafkaCodec{}
	_ Appender = kafkaCodec{}
)

func newKafkaCodec(cols []types.Column, key bool) (Codec, error) {
	switch len(cols) {
	case 0:
		return kafkaCodec{none: true}, nil
	case 1:
	default:
		return nil, &SchemaError{Format: Kafka, Reason: "The 'KAFKA' format only supports a single field. Got: " + ColumnList(cols)}
	}
	switch cols[0].Type.Kind {
	case types.String, types.Integer, types.BigInt, types.Double, types.Bytes:
		return kafkaCodec{col: cols[0]}, nil
	}
	return nil, &SchemaError{Format: Kafka, Reason: fmt.Sprintf("The 'KAFKA' format does not support type '%s'", cols[0].Type.Kind)}
}

func (c kafkaCodec) Encode(vals []any) ([]byte, error) {
	if v, ok := c.value(vals); ok {
		switch v := v.(type) {
		case string:
			return []byte(v), nil
		case []byte:
			return v, nil
		}
	}
	return c.AppendEncode(nil, vals)
}

// AppendEncode implements Appender.
func (c kafkaCodec) AppendEncode(dst []byte, vals []any) ([]byte, error) {
	v, ok := c.value(vals)
	if !ok {
		if c.none || vals == nil {
			return nil, nil
		}
		if err := checkEncodeLen(vals, 1); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: Go value of type %T for KAFKA column %s %s", ErrEncode, vals[0], c.col.Name, c.col.Type)
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if dst == nil {
			dst = []byte{} // an empty string is an empty record, not a null
		}
		return append(dst, v...), nil
	case []byte:
		if dst == nil {
			dst = []byte{}
		}
		return append(dst, v...), nil
	case int32:
		if c.col.Type.Kind == types.Integer {
			return binary.BigEndian.AppendUint32(dst, uint32(v)), nil
		}
		return binary.BigEndian.AppendUint64(dst, uint64(int64(v))), nil
	case int64:
		return binary.BigEndian.AppendUint64(dst, uint64(v)), nil
	case float64:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(v)), nil
	}
	return nil, fmt.Errorf("%w: Go value of type %T for KAFKA column %s %s", ErrEncode, v, c.col.Name, c.col.Type)
}

// value is the one value the codec writes, when its Go type is one the
// column's type takes (nil, NULL, too); ok is false for none to write or
// a value the column cannot carry.
func (c kafkaCodec) value(vals []any) (v any, ok bool) {
	if c.none || len(vals) != 1 {
		return nil, false
	}
	switch v := vals[0].(type) {
	case nil:
		return nil, true
	case string:
		return v, c.col.Type.Kind == types.String
	case int32:
		return v, c.col.Type.Kind == types.Integer || c.col.Type.Kind == types.BigInt
	case int64:
		return v, c.col.Type.Kind == types.BigInt
	case float64:
		return v, c.col.Type.Kind == types.Double
	case []byte:
		return v, c.col.Type.Kind == types.Bytes
	}
	return nil, false
}

// Decode reads a null record as NULL. An empty record is "" for STRING
// and BYTES and NULL for the numeric types.
func (c kafkaCodec) Decode(data []byte, dst []any) error {
	if c.none {
		return nil
	}
	dst[0] = nil
	if data == nil {
		return nil
	}
	switch c.col.Type.Kind {
	case types.String:
		dst[0] = string(data)
		return nil
	case types.Bytes:
		dst[0] = append([]byte{}, data...)
		return nil
	}
	if len(data) == 0 {
		return nil
	}
	want := 8
	if c.col.Type.Kind == types.Integer {
		want = 4
	}
	if len(data) != want {
		return fmt.Errorf("%w: KAFKA %s column %s needs %d bytes, got %d", ErrMalformed, c.col.Type, c.col.Name, want, len(data))
	}
	switch c.col.Type.Kind {
	case types.Integer:
		dst[0] = int32(binary.BigEndian.Uint32(data))
	case types.BigInt:
		dst[0] = int64(binary.BigEndian.Uint64(data))
	case types.Double:
		dst[0] = math.Float64frombits(binary.BigEndian.Uint64(data))
	}
	return nil
}

// KafkaCopies reports whether data, read as a KAFKA value of type t and
// written back as the same type, comes back byte for byte: a query that
// selects such a key unchanged may copy it. STRING and BYTES always do;
// the numbers when they have their width (an empty record reads as NULL,
// which writes no bytes at all).
func KafkaCopies(t types.Type, data []byte) bool {
	switch t.Kind {
	case types.String, types.Bytes:
		return true
	case types.Integer:
		return data == nil || len(data) == 4
	case types.BigInt, types.Double:
		return data == nil || len(data) == 8
	}
	return false
}
