package format

import (
	"fmt"

	"github.com/hamba/avro/v2"

	"github.com/sluice-sql/sluice/types"
)

// AvroColumns returns the columns a source declared without a column list
// takes from an Avro schema, as ksqlDB infers them: a record's fields, in
// order (a key's as key columns), or, for a schema that is not a record,
// one column named ROWKEY (key) or ROWVAL (value). A union of null and one
// type is that type; other unions are not supported.
func AvroColumns(schema string, key bool) ([]types.Column, error) {
	cols, _, err := avroColumns(schema, key)
	return cols, err
}

// avroColumns is AvroColumns, also saying whether the schema is a record.
func avroColumns(schema string, key bool) ([]types.Column, bool, error) {
	s, err := avro.Parse(schema)
	if err != nil {
		return nil, false, fmt.Errorf("%w: not an Avro schema: %v", ErrUnsupported, err)
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		if s, err = nullableBranch(u); err != nil {
			return nil, false, err
		}
	}
	rec, ok := s.(*avro.RecordSchema)
	if !ok {
		t, err := sqlType(s)
		if err != nil {
			return nil, false, err
		}
		return soleColumn(t, key), false, nil
	}
	cols := make([]types.Column, 0, len(rec.Fields()))
	for _, f := range rec.Fields() {
		t, err := sqlType(f.Type())
		if err != nil {
			return nil, false, fmt.Errorf("field %s: %w", f.Name(), err)
		}
		cols = append(cols, types.Column{Name: f.Name(), Type: t, Key: key})
	}
	return cols, true, nil
}

func nullableBranch(u *avro.UnionSchema) (avro.Schema, error) {
	var branch avro.Schema
	for _, b := range u.Types() {
		if b.Type() == avro.Null {
			continue
		}
		if branch != nil {
			return nil, fmt.Errorf("%w: an Avro union of several types (%s)", ErrUnsupported, u.String())
		}
		branch = b
	}
	if branch == nil {
		return nil, fmt.Errorf("%w: an Avro union of null alone", ErrUnsupported)
	}
	return branch, nil
}

// sqlType is the SQL type of an Avro schema.
func sqlType(s avro.Schema) (types.Type, error) {
	if u, ok := s.(*avro.UnionSchema); ok {
		b, err := nullableBranch(u)
		if err != nil {
			return types.Type{}, err
		}
		s = b
	}
	s = deref(s)
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		switch l := ls.Logical().(type) {
		case *avro.DecimalLogicalSchema:
			return types.DecimalOf(l.Precision(), l.Scale()), nil
		default:
			switch l.Type() {
			case avro.Date:
				return types.DateType, nil
			case avro.TimeMillis, avro.TimeMicros:
				return types.TimeType, nil
			case avro.TimestampMillis, avro.TimestampMicros, avro.LocalTimestampMillis, avro.LocalTimestampMicros:
				return types.TimestampType, nil
			}
		}
	}
	switch s.Type() {
	case avro.Boolean:
		return types.BooleanType, nil
	case avro.Int:
		return types.IntegerType, nil
	case avro.Long:
		return types.BigIntType, nil
	case avro.Float, avro.Double:
		return types.DoubleType, nil
	case avro.String, avro.Enum:
		return types.StringType, nil
	case avro.Bytes, avro.Fixed:
		return types.BytesType, nil
	case avro.Array:
		e, err := sqlType(s.(*avro.ArraySchema).Items())
		if err != nil {
			return types.Type{}, err
		}
		return types.ArrayOf(e), nil
	case avro.Map:
		e, err := sqlType(s.(*avro.MapSchema).Values())
		if err != nil {
			return types.Type{}, err
		}
		return types.MapOf(types.StringType, e), nil
	case avro.Record:
		var fields []types.Field
		for _, f := range s.(*avro.RecordSchema).Fields() {
			t, err := sqlType(f.Type())
			if err != nil {
				return types.Type{}, fmt.Errorf("field %s: %w", f.Name(), err)
			}
			fields = append(fields, types.Field{Name: f.Name(), Type: t})
		}
		return types.Type{Kind: types.Struct, Fields: fields}, nil
	}
	return types.Type{}, fmt.Errorf("%w: Avro type %s", ErrUnsupported, s.Type())
}

// deref is the schema a reference to a named type (a record used again
// by name, as Debezium's Envelope does with its Value record) names.
func deref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}
