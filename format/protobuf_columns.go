package format

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluice-sql/sluice/types"
)

// The columns a source takes from a registered .proto schema.

// ProtobufColumns returns the columns a source declared without a column
// list takes from a .proto schema, as ksqlDB infers them: the fields of
// the message fullName names (default: the first), in order.
func ProtobufColumns(s Schema, fullName string, key bool) ([]types.Column, error) {
	fd, err := CompileProtobuf(s)
	if err != nil {
		return nil, err
	}
	md, err := protoMessageNamed(fd, fullName)
	if err != nil {
		return nil, err
	}
	fields := md.Fields()
	cols := make([]types.Column, 0, fields.Len())
	for j := 0; j < fields.Len(); j++ {
		f := fields.Get(j)
		t, err := protoSQLType(f, 0)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name(), err)
		}
		cols = append(cols, types.Column{Name: string(f.Name()), Type: t, Key: key})
	}
	return cols, nil
}

// protoSQLType is the SQL type of a field.
func protoSQLType(f protoreflect.FieldDescriptor, depth int) (types.Type, error) {
	if depth > 32 {
		return types.Type{}, fmt.Errorf("%w: PROTOBUF message %s nests itself", ErrUnsupported, f.ContainingMessage().FullName())
	}
	if f.IsMap() {
		if f.MapKey().Kind() != protoreflect.StringKind {
			return types.Type{}, fmt.Errorf("%w: PROTOBUF format only supports MAP types with STRING keys", ErrUnsupported)
		}
		v, err := protoElemType(f.MapValue(), depth)
		if err != nil {
			return types.Type{}, err
		}
		return types.MapOf(types.StringType, v), nil
	}
	e, err := protoElemType(f, depth)
	if err != nil {
		return types.Type{}, err
	}
	if f.IsList() {
		return types.ArrayOf(e), nil
	}
	return e, nil
}

// protoElemType is the SQL type of one value of f (not counting repeated).
func protoElemType(f protoreflect.FieldDescriptor, depth int) (types.Type, error) {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return types.BooleanType, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return types.IntegerType, nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return types.BigIntType, nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return types.DoubleType, nil
	case protoreflect.StringKind, protoreflect.EnumKind:
		return types.StringType, nil
	case protoreflect.BytesKind:
		return types.BytesType, nil
	}
	md := f.Message()
	switch string(md.FullName()) {
	case pbTimestamp:
		return types.TimestampType, nil
	case pbDate:
		return types.DateType, nil
	case pbTimeOfDay:
		return types.TimeType, nil
	case pbDecimal:
		return protoDecimalType(f), nil
	}
	if isWrapper(md) {
		return protoElemType(md.Fields().Get(0), depth)
	}
	fields := md.Fields()
	st := types.Type{Kind: types.Struct}
	for j := 0; j < fields.Len(); j++ {
		sf := fields.Get(j)
		t, err := protoSQLType(sf, depth+1)
		if err != nil {
			return types.Type{}, fmt.Errorf("field %s: %w", sf.Name(), err)
		}
		st.Fields = append(st.Fields, types.Field{Name: string(sf.Name()), Type: t})
	}
	return st, nil
}

// protoDecimalType reads a Decimal field's precision and scale from its
// (confluent.field_meta) params, as Confluent's serializers write them.
func protoDecimalType(f protoreflect.FieldDescriptor) types.Type {
	precision, scale := 64, 0
	opts := f.Options()
	if opts != nil {
		opts.ProtoReflect().Range(func(xd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if xd.FullName() != "confluent.field_meta" || xd.Message() == nil {
				return true
			}
			meta := v.Message()
			pf := xd.Message().Fields().ByName("params")
			if pf == nil {
				return true
			}
			meta.Get(pf).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				var n int
				if _, err := fmt.Sscan(v.String(), &n); err == nil {
					switch k.String() {
					case "precision":
						precision = n
					case "scale":
						scale = n
					}
				}
				return true
			})
			return false
		})
	}
	return types.DecimalOf(precision, scale)
}
