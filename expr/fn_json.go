package expr

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

// JSON functions, after ksqlDB's UDFs in io.confluent.ksql.function.udf.json.
// ksqlDB parses with Jackson and writes compact JSON that keeps object
// keys in document order; numbers keep their written digits (Jackson's
// exact BigDecimals, written plain). Invalid JSON makes ksqlDB's UDF
// throw, which a query sees as NULL; the functions here return NULL
// directly (IS_JSON_STRING and JSON_ARRAY_CONTAINS say false instead, as
// ksqlDB's catch their parse errors).

// jsObject is a parsed JSON object with its keys in document order.
type jsObject struct {
	keys []string
	vals map[string]any
}

// jsParse parses the first JSON value of s as Jackson's readTree does:
// numbers as json.Number, objects as *jsObject, arrays as []any; text
// after the value is ignored. ok is false for invalid JSON and for a
// blank string (Jackson's missing node).
func jsParse(s string) (v any, ok bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := jsValue(dec)
	return v, err == nil
}

func jsValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, isDelim := tok.(json.Delim)
	if !isDelim {
		return tok, nil
	}
	switch d {
	case '[':
		list := []any{}
		for dec.More() {
			v, err := jsValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	case '{':
		obj := &jsObject{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := jsValue(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := obj.vals[k]; !dup { // a repeated key keeps its place, takes the last value
				obj.keys = append(obj.keys, k)
			}
			obj.vals[k] = v
		}
		_, err := dec.Token()
		return obj, err
	}
	return nil, errors.New("unexpected delimiter")
}

// jsText writes a parsed JSON value compactly.
func jsText(v any) string { return string(jsAppend(nil, v)) }

func jsAppend(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case json.Number:
		return append(b, jsPlainNumber(string(x))...)
	case string:
		return types.AppendJSONString(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsAppend(b, e)
		}
		return append(b, ']')
	case *jsObject:
		b = append(b, '{')
		for i, k := range x.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = types.AppendJSONString(b, k)
			b = append(b, ':')
			b = jsAppend(b, x.vals[k])
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

// jsPlainNumber writes a JSON number as Jackson writes the node it read:
// integers in canonical form, other numbers with their digits kept and
// an exponent expanded (1.5e3 is 1500, 1e-2 is 0.01).
func jsPlainNumber(s string) string {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return s
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) + exp // position of the decimal point in digits
	var out string
	switch {
	case exp == 0:
		out = mant
	case point <= 0:
		out = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		out = digits + strings.Repeat("0", point-len(digits))
	default:
		out = digits[:point] + "." + digits[point:]
	}
	if exp != 0 { // BigDecimal drops the leading zeros of the unscaled value
		if whole, rest, ok := strings.Cut(out, "."); ok {
			whole = strings.TrimLeft(whole, "0")
			if whole == "" {
				whole = "0"
			}
			out = whole + "." + rest
		} else if out = strings.TrimLeft(out, "0"); out == "" {
			out = "0"
		}
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	return out
}

// jsPath splits a JSONPath ($.a.b, $.a[0], $['a'], $["a"]) into its
// tokens as ksqlDB's JsonPathTokenizer does.
func jsPath(p string) ([]string, error) {
	p = strings.TrimSpace(p)
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("invalid JSON path %q: it must start with $", p)
	}
	var toks []string
	i := 1
	unquoted := func() string {
		start := i
		for i < len(p) && p[i] != '.' && p[i] != '[' && p[i] != ']' && p[i] != ' ' {
			i++
		}
		return p[start:i]
	}
	for {
		for i < len(p) && p[i] == ' ' {
			i++
		}
		if i >= len(p) {
			return toks, nil
		}
		switch p[i] {
		case '.':
			i++
			t := unquoted()
			if t == "" {
				return nil, fmt.Errorf("invalid JSON path %q", p)
			}
			toks = append(toks, t)
		case '[':
			i++
			var t string
			if i < len(p) && (p[i] == '"' || p[i] == '\'') {
				q := p[i]
				end := strings.IndexByte(p[i+1:], q)
				if end < 0 {
					return nil, fmt.Errorf("invalid JSON path %q: unclosed quote", p)
				}
				t = p[i+1 : i+1+end]
				i += end + 2
			} else {
				t = unquoted()
			}
			if i >= len(p) || p[i] != ']' {
				return nil, fmt.Errorf("invalid JSON path %q: missing ]", p)
			}
			i++
			toks = append(toks, t)
		default:
			return nil, fmt.Errorf("invalid JSON path %q", p)
		}
	}
}

// jsExtract follows path tokens into a parsed value: an index into an
// array, a key into an object. ok is false when the path leads nowhere.
func jsExtract(v any, toks []string) (any, bool) {
	for _, t := range toks {
		switch x := v.(type) {
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(x) {
				return nil, false
			}
			v = x[n]
		case *jsObject:
			e, ok := x.vals[t]
			if !ok {
				return nil, false
			}
			v = e
		default:
			return nil, false
		}
	}
	return v, true
}

func jsStringArgs(name string, args []types.Type, lo, hi int) error {
	if err := argCount(name, args, lo, hi); err != nil {
		return err
	}
	for _, t := range args {
		if t.Kind != types.String && t.Kind != types.Unknown {
			return fmt.Errorf("%w: function %s takes STRING arguments, not %s", ErrType, name, t)
		}
	}
	return nil
}

// jsParseArg parses a STRING argument; ok is false for NULL and for
// what is not JSON.
func jsParseArg(v any) (any, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	return jsParse(s)
}

// jsArrayContains scans the top level of a JSON array for a value as
// ksqlDB's streaming JSON_ARRAY_CONTAINS does: numbers match only values
// of their kind (an INT or BIGINT an integer token, a DOUBLE a token
// with a fraction or exponent), nested arrays and objects never match,
// and the scan stops at the first match (so text after it is not
// checked).
func jsArrayContains(s string, val any) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '[' {
		return false
	}
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '[', '{':
				depth++
			default:
				if depth == 0 {
					return false
				}
				depth--
			}
			continue
		}
		if depth > 0 {
			continue
		}
		switch x := tok.(type) {
		case nil:
			if val == nil {
				return true
			}
		case bool:
			if b, ok := val.(bool); ok && b == x {
				return true
			}
		case string:
			if v, ok := val.(string); ok && v == x {
				return true
			}
		case json.Number:
			isInt := !strings.ContainsAny(string(x), ".eE")
			switch v := val.(type) {
			case int32:
				n, err := strconv.ParseInt(string(x), 10, 32)
				if isInt && err != nil {
					return false // Jackson fails to read it as an INT, and the whole call says false
				}
				if isInt && int32(n) == v {
					return true
				}
			case int64:
				n, err := strconv.ParseInt(string(x), 10, 64)
				if isInt && err != nil {
					return false
				}
				if isInt && n == v {
					return true
				}
			case float64:
				f, err := strconv.ParseFloat(string(x), 64)
				if !isInt && err == nil && (f == v && math.Signbit(f) == math.Signbit(v)) {
					return true
				}
			}
		}
	}
}

// jsFromSQL writes a SQL value as TO_JSON_STRING does: STRUCT fields and
// MAP keys sorted by name, BYTES as base64, TIMESTAMP, DATE and TIME as
// ISO text, DOUBLE as Java prints it (NaN and the infinities quoted).
func jsFromSQL(b []byte, v any, t types.Type) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	switch t.Kind {
	case types.Timestamp:
		if ms, ok := types.AsInt64(v); ok {
			return types.AppendJSONString(b, time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000"))
		}
	case types.Date:
		if d, ok := types.AsInt64(v); ok {
			return types.AppendJSONString(b, time.Unix(d*86400, 0).UTC().Format(time.DateOnly))
		}
	case types.Time:
		if ms, ok := types.AsInt64(v); ok {
			// Java's LocalTime.toString of whole seconds: 10:15 or 10:15:30.
			sec := ms / 1000
			s := fmt.Sprintf("%02d:%02d", sec/3600, sec/60%60)
			if sec%60 != 0 {
				s += fmt.Sprintf(":%02d", sec%60)
			}
			return types.AppendJSONString(b, s)
		}
	case types.Decimal: // every digit at the value's scale, never an exponent
		if d, ok := v.(*apd.Decimal); ok && d != nil {
			return append(b, types.FormatDecimal(d)...)
		}
	case types.Array:
		list, _ := v.([]any)
		b = append(b, '[')
		for i, e := range list {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsFromSQL(b, e, *t.Elem)
		}
		return append(b, ']')
	case types.Map:
		m, _ := v.(map[string]any)
		b = append(b, '{')
		for i, k := range collSortedKeys(m) {
			if i > 0 {
				b = append(b, ',')
			}
			b = types.AppendJSONString(b, k)
			b = append(b, ':')
			b = jsFromSQL(b, m[k], *t.Elem)
		}
		return append(b, '}')
	case types.Struct:
		vals, _ := v.([]any)
		order := make([]int, len(t.Fields))
		for i := range order {
			order[i] = i
		}
		sortInts(order, func(i, j int) bool { return t.Fields[i].Name < t.Fields[j].Name })
		b = append(b, '{')
		for n, i := range order {
			if n > 0 {
				b = append(b, ',')
			}
			var x any
			if i < len(vals) {
				x = vals[i]
			}
			b = types.AppendJSONString(b, t.Fields[i].Name)
			b = append(b, ':')
			b = jsFromSQL(b, x, t.Fields[i].Type)
		}
		return append(b, '}')
	}
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(b, x)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return types.AppendJSONDouble(b, x)
	case string:
		return types.AppendJSONString(b, x)
	case []byte:
		return types.AppendJSONString(b, base64.StdEncoding.EncodeToString(x))
	}
	return types.AppendJSONString(b, types.FormatValue(v))
}

// sortInts is an insertion sort of a few field positions.
func sortInts(a []int, less func(i, j int) bool) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && less(a[j], a[j-1]); j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func init() {
	// EXTRACTJSONFIELD(json, path) is the text at path: a JSON string
	// unquoted, anything else (null included) as compact JSON; NULL when
	// the path leads nowhere or the input is not JSON.
	register(&scalar{name: "EXTRACTJSONFIELD", bindConsts: func(args []types.Type, consts []any) (types.Type, func([]any) any, error) {
		if err := jsStringArgs("EXTRACTJSONFIELD", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		var constToks []string
		var constErr error
		p, isConst := consts[1].(string)
		if isConst { // a literal path is split once
			constToks, constErr = jsPath(p)
		}
		return types.StringType, func(a []any) any {
			p, ok := a[1].(string)
			if !ok || a[0] == nil {
				return nil
			}
			toks, err := constToks, constErr
			if !isConst {
				toks, err = jsPath(p)
			}
			if err != nil {
				return nil
			}
			doc, ok := jsParseArg(a[0])
			if !ok {
				return nil
			}
			v, ok := jsExtract(doc, toks)
			if !ok {
				return nil
			}
			if s, isStr := v.(string); isStr {
				return s
			}
			return jsText(v)
		}, nil
	}})
	// JSON_ARRAY_LENGTH(json) is the length of a JSON array, NULL for
	// anything else.
	register(&scalar{name: "JSON_ARRAY_LENGTH", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := jsStringArgs("JSON_ARRAY_LENGTH", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		return types.IntegerType, func(a []any) any {
			v, _ := jsParseArg(a[0])
			if list, ok := v.([]any); ok {
				return int32(len(list))
			}
			return nil
		}, nil
	}})
	// JSON_KEYS(json) lists a JSON object's keys in document order.
	register(&scalar{name: "JSON_KEYS", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := jsStringArgs("JSON_KEYS", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		return types.ArrayOf(types.StringType), func(a []any) any {
			v, _ := jsParseArg(a[0])
			obj, ok := v.(*jsObject)
			if !ok {
				return nil
			}
			out := make([]any, len(obj.keys))
			for i, k := range obj.keys {
				out[i] = k
			}
			return out
		}, nil
	}})
	// JSON_RECORDS(json) maps a JSON object's keys to their values as
	// JSON text.
	register(&scalar{name: "JSON_RECORDS", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := jsStringArgs("JSON_RECORDS", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		return types.MapOf(types.StringType, types.StringType), func(a []any) any {
			v, _ := jsParseArg(a[0])
			obj, ok := v.(*jsObject)
			if !ok {
				return nil
			}
			out := make(map[string]any, len(obj.keys))
			for _, k := range obj.keys {
				// A string value is its text, anything else its JSON, as
				// ksqlDB's JSON_RECORDS reads them.
				if str, isStr := obj.vals[k].(string); isStr {
					out[k] = str
					continue
				}
				out[k] = jsText(obj.vals[k])
			}
			return out
		}, nil
	}})
	// JSON_ITEMS(json) lists the objects of a JSON array as JSON text;
	// NULL if any item is not an object.
	register(&scalar{name: "JSON_ITEMS", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := jsStringArgs("JSON_ITEMS", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		return types.ArrayOf(types.StringType), func(a []any) any {
			v, _ := jsParseArg(a[0])
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			out := make([]any, len(list))
			for i, e := range list {
				if _, isObj := e.(*jsObject); !isObj {
					return nil
				}
				out[i] = jsText(e)
			}
			return out
		}, nil
	}})
	// JSON_CONCAT(json, …) merges objects (later keys win) or, when any
	// value is not an object, concatenates arrays (wrapping non-arrays);
	// NULL if any argument is NULL or not JSON.
	register(&scalar{name: "JSON_CONCAT", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := jsStringArgs("JSON_CONCAT", args, 1, -1); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			nodes := make([]any, len(a))
			allObjects := true
			for i, x := range a {
				v, ok := jsParseArg(x)
				if !ok {
					return nil
				}
				_, isObj := v.(*jsObject)
				allObjects = allObjects && isObj
				nodes[i] = v
			}
			if len(nodes) == 1 {
				return jsText(nodes[0])
			}
			if allObjects {
				out := &jsObject{vals: map[string]any{}}
				for _, n := range nodes {
					obj := n.(*jsObject)
					for _, k := range obj.keys {
						if _, dup := out.vals[k]; !dup {
							out.keys = append(out.keys, k)
						}
						out.vals[k] = obj.vals[k]
					}
				}
				return jsText(out)
			}
			out := []any{}
			for _, n := range nodes {
				if list, ok := n.([]any); ok {
					out = append(out, list...)
				} else {
					out = append(out, n)
				}
			}
			return jsText(out)
		}, nil
	}})
	// JSON_ARRAY_CONTAINS(json, value) reports whether the top level of a
	// JSON array holds value: false for what is not an array, NULL for a
	// NULL document.
	register(&scalar{name: "JSON_ARRAY_CONTAINS", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("JSON_ARRAY_CONTAINS", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		if args[0].Kind != types.String && args[0].Kind != types.Unknown {
			return types.Type{}, nil, fmt.Errorf("%w: function JSON_ARRAY_CONTAINS needs a STRING, not %s", ErrType, args[0])
		}
		// ksqlDB matches INT, BIGINT, DOUBLE, STRING, BOOLEAN and NULL
		// values; any other type is never found.
		switch args[1].Kind {
		case types.Integer, types.BigInt, types.Double, types.String, types.Boolean, types.Unknown:
		default:
			return types.BooleanType, func(a []any) any {
				s, ok := a[0].(string)
				if !ok {
					return nil
				}
				return a[1] == nil && jsArrayContains(s, nil)
			}, nil
		}
		return types.BooleanType, func(a []any) any {
			s, ok := a[0].(string)
			if !ok {
				return nil // ksqlDB's parser fails on a NULL document, and the call gives NULL
			}
			return jsArrayContains(s, a[1])
		}, nil
	}})
	// IS_JSON_STRING(s) reports whether s parses as JSON; NULL and blank
	// strings do not.
	register(&scalar{name: "IS_JSON_STRING", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := jsStringArgs("IS_JSON_STRING", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		return types.BooleanType, func(a []any) any {
			_, ok := jsParseArg(a[0])
			return ok
		}, nil
	}})
	// TO_JSON_STRING(value) writes any value as JSON; NULL is "null".
	register(&scalar{name: "TO_JSON_STRING", decimalArgs: true, bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("TO_JSON_STRING", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		t := args[0]
		return types.StringType, func(a []any) any {
			return string(jsFromSQL(nil, a[0], t))
		}, nil
	}})
}
