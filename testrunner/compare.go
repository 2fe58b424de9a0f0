package testrunner

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// EqualJSON reports whether two JSON-shaped values are equal: numbers by
// value whatever their Go type (json.Number "125", float64 125.0 and
// int64 125 are equal; two integers compare exactly, never through
// float64), objects by keys, arrays in order.
func EqualJSON(expected, actual any) bool {
	decimal := false
	if d, ok := actual.(decimalNumber); ok {
		if s, isStr := expected.(string); isStr {
			return sameDecimal(s, string(d))
		}
		actual, decimal = json.Number(d), true
	}
	if en, ok := asNumber(expected); ok {
		an, ok := asNumber(actual)
		if !ok {
			return false
		}
		if decimal {
			// A DECIMAL equals an expected number of exactly its value
			// (3.4 for 3.40), never one that merely reads as the same
			// double: its digits beyond a double's are what it is for.
			return (en.isInt || en.r != nil) && en.rat().Cmp(an.rat()) == 0
		}
		return en.equal(an) || (!en.isInt && !an.isInt && nearDoubles(expected, actual))
	}
	switch e := expected.(type) {
	case nil:
		return actual == nil
	case string:
		a, ok := actual.(string)
		return ok && a == e
	case bool:
		a, ok := actual.(bool)
		return ok && a == e
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e) {
			return false
		}
		for i := range e {
			if !EqualJSON(e[i], a[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		if f, ok := actual.(foldedNames); ok {
			return equalFolded(e, f)
		}
		a, ok := actual.(map[string]any)
		if !ok || len(a) != len(e) {
			return false
		}
		for k, ev := range e {
			// As ksqlDB's test tool, an expected field that the record
			// lacks (or has as null) is looked up again upper-cased:
			// tests may spell an unquoted column name in lower case. A
			// field found under neither name reads as null, as that
			// tool's lookup does, so an expected null matches it (the
			// objects' sizes still agree).
			av := a[k]
			if av == nil {
				av = a[strings.ToUpper(k)]
			}
			if !EqualJSON(ev, av) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(expected, actual)
}

// sameDecimal reports whether an expected string names the DECIMAL
// text actual, as ksqlDB's test tool compares them (Java's
// BigDecimal.equals): the same value at the same scale, however the
// string pads it ("00.00" is 0.00, "005.4" is 5.4; "3.4" is not 3.40).
func sameDecimal(expected, actual string) bool {
	e, _, err := apd.NewFromString(strings.TrimSpace(expected))
	if err != nil {
		return false
	}
	a, _, err := apd.NewFromString(actual)
	if err != nil {
		return false
	}
	return e.Form == apd.Finite && e.Exponent == a.Exponent && e.Cmp(a) == 0
}

// foldedNames is an object read from a sink record whose field names
// compare ignoring case (Protobuf's, see decodeSide).
type foldedNames map[string]any

// foldNames marks v's objects, deeply, as foldedNames.
func foldNames(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(foldedNames, len(x))
		for k, e := range x {
			out[k] = foldNames(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = foldNames(x[i])
		}
	}
	return v
}

func equalFolded(e map[string]any, a foldedNames) bool {
	if len(a) != len(e) {
		return false
	}
	for k, ev := range e {
		found := false
		for ak, av := range a {
			if strings.EqualFold(k, ak) {
				if !EqualJSON(ev, av) {
					return false
				}
				found = true
				break
			}
		}
		if !found && ev != nil {
			return false // a missing field reads as null, as in EqualJSON
		}
	}
	return true
}

// nearDoubles reports two DOUBLE results a few units in the last place
// apart. Transcendental functions (SIN, ASIN, EXP, …) are not correctly
// rounded in Java's Math or Go's math, and differ there by an ulp or
// two: that is the library's rounding, not a different result. DECIMALs
// and integers still compare exactly.
func nearDoubles(expected, actual any) bool {
	toFloat := func(v any) (float64, bool) {
		switch x := v.(type) {
		case json.Number:
			f, err := x.Float64()
			return f, err == nil
		case float64:
			return x, true
		}
		return 0, false
	}
	e, ok1 := toFloat(expected)
	a, ok2 := toFloat(actual)
	if !ok1 || !ok2 || math.IsNaN(e) || math.IsInf(e, 0) || e == a {
		return ok1 && ok2 && e == a
	}
	const ulps = 4
	return math.Abs(e-a) <= ulps*0x1p-52*math.Max(math.Abs(e), math.Abs(a))
}

// decimalNumber is a DECIMAL read from a sink record: its exact text.
type decimalNumber string

// MarshalJSON writes the decimal as a JSON number.
func (d decimalNumber) MarshalJSON() ([]byte, error) { return []byte(d), nil }

// number is a JSON number: an exact int64 when it has one, else a
// rational (exact for decimal text and for every float64).
type number struct {
	isInt bool
	i     int64
	r     *big.Rat // nil for integers, NaN and infinities
	f     float64  // NaN or ±Inf when neither isInt nor r
}

func asNumber(v any) (number, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return number{isInt: true, i: i}, true
		}
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return number{}, false
		}
		return number{r: r}, true
	case float64:
		return floatNumber(x), true
	case float32:
		return floatNumber(float64(x)), true
	case int:
		return number{isInt: true, i: int64(x)}, true
	case int8:
		return number{isInt: true, i: int64(x)}, true
	case int16:
		return number{isInt: true, i: int64(x)}, true
	case int32:
		return number{isInt: true, i: int64(x)}, true
	case int64:
		return number{isInt: true, i: x}, true
	case uint8:
		return number{isInt: true, i: int64(x)}, true
	case uint16:
		return number{isInt: true, i: int64(x)}, true
	case uint32:
		return number{isInt: true, i: int64(x)}, true
	case uint64:
		if x <= math.MaxInt64 {
			return number{isInt: true, i: int64(x)}, true
		}
		return number{r: new(big.Rat).SetFrac(new(big.Int).SetUint64(x), big.NewInt(1))}, true
	}
	return number{}, false
}

func floatNumber(f float64) number {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return number{f: f}
	}
	return number{r: new(big.Rat).SetFloat64(f)}
}

func (n number) rat() *big.Rat {
	if n.isInt {
		return new(big.Rat).SetInt64(n.i)
	}
	return n.r
}

func (n number) equal(o number) bool {
	if n.isInt && o.isInt {
		return n.i == o.i
	}
	nSpecial, oSpecial := !n.isInt && n.r == nil, !o.isInt && o.r == nil
	if nSpecial || oSpecial {
		// NaN equals NaN here: a test expecting NaN should pass on NaN.
		return nSpecial && oSpecial && (n.f == o.f || (math.IsNaN(n.f) && math.IsNaN(o.f)))
	}
	if n.rat().Cmp(o.rat()) == 0 {
		return true
	}
	if n.isInt || o.isInt {
		return false // an integer is never rounded to match
	}
	// A DOUBLE travels as the shortest decimal text that reads back as the
	// same float64 (Java's and ours alike), so two numbers that are not
	// both integers are equal when they name the same double: 1.1 written
	// by ksqlDB and float64(1.1) computed here.
	nf, _ := n.rat().Float64()
	of, _ := o.rat().Float64()
	return nf == of
}

// maxListed caps how many missing or extra records are printed per topic.
const maxListed = 10

// CompareOutputs compares the records a case produced with the expected
// ones, in order per topic, on key, value, timestamp (when the expected
// record has one) and window (likewise). It returns one human-readable
// line per difference: the first mismatch of each topic, and the records
// missing or extra at its end. No lines means the outputs match.
func CompareOutputs(expected, actual []Record) []string {
	var topics []string
	byTopic := map[string]*[2][]Record{}
	add := func(side int, rs []Record) {
		for _, r := range rs {
			p := byTopic[r.Topic]
			if p == nil {
				p = new([2][]Record)
				byTopic[r.Topic] = p
				topics = append(topics, r.Topic)
			}
			p[side] = append(p[side], r)
		}
	}
	add(0, expected)
	// As in ksqlDB's test executor, only the topics the case expects
	// records on are compared: a case about a pipeline's last query need
	// not list what the queries before it wrote. A case expecting nothing
	// at all must produce nothing.
	if len(expected) > 0 {
		kept := actual[:0:0]
		for _, r := range actual {
			if byTopic[r.Topic] != nil {
				kept = append(kept, r)
			}
		}
		actual = kept
	}
	add(1, actual)

	var diffs []string
	for _, topic := range topics {
		exp, act := byTopic[topic][0], byTopic[topic][1]
		n := min(len(exp), len(act))
		for i := 0; i < n; i++ {
			if what := recordMismatch(exp[i], act[i]); what != "" {
				got := act[i]
				if exp[i].Timestamp == nil {
					// Not compared, and often the wall clock (INSERT VALUES):
					// left out so that reports stay the same run to run.
					got.Timestamp = nil
				}
				diffs = append(diffs, fmt.Sprintf("topic %s: record %d differs in %s: expected %s got %s",
					topic, i, what, formatRecord(exp[i]), formatRecord(got)))
				break
			}
		}
		diffs = listRecords(diffs, topic, "missing", exp[n:], n)
		diffs = listRecords(diffs, topic, "extra", act[n:], n)
	}
	return diffs
}

func listRecords(diffs []string, topic, what string, rs []Record, first int) []string {
	if len(rs) == 0 {
		return diffs
	}
	diffs = append(diffs, fmt.Sprintf("topic %s: %d %s record(s) from record %d on", topic, len(rs), what, first))
	for i, r := range rs {
		if i == maxListed {
			diffs = append(diffs, fmt.Sprintf("  … and %d more", len(rs)-maxListed))
			break
		}
		diffs = append(diffs, fmt.Sprintf("  %s %s", what, formatRecord(r)))
	}
	return diffs
}

// recordMismatch names the fields in which actual differs from expected.
func recordMismatch(e, a Record) string {
	var what []string
	if !EqualJSON(e.Key, a.Key) {
		what = append(what, "key")
	}
	if !EqualJSON(e.Value, a.Value) {
		what = append(what, "value")
	}
	if e.Timestamp != nil && (a.Timestamp == nil || *a.Timestamp != *e.Timestamp) {
		what = append(what, "timestamp")
	}
	if e.Window != nil && (a.Window == nil || a.Window.Start != e.Window.Start || a.Window.End != e.Window.End ||
		!strings.EqualFold(a.Window.Type, e.Window.Type)) {
		what = append(what, "window")
	}
	return strings.Join(what, ", ")
}

type printedWindow struct {
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Type  string `json:"type,omitempty"`
}

type printedRecord struct {
	Topic     string         `json:"topic"`
	Key       any            `json:"key"`
	Value     any            `json:"value"`
	Timestamp *int64         `json:"timestamp,omitempty"`
	Window    *printedWindow `json:"window,omitempty"`
}

// formatRecord prints r as compact JSON, in the shape of the test files.
func formatRecord(r Record) string {
	p := printedRecord{Topic: r.Topic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	if r.Window != nil {
		p.Window = &printedWindow{Start: r.Window.Start, End: r.Window.End, Type: r.Window.Type}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Sprintf("%+v", r)
	}
	return string(b)
}
