package format

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/sluice-sql/sluice/types"
)

// JSONCopy writes the columns a query only selects from a JSON record
// into a JSON record without converting them: each column's text is
// copied after the output's field name. The general path decodes every
// field into a Go value and encodes it again, which for a SELECT * or a
// plain projection is most of the query's work and all of its garbage.
//
// A copy must give exactly the bytes the general path would, so Read
// accepts a record only when each copied value's text is already what
// encoding the decoded value writes: a string without escapes, an integer without a sign or
// zero it would drop, a DOUBLE spelled as the engine spells doubles,
// true, false and null. Anything else (escapes, nested values, a number
// written differently, a missing, repeated or mistyped column, JSON that
// is not strictly valid) declines the record, which then takes the
// general path: declining is always safe, accepting is exact.
type JSONCopy struct {
	spans  *spans
	from   []int    // output column → input column, -1: computed
	prefix [][]byte // output field names: `{"A":`, `,"B":`
	cols   []types.Column
	// doubles lists the copied output columns of type DOUBLE, whose
	// text must be checked.
	doubles []int
	scratch []byte
}

// NewJSONCopy returns the copier of the output columns outCols, each the
// input column from[i] unchanged or, where from[i] is -1, a value the
// caller computes (see Write), or nil when copying cannot be exact for
// these columns (an unwrapped single value on either side, a column read
// of a type other than STRING, INT, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP,
// DATE or TIME (the last three copied as the integers they are read
// from and written as), a type
// change). needed marks the input columns a decode would convert (nil:
// all); the others are skipped as unknown fields are. A JSONCopy serves
// one goroutine.
func NewJSONCopy(inCols []types.Column, inProps Props, outCols []types.Column, outProps Props, from []int, needed []bool) *JSONCopy {
	in := newJSONCodec(inCols, inProps, false)
	out := newJSONCodec(outCols, outProps, false)
	if in.unwrapped || out.unwrapped || len(outCols) == 0 || len(from) != len(outCols) || len(inCols) > 64 {
		return nil
	}
	if needed != nil && len(needed) != len(inCols) {
		return nil
	}
	in.Select(needed)
	sp := newSpans(in)
	if sp == nil {
		return nil
	}
	c := &JSONCopy{spans: sp, from: from, prefix: out.prefix, cols: outCols}
	for o, i := range from {
		if i == -1 {
			continue
		}
		if i < 0 || i >= len(inCols) || !outCols[o].Type.Equal(inCols[i].Type) || in.skips(i) {
			return nil
		}
		if inCols[i].Type.Kind == types.Double {
			c.doubles = append(c.doubles, o)
		}
	}
	return c
}

// Column is the text of input column i in the record last read (valid
// until the next Read): a column the record has, in its canonical
// spelling.
func (c *JSONCopy) Column(data []byte, i int) []byte { return c.spans.text(data, i) }

// Read reads data for Decode and Write; false means the record must
// take the general path: it lacks a column (which the general path
// counts), or a copied value's text is not what encoding would write.
func (c *JSONCopy) Read(data []byte) bool {
	if !c.spans.read(data) || c.spans.missing > 0 {
		return false
	}
	for _, o := range c.doubles {
		if !c.canonicalDouble(c.spans.text(data, c.from[o])) {
			return false
		}
	}
	return true
}

// Decode converts the input columns of the record last read into dst
// (one per input column; those not needed stay as they are), as the
// codec's Decode would, or only those only marks when it is set; false
// sends the record the general way.
func (c *JSONCopy) Decode(data []byte, dst []any, only []bool) bool {
	return c.spans.decode(data, dst, only)
}

// Write appends the output record of the record last read to dst: the
// copied columns' text, and computed[o] encoded for each computed column
// o (computed may be nil when there are none).
func (c *JSONCopy) Write(dst, data []byte, computed []any) ([]byte, error) {
	at := c.spans.at
	size := 1
	for o, i := range c.from {
		size += len(c.prefix[o])
		if i >= 0 {
			size += at[i][1] - at[i][0]
		} else {
			size += 16
		}
	}
	dst = slices.Grow(dst, size) // one allocation, of the exact size when all is copied
	for o, i := range c.from {
		dst = append(dst, c.prefix[o]...)
		if i >= 0 {
			dst = append(dst, data[at[i][0]:at[i][1]]...)
			continue
		}
		if o >= len(computed) {
			return nil, fmt.Errorf("%w: no value for computed column %s", ErrEncode, c.cols[o].Name)
		}
		var err error
		if dst, err = appendValue(dst, computed[o], c.cols[o].Type); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.cols[o].Name, err)
		}
	}
	return append(dst, '}'), nil
}

// canonicalDouble reports whether a JSON number is written as the
// engine writes the double it denotes.
func (c *JSONCopy) canonicalDouble(text []byte) bool {
	if string(text) == "null" {
		return true
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return false
	}
	c.scratch = types.AppendDouble(c.scratch[:0], f)
	return bytes.Equal(c.scratch, text)
}
