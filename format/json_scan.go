package format

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/sluice-sql/sluice/types"
)

// spans finds the text of a JSON codec's columns in a record without
// building anything: one strict pass over the bytes (see scanner). The
// copy (JSONCopy) writes that text out as it is; Decode converts it
// directly, the common case of every JSON query, instead of parsing the
// record into a tree first.
type spans struct {
	codec *jsonCodec
	kinds []types.Kind
	// at holds, per column, the value's text in the record last read
	// (start, end); start is -1 for a column the record lacks.
	at [][2]int
	// missing counts the needed columns the record lacks.
	missing int
}

// newSpans returns the span reader of codec's columns, or nil when a
// column the codec converts is of a type spans do not handle (anything
// but STRING, INT, BIGINT, DOUBLE and BOOLEAN) or the codec reads a bare
// value.
func newSpans(c *jsonCodec) *spans {
	if c.unwrapped || len(c.cols) == 0 || len(c.cols) > 64 {
		return nil
	}
	r := &spans{codec: c, kinds: make([]types.Kind, len(c.cols)), at: make([][2]int, len(c.cols))}
	for i, col := range c.cols {
		r.kinds[i] = col.Type.Kind
		switch col.Type.Kind {
		case types.String, types.Integer, types.BigInt, types.Double, types.Boolean,
			// Read from numbers as FromJSON reads them: TIMESTAMP a BIGINT
			// of epoch milliseconds, DATE and TIME INTs; their text forms
			// take the general path.
			types.Timestamp, types.Date, types.Time:
		default:
			if !c.skips(i) {
				return nil
			}
		}
	}
	return r
}

// read finds the columns' text in data; false means the record must be
// read another way (it is not strictly valid JSON, repeats a column, or
// holds a value the spans do not take as it is: an escape in a string,
// a fraction in an integer, a nested value).
func (r *spans) read(data []byte) bool {
	for i := range r.at {
		r.at[i] = [2]int{-1, -1}
	}
	s := scanner{data: data}
	if !s.object(r) || !s.end() {
		return false
	}
	r.missing = 0
	for i, sp := range r.at {
		if sp[0] < 0 && !r.codec.skips(i) {
			r.missing++
		}
	}
	return true
}

// text is column i's text in data, as last read (nil: absent).
func (r *spans) text(data []byte, i int) []byte {
	sp := r.at[i]
	if sp[0] < 0 {
		return nil
	}
	return data[sp[0]:sp[1]]
}

// decode converts the columns read into dst, as the codec's Decode
// would: null and absent columns are nil; only, when set, limits it to
// the columns it marks. false leaves the record to the general path (a
// number out of a DOUBLE's range).
func (r *spans) decode(data []byte, dst []any, only []bool) bool {
	// The record's strings share one allocation: their bytes copied
	// together, each string a view of its part. A string kept (a group
	// key, a joined row) keeps the record's other strings with it, a few
	// hundred bytes at most.
	size := 0
	for i, k := range r.kinds {
		if k == types.String && (only == nil || only[i]) && !r.codec.skips(i) {
			if sp := r.at[i]; sp[0] >= 0 {
				size += sp[1] - sp[0] - 2 // the quotes, or less than null's 4
			}
		}
	}
	var strs []byte
	if size > 0 {
		strs = make([]byte, 0, size)
	}
	for i, k := range r.kinds {
		if only != nil && !only[i] {
			continue
		}
		text := r.text(data, i)
		if text == nil || r.codec.skips(i) || string(text) == "null" {
			continue
		}
		switch k {
		case types.String:
			from := len(strs)
			strs = append(strs, text[1:len(text)-1]...)
			dst[i] = unsafe.String(unsafe.SliceData(strs[from:]), len(strs)-from)
		case types.BigInt, types.Timestamp:
			dst[i] = parseInt(text)
		case types.Integer, types.Date, types.Time:
			dst[i] = int32(parseInt(text))
		case types.Double:
			f, err := strconv.ParseFloat(string(text), 64)
			if err != nil {
				return false
			}
			dst[i] = f
		case types.Boolean:
			dst[i] = text[0] == 't'
		}
	}
	return true
}

// parseInt reads an integer the scanner has checked: digits with an
// optional minus, in range.
func parseInt(text []byte) int64 {
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	var n uint64
	for _, d := range text {
		n = n*10 + uint64(d-'0')
	}
	if neg {
		return -int64(n)
	}
	return int64(n)
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

// object reads the top-level object, noting in r.at the span of each
// needed column's value.
func (s *scanner) object(r *spans) bool {
	if s.peek() != '{' {
		return false
	}
	s.pos++
	if s.peek() == '}' {
		s.pos++
		return true
	}
	c := r.codec
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
		f := c.field(j, key)
		if i := f.col; i >= 0 && !c.skips(i) {
			if r.at[i][0] >= 0 {
				return false // a repeated column: which one wins is the general path's call
			}
			vstart := s.pos
			if !s.column(r.kinds[i]) {
				return false
			}
			r.at[i] = [2]int{vstart, s.pos}
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
	case types.BigInt, types.Integer, types.Timestamp, types.Date, types.Time:
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
		if k == types.BigInt || k == types.Timestamp {
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
