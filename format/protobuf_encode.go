package format

import (
	"fmt"
	"math/big"
	"time"

	"github.com/cockroachdb/apd/v3"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluice-sql/sluice/types"
)

// Writing SQL values into a message's fields.

// twosFromDecimal is the big-endian two's-complement unscaled value of d
// at scale.
func twosFromDecimal(d *apd.Decimal, scale int) ([]byte, error) {
	r := decimalRat(d)
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !r.IsInt() {
		return nil, fmt.Errorf("decimal %s has more than %d digits after the point", d, scale)
	}
	x := r.Num()
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b, nil
	}
	n := (x.BitLen() + 8) / 8 // room for the sign bit
	twos := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), x)
	b := twos.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	return b, nil
}

// setProtoField writes v, a value of t, into field fd of m.
func setProtoField(m protoreflect.Message, fd protoreflect.FieldDescriptor, v any, t types.Type) error {
	switch {
	case fd.IsList():
		in, ok := v.([]any)
		if !ok || t.Elem == nil {
			return fmt.Errorf("%T is not an ARRAY", v)
		}
		l := m.Mutable(fd).List()
		for _, e := range in {
			pv, err := toProtoValue(e, fd, *t.Elem, l.NewElement)
			if err != nil {
				return err
			}
			l.Append(pv)
		}
		return nil
	case fd.IsMap():
		in, ok := v.(map[string]any)
		if !ok || t.Elem == nil {
			return fmt.Errorf("%T is not a MAP", v)
		}
		mp := m.Mutable(fd).Map()
		for k, e := range in {
			pv, err := toProtoValue(e, fd.MapValue(), *t.Elem, mp.NewValue)
			if err != nil {
				return err
			}
			key, err := protoMapKey(k, fd.MapKey())
			if err != nil {
				return err
			}
			mp.Set(key, pv)
		}
		return nil
	}
	pv, err := toProtoValue(v, fd, t, func() protoreflect.Value { return m.NewField(fd) })
	if err != nil {
		return err
	}
	m.Set(fd, pv)
	return nil
}

func protoMapKey(k string, fd protoreflect.FieldDescriptor) (protoreflect.MapKey, error) {
	if fd.Kind() != protoreflect.StringKind {
		return protoreflect.MapKey{}, fmt.Errorf("map key of kind %s", fd.Kind())
	}
	return protoreflect.ValueOfString(k).MapKey(), nil
}

// toProtoValue converts v, a value of t, to a value of fd's kind (newMsg
// makes an empty message of fd's message type). A NULL element of a list
// or map is its default: proto3 has no null there.
func toProtoValue(v any, fd protoreflect.FieldDescriptor, t types.Type, newMsg func() protoreflect.Value) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		mv := newMsg()
		if v == nil {
			return mv, nil
		}
		return mv, fillProtoMessage(mv.Message(), v, t)
	case protoreflect.EnumKind:
		s, _ := v.(string)
		ev := fd.Enum().Values().ByName(protoreflect.Name(s))
		if ev == nil {
			if v == nil {
				return protoreflect.ValueOfEnum(0), nil
			}
			return protoreflect.Value{}, fmt.Errorf("%q is not a value of enum %s", s, fd.Enum().FullName())
		}
		return protoreflect.ValueOfEnum(ev.Number()), nil
	}
	if v == nil {
		return fd.Default(), nil
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if b, ok := v.(bool); ok {
			return protoreflect.ValueOfBool(b), nil
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if n, ok := sqlInt(v); ok {
			return protoreflect.ValueOfInt32(int32(n)), nil
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if n, ok := sqlInt(v); ok {
			return protoreflect.ValueOfInt64(n), nil
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if n, ok := sqlInt(v); ok {
			return protoreflect.ValueOfUint32(uint32(n)), nil
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if n, ok := sqlInt(v); ok {
			return protoreflect.ValueOfUint64(uint64(n)), nil
		}
	case protoreflect.FloatKind:
		if f, ok := sqlFloat(v); ok {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
	case protoreflect.DoubleKind:
		if f, ok := sqlFloat(v); ok {
			return protoreflect.ValueOfFloat64(f), nil
		}
	case protoreflect.StringKind:
		switch s := v.(type) {
		case string:
			return protoreflect.ValueOfString(s), nil
		case []byte:
			return protoreflect.ValueOfString(string(s)), nil
		}
	case protoreflect.BytesKind:
		switch s := v.(type) {
		case []byte:
			return protoreflect.ValueOfBytes(s), nil
		case string:
			return protoreflect.ValueOfBytes([]byte(s)), nil
		}
	}
	return protoreflect.Value{}, fmt.Errorf("%s value %T does not write as PROTOBUF %s", t, v, fd.Kind())
}

func sqlInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

func sqlFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	if n, ok := sqlInt(v); ok {
		return float64(n), true
	}
	return 0, false
}

// fillProtoMessage writes v, a non-NULL value of t, into the empty
// message m: a well-known message, a wrapper, or a STRUCT by field name.
func fillProtoMessage(m protoreflect.Message, v any, t types.Type) error {
	md := m.Descriptor()
	field := func(name string) protoreflect.FieldDescriptor { return md.Fields().ByName(protoreflect.Name(name)) }
	setInt := func(name string, n int64) {
		if f := field(name); f != nil && n != 0 {
			if pv, err := toProtoValue(n, f, types.BigIntType, nil); err == nil {
				m.Set(f, pv)
			}
		}
	}
	switch string(md.FullName()) {
	case pbTimestamp:
		ms, ok := sqlInt(v)
		if !ok {
			return fmt.Errorf("%T is not a TIMESTAMP", v)
		}
		sec, rem := ms/1000, ms%1000
		if rem < 0 {
			sec, rem = sec-1, rem+1000
		}
		setInt("seconds", sec)
		setInt("nanos", rem*1e6)
		return nil
	case pbDate:
		days, ok := sqlInt(v)
		if !ok {
			return fmt.Errorf("%T is not a DATE", v)
		}
		d := time.Unix(days*86400, 0).UTC()
		setInt("year", int64(d.Year()))
		setInt("month", int64(d.Month()))
		setInt("day", int64(d.Day()))
		return nil
	case pbTimeOfDay:
		ms, ok := sqlInt(v)
		if !ok {
			return fmt.Errorf("%T is not a TIME", v)
		}
		setInt("hours", ms/3600000)
		setInt("minutes", ms/60000%60)
		setInt("seconds", ms/1000%60)
		setInt("nanos", ms%1000*1e6)
		return nil
	case pbDecimal:
		d, ok := v.(*apd.Decimal)
		if !ok {
			return fmt.Errorf("%T is not a DECIMAL", v)
		}
		b, err := twosFromDecimal(d, t.Scale)
		if err != nil {
			return err
		}
		m.Set(field("value"), protoreflect.ValueOfBytes(b))
		setInt("precision", int64(t.Precision))
		setInt("scale", int64(t.Scale))
		return nil
	}
	if isWrapper(md) {
		f := md.Fields().Get(0)
		pv, err := toProtoValue(v, f, t, nil)
		if err != nil {
			return err
		}
		m.Set(f, pv)
		return nil
	}
	in, ok := v.([]any)
	if t.Kind != types.Struct || !ok {
		return fmt.Errorf("%s value %T does not write as message %s", t, v, md.FullName())
	}
	fields := md.Fields()
	for j := 0; j < fields.Len(); j++ {
		f := fields.Get(j)
		i := structField(t, string(f.Name()))
		if i < 0 || i >= len(in) || in[i] == nil {
			continue
		}
		if err := setProtoField(m, f, in[i], t.Fields[i].Type); err != nil {
			return fmt.Errorf("field %s: %w", f.Name(), err)
		}
	}
	return nil
}
