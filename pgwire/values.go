package pgwire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/pgcatalog"
	"github.com/sluice-sql/sluice/types"
)

// Format codes of the protocol: a value is sent as text or binary.
const (
	textFormat   int16 = 0
	binaryFormat int16 = 1
)

// column is one column of a result: how it is described and how its
// values are written. A column of a Sluice query has its Sluice type
// (sluice set); a column pgcatalog answered has only its Postgres type,
// and its values are the Go values pgcatalog.Result documents.
type column struct {
	name   string
	pg     pgcatalog.PGType
	sluice *types.Type
	format int16
	// tableOID and attnum say which source column this one is, as
	// pgcatalog numbers them; 0 for a computed one.
	tableOID uint32
	attnum   int16
}

// sluiceColumns are the columns of a Sluice query's schema, as TypeOf
// maps them.
func sluiceColumns(s types.Schema) []column {
	out := make([]column, len(s.Columns))
	for i, c := range s.Columns {
		t := c.Type
		out[i] = column{name: c.Name, pg: pgcatalog.TypeOf(t), sluice: &t}
	}
	return out
}

// catalogColumns are the columns of a pgcatalog result.
func catalogColumns(fs []pgcatalog.Field) []column {
	out := make([]column, len(fs))
	for i, f := range fs {
		out[i] = column{name: f.Name, pg: f.Type}
	}
	return out
}

// textColumns are columns of text, for SHOW and DESCRIBE's tables.
func textColumns(names []string) []column {
	out := make([]column, len(names))
	for i, n := range names {
		out[i] = column{name: n, pg: pgcatalog.PGType{OID: pgcatalog.OIDText, Name: "text", Size: -1, TypeMod: -1}}
	}
	return out
}

// withFormats sets each column's result format from a Bind's result
// format codes: none means all text, one applies to all, else one each.
func withFormats(cols []column, codes []int16) ([]column, error) {
	out := make([]column, len(cols))
	copy(out, cols)
	switch {
	case len(codes) == 0:
	case len(codes) == 1:
		for i := range out {
			out[i].format = codes[0]
		}
	case len(codes) == len(out):
		for i := range out {
			out[i].format = codes[i]
		}
	default:
		return nil, protocolErrorf("bind message has %d result formats but query has %d columns", len(codes), len(out))
	}
	for _, c := range out {
		if c.format != textFormat && c.format != binaryFormat {
			return nil, protocolErrorf("unsupported format code: %d", c.format)
		}
	}
	return out, nil
}

// encoder writes values of columns in their formats.
type encoder struct {
	m *pgtype.Map
}

func newEncoder() *encoder { return &encoder{m: pgtype.NewMap()} }

// row encodes one row's values; a nil value is NULL (a nil slice).
func (e *encoder) row(cols []column, vals []any) ([][]byte, error) {
	out := make([][]byte, len(cols))
	for i, c := range cols {
		var v any
		if i < len(vals) {
			v = vals[i]
		}
		if v == nil {
			continue
		}
		var b []byte
		var err error
		if c.sluice != nil {
			b, err = e.sluiceValue(c, v)
		} else {
			b, err = e.catalogValue(c, v)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		out[i] = b
	}
	return out, nil
}

// sluiceValue encodes an engine value (types/doc.go) of c's Sluice type.
func (e *encoder) sluiceValue(c column, v any) ([]byte, error) {
	t := *c.sluice
	if c.pg.OID == pgcatalog.OIDJSONB {
		compact, err := format.AppendJSONValue(nil, format.ToJSON(v, t))
		if err != nil {
			return nil, err
		}
		b, err := jsonbText(nil, compact)
		if err != nil {
			return nil, err
		}
		if c.format == binaryFormat {
			return e.m.Encode(c.pg.OID, binaryFormat, json.RawMessage(b), nil)
		}
		return b, nil
	}
	if c.format == textFormat {
		return appendSluiceText(nil, v, t, false), nil
	}
	pv, err := pgValue(v, t)
	if err != nil {
		return nil, err
	}
	return e.m.Encode(c.pg.OID, binaryFormat, pv, nil)
}

// catalogValue encodes a pgcatalog value of c's Postgres type.
func (e *encoder) catalogValue(c column, v any) ([]byte, error) {
	if c.format == textFormat {
		switch x := v.(type) {
		case bool:
			return boolText(x), nil
		case int16:
			return strconv.AppendInt(nil, int64(x), 10), nil
		case int32:
			return strconv.AppendInt(nil, int64(x), 10), nil
		case int64:
			return strconv.AppendInt(nil, x, 10), nil
		case float64:
			return appendFloat8(nil, x), nil
		case string:
			return []byte(x), nil
		case []byte:
			return appendBytea(nil, x), nil
		case time.Time:
			return appendTimestamp(nil, x), nil
		}
		if c.pg.OID == pgcatalog.OIDJSONB {
			return json.Marshal(v)
		}
		return e.m.Encode(c.pg.OID, textFormat, v, nil)
	}
	if s, ok := v.(string); ok && c.pg.OID == pgcatalog.OIDChar {
		// "char" is one byte; pgcatalog gives it as a string (relkind
		// 'r'), which pgtype's binary codec does not take.
		if s == "" {
			return []byte{0}, nil
		}
		return []byte{s[0]}, nil
	}
	return e.m.Encode(c.pg.OID, binaryFormat, v, nil)
}

// pgValue converts an engine value of type t to the Go value pgtype
// encodes for TypeOf(t).
func pgValue(v any, t types.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case types.Decimal:
		d, ok := types.AsDecimal(v)
		if !ok {
			return nil, fmt.Errorf("decimal value of type %T", v)
		}
		return numericOf(d)
	case types.Timestamp:
		ms, ok := types.AsInt64(v)
		if !ok {
			return nil, fmt.Errorf("timestamp value of type %T", v)
		}
		return time.UnixMilli(ms).UTC(), nil
	case types.Date:
		days, ok := types.AsInt64(v)
		if !ok {
			return nil, fmt.Errorf("date value of type %T", v)
		}
		return time.Unix(days*86400, 0).UTC(), nil
	case types.Time:
		ms, ok := types.AsInt64(v)
		if !ok {
			return nil, fmt.Errorf("time value of type %T", v)
		}
		return pgtype.Time{Microseconds: ms * 1000, Valid: true}, nil
	case types.Array:
		xs, ok := v.([]any)
		if !ok || t.Elem == nil {
			return nil, fmt.Errorf("array value of type %T", v)
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			pv, err := pgValue(x, *t.Elem)
			if err != nil {
				return nil, err
			}
			out[i] = pv
		}
		return out, nil
	}
	return v, nil
}

// numericOf is a decimal as pgtype's numeric.
func numericOf(d *apd.Decimal) (pgtype.Numeric, error) {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return pgtype.Numeric{NaN: true, Valid: true}, nil
	case apd.Infinite:
		if d.Negative {
			return pgtype.Numeric{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, nil
		}
		return pgtype.Numeric{InfinityModifier: pgtype.Infinity, Valid: true}, nil
	}
	n, ok := new(big.Int).SetString(d.Coeff.String(), 10)
	if !ok {
		return pgtype.Numeric{}, fmt.Errorf("decimal %s", d.String())
	}
	if d.Negative {
		n.Neg(n)
	}
	return pgtype.Numeric{Int: n, Exp: d.Exponent, Valid: true}, nil
}

// appendSluiceText appends v, of type t, as Postgres prints a value of
// TypeOf(t); inArray quotes it as an array element when needed.
func appendSluiceText(b []byte, v any, t types.Type, inArray bool) []byte {
	if v == nil {
		return append(b, "NULL"...)
	}
	var s []byte
	switch t.Kind {
	case types.Boolean:
		x, _ := v.(bool)
		s = boolText(x)
	case types.Integer, types.BigInt:
		n, _ := types.AsInt64(v)
		s = strconv.AppendInt(nil, n, 10)
	case types.Double:
		f, _ := types.AsFloat(v)
		s = appendFloat8(nil, f)
	case types.Decimal:
		if d, ok := types.AsDecimal(v); ok {
			s = []byte(decimalText(d))
		}
	case types.String:
		x, _ := v.(string)
		s = []byte(x)
	case types.Bytes:
		x, _ := v.([]byte)
		s = appendBytea(nil, x)
	case types.Timestamp:
		ms, _ := types.AsInt64(v)
		s = appendTimestamp(nil, time.UnixMilli(ms).UTC())
	case types.Date:
		days, _ := types.AsInt64(v)
		s = time.Unix(days*86400, 0).UTC().AppendFormat(nil, time.DateOnly)
	case types.Time:
		ms, _ := types.AsInt64(v)
		s = appendTimeOfDay(nil, ms)
	case types.Array:
		xs, _ := v.([]any)
		s = append(s, '{')
		for i, x := range xs {
			if i > 0 {
				s = append(s, ',')
			}
			if t.Elem != nil {
				s = appendSluiceText(s, x, *t.Elem, true)
			}
		}
		// An array inside an array is already bracketed; never quote it.
		return append(append(b, s...), '}')
	default:
		compact, _ := format.AppendJSONValue(nil, format.ToJSON(v, t))
		var err error
		if s, err = jsonbText(nil, compact); err != nil {
			s = compact
		}
	}
	if inArray {
		return appendArrayElem(b, s)
	}
	return append(b, s...)
}

// appendArrayElem appends an array element's text, double-quoted when
// Postgres's array parser would misread it bare.
func appendArrayElem(b, s []byte) []byte {
	quote := len(s) == 0 || strings.EqualFold(string(s), "NULL")
	for _, c := range s {
		switch c {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			quote = true
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for _, c := range s {
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

func boolText(x bool) []byte {
	if x {
		return []byte{'t'}
	}
	return []byte{'f'}
}

// decimalText is a decimal at its scale (3.40 stays 3.40), as numeric
// prints; NaN and the infinities by Postgres's names.
func decimalText(d *apd.Decimal) string {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return "NaN"
	case apd.Infinite:
		if d.Negative {
			return "-Infinity"
		}
		return "Infinity"
	}
	return types.FormatDecimal(d)
}

// appendFloat8 appends f as Postgres 12+ prints a float8: the shortest
// text that reads back exactly, in exponent form below 1e-4 or from
// 1e15 on (Postgres's DBL_DIG rule), Infinity, -Infinity and NaN by name.
func appendFloat8(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp >= 15 {
		b = append(b, mant...)
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendBytea appends bytes in bytea's hex output form, \x….
func appendBytea(b, x []byte) []byte {
	b = append(b, '\\', 'x')
	return hex.AppendEncode(b, x)
}

// appendTimestamp appends a timestamp without time zone as Postgres
// prints it with DateStyle ISO: fractional seconds only when there are
// some, without trailing zeros.
func appendTimestamp(b []byte, t time.Time) []byte {
	return t.AppendFormat(b, "2006-01-02 15:04:05.999999")
}

// appendTimeOfDay appends a TIME (milliseconds since midnight) as
// Postgres's time prints.
func appendTimeOfDay(b []byte, ms int64) []byte {
	d := time.Duration(ms) * time.Millisecond
	return time.Unix(0, 0).UTC().Add(d).AppendFormat(b, "15:04:05.999999")
}

// jsonbText rewrites compact JSON as Postgres prints a jsonb value: a
// space after each ',' and ':', an object's keys shorter first and then
// in byte order (jsonb's storage order, so a STRUCT's fields may move),
// numbers as written, strings with only '"', '\' and control characters
// escaped. Clients compare this text with what Postgres gives them.
func jsonbText(dst, compact []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(compact))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("jsonb: %w", err)
	}
	return appendJSONB(dst, v), nil
}

func appendJSONB(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case json.Number:
		return append(b, x...)
	case string:
		return appendJSONBString(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONB(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if len(keys[i]) != len(keys[j]) {
				return len(keys[i]) < len(keys[j])
			}
			return keys[i] < keys[j]
		})
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONBString(b, k)
			b = append(b, ": "...)
			b = appendJSONB(b, x[k])
		}
		return append(b, '}')
	}
	return b
}

func appendJSONBString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if c < 0x20 {
				b = fmt.Appendf(b, `\u%04x`, c)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}
