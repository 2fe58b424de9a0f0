package format

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

// delimitedCodec is the DELIMITED format: one CSV line, a field per column,
// quoted as encoding/csv does. An empty field is NULL, for every type
// (ksqlDB's rule), so an empty STRING cannot be told from NULL.
type delimitedCodec struct {
	cols  []types.Column
	comma rune
}

var _ Codec = (*delimitedCodec)(nil)

func newDelimitedCodec(cols []types.Column, p Props) (Codec, error) {
	comma, err := parseDelimiter(p.Delimiter)
	if err != nil {
		return nil, err
	}
	for _, col := range cols {
		switch col.Type.Kind {
		case types.Array, types.Map, types.Struct:
			// ksqlDB names the type by its kind (ARRAY, not ARRAY<INT>).
			return nil, fmt.Errorf("%w: The 'DELIMITED' format does not support type '%s', column: `%s`", ErrUnsupported, col.Type.Kind, col.Name)
		}
	}
	return &delimitedCodec{cols: cols, comma: comma}, nil
}

// parseDelimiter reads VALUE_DELIMITER: a single character, or one of the
// words TAB and SPACE (ksqlDB's names for the characters it cannot quote).
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
	if size != len(s) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' {
		return 0, fmt.Errorf("%w: invalid delimiter %q: use a single character, TAB or SPACE", ErrUnsupported, s)
	}
	return r, nil
}

func (c *delimitedCodec) Encode(vals []any) ([]byte, error) {
	if vals == nil || len(c.cols) == 0 {
		return nil, nil
	}
	if err := checkEncodeLen(vals, len(c.cols)); err != nil {
		return nil, err
	}
	fields := make([]string, len(vals))
	for i, v := range vals {
		s, err := delimitedText(v, c.cols[i].Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.cols[i].Name, err)
		}
		fields[i] = s
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = c.comma
	if err := w.Write(fields); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEncode, err)
	}
	w.Flush()
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
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
