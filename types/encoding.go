package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"unsafe"

	"github.com/cockroachdb/apd/v3"
)

// The binary value encoding is how Sluice keeps values in its own state
// stores and changelogs: a tag byte per value, then a fixed-width or
// length-prefixed payload. It is compact, needs no schema to decode, and
// costs no reflection.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagInt32
	tagInt64
	tagFloat64
	tagString
	tagBytes
	tagList
	tagMap
	tagDecimal // the decimal's text (FormatDecimal keeps its scale)
)

// ErrCorrupt is returned when encoded state cannot be decoded.
var ErrCorrupt = errors.New("corrupt encoded value")

// AppendValues appends the encoding of a row of values to buf.
func AppendValues(buf []byte, vals []any) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(vals)))
	for _, v := range vals {
		buf = AppendValue(buf, v)
	}
	return buf
}

// AppendValue appends the encoding of one value to buf.
func AppendValue(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, tagNull)
	case bool:
		if x {
			return append(buf, tagTrue)
		}
		return append(buf, tagFalse)
	case int32:
		return binary.BigEndian.AppendUint32(append(buf, tagInt32), uint32(x))
	case int64:
		return binary.BigEndian.AppendUint64(append(buf, tagInt64), uint64(x))
	case float64:
		return binary.BigEndian.AppendUint64(append(buf, tagFloat64), math.Float64bits(x))
	case string:
		buf = binary.AppendUvarint(append(buf, tagString), uint64(len(x)))
		return append(buf, x...)
	case []byte:
		buf = binary.AppendUvarint(append(buf, tagBytes), uint64(len(x)))
		return append(buf, x...)
	case *apd.Decimal:
		if x == nil {
			return append(buf, tagNull)
		}
		s := x.String() // exact, keeps the exponent
		buf = binary.AppendUvarint(append(buf, tagDecimal), uint64(len(s)))
		return append(buf, s...)
	case []any:
		return AppendValues(append(buf, tagList), x)
	case map[string]any:
		// Keys in order: Go's map order is random, and equal values must
		// encode to equal bytes (a repartition record, a state value and
		// its changelog record are compared and replayed as bytes).
		buf = binary.AppendUvarint(append(buf, tagMap), uint64(len(x)))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			buf = binary.AppendUvarint(buf, uint64(len(k)))
			buf = append(buf, k...)
			buf = AppendValue(buf, x[k])
		}
		return buf
	}
	// Unknown Go types are a programming error in an operator; encode
	// them as text rather than panicking inside a task.
	s := fmt.Sprint(v)
	buf = binary.AppendUvarint(append(buf, tagString), uint64(len(s)))
	return append(buf, s...)
}

// DecodeValues decodes a row written by AppendValues, returning the rest.
func DecodeValues(buf []byte) ([]any, []byte, error) {
	n, w := binary.Uvarint(buf)
	if w <= 0 || n > uint64(len(buf)) {
		return nil, nil, ErrCorrupt
	}
	buf = buf[w:]
	out := make([]any, n)
	var err error
	for i := range out {
		if out[i], buf, err = DecodeValue(buf); err != nil {
			return nil, nil, err
		}
	}
	return out, buf, nil
}

// DecodeValue decodes one value written by AppendValue, returning the rest.
func DecodeValue(buf []byte) (any, []byte, error) { return decodeValue(buf, false) }

// DecodeValueViewing is DecodeValue whose STRING values are views of buf
// rather than copies: one copy of a record's bytes serves all its
// strings. buf must never change while a value decoded from it lives.
func DecodeValueViewing(buf []byte) (any, []byte, error) { return decodeValue(buf, true) }

func decodeValue(buf []byte, view bool) (any, []byte, error) {
	if len(buf) == 0 {
		return nil, nil, ErrCorrupt
	}
	tag, buf := buf[0], buf[1:]
	switch tag {
	case tagNull:
		return nil, buf, nil
	case tagFalse:
		return false, buf, nil
	case tagTrue:
		return true, buf, nil
	case tagInt32:
		if len(buf) < 4 {
			return nil, nil, ErrCorrupt
		}
		return int32(binary.BigEndian.Uint32(buf)), buf[4:], nil
	case tagInt64:
		if len(buf) < 8 {
			return nil, nil, ErrCorrupt
		}
		return int64(binary.BigEndian.Uint64(buf)), buf[8:], nil
	case tagFloat64:
		if len(buf) < 8 {
			return nil, nil, ErrCorrupt
		}
		return math.Float64frombits(binary.BigEndian.Uint64(buf)), buf[8:], nil
	case tagString, tagBytes, tagDecimal:
		n, w := binary.Uvarint(buf)
		if w <= 0 || uint64(len(buf)-w) < n {
			return nil, nil, ErrCorrupt
		}
		payload := buf[w : w+int(n)]
		if tag == tagDecimal {
			d, err := ParseDecimal(string(payload))
			if err != nil {
				return nil, nil, ErrCorrupt
			}
			return d, buf[w+int(n):], nil
		}
		if tag == tagString {
			if view {
				return unsafe.String(unsafe.SliceData(payload), len(payload)), buf[w+int(n):], nil
			}
			return string(payload), buf[w+int(n):], nil
		}
		return append([]byte(nil), payload...), buf[w+int(n):], nil
	case tagList:
		return DecodeValues(buf)
	case tagMap:
		n, w := binary.Uvarint(buf)
		if w <= 0 || n > uint64(len(buf)) {
			return nil, nil, ErrCorrupt
		}
		buf = buf[w:]
		m := make(map[string]any, n)
		for range n {
			kl, kw := binary.Uvarint(buf)
			if kw <= 0 || uint64(len(buf)-kw) < kl {
				return nil, nil, ErrCorrupt
			}
			k := string(buf[kw : kw+int(kl)])
			var v any
			var err error
			if v, buf, err = DecodeValue(buf[kw+int(kl):]); err != nil {
				return nil, nil, err
			}
			m[k] = v
		}
		return m, buf, nil
	}
	return nil, nil, ErrCorrupt
}

// SkipValue steps over one value written by AppendValue without building
// it, returning the rest: a reader that needs only some columns of a row.
func SkipValue(buf []byte) ([]byte, error) {
	if len(buf) == 0 {
		return nil, ErrCorrupt
	}
	tag, buf := buf[0], buf[1:]
	switch tag {
	case tagNull, tagFalse, tagTrue:
		return buf, nil
	case tagInt32:
		if len(buf) < 4 {
			return nil, ErrCorrupt
		}
		return buf[4:], nil
	case tagInt64, tagFloat64:
		if len(buf) < 8 {
			return nil, ErrCorrupt
		}
		return buf[8:], nil
	case tagString, tagBytes, tagDecimal:
		n, w := binary.Uvarint(buf)
		if w <= 0 || uint64(len(buf)-w) < n {
			return nil, ErrCorrupt
		}
		return buf[w+int(n):], nil
	case tagList:
		n, w := binary.Uvarint(buf)
		if w <= 0 || n > uint64(len(buf)) {
			return nil, ErrCorrupt
		}
		buf = buf[w:]
		var err error
		for range n {
			if buf, err = SkipValue(buf); err != nil {
				return nil, err
			}
		}
		return buf, nil
	case tagMap:
		n, w := binary.Uvarint(buf)
		if w <= 0 || n > uint64(len(buf)) {
			return nil, ErrCorrupt
		}
		buf = buf[w:]
		var err error
		for range n {
			kl, kw := binary.Uvarint(buf)
			if kw <= 0 || uint64(len(buf)-kw) < kl {
				return nil, ErrCorrupt
			}
			if buf, err = SkipValue(buf[kw+int(kl):]); err != nil {
				return nil, err
			}
		}
		return buf, nil
	}
	return nil, ErrCorrupt
}
