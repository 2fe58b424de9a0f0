package types

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
)

// Compare orders two non-nil values of comparable types: negative when
// a < b, zero when equal, positive when a > b. Numbers of different Go
// types compare by value. ok is false when the values cannot be compared.
func Compare(a, b any) (c int, ok bool) {
	switch x := a.(type) {
	case int32:
		switch y := b.(type) {
		case int32:
			return cmpOrdered(x, y), true
		case int64:
			return cmpOrdered(int64(x), y), true
		case float64:
			return cmpFloat(float64(x), y), true
		case *apd.Decimal:
			return DecimalFromInt(int64(x)).Cmp(y), y != nil
		}
	case int64:
		switch y := b.(type) {
		case int32:
			return cmpOrdered(x, int64(y)), true
		case int64:
			return cmpOrdered(x, y), true
		case float64:
			return cmpFloat(float64(x), y), true
		case *apd.Decimal:
			return DecimalFromInt(x).Cmp(y), y != nil
		}
	case float64:
		switch y := b.(type) {
		case int32:
			return cmpFloat(x, float64(y)), true
		case int64:
			return cmpFloat(x, float64(y)), true
		case float64:
			return cmpFloat(x, y), true
		case *apd.Decimal:
			if y == nil {
				return 0, false
			}
			return -cmpDecimalFloat(y, x), true
		}
	case *apd.Decimal:
		if x == nil {
			return 0, false
		}
		switch y := b.(type) {
		case *apd.Decimal:
			return x.Cmp(y), y != nil
		case int32:
			return x.Cmp(DecimalFromInt(int64(y))), true
		case int64:
			return x.Cmp(DecimalFromInt(y)), true
		case float64:
			return cmpDecimalFloat(x, y), true
		}
	case string:
		if y, isStr := b.(string); isStr {
			return cmpOrdered(x, y), true
		}
	case bool:
		if y, isBool := b.(bool); isBool {
			switch {
			case x == y:
				return 0, true
			case !x:
				return -1, true
			default:
				return 1, true
			}
		}
	case []byte:
		if y, isBytes := b.([]byte); isBytes {
			return bytes.Compare(x, y), true
		}
	}
	return 0, false
}

// cmpDecimalFloat compares a decimal with a double as ksqlDB's generated
// code does, through BigDecimal.valueOf(double): 0.3 as a double equals
// the decimal 0.3. NaN sorts above and infinities beyond every decimal.
func cmpDecimalFloat(d *apd.Decimal, f float64) int {
	switch {
	case math.IsNaN(f), math.IsInf(f, 1):
		return -1
	case math.IsInf(f, -1):
		return 1
	}
	fd, err := DecimalFromFloat(f)
	if err != nil {
		return cmpFloat(DecimalFloat(d), f)
	}
	return d.Cmp(fd)
}

func cmpOrdered[T int64 | int32 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1 // NaN sorts last, as in Java's Double.compare
	}
	return -1
}

// Equal reports SQL equality of two non-nil values (numbers by value).
func Equal(a, b any) bool {
	if c, ok := Compare(a, b); ok {
		return c == 0
	}
	return false
}

// AsFloat converts a numeric value to float64.
func AsFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case *apd.Decimal:
		if x == nil {
			return 0, false
		}
		return DecimalFloat(x), true
	}
	return 0, false
}

// AsInt64 converts an integer value to int64.
func AsInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// FormatValue renders a value for people: shell tables, PRINT, errors.
// NULL prints as "null" like ksqlDB's CLI.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float64:
		return FormatDouble(x)
	case *apd.Decimal:
		if x == nil {
			return "null"
		}
		return FormatDecimal(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case []byte:
		return fmt.Sprintf("%x", x)
	}
	return fmt.Sprint(v)
}

// FormatDouble prints a double as Java's Double.toString does, which is
// how ksqlDB shows and serialises doubles: shortest round-trip digits,
// always a fractional part (125 as a DOUBLE reads 125.0), and E notation
// outside [1e-3, 1e7) (1.0E7, 1.5E-5).
func FormatDouble(f float64) string { return string(AppendDouble(nil, f)) }

// AppendJSONDouble appends f as a JSON value the way ksqlDB's Jackson
// writes a double: FormatDouble's text as a number, and NaN and the
// infinities, which JSON has no numbers for, as the strings "NaN",
// "Infinity" and "-Infinity".
func AppendJSONDouble(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		b = append(b, '"')
		b = AppendDouble(b, f)
		return append(b, '"')
	}
	return AppendDouble(b, f)
}

// AppendJSONString appends s as a JSON string the way ksqlDB's Jackson
// writes one: '"' and '\\' escaped, backspace, tab, newline, form feed
// and carriage return by their short escapes, every other control
// character as \u00XX with upper-case hex digits, and everything else
// ('/', '<', DEL, non-ASCII) as it is. Invalid UTF-8 becomes U+FFFD, as
// Java's decoding of the bytes would have made it.
func AppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = utf8.AppendRune(b, utf8.RuneError)
				start = i + 1
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendDouble appends FormatDouble(f) to b.
func AppendDouble(b []byte, f float64) []byte { return appendJavaFloat(b, f, 64) }

// FormatFloat32 prints a float as Java's Float.toString does: as
// FormatDouble, with the shortest digits that round-trip a float (an
// Avro float 1.1 reads "1.1", not the double nearest it).
func FormatFloat32(f float32) string { return string(appendJavaFloat(nil, float64(f), 32)) }

// appendJavaFloat appends f, a value of a bits-wide float, in Java's
// toString form.
func appendJavaFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		start := len(b)
		b = strconv.AppendFloat(b, f, 'f', -1, bits)
		if !bytes.ContainsRune(b[start:], '.') {
			b = append(b, ".0"...)
		}
		return b
	}
	// Go writes 1.5e+07 and 1e-05; Java writes 1.5E7 and 1.0E-5. Java's
	// mantissa has at least two digits, and when the shortest has one it
	// takes the two-digit decimal nearest the exact value: the smallest
	// double, 4.94…E-324, is 4.9E-324, not 5.0E-324.
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, bits)
	if e := bytes.IndexByte(s, 'e'); !bytes.ContainsRune(s[:e], '.') {
		two := strconv.AppendFloat(nil, f, 'e', 1, bits)
		if g, err := strconv.ParseFloat(string(two), bits); err == nil && g == f {
			s = two
		}
	}
	e := bytes.IndexByte(s, 'e')
	b = append(b, s[:e]...)
	if !bytes.ContainsRune(s[:e], '.') {
		b = append(b, ".0"...)
	}
	b = append(b, 'E')
	exp := s[e+1:]
	if exp[0] == '-' {
		b = append(b, '-')
	}
	exp = bytes.TrimLeft(exp[1:], "0")
	if len(exp) == 0 {
		exp = []byte{'0'}
	}
	return append(b, exp...)
}
