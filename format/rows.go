package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/types"
)

// Rows is the value format of Sluice's internal repartition topics. Their
// records are written and read back only by Sluice, so they carry the
// rows in the binary encoding the state stores use (types.AppendValues)
// rather than JSON: no text to parse on the way back, and exact for every
// SQL type. It is not a format a statement may name (IsInternal).
const Rows = "SLUICE_ROWS"

// rowsMagic starts every record of the Rows format. A JSON text never
// starts with it (only with '{', '[', '"', a digit, '-', t, f, n or
// whitespace), so a topic written by an older Sluice, whose repartition
// records were JSON objects, is read too: the first byte tells which.
const rowsMagic byte = 0xB5

// IsInternal reports whether format is one of Sluice's internal formats,
// which only the planner may give an operator: a WITH clause naming one
// is an unknown format.
func IsInternal(format string) bool {
	return strings.EqualFold(format, Rows)
}

// rowsCodec is the Rows format. Records without the magic byte are read
// as the JSON objects an older Sluice wrote to the same topics.
type rowsCodec struct {
	cols   []types.Column
	needed []bool
	// legacy reads JSON records, made on the first one seen; missing is
	// what it reported for the last record (0 after a binary one).
	legacy  *jsonCodec
	missing int
	// wide is the layout of an older plan's wider binary records
	// (Props.RowsLegacy); wideAt maps each of cols to its position in
	// it, wideRow is the scratch a wide record is decoded into.
	wide    []types.Column
	wideAt  []int
	wideRow []any
	// viewStrings is set when Decode converts two or more STRING
	// columns: one copy of a record then serves all its strings (they
	// view it) instead of one allocation each.
	viewStrings bool
}

var (
	_ Codec     = (*rowsCodec)(nil)
	_ Appender  = (*rowsCodec)(nil)
	_ Selective = (*rowsCodec)(nil)
)

func newRowsCodec(cols []types.Column, p Props, key bool) (*rowsCodec, error) {
	if key {
		return nil, fmt.Errorf("%w: %s is a value format", ErrUnsupported, Rows)
	}
	c := &rowsCodec{cols: cols}
	c.countStrings()
	if p.RowsLegacy != nil && len(p.RowsLegacy) != len(cols) {
		at := make([]int, len(cols))
		for i, col := range cols {
			at[i] = slices.IndexFunc(p.RowsLegacy, func(w types.Column) bool { return w.Name == col.Name })
			if at[i] < 0 {
				return nil, fmt.Errorf("%w: %s column %s is not in the legacy layout", ErrUnsupported, Rows, col.Name)
			}
		}
		c.wide, c.wideAt, c.wideRow = p.RowsLegacy, at, make([]any, len(p.RowsLegacy))
	}
	return c, nil
}

// countStrings sets viewStrings from the columns Decode converts.
func (c *rowsCodec) countStrings() {
	n := 0
	for i, col := range c.cols {
		if col.Type.Kind == types.String && (c.needed == nil || c.needed[i]) {
			n++
		}
	}
	c.viewStrings = n > 1
}

// Select makes Decode convert only the needed columns; the others are
// skipped over and left NULL.
func (c *rowsCodec) Select(needed []bool) {
	if len(needed) == len(c.cols) {
		c.needed = needed
		c.countStrings()
		if c.legacy != nil {
			c.legacy.Select(needed)
		}
	}
}

func (c *rowsCodec) Encode(vals []any) ([]byte, error) {
	return c.AppendEncode(nil, vals)
}

func (c *rowsCodec) AppendEncode(dst []byte, vals []any) ([]byte, error) {
	if vals == nil {
		return nil, nil
	}
	if err := checkEncodeLen(vals, len(c.cols)); err != nil {
		return nil, err
	}
	return types.AppendValues(append(dst, rowsMagic), vals), nil
}

func (c *rowsCodec) Decode(data []byte, dst []any) error {
	if len(data) == 0 {
		setNull(dst, len(c.cols))
		return nil
	}
	c.missing = 0
	if data[0] != rowsMagic {
		return c.decodeLegacy(data, dst)
	}
	n, w := binary.Uvarint(data[1:])
	if w <= 0 {
		return fmt.Errorf("%w: %s record: bad column count", ErrMalformed, Rows)
	}
	if n != uint64(len(c.cols)) {
		if c.wide != nil && n == uint64(len(c.wide)) {
			return c.decodeWide(data[1+w:], dst)
		}
		return fmt.Errorf("%w: %s record has %d columns, expected %d", ErrMalformed, Rows, n, len(c.cols))
	}
	buf := data[1+w:]
	decode := types.DecodeValue
	if c.viewStrings {
		buf, decode = bytes.Clone(buf), types.DecodeValueViewing
	}
	var err error
	for i := range c.cols {
		if c.needed != nil && !c.needed[i] {
			dst[i] = nil
			buf, err = types.SkipValue(buf)
		} else {
			dst[i], buf, err = decode(buf)
		}
		if err != nil {
			return fmt.Errorf("%w: %s record, column %s: %w", ErrMalformed, Rows, c.cols[i].Name, err)
		}
	}
	if len(buf) != 0 {
		return fmt.Errorf("%w: %s record has %d bytes after its columns", ErrMalformed, Rows, len(buf))
	}
	return nil
}

// decodeWide reads the columns of a binary record of the legacy layout's
// width (its count already read): each of the codec's columns is taken
// from its place in the wider row by name.
func (c *rowsCodec) decodeWide(buf []byte, dst []any) error {
	var err error
	for i := range c.wide {
		c.wideRow[i], buf, err = types.DecodeValue(buf)
		if err != nil {
			return fmt.Errorf("%w: %s record of the legacy layout, column %s: %w", ErrMalformed, Rows, c.wide[i].Name, err)
		}
	}
	if len(buf) != 0 {
		return fmt.Errorf("%w: %s record has %d bytes after its columns", ErrMalformed, Rows, len(buf))
	}
	for i, at := range c.wideAt {
		if c.needed != nil && !c.needed[i] {
			dst[i] = nil
		} else {
			dst[i] = c.wideRow[at]
		}
	}
	clear(c.wideRow)
	return nil
}

// decodeLegacy reads a record an older Sluice wrote: a JSON object (or a
// JSON null). Any other leading byte is neither format.
func (c *rowsCodec) decodeLegacy(data []byte, dst []any) error {
	switch data[0] {
	case '{', 'n', ' ', '\t', '\r', '\n':
	default:
		return fmt.Errorf("%w: %s record starts with unknown byte 0x%02x", ErrMalformed, Rows, data[0])
	}
	if c.legacy == nil {
		c.legacy = newJSONCodec(c.cols, Props{}, false)
		if c.needed != nil {
			c.legacy.Select(c.needed)
		}
	}
	err := c.legacy.Decode(data, dst)
	c.missing = c.legacy.Missing()
	return err
}

// Missing reports the columns the last legacy JSON record lacked; a
// binary record always holds all of them.
func (c *rowsCodec) Missing() int { return c.missing }
