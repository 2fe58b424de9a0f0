package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/sluice-sql/sluice/types"
)

// The hot path of JSON decoding. Reading a record into a map[string]any
// with encoding/json and converting each field costs most of a simple
// query's time (see BenchmarkPipeline in package engine), so Decode first
// parses with fastjson, which builds no Go maps and allocates almost
// nothing with a reused parser, and converts only the fields that are
// columns, the common scalar types directly from the parsed text. Anything
// unusual (a malformed record, a nested value, a number a column's type
// must check) takes the general path, so the two always agree: the fast
// path is only ever a shortcut to the same result.

// jsonParsers are reused across records (a parser is not safe for
// concurrent use; codecs may be).
var jsonParsers fastjson.ParserPool

// errSlowPath says the fast path declined a record.
var errSlowPath = errors.New("use the general JSON path")

func (c *jsonCodec) decodeFast(data []byte, dst []any) error {
	p := jsonParsers.Get()
	defer jsonParsers.Put(p)
	v, err := p.ParseBytes(data)
	if err != nil {
		return errSlowPath // the general path words the error
	}
	if c.unwrapped {
		x, err := fastValue(v, c.cols[0])
		if err != nil {
			return err
		}
		dst[0] = x
		return nil
	}
	obj, err := v.Object()
	if err != nil {
		return errSlowPath
	}
	var filledBuf [64]bool
	n := len(c.cols)
	if n > len(filledBuf) {
		return errSlowPath
	}
	filled := filledBuf[:n]
	c.markSkipped(filled)
	// One pass: a field named exactly like a column sets it, even over
	// a case-insensitive match seen before; a case-insensitive match
	// sets a column nothing matched yet.
	var exactBuf [64]bool
	exact := exactBuf[:n]
	j := 0
	obj.Visit(func(k []byte, fv *fastjson.Value) {
		if err != nil {
			return
		}
		f := c.field(j, k)
		j++
		i := f.col
		switch {
		case i < 0:
			return
		case f.exact:
			exact[i] = true
		case filled[i]:
			return
		}
		if c.skips(i) {
			return
		}
		var x any
		if x, err = fastValue(fv, c.cols[i]); err == nil {
			dst[i], filled[i] = x, true
		}
	})
	if err != nil {
		return err
	}
	c.missing = countUnfilled(filled)
	return nil
}

// fastValue converts one parsed value to column type t: scalars of the
// expected JSON type directly, everything else through FromJSON on the
// value encoding/json would have produced.
func fastValue(v *fastjson.Value, col types.Column) (x any, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("column %s: %w", col.Name, err)
		}
	}()
	t := col.Type
	switch v.Type() {
	case fastjson.TypeNull:
		return nil, nil
	case fastjson.TypeString:
		if t.Kind == types.String {
			b := v.GetStringBytes()
			if !utf8.Valid(b) {
				return strings.ToValidUTF8(string(b), "\\uFFFD"), nil
			}
			return string(b), nil
		}
	case fastjson.TypeNumber:
		// fastjson parses a number's text in place, without a copy; a
		// fraction or exponent where an integer is wanted, or a value out
		// of range, goes the general way.
		switch t.Kind {
		case types.BigInt, types.Timestamp:
			// A TIMESTAMP's number is its epoch milliseconds, read as a
			// BIGINT's (FromJSON).
			if n, err := v.Int64(); err == nil {
				return n, nil
			}
		case types.Integer, types.Date, types.Time:
			// DATE (days) and TIME (milliseconds) read as INT's numbers.
			if n, err := v.Int64(); err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
				return int32(n), nil
			}
		case types.Double:
			if f, err := v.Float64(); err == nil {
				return f, nil
			}
		}
	case fastjson.TypeTrue, fastjson.TypeFalse:
		if t.Kind == types.Boolean {
			return v.Type() == fastjson.TypeTrue, nil
		}
	case fastjson.TypeObject, fastjson.TypeArray:
		// A STRING column holding an object or array reads as its
		// compact JSON text with the fields in the record's order, as
		// ksqlDB's deserialiser prints the node it read.
		if t.Kind == types.String {
			return string(v.MarshalTo(nil)), nil
		}
	}
	return FromJSON(plainJSON(v), t)
}

// plainJSON is v as encoding/json with UseNumber decodes it.
func plainJSON(v *fastjson.Value) any {
	switch v.Type() {
	case fastjson.TypeNull:
		return nil
	case fastjson.TypeTrue:
		return true
	case fastjson.TypeFalse:
		return false
	case fastjson.TypeNumber:
		return json.Number(v.MarshalTo(nil))
	case fastjson.TypeString:
		b := v.GetStringBytes()
		if !utf8.Valid(b) {
			return strings.ToValidUTF8(string(b), "\\uFFFD")
		}
		return string(b)
	case fastjson.TypeArray:
		items, _ := v.Array()
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = plainJSON(it)
		}
		return out
	case fastjson.TypeObject:
		obj, _ := v.Object()
		out := make(map[string]any, obj.Len())
		obj.Visit(func(k []byte, fv *fastjson.Value) { out[string(k)] = plainJSON(fv) })
		return out
	}
	return nil
}

// asciiLower appends k lower-cased; bytes past ASCII are kept as they are
// (a column name with such letters then needs its exact spelling).
func asciiLower(dst, k []byte) []byte {
	for _, ch := range k {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		dst = append(dst, ch)
	}
	return dst
}

// fieldCol is what a JSON field name means to a codec: the column it
// sets (-1: none) and whether it names it exactly.
type fieldCol struct {
	name  string
	col   int
	exact bool
}

// field resolves the j-th field name of an object. Records of a topic
// mostly name the same fields in the same order, so the codec remembers
// each position's last name and what it meant, and a repeat costs a
// comparison instead of hashing.
func (c *jsonCodec) field(j int, k []byte) fieldCol {
	if j < len(c.fields) && c.fields[j].name == string(k) {
		return c.fields[j]
	}
	f := fieldCol{name: string(k), col: -1}
	if i, ok := c.exact[f.name]; ok {
		f.col, f.exact = i, true
	} else {
		var lower [64]byte
		if len(k) > len(lower) {
			i, ok = c.folded[strings.ToLower(f.name)]
		} else {
			i, ok = c.folded[string(asciiLower(lower[:0], k))]
		}
		if ok {
			f.col = i
		}
	}
	switch {
	case j < len(c.fields):
		c.fields[j] = f
	case j == len(c.fields) && j < 64:
		c.fields = append(c.fields, f)
	}
	return f
}
