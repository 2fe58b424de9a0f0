package format

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluice-sql/sluice/types"
)

// Reading a decoded message's fields as SQL values.

// protoField reads field fd of m as a value of t: absent fields without
// presence are their defaults, absent fields with presence NULL.
func protoField(m protoreflect.Message, fd protoreflect.FieldDescriptor, t types.Type) (any, error) {
	switch {
	case fd.IsList():
		if t.Kind != types.Array {
			return nil, fmt.Errorf("a repeated field does not read as %s", t)
		}
		l := m.Get(fd).List()
		out := make([]any, l.Len())
		for k := range out {
			v, err := protoValue(l.Get(k), fd, *t.Elem)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case fd.IsMap():
		if t.Kind != types.Map {
			return nil, fmt.Errorf("a map field does not read as %s", t)
		}
		mp := m.Get(fd).Map()
		out := make(map[string]any, mp.Len())
		var err error
		mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			var x any
			if x, err = protoValue(v, fd.MapValue(), *t.Elem); err != nil {
				return false
			}
			out[k.String()] = x
			return true
		})
		return out, err
	}
	if !m.Has(fd) && (fd.HasPresence() || fd.Kind() == protoreflect.BytesKind) {
		// Absent with presence is NULL. So are absent bytes, as ksqlDB
		// reads them: an unset proto3 bytes field is no value, not an
		// empty one.
		return nil, nil
	}
	return protoValue(m.Get(fd), fd, t)
}

// protoValue converts one value of a field of fd's kind to t.
func protoValue(v protoreflect.Value, fd protoreflect.FieldDescriptor, t types.Type) (any, error) {
	var x any
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return protoMessageValue(v.Message(), t)
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			x = string(ev.Name())
		} else {
			x = fmt.Sprint(v.Enum())
		}
	case protoreflect.BoolKind:
		x = v.Bool()
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		x = v.Int()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		x = int64(v.Uint())
	case protoreflect.FloatKind:
		x = float32(v.Float())
	case protoreflect.DoubleKind:
		x = v.Float()
	case protoreflect.StringKind:
		x = v.String()
	case protoreflect.BytesKind:
		x = v.Bytes()
	}
	return protoScalar(x, t)
}

// protoScalar converts a scalar read from a message (bool, int64,
// float32, float64, string, []byte) to t. A STRING column reads a number
// or a boolean as Java prints it, as ksqlDB does.
func protoScalar(x any, t types.Type) (any, error) {
	if f, ok := x.(float32); ok && t.Kind != types.String {
		x = float64(f)
	}
	switch t.Kind {
	case types.Boolean:
		if b, ok := x.(bool); ok {
			return b, nil
		}
	case types.Integer, types.Date, types.Time:
		if n, ok := x.(int64); ok {
			return int32(n), nil
		}
	case types.BigInt, types.Timestamp:
		if n, ok := x.(int64); ok {
			return n, nil
		}
	case types.Double:
		switch n := x.(type) {
		case float64:
			return n, nil
		case int64:
			return float64(n), nil
		}
	case types.String:
		switch s := x.(type) {
		case string:
			return s, nil
		case []byte:
			return string(s), nil
		}
		if text, ok := javaText(x); ok {
			return text, nil
		}
	case types.Bytes:
		switch s := x.(type) {
		case []byte:
			return s, nil
		case string:
			return []byte(s), nil
		}
	case types.Decimal:
		switch n := x.(type) {
		case int64:
			return types.FitDecimal(types.DecimalFromInt(n), t.Precision, t.Scale)
		case float64:
			d, err := types.DecimalFromFloat(n)
			if err != nil {
				return nil, err
			}
			return types.FitDecimal(d, t.Precision, t.Scale)
		}
	}
	return nil, fmt.Errorf("PROTOBUF value %T does not read as %s", x, t)
}

// Well-known messages with a SQL type of their own.
const (
	pbTimestamp = "google.protobuf.Timestamp"
	pbDate      = "google.type.Date"
	pbTimeOfDay = "google.type.TimeOfDay"
	pbDecimal   = "confluent.type.Decimal"
)

// isWrapper reports a google.protobuf wrapper message (Int32Value, ...):
// a nullable scalar.
func isWrapper(md protoreflect.MessageDescriptor) bool {
	n := string(md.FullName())
	return strings.HasPrefix(n, "google.protobuf.") && strings.HasSuffix(n, "Value") &&
		md.Fields().Len() == 1 && md.Fields().Get(0).Name() == "value"
}

// protoTemporal converts a timestamp, date or time message's number to
// t: not to a STRING, which would read its number.
func protoTemporal(n int64, t types.Type) (any, error) {
	if t.Kind == types.String {
		return nil, fmt.Errorf("PROTOBUF temporal value does not read as %s", t)
	}
	return protoScalar(n, t)
}

func protoMessageValue(m protoreflect.Message, t types.Type) (any, error) {
	md := m.Descriptor()
	get := func(name string) protoreflect.Value { return m.Get(md.Fields().ByName(protoreflect.Name(name))) }
	switch string(md.FullName()) {
	case pbTimestamp:
		ms := get("seconds").Int()*1000 + get("nanos").Int()/1e6
		return protoTemporal(ms, t)
	case pbDate:
		d := time.Date(int(get("year").Int()), time.Month(get("month").Int()), int(get("day").Int()), 0, 0, 0, 0, time.UTC)
		return protoTemporal(d.Unix()/86400, t)
	case pbTimeOfDay:
		ms := ((get("hours").Int()*60+get("minutes").Int())*60+get("seconds").Int())*1000 + get("nanos").Int()/1e6
		return protoTemporal(ms, t)
	case pbDecimal:
		if t.Kind != types.Decimal {
			return nil, fmt.Errorf("a Decimal does not read as %s", t)
		}
		return types.FitDecimal(decimalFromTwos(get("value").Bytes(), int32(get("scale").Int())), t.Precision, t.Scale)
	}
	if isWrapper(md) {
		f := md.Fields().Get(0)
		return protoValue(m.Get(f), f, t)
	}
	if t.Kind != types.Struct {
		return nil, fmt.Errorf("message %s does not read as %s", md.FullName(), t)
	}
	out := make([]any, len(t.Fields))
	fields := md.Fields()
	for j := 0; j < fields.Len(); j++ {
		f := fields.Get(j)
		i := structField(t, string(f.Name()))
		if i < 0 {
			continue
		}
		v, err := protoField(m, f, t.Fields[i].Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name(), err)
		}
		out[i] = v
	}
	return out, nil
}

// structField is the index of the field of struct type t named name
// (exactly, else ignoring case), or -1.
func structField(t types.Type, name string) int {
	folded := -1
	for i, f := range t.Fields {
		if f.Name == name {
			return i
		}
		if folded < 0 && strings.EqualFold(f.Name, name) {
			folded = i
		}
	}
	return folded
}

// decimalFromTwos is the decimal of a big-endian two's-complement
// unscaled value and a scale.
func decimalFromTwos(b []byte, scale int32) *apd.Decimal {
	var x big.Int
	x.SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(&x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(&x), -scale)
}
