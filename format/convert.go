package format

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

// decimalFromJSON reads a DECIMAL from a JSON number or numeric string and
// fits it to t as ksqlDB's deserializers do: trailing zeros are added up
// to the scale, but a value that needs rounding or has too many integer
// digits is malformed.
func decimalFromJSON(v any, t types.Type) (any, error) {
	var d *apd.Decimal
	var err error
	switch x := v.(type) {
	case json.Number:
		d, err = types.ParseDecimal(string(x))
	case string:
		d, err = types.ParseDecimal(strings.TrimSpace(x))
	case float64:
		d, err = types.DecimalFromFloat(x)
	case int64:
		d = types.DecimalFromInt(x)
	case int32:
		d = types.DecimalFromInt(int64(x))
	case int:
		d = types.DecimalFromInt(int64(x))
	case *apd.Decimal:
		d = x
	default:
		return nil, fmt.Errorf("%w: cannot read JSON %s as %s", ErrMalformed, describeJSON(v), t)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	out, err := types.FitDecimalExact(d, t.Precision, t.Scale)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot fit decimal %s into %s: %v", ErrMalformed, types.FormatDecimal(d), t, err)
	}
	return out, nil
}

// FromJSON converts a JSON-shaped value (what encoding/json produces: nil,
// bool, float64, json.Number, string, []any, map[string]any; Go integers
// are accepted too) to the Go value of SQL type t (see types/doc.go).
//
// It is as lenient as ksqlDB's JSON deserializer: numeric strings are
// accepted for numbers, "true"/"false" for BOOLEAN, any scalar for STRING
// (as its text), numbers with a fraction are truncated for INT and BIGINT.
// Values that cannot be converted are an error wrapping ErrMalformed.
func FromJSON(v any, t types.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case types.Boolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch {
			case strings.EqualFold(x, "true"):
				return true, nil
			case strings.EqualFold(x, "false"):
				return false, nil
			}
		}
	case types.Integer:
		n, ok, err := toInt(v, 32)
		if ok {
			return int32(n), err
		}
	case types.BigInt, types.Timestamp:
		if t.Kind == types.Timestamp {
			if s, isStr := v.(string); isStr {
				if ms, err := parseTimestamp(s); err == nil {
					return ms, nil
				}
			}
		}
		n, ok, err := toInt(v, 64)
		if ok {
			return n, err
		}
	case types.Date, types.Time:
		// DATE is int32 days since the epoch, TIME int32 milliseconds since
		// midnight, as ksqlDB writes them in JSON.
		if s, isStr := v.(string); isStr && t.Kind == types.Date {
			if d, err := time.Parse(time.DateOnly, s); err == nil {
				return int32(d.Unix() / 86400), nil
			}
		}
		n, ok, err := toInt(v, 32)
		if ok {
			return int32(n), err
		}
	case types.Decimal:
		return decimalFromJSON(v, t)
	case types.Double:
		f, ok, err := toFloat(v)
		if ok {
			return f, err
		}
	case types.String:
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		case bool:
			return strconv.FormatBool(x), nil
		case float64:
			return strings.Trim(string(appendDouble(nil, x)), `"`), nil
		case int64, int32, int:
			return fmt.Sprint(x), nil
		case []any, map[string]any:
			b, err := json.Marshal(x)
			return string(b), err
		}
	case types.Bytes:
		switch x := v.(type) {
		case string:
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("%w: BYTES value is not base64: %v", ErrMalformed, err)
			}
			return b, nil
		case []byte:
			return x, nil
		}
	case types.Array:
		if a, ok := v.([]any); ok {
			out := make([]any, len(a))
			for i, e := range a {
				c, err := FromJSON(e, *t.Elem)
				if err != nil {
					return nil, fmt.Errorf("element %d: %w", i, err)
				}
				out[i] = c
			}
			return out, nil
		}
	case types.Map:
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for k, e := range m {
				c, err := FromJSON(e, *t.Elem)
				if err != nil {
					return nil, fmt.Errorf("map key %q: %w", k, err)
				}
				out[k] = c
			}
			return out, nil
		}
	case types.Struct:
		if m, ok := v.(map[string]any); ok {
			out := make([]any, len(t.Fields))
			for i, f := range t.Fields {
				e, found := lookupField(m, f.Name)
				if !found {
					continue
				}
				c, err := FromJSON(e, f.Type)
				if err != nil {
					return nil, fmt.Errorf("field %s: %w", f.Name, err)
				}
				out[i] = c
			}
			return out, nil
		}
	case types.Unknown:
		return v, nil
	}
	return nil, fmt.Errorf("%w: cannot read JSON %s as %s", ErrMalformed, describeJSON(v), t)
}

// lookupField finds name in m, exactly first, then ignoring case.
func lookupField(m map[string]any, name string) (any, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

func describeJSON(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return "string " + strconv.Quote(x)
	case json.Number:
		return "number " + x.String()
	case float64:
		return "number " + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// toInt converts v to an integer of the given bit size. ok is false when v
// has no numeric reading at all (the caller reports the type mismatch).
func toInt(v any, bits int) (n int64, ok bool, err error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	case float64:
		return floatToInt(x, bits)
	case int64:
		n = x
	case int32:
		n = int64(x)
	case int:
		n = int64(x)
	default:
		return 0, false, nil
	}
	if s != "" {
		n, err = strconv.ParseInt(s, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil {
				if _, isStr := v.(string); isStr {
					return 0, false, nil
				}
				return 0, true, fmt.Errorf("%w: %q is not a number", ErrMalformed, s)
			}
			return floatToInt(f, bits)
		}
	}
	if bits == 32 && (n < math.MinInt32 || n > math.MaxInt32) {
		return 0, true, fmt.Errorf("%w: %d overflows INT", ErrMalformed, n)
	}
	return n, true, nil
}

func floatToInt(f float64, bits int) (int64, bool, error) {
	t := math.Trunc(f)
	lim := math.Ldexp(1, bits-1)
	if math.IsNaN(t) || t < -lim || t >= lim {
		return 0, true, fmt.Errorf("%w: %v overflows a %d-bit integer", ErrMalformed, f, bits)
	}
	return int64(t), true, nil
}

func toFloat(v any) (float64, bool, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
		switch x {
		case "NaN":
			return math.NaN(), true, nil
		case "Infinity":
			return math.Inf(1), true, nil
		case "-Infinity":
			return math.Inf(-1), true, nil
		}
	case float64:
		return x, true, nil
	case int64:
		return float64(x), true, nil
	case int32:
		return float64(x), true, nil
	case int:
		return float64(x), true, nil
	case *apd.Decimal:
		return types.DecimalFloat(x), true, nil
	default:
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if _, isStr := v.(string); isStr {
			return 0, false, nil
		}
		return 0, true, fmt.Errorf("%w: %q is not a number", ErrMalformed, s)
	}
	return f, true, nil
}

// parseTimestamp reads ksqlDB's ISO-8601 timestamp text (UTC unless a zone
// is given) as epoch milliseconds.
func parseTimestamp(s string) (int64, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("%w: %q is not a timestamp", ErrMalformed, s)
}

// ToJSON converts a Go value of SQL type t to its JSON shape, the one
// ksqlDB's REST API (Jackson) writes: integers stay int64 (exact), a DOUBLE
// is a json.Number in Java's Double.toString form (30.0, 1.0E7; NaN and
// the infinities as strings), a DECIMAL a json.Number with every digit at
// its scale (3.40), BYTES a base64 string, STRUCT an object keyed by field
// name, ARRAY []any, MAP map[string]any.
func ToJSON(v any, t types.Type) any {
	if v == nil {
		return nil
	}
	switch x := v.(type) {
	case int32:
		return ToJSON(int64(x), t)
	case int64:
		switch t.Kind {
		case types.Double:
			return jsonDouble(float64(x))
		case types.Decimal:
			if d, err := types.FitDecimal(types.DecimalFromInt(x), t.Precision, t.Scale); err == nil {
				return json.Number(types.FormatDecimal(d))
			}
			return json.Number(strconv.FormatInt(x, 10))
		}
		return x
	case int:
		return ToJSON(int64(x), t)
	case float64:
		return jsonDouble(x)
	case *apd.Decimal:
		// A JSON number with the decimal's scale: 3.40 stays 3.40.
		return json.Number(types.FormatDecimal(x))
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case []any:
		if t.Kind == types.Struct {
			m := make(map[string]any, len(t.Fields))
			for i, f := range t.Fields {
				if i < len(x) {
					m[f.Name] = ToJSON(x[i], f.Type)
				}
			}
			return m
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ToJSON(e, elemType(t))
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = ToJSON(e, elemType(t))
		}
		return out
	}
	return v
}

// AppendJSONValue appends v, a value ToJSON returned, as the JSON text
// ksqlDB's REST API (Jackson) writes: strings by types.AppendJSONString
// (HTML characters and U+2028 as they are, unlike encoding/json), object
// keys sorted as encoding/json sorts them, numbers as their text.
func AppendJSONValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case json.Number:
		return append(b, x...), nil
	case string:
		return types.AppendJSONString(b, x), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = AppendJSONValue(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(types.AppendJSONString(b, k), ':')
			var err error
			if b, err = AppendJSONValue(b, x[k]); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}
	return b, fmt.Errorf("%w: Go value of type %T is not one ToJSON gives", ErrEncode, v)
}

func elemType(t types.Type) types.Type {
	if t.Elem != nil {
		return *t.Elem
	}
	return types.UnknownType
}

// appendValue appends v, a Go value of SQL type t, as JSON.
func appendValue(b []byte, v any, t types.Type) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return types.AppendJSONString(b, x), nil
	case int64:
		if t.Kind == types.Double || t.Kind == types.Decimal {
			return appendDouble(b, float64(x)), nil
		}
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		if t.Kind == types.Double || t.Kind == types.Decimal {
			return appendDouble(b, float64(x)), nil
		}
		return strconv.AppendInt(b, int64(x), 10), nil
	case float64:
		return appendDouble(b, x), nil
	case *apd.Decimal:
		return append(b, types.FormatDecimal(x)...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case []byte:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, '"'), nil
	case []any:
		if t.Kind == types.Struct {
			if len(x) != len(t.Fields) {
				return b, fmt.Errorf("%w: STRUCT value has %d fields, type %s has %d", ErrEncode, len(x), t, len(t.Fields))
			}
			b = append(b, '{')
			for i, f := range t.Fields {
				if i > 0 {
					b = append(b, ',')
				}
				b = types.AppendJSONString(b, f.Name)
				b = append(b, ':')
				var err error
				if b, err = appendValue(b, x[i], f.Type); err != nil {
					return b, err
				}
			}
			return append(b, '}'), nil
		}
		et := elemType(t)
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e, et); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		// Sorted keys: equal maps encode to equal bytes (changelog
		// compaction and tests rely on deterministic output).
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		et := elemType(t)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = types.AppendJSONString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, x[k], et); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case json.Number:
		return append(b, x...), nil
	}
	return b, fmt.Errorf("%w: Go value of type %T for a %s column", ErrEncode, v, t)
}

// appendDouble writes f the way Java's Double.toString (and so ksqlDB's
// serializers) does, so consumers always see a double: 125.0, 0.001,
// 1.0E7, 1.234E-5. JSON has no NaN or infinities; like Jackson we write
// them as the strings "NaN", "Infinity" and "-Infinity".
func appendDouble(b []byte, f float64) []byte { return types.AppendJSONDouble(b, f) }

// jsonDouble is f as a JSON value written the way appendDouble writes it,
// for encoders that take values (encoding/json writes 30.0 as 30): a
// json.Number, or for NaN and the infinities the string appendDouble
// quotes.
func jsonDouble(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return types.FormatDouble(f)
	}
	return json.Number(types.FormatDouble(f))
}

// javaText is a number or boolean a writer's schema has, read into a
// STRING column, as ksqlDB reads it there (Java's toString: 10, 1.5E10,
// a float's own shortest digits, true); ok is false for anything else.
func javaText(v any) (text string, ok bool) {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float32:
		return types.FormatFloat32(x), true
	case float64:
		return types.FormatDouble(x), true
	}
	return "", false
}
