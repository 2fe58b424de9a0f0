package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/types"
)

// KeyRange is a pull query's range over a table's key: the leading key
// columns pinned to one value each (Eq), then bounds on the next key
// column (Lo, Hi; nil is unbounded), the key columns after it free. The
// planner's key-range rule finds it in WHERE (<, <=, >, >=, BETWEEN and
// their conjunctions); the WHERE still filters the rows read, so a range
// read may be wider than the range (an exclusive bound read inclusively)
// but never narrower.
type KeyRange struct {
	// NKeys is how many key columns the table has.
	NKeys int
	Eq    []any
	// Lo and Hi bound key column len(Eq), in its Go type; LoOpen and
	// HiOpen make a bound exclusive.
	Lo, Hi         any
	LoOpen, HiOpen bool
}

// String is the range as EXPLAIN prints it.
func (r *KeyRange) String() string {
	var b bytes.Buffer
	for i, v := range r.Eq {
		fmt.Fprintf(&b, "key%d = %v, ", i+1, v)
	}
	b.WriteString("key")
	fmt.Fprint(&b, len(r.Eq)+1)
	b.WriteString(" in ")
	switch {
	case r.Lo == nil:
		b.WriteString("(-∞")
	case r.LoOpen:
		fmt.Fprintf(&b, "(%v", r.Lo)
	default:
		fmt.Fprintf(&b, "[%v", r.Lo)
	}
	b.WriteString(", ")
	switch {
	case r.Hi == nil:
		b.WriteString("+∞)")
	case r.HiOpen:
		fmt.Fprintf(&b, "%v)", r.Hi)
	default:
		fmt.Fprintf(&b, "%v]", r.Hi)
	}
	return b.String()
}

// byteRun is one run of a store's keys, [start, end) (nil end: to the
// end of the store); reverse says the run holds its keys in descending
// value order, so its rows are read and then reversed.
type byteRun struct {
	start, end []byte
	reverse    bool
}

// rangeRuns turns the range into the runs of store keys that hold it, in
// value order, for keys laid out as prefix then the key columns in the
// state encoding (types.AppendValue; several columns as
// types.AppendValues, behind their count: counted). ok is false when the encoding
// does not keep the ranged column's values in order: the caller scans.
//
// The state encoding is a tag byte and then the value. It keeps order
// within one tag for BOOLEAN (two tags), and, per sign, for the numbers:
// INT, BIGINT, DATE, TIME and TIMESTAMP are big-endian two's complement
// (the non-negative run first in bytes, then the negative one), DOUBLE
// is its IEEE-754 bits (non-negative values ascending, negative values
// descending; NaN's bits sort after +Infinity, as Java's Double.compare
// places it). A range over them is at most two runs, read negatives
// first. STRING, BYTES and DECIMAL are length-prefixed (or text), which
// orders them by length before content: no run holds a range of them.
func (r *KeyRange) rangeRuns(prefix []byte, counted bool) (runs []byteRun, ok bool) {
	head := r.head(prefix, counted)
	enc := func(v any) []byte { return types.AppendValue(append([]byte(nil), head...), v) }
	// after is the end of an inclusive upper bound: past every key that
	// starts with v's encoding (the columns after it are free).
	after := func(v any) []byte { return prefixEndOf(enc(v)) }
	sample := r.Lo
	if sample == nil {
		sample = r.Hi
	}
	switch sample.(type) {
	case int32:
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		lo, hi, empty := intBounds(r, lo, hi)
		if empty {
			return nil, true
		}
		return intRuns(lo, hi, func(x int64) any { return int32(x) }, enc, after), true
	case int64:
		lo, hi, empty := intBounds(r, math.MinInt64, math.MaxInt64)
		if empty {
			return nil, true
		}
		return intRuns(lo, hi, func(x int64) any { return x }, enc, after), true
	case float64:
		return floatRuns(r, head), true
	case bool:
		lo, hi := false, true
		if b, ok := r.Lo.(bool); ok {
			lo = b
		}
		if b, ok := r.Hi.(bool); ok {
			hi = b
		}
		if lo && !hi {
			return nil, true
		}
		return []byteRun{{start: enc(lo), end: after(hi)}}, true
	}
	return nil, false
}

// intBounds makes the range's integer bounds inclusive within [min, max].
func intBounds(r *KeyRange, min, max int64) (lo, hi int64, empty bool) {
	lo, hi = min, max
	if r.Lo != nil {
		lo = toInt64(r.Lo)
		if r.LoOpen {
			if lo == max {
				return 0, 0, true
			}
			lo++
		}
	}
	if r.Hi != nil {
		hi = toInt64(r.Hi)
		if r.HiOpen {
			if hi == min {
				return 0, 0, true
			}
			hi--
		}
	}
	return lo, hi, lo > hi
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// intRuns splits an inclusive integer range at zero: two's complement
// puts the negative values after the others in bytes.
func intRuns(lo, hi int64, val func(int64) any, enc, after func(any) []byte) []byteRun {
	var runs []byteRun
	if lo < 0 {
		runs = append(runs, byteRun{start: enc(val(lo)), end: after(val(min(hi, -1)))})
	}
	if hi >= 0 {
		runs = append(runs, byteRun{start: enc(val(max(lo, 0))), end: after(val(hi))})
	}
	return runs
}

// floatRuns reads DOUBLE bounds inclusively (the filter drops an
// exclusive bound's own value): the negative values, whose bits grow as
// the values fall, in a reversed run, then the non-negative ones.
func floatRuns(r *KeyRange, head []byte) []byteRun {
	lo, hi := math.Inf(-1), math.Inf(1)
	loSet, hiSet := r.Lo != nil, r.Hi != nil
	if loSet {
		lo = r.Lo.(float64)
	}
	if hiSet {
		hi = r.Hi.(float64)
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || lo > hi {
		return nil
	}
	bitsKey := func(bits uint64) []byte {
		return binary.BigEndian.AppendUint64(types.AppendValue(append([]byte(nil), head...), 0.0)[:len(head)+1], bits)
	}
	var runs []byteRun
	if lo <= 0 {
		// Negative values and -0: from the bits of the upper end (the
		// value nearest zero) to those of the lower end.
		from := math.Float64bits(math.Copysign(0, -1))
		if hi < 0 {
			from = math.Float64bits(hi)
		}
		var end []byte
		if loSet {
			end = prefixEndOf(bitsKey(math.Float64bits(lo)))
		} else {
			end = prefixEndOf(bitsKey(math.MaxUint64))
		}
		runs = append(runs, byteRun{start: bitsKey(from), end: end, reverse: true})
	}
	if hi >= 0 {
		from := uint64(0)
		if lo > 0 {
			from = math.Float64bits(lo)
		}
		// Unbounded above reaches NaN, as Java orders doubles.
		to := uint64(math.MaxInt64)
		if hiSet {
			to = math.Float64bits(hi)
		}
		runs = append(runs, byteRun{start: bitsKey(from), end: prefixEndOf(bitsKey(to))})
	}
	return runs
}

// prefixEndOf is the smallest key after every key starting with p (nil:
// none, p is all 0xff).
func prefixEndOf(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// head is the start every key in the range shares: the layout's prefix,
// the column count (counted) and the pinned columns.
func (r *KeyRange) head(prefix []byte, counted bool) []byte {
	head := append([]byte(nil), prefix...)
	if counted {
		head = binary.AppendUvarint(head, uint64(r.NKeys))
	}
	for _, v := range r.Eq {
		head = types.AppendValue(head, v)
	}
	return head
}

// textRange says the ranged column is STRING or BYTES: read one run per
// length (TableReader.readTextRange).
func (r *KeyRange) textRange() bool {
	sample := r.Lo
	if sample == nil {
		sample = r.Hi
	}
	switch sample.(type) {
	case string, []byte:
		return true
	}
	return false
}

// textTagged is head followed by the ranged column's tag byte.
func (r *KeyRange) textTagged(head []byte) []byte {
	sample := r.Lo
	if sample == nil {
		sample = r.Hi
	}
	empty := types.AppendValue(nil, sample)
	return append(append([]byte(nil), head...), empty[0])
}

func textBytes(v any) []byte {
	switch x := v.(type) {
	case string:
		return []byte(x)
	case []byte:
		return x
	}
	return nil
}

// textRun is the run of the texts of length n within the range (read
// inclusively: WHERE drops an exclusive bound's own value). A text of
// length n at least lo: lo itself and what follows it when n >= len(lo),
// else past every text that starts with lo's first n bytes. At most hi:
// up to the texts starting with hi's first n bytes when n <= len(hi),
// else before the texts starting with hi (they are longer, so greater).
func (r *KeyRange) textRun(tagged []byte, n uint64, storeEnd []byte) (byteRun, bool) {
	base := binary.AppendUvarint(append([]byte(nil), tagged...), n)
	join := func(b []byte) []byte { return append(append([]byte(nil), base...), b...) }
	start := base
	if r.Lo != nil {
		lo := textBytes(r.Lo)
		if n >= uint64(len(lo)) {
			start = join(lo)
		} else if start = prefixEndOf(join(lo[:n])); start == nil {
			return byteRun{}, false
		}
	}
	end := prefixEndOf(base)
	if r.Hi != nil {
		hi := textBytes(r.Hi)
		if n <= uint64(len(hi)) {
			end = prefixEndOf(join(hi[:n]))
		} else {
			end = join(hi)
		}
	}
	if end == nil || (storeEnd != nil && bytes.Compare(end, storeEnd) > 0) {
		end = storeEnd
	}
	if end != nil && bytes.Compare(start, end) >= 0 {
		return byteRun{}, false
	}
	return byteRun{start: start, end: end}, true
}

// compareText orders two STRING or BYTES values bytewise, as WHERE
// compares them.
func compareText(a, b any) int { return bytes.Compare(textBytes(a), textBytes(b)) }
