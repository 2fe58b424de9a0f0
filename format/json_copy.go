package format

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/types"
)

// JSONCopy writes the columns a query only selects from a JSON record
// into a JSON record without converting them: each column's text is
// copied after the output's field name. The general path decodes every
// field into a Go value and encodes it again, which for a SELECT * or a
// plain projection is most of the query's work and all of its garbage.
//
// A copy must give exactly the bytes the general path would, so Append
// copies a value only when its text is already what encoding the decoded
// value writes: a string without escapes, an integer without a sign or
// zero it would drop, a DOUBLE spelled as the engine spells doubles,
// true, false and null. Anything else (escapes, nested values, a number
// written differently, a missing, repeated or mistyped column, JSON that
// is not strictly valid) declines the record, which then takes the
// general path: declining is always safe, accepting is exact.
type JSONCopy struct {
	in     *jsonCodec
	from   []int    // output column → input column
	prefix [][]byte // output field names: `{"A":`, `,"B":`
	kinds  []types.Kind
	needed []bool
	// spans holds, per input column, the value's text in the record
	// being copied (start, end), reset per record.
	spans   [][2]int
	scratch []byte
}

// NewJSONCopy returns the copier of the output columns outCols, each the
// input column from[i] unchanged, or nil when copying cannot be exact
// for these columns (an unwrapped single value on either side, a type
// other than STRING, INT, BIGINT, DOUBLE or BOOLEAN, a type change).
// needed marks the input columns a decode would convert (nil: all); the
// others are skipped as unknown fields are. A JSONCopy serves one
// goroutine.
func NewJSONCopy(inCols []types.Column, inProps Props, outCols []types.Column, outProps Props, from []int, needed []bool) *JSONCopy {
	in := newJSONCodec(inCols, inProps, false)
	out := newJSONCodec(outCols, outProps, false)
	if in.unwrapped || out.unwrapped || len(outCols) == 0 || len(from) != len(outCols) || len(inCols) > 64 {
		return nil
	}
	if needed != nil && len(needed) != len(inCols) {
		return nil
	}
	for _, c := range inCols {
		if !copyable(c.Type) {
			return nil
		}
	}
	kinds := make([]types.Kind, len(inCols))
	for i, c := range inCols {
		kinds[i] = c.Type.Kind
	}
	for o, i := range from {
		if i < 0 || i >= len(inCols) || !outCols[o].Type.Equal(inCols[i].Type) || (needed != nil && !needed[i]) {
			return nil
		}
	}
	return &JSONCopy{in: in, from: from, prefix: out.prefix, kinds: kinds, needed: needed, spans: make([][2]int, len(inCols))}
}

func copyable(t types.Type) bool {
	switch t.Kind {
	case types.String, types.Integer, types.BigInt, types.Double, types.Boolean:
		return true
	}
	return false
}

// Column is the text of input column i in the record last appended
// (valid until the next Append): a column the record has, in its
// canonical spelling.
func (c *JSONCopy) Column(data []byte, i int) []byte {
	sp := c.spans[i]
	if sp[0] < 0 {
		return nil
	}
	return data[sp[0]:sp[1]]
}

// Append appends the output record made from data to dst; ok is false
// when the record must take the general path (dst is then unchanged).
func (c *JSONCopy) Append(dst, data []byte) (out []byte, ok bool) {
	for i := range c.spans {
		c.spans[i] = [2]int{-1, -1}
	}
	s := scanner{data: data}
	if !s.object(c) || !s.end() {
		return dst, false
	}
	for i, sp := range c.spans {
		if sp[0] < 0 && (c.needed == nil || c.needed[i]) {
			return dst, false // missing: the general path counts it
		}
	}
	size := 1
	for o, i := range c.from {
		size += len(c.prefix[o]) + c.spans[i][1] - c.spans[i][0]
	}
	dst = slices.Grow(dst, size) // one allocation of the exact size
	for o, i := range c.from {
		sp := c.spans[i]
		dst = append(dst, c.prefix[o]...)
		dst = append(dst, data[sp[0]:sp[1]]...)
	}
	return append(dst, '}'), true
}

// scanner reads one record strictly: any text a JSON parser might read
// differently, or reject, stops it.
type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.space()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *scanner) end() bool {
	s.space()
	return s.pos == len(s.data)
}

// object reads the top-level object, noting the span of each column's
// value in c.spans.
func (s *scanner) object(c *JSONCopy) bool {
	if s.peek() != '{' {
		return false
	}
	s.pos++
	if s.peek() == '}' {
		s.pos++
		return true
	}
	for j := 0; ; j++ {
		if s.peek() != '"' {
			return false
		}
		kstart := s.pos + 1
		plain, ok := s.str()
		if !ok || !plain {
			return false
		}
		key := s.data[kstart : s.pos-1]
		if s.peek() != ':' {
			return false
		}
		s.pos++
		s.space()
		f := c.in.field(j, key)
		if i := f.col; i >= 0 && (c.needed == nil || c.needed[i]) {
			if c.spans[i][0] >= 0 {
				return false // a repeated column: which one wins is the general path's call
			}
			vstart := s.pos
			if !s.column(c.kinds[i]) {
				return false
			}
			c.spans[i] = [2]int{vstart, s.pos}
			if c.kinds[i] == types.Double && !c.canonicalDouble(s.data[vstart:s.pos]) {
				return false
			}
		} else if !s.value(0) {
			return false
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return true
		default:
			return false
		}
	}
}

// column reads a column's value, accepting only text that encodes back
// to itself for kind k (doubles are checked by the caller).
func (s *scanner) column(k types.Kind) bool {
	if s.literal("null") {
		return true
	}
	switch k {
	case types.String:
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return false
		}
		start := s.pos
		plain, ok, ascii := s.strASCII()
		return ok && plain && (ascii || utf8.Valid(s.data[start:s.pos]))
	case types.BigInt, types.Integer:
		start := s.pos
		if ok, integer := s.number(); !ok || !integer {
			return false
		}
		text := s.data[start:s.pos]
		if string(text) == "-0" {
			return false
		}
		digits := len(text)
		if text[0] == '-' {
			digits--
		}
		if k == types.BigInt {
			return digits <= 18 || fitsInt(text, 64)
		}
		return digits <= 9 || fitsInt(text, 32)
	case types.Double:
		ok, _ := s.number()
		return ok
	case types.Boolean:
		return s.literal("true") || s.literal("false")
	}
	return false
}

func fitsInt(text []byte, bits int) bool {
	_, err := strconv.ParseInt(string(text), 10, bits)
	return err == nil
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

func (s *scanner) literal(lit string) bool {
	if len(s.data)-s.pos >= len(lit) && string(s.data[s.pos:s.pos+len(lit)]) == lit {
		s.pos += len(lit)
		return true
	}
	return false
}

// str reads a string starting at its opening quote; plain is false when
// it holds an escape.
func (s *scanner) str() (plain, ok bool) {
	plain, ok, _ = s.strASCII()
	return plain, ok
}

// strASCII is str that also says whether the string is all ASCII. The
// common string, plain ASCII without escapes, is scanned eight bytes at a
// time.
func (s *scanner) strASCII() (plain, ok, ascii bool) {
	const (
		ones   = 0x0101010101010101
		highs  = 0x8080808080808080
		spaces = 0x2020202020202020
		quotes = 0x2222222222222222
		slashs = 0x5c5c5c5c5c5c5c5c
	)
	d := s.data
	i := s.pos + 1
	for ; i+8 <= len(d); i += 8 {
		x := binary.LittleEndian.Uint64(d[i:])
		// A zero byte in x^quotes is a quote, in x^slashs a backslash; a
		// byte below 0x20 borrows into its high bit, and one at or above
		// 0x80 has it set. Any of them ends the fast scan.
		q, b := x^quotes, x^slashs
		if ((q-ones)&^q|(b-ones)&^b|x-spaces|x)&highs != 0 {
			break
		}
	}
	ascii = true
	for ; i < len(d); i++ {
		switch ch := d[i]; {
		case ch == '"':
			s.pos = i + 1
			return true, true, ascii
		case ch == '\\':
			s.pos = i
			return s.escaped()
		case ch < 0x20:
			return false, false, false // a control character: not JSON
		case ch >= 0x80:
			ascii = false
		}
	}
	return false, false, false
}

// escaped reads the rest of a string holding an escape, from s.pos just
// past the opening quote.
func (s *scanner) escaped() (plain, ok, ascii bool) {
	for s.pos < len(s.data) {
		ch := s.data[s.pos]
		switch {
		case ch == '"':
			s.pos++
			return false, true, false
		case ch < 0x20:
			return false, false, false
		case ch == '\\':
			if s.pos+1 >= len(s.data) {
				return false, false, false
			}
			switch s.data[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.data) {
					return false, false, false
				}
				for _, h := range s.data[s.pos+2 : s.pos+6] {
					if !isHex(h) {
						return false, false, false
					}
				}
				s.pos += 6
			default:
				return false, false, false
			}
		default:
			s.pos++
		}
	}
	return false, false, false
}

func isHex(h byte) bool {
	return '0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F'
}

// number reads a JSON number by the grammar
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; integer says it has
// neither fraction nor exponent.
func (s *scanner) number() (ok, integer bool) {
	d := s.data
	if s.pos < len(d) && d[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(d) && d[s.pos] == '0':
		s.pos++
	case s.pos < len(d) && '1' <= d[s.pos] && d[s.pos] <= '9':
		s.digits()
	default:
		return false, false
	}
	integer = true
	if s.pos < len(d) && d[s.pos] == '.' {
		s.pos++
		integer = false
		if s.digits() == 0 {
			return false, false
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		s.pos++
		integer = false
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return false, false
		}
	}
	return true, integer
}

func (s *scanner) digits() int {
	n := 0
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
		n++
	}
	return n
}

// maxDepth bounds the nesting of a skipped value; deeper records take
// the general path.
const maxDepth = 32

// value skips any JSON value (a field that is not a copied column),
// checking it strictly.
func (s *scanner) value(depth int) bool {
	switch s.peek() {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		if depth >= maxDepth {
			return false
		}
		open := s.data[s.pos]
		close := byte('}')
		if open == '[' {
			close = ']'
		}
		s.pos++
		if s.peek() == close {
			s.pos++
			return true
		}
		for {
			if open == '{' {
				if s.peek() != '"' {
					return false
				}
				if _, ok := s.str(); !ok {
					return false
				}
				if s.peek() != ':' {
					return false
				}
				s.pos++
			}
			if !s.value(depth + 1) {
				return false
			}
			switch s.peek() {
			case ',':
				s.pos++
			case close:
				s.pos++
				return true
			default:
				return false
			}
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	ok, _ := s.number()
	return ok
}
