package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sluice-sql/sluice/types"
)

// jsonCodec is the JSON format. A wrapped codec reads and writes an object
// with one field per column; an unwrapped one (a single key column, or a
// single value column with WRAP_SINGLE_VALUE=false) the bare JSON value.
type jsonCodec struct {
	cols      []types.Column
	unwrapped bool
	// prefix[i] is the text before column i's value: `{"A":` or `,"B":`.
	prefix [][]byte
	// exact and folded map field names to column positions; folded is
	// keyed by the lower-cased column name.
	exact  map[string]int
	folded map[string]int
	// missing counts the columns the last decoded object lacked.
	missing int
	// needed, when set, marks the columns Decode converts (Select).
	needed []bool
	// fields remembers the field names of recent records by position
	// (see field); a codec serves one goroutine.
	fields []fieldCol
	// spans reads records for Decode when its columns allow (made on
	// first use, since Select changes what it reads); noSpans when not.
	spans   *spans
	noSpans bool
}

// Select makes Decode convert only the needed columns.
func (c *jsonCodec) Select(needed []bool) {
	if len(needed) == len(c.cols) {
		c.needed = needed
		c.spans, c.noSpans = nil, false
	}
}

// spanReader is the codec's span reader, or nil when its columns need
// the parser.
func (c *jsonCodec) spanReader() *spans {
	if c.spans == nil && !c.noSpans {
		c.spans = newSpans(c)
		c.noSpans = c.spans == nil
	}
	return c.spans
}

// skips reports whether column i is left undecoded.
func (c *jsonCodec) skips(i int) bool { return c.needed != nil && !c.needed[i] }

// markSkipped counts the undecoded columns as present.
func (c *jsonCodec) markSkipped(filled []bool) {
	for i := range filled {
		if c.skips(i) {
			filled[i] = true
		}
	}
}

var (
	_ Codec    = (*jsonCodec)(nil)
	_ Appender = (*jsonCodec)(nil)
)

func newJSONCodec(cols []types.Column, p Props, key bool) *jsonCodec {
	c := &jsonCodec{
		cols:   cols,
		prefix: make([][]byte, len(cols)),
		exact:  make(map[string]int, len(cols)),
		folded: make(map[string]int, len(cols)),
	}
	if len(cols) == 1 {
		if key {
			// ksqlDB's JSON keys are unwrapped unless asked otherwise.
			c.unwrapped = p.WrapSingleValue == nil || !*p.WrapSingleValue
		} else {
			c.unwrapped = p.WrapSingleValue != nil && !*p.WrapSingleValue
		}
	}
	for i, col := range cols {
		sep := byte(',')
		if i == 0 {
			sep = '{'
		}
		c.prefix[i] = append(types.AppendJSONString([]byte{sep}, col.Name), ':')
		c.exact[col.Name] = i
		if _, dup := c.folded[strings.ToLower(col.Name)]; !dup {
			c.folded[strings.ToLower(col.Name)] = i
		}
	}
	return c
}

func (c *jsonCodec) Encode(vals []any) ([]byte, error) {
	size := 64 + 32*len(c.cols)
	if c.unwrapped {
		size = 32
	}
	return c.AppendEncode(make([]byte, 0, size), vals)
}

// AppendEncode implements Appender.
func (c *jsonCodec) AppendEncode(b []byte, vals []any) ([]byte, error) {
	if vals == nil || len(c.cols) == 0 {
		return nil, nil
	}
	if err := checkEncodeLen(vals, len(c.cols)); err != nil {
		return nil, err
	}
	if c.unwrapped {
		if vals[0] == nil {
			return nil, nil
		}
		return appendValue(b, vals[0], c.cols[0].Type)
	}
	var err error
	for i, col := range c.cols {
		b = append(b, c.prefix[i]...)
		if b, err = appendValue(b, vals[i], col.Type); err != nil {
			return nil, fmt.Errorf("column %s: %w", col.Name, err)
		}
	}
	return append(b, '}'), nil
}

// Missing reports how many columns the last decoded object lacked.
func (c *jsonCodec) Missing() int { return c.missing }

func (c *jsonCodec) Decode(data []byte, dst []any) error {
	n := len(c.cols)
	setNull(dst, n)
	c.missing = 0
	if n == 0 || isNullJSON(data) {
		return nil
	}
	// The common record (scalar columns, no escapes) is read in one pass
	// over its bytes; any other takes the parser.
	if sp := c.spanReader(); sp != nil && sp.read(data) {
		if sp.decode(data, dst, nil) {
			c.missing = sp.missing
			return nil
		}
		setNull(dst, n)
	}
	if err := c.decodeFast(data, dst); err != errSlowPath {
		return err
	}
	v, err := parseJSON(data)
	if err != nil {
		return err
	}
	if c.unwrapped {
		x, err := FromJSON(v, c.cols[0].Type)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.cols[0].Name, err)
		}
		dst[0] = x
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: expected a JSON object with fields %s, got %s", ErrMalformed, colNames(c.cols), describeJSON(v))
	}
	// Exact field names win over case-insensitive matches.
	var filledBuf [64]bool
	filled := filledBuf[:0]
	if n <= len(filledBuf) {
		filled = filledBuf[:n]
	} else {
		filled = make([]bool, n)
	}
	c.markSkipped(filled)
	pending := 0
	for k, e := range m {
		i, ok := c.exact[k]
		if !ok {
			pending++
			continue
		}
		if c.skips(i) {
			continue
		}
		if err := c.set(dst, i, e); err != nil {
			return err
		}
		filled[i] = true
	}
	defer func() { c.missing = countUnfilled(filled) }()
	if pending == 0 {
		return nil
	}
	for k, e := range m {
		if _, ok := c.exact[k]; ok {
			continue
		}
		i, ok := c.folded[strings.ToLower(k)]
		if !ok || filled[i] {
			continue
		}
		if err := c.set(dst, i, e); err != nil {
			return err
		}
		filled[i] = true
	}
	return nil
}

func (c *jsonCodec) set(dst []any, i int, e any) error {
	x, err := FromJSON(e, c.cols[i].Type)
	if err != nil {
		return fmt.Errorf("column %s: %w", c.cols[i].Name, err)
	}
	dst[i] = x
	return nil
}

// isNullJSON reports an empty record or the JSON literal null.
func isNullJSON(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) == 0 || string(t) == "null"
}

// parseJSON decodes one JSON value, keeping numbers as json.Number so that
// large BIGINTs stay exact.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%w: invalid JSON at byte %d: %v", ErrMalformed, se.Offset, se)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%w: truncated JSON (%d bytes)", ErrMalformed, len(data))
		}
		return nil, fmt.Errorf("%w: invalid JSON: %v", ErrMalformed, err)
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		return nil, fmt.Errorf("%w: unexpected data after the JSON value at byte %d", ErrMalformed, off)
	}
	return v, nil
}

func countUnfilled(filled []bool) int {
	n := 0
	for _, f := range filled {
		if !f {
			n++
		}
	}
	return n
}
