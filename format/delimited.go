package format

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

// delimitedCodec is the DELIMITED format: one CSV line, a field per column,
// quoted where ksqlDB's CSV printer quotes (appendDelimitedField) and read
// with encoding/csv. An empty field is NULL, for every type
// (ksqlDB's rule), so an empty STRING cannot be told from NULL.
type delimitedCodec struct {
	cols  []types.Column
	comma rune
}

var (
	_ Codec    = (*delimitedCodec)(nil)
	_ Appender = (*delimitedCodec)(nil)
)

func newDelimitedCodec(cols []types.Column, p Props) (Codec, error) {
	comma, err := parseDelimiter(p.Delimiter)
	if err != nil {
		return nil, err
	}
	if w := p.WrapSingleValue; w != nil && *w {
		// A DELIMITED record is a list of fields: there is no object to
		// wrap a single value in.
		return nil, fmt.Errorf("%w: Format 'DELIMITED' does not support 'WRAP_SINGLE_VALUE' set to 'true'.", ErrUnsupported)
	}
	for _, col := range cols {
		switch col.Type.Kind {
		case types.Array, types.Map, types.Struct:
			return nil, &SchemaError{Format: Delimited, Reason: fmt.Sprintf("The 'DELIMITED' format does not support type '%s', column: `%s`", col.Type.Kind, col.Name)}
		}
	}
	return &delimitedCodec{cols: cols, comma: comma}, nil
}

// CheckDelimiter checks a VALUE_DELIMITER or KEY_DELIMITER as written:
// a single character other than white space, or one of the words TAB
// and SPACE. The errors carry ksqlDB's words.
func CheckDelimiter(s string) error {
	_, err := parseDelimiter(s)
	if s != "" && err == nil {
		return nil
	}
	if strings.TrimSpace(s) == "" {
		return errors.New("Delimiter cannot be empty, if you meant to have a tab or space for delimiter, please use the special values 'TAB' or 'SPACE'")
	}
	return fmt.Errorf("Invalid delimiter value: '%s'. Delimiter must be a single character or TAB,SPACE", s)
}

// parseDelimiter reads VALUE_DELIMITER: a single character, or one of the
// words TAB and SPACE (ksqlDB's names for the characters it cannot quote).
// Empty is the default, ','.
func parseDelimiter(s string) (rune, error) {
	switch strings.ToUpper(s) {
	case "":
		return ',', nil
	case "TAB":
		return '\t', nil
	case "SPACE":
		return ' ', nil
	}
	r, size := utf8.DecodeRuneInString(s)
	if size != len(s) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' || unicode.IsSpace(r) {
		return 0, fmt.Errorf("%w: invalid delimiter %q: use a single character, TAB or SPACE", ErrUnsupported, s)
	}
	return r, nil
}

func (c *delimitedCodec) Encode(vals []any) ([]byte, error) { return c.AppendEncode(nil, vals) }

// AppendEncode implements Appender. A record of one NULL field is
// written as a null, as Encode returns it.
func (c *delimitedCodec) AppendEncode(dst []byte, vals []any) ([]byte, error) {
	if vals == nil || len(c.cols) == 0 {
		return nil, nil
	}
	if err := checkEncodeLen(vals, len(c.cols)); err != nil {
		return nil, err
	}
	buf := dst
	for i, v := range vals {
		if i > 0 {
			buf = utf8.AppendRune(buf, c.comma)
		}
		if v == nil {
			continue // NULL is an empty, unquoted field
		}
		s, err := delimitedText(v, c.cols[i].Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.cols[i].Name, err)
		}
		buf = appendDelimitedField(buf, s, i == 0, c.comma)
	}
	if len(buf) == len(dst) {
		return nil, nil
	}
	return buf, nil
}

// appendDelimitedField appends one field, quoted (and its quotes doubled)
// when the reader could mistake it: as ksqlDB's CSV printer does, that is
// when it holds the delimiter, a quote or a line break, starts with a
// character up to '#' or ends with one up to ' ', or, in the first field
// of the record, is empty or starts with anything but a letter or digit.
func appendDelimitedField(buf []byte, s string, first bool, comma rune) []byte {
	if !delimitedNeedsQuotes(s, first, comma) {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, s[i])
	}
	return append(buf, '"')
}

func delimitedNeedsQuotes(s string, first bool, comma rune) bool {
	if s == "" {
		return first
	}
	c := s[0]
	alnum := c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	if first && !alnum || c <= '#' || s[len(s)-1] <= ' ' {
		return true
	}
	return strings.ContainsAny(s, "\r\n\"") || strings.ContainsRune(s, comma)
}

func delimitedText(v any, t types.Type) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case int32:
		if t.Kind == types.Double || t.Kind == types.Decimal {
			return string(appendDouble(nil, float64(x))), nil
		}
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		if t.Kind == types.Double || t.Kind == types.Decimal {
			return string(appendDouble(nil, float64(x))), nil
		}
		return strconv.FormatInt(x, 10), nil
	case float64:
		s := string(appendDouble(nil, x))
		return strings.Trim(s, `"`), nil // NaN and infinities unquoted
	case *apd.Decimal:
		return types.FormatDecimal(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	}
	return "", fmt.Errorf("%w: Go value of type %T for a DELIMITED %s column", ErrEncode, v, t)
}

func (c *delimitedCodec) Decode(data []byte, dst []any) error {
	n := len(c.cols)
	setNull(dst, n)
	if n == 0 || len(data) == 0 {
		return nil
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = c.comma
	r.FieldsPerRecord = -1
	fields, err := r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%w: invalid DELIMITED record at column %d: %v", ErrMalformed, pe.Column, pe.Err)
		}
		return fmt.Errorf("%w: invalid DELIMITED record: %v", ErrMalformed, err)
	}
	if _, err := r.Read(); err == nil {
		return fmt.Errorf("%w: DELIMITED record has more than one line", ErrMalformed)
	}
	if len(fields) != n {
		return fmt.Errorf("%w: DELIMITED record has %d fields, expected %d (%s)", ErrMalformed, len(fields), n, colNames(c.cols))
	}
	for i, f := range fields {
		if f == "" {
			continue
		}
		v, err := FromJSON(f, c.cols[i].Type)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.cols[i].Name, err)
		}
		dst[i] = v
	}
	return nil
}

func colNames(cols []types.Column) string {
	s := make([]string, len(cols))
	for i, col := range cols {
		s[i] = col.Name
	}
	return strings.Join(s, ", ")
}
