package udf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

// writeArgs encodes the variable-length arguments into in.buf, asks the
// module for a buffer of their total size and copies them there.
func (f *Function) writeArgs(in *instance, args []any) error {
	buf := in.buf[:0]
	if cap(in.lengths) < len(args) {
		in.lengths = make([]uint32, len(args))
	}
	in.lengths = in.lengths[:len(args)]
	for i, t := range f.sig.Args {
		in.lengths[i] = 0
		if !inMemory(t) || args[i] == nil {
			continue
		}
		start := len(buf)
		var err error
		if buf, err = appendBytes(buf, t, args[i]); err != nil {
			return fmt.Errorf("argument %d: %w", i+1, err)
		}
		in.lengths[i] = uint32(len(buf) - start)
	}
	in.buf = buf
	in.base = 0
	if len(buf) == 0 {
		return nil
	}
	in.one[0] = uint64(uint32(len(buf)))
	if err := f.run(in, in.alloc, in.one[:]); err != nil {
		return err
	}
	in.base = uint32(in.one[0])
	if !in.mem.Write(in.base, buf) {
		return fmt.Errorf("%s(%d) returned %d, outside the module's %d bytes of memory", AllocExport, len(buf), in.base, in.mem.Size())
	}
	return nil
}

// appendBytes appends v, of type t, as the calling convention lays it in
// memory.
func appendBytes(b []byte, t types.Type, v any) ([]byte, error) {
	switch t.Kind {
	case types.String:
		s, _ := v.(string)
		return append(b, s...), nil
	case types.Bytes:
		x, _ := v.([]byte)
		return append(b, x...), nil
	case types.Decimal:
		d, ok := types.AsDecimal(v)
		if !ok {
			return nil, fmt.Errorf("%T is no DECIMAL", v)
		}
		return d.Append(b, 'f'), nil
	}
	return appendJSON(b, t, v)
}

// appendJSON writes v as the calling convention's JSON for type t.
func appendJSON(b []byte, t types.Type, v any) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	var err error
	switch t.Kind {
	case types.Boolean:
		x, _ := v.(bool)
		return strconv.AppendBool(b, x), nil
	case types.Integer, types.BigInt, types.Date, types.Time, types.Timestamp:
		x, _ := types.AsInt64(v)
		return strconv.AppendInt(b, x, 10), nil
	case types.Double:
		x, _ := types.AsFloat(v)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v has no JSON number", x)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64), nil
	case types.Decimal:
		d, ok := types.AsDecimal(v)
		if !ok {
			return nil, fmt.Errorf("%T is no DECIMAL", v)
		}
		return d.Append(b, 'f'), nil
	case types.String:
		s, _ := v.(string)
		return types.AppendJSONString(b, s), nil
	case types.Bytes:
		x, _ := v.([]byte)
		return types.AppendJSONString(b, base64.StdEncoding.EncodeToString(x)), nil
	case types.Array:
		xs, _ := v.([]any)
		b = append(b, '[')
		for i, x := range xs {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSON(b, *t.Elem, x); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case types.Map:
		m, _ := v.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sortStrings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(types.AppendJSONString(b, k), ':')
			if b, err = appendJSON(b, *t.Elem, m[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case types.Struct:
		xs, _ := v.([]any)
		b = append(b, '{')
		for i, fd := range t.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(types.AppendJSONString(b, fd.Name), ':')
			var x any
			if i < len(xs) {
				x = xs[i]
			}
			if b, err = appendJSON(b, fd.Type, x); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("type %s has no calling convention", t)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// decodeBytes reads a result of type t from the module's bytes b (a view
// of its memory: everything kept is copied).
func decodeBytes(t types.Type, b []byte) (any, error) {
	switch t.Kind {
	case types.String:
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("returned a STRING that is not UTF-8")
		}
		return string(b), nil
	case types.Bytes:
		return bytes.Clone(b), nil
	case types.Decimal:
		return decodeDecimal(t, string(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("returned %s that is not JSON: %v", t, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("returned %s with text after its JSON value", t)
	}
	return fromJSON(t, v)
}

func decodeDecimal(t types.Type, s string) (*apd.Decimal, error) {
	d, err := types.ParseDecimal(s)
	if err != nil {
		return nil, fmt.Errorf("returned %q for a %s: %v", s, t, err)
	}
	fit, err := types.FitDecimal(d, t.Precision, t.Scale)
	if err != nil {
		return nil, fmt.Errorf("returned %s, which does not fit %s: %v", s, t, err)
	}
	return fit, nil
}

// fromJSON converts a decoded JSON value (numbers as json.Number) to the
// Go value of type t.
func fromJSON(t types.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) { return nil, fmt.Errorf("returned %v where the JSON of a %s belongs", v, t) }
	switch t.Kind {
	case types.Boolean:
		if x, ok := v.(bool); ok {
			return x, nil
		}
	case types.Integer, types.Date, types.Time:
		if n, ok := v.(json.Number); ok {
			if x, err := strconv.ParseInt(n.String(), 10, 32); err == nil {
				return int32(x), nil
			}
		}
	case types.BigInt, types.Timestamp:
		if n, ok := v.(json.Number); ok {
			if x, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
				return x, nil
			}
		}
	case types.Double:
		if n, ok := v.(json.Number); ok {
			if x, err := n.Float64(); err == nil {
				return x, nil
			}
		}
	case types.Decimal:
		if n, ok := v.(json.Number); ok {
			return decodeDecimal(t, n.String())
		}
	case types.String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case types.Bytes:
		if s, ok := v.(string); ok {
			if x, err := base64.StdEncoding.DecodeString(s); err == nil {
				return x, nil
			}
		}
	case types.Array:
		xs, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			e, err := fromJSON(*t.Elem, x)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case types.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			e, err := fromJSON(*t.Elem, x)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case types.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		out := make([]any, len(t.Fields))
		for i, fd := range t.Fields {
			e, err := fromJSON(fd.Type, m[fd.Name])
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	return bad()
}
