// Command ksqlfunctions is ksqlDB's test-only functions (the classes its
// query-validation tests put on the classpath: TestUdf, BadUdf, TestUdtf,
// ThrowingUdtf, WhenCondition, WhenResult, and ToStruct of its udf-example
// jar) as one WebAssembly module following Sluice's calling convention
// (package udf). functions.sql declares them; `sluice test --udf-dir`
// loads the directory once the module is built beside it:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o ksqlfunctions.wasm .
//
// Where a Java function throws (on purpose, or unboxing a NULL into a
// primitive parameter), the export panics: the call fails, and Sluice's
// general rules for a failing function decide what becomes of the row.
package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/wasmguest"
)

func main() {}

func retString(s string) int64 { return wasmguest.Return([]byte(s)) }

func retJSON(v any) int64 {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return wasmguest.Return(b)
}

func null(nulls int64, i uint) bool { return nulls&(1<<i) != 0 }

// primitive fails as Java does unboxing a NULL into an int, long, double
// or boolean parameter.
func primitive(nulls int64, i uint) {
	if null(nulls, i) {
		panic("NullPointerException: a NULL for a primitive parameter")
	}
}

// TEST_UDF: each overload returns the name of the Java method ksqlDB's
// resolution picks, so a query shows which one it got.

//go:wasmexport test_udf_int_string
func testUDFIntString(nulls int64, _ int32, _, _ int32) int64 {
	primitive(nulls, 0)
	return retString("doStuffIntString")
}

//go:wasmexport test_udf_long_string
func testUDFLongString(nulls int64, _ int64, _, _ int32) int64 {
	primitive(nulls, 0)
	return retString("doStuffLongString")
}

//go:wasmexport test_udf_long_long_string
func testUDFLongLongString(nulls int64, _, _ int64, _, _ int32) int64 {
	primitive(nulls, 0)
	primitive(nulls, 1)
	return retString("doStuffLongLongString")
}

//go:wasmexport test_udf_long_varargs
func testUDFLongVarargs(int64, int32, int32) int64 { return retString("doStuffLongVarargs") }

//go:wasmexport test_udf_struct
func testUDFStruct(nulls int64, p, n int32) int64 {
	if null(nulls, 0) {
		panic("NullPointerException: struct.getString on a NULL struct")
	}
	var s struct{ A *string }
	if err := json.Unmarshal(wasmguest.Bytes(p, n), &s); err != nil {
		panic(err)
	}
	if s.A == nil {
		wasmguest.Null()
		return 0
	}
	return retString(*s.A)
}

//go:wasmexport test_udf_struct_out
func testUDFStructOut(int64) int64 { return retJSON(map[string]string{"A": "foo"}) }

// BAD_UDF

//go:wasmexport bad_udf_int
func badUDFInt(int64, int32) int64 { panic("boom!") }

//go:wasmexport bad_udf_boolean
func badUDFBoolean(nulls int64, b int32) int32 {
	primitive(nulls, 0)
	if b != 0 {
		panic("You asked me to throw...")
	}
	return 0
}

// calls counts bad_udf(STRING)'s calls on this instance, as the Java
// object's field counts its own.
var calls int

//go:wasmexport bad_udf_string
func badUDFString(nulls int64, p, n int32) int64 {
	i := calls
	calls++
	if i%2 == 0 || null(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return wasmguest.Return(wasmguest.Bytes(p, n))
}

// WHENCONDITION and WHENRESULT fail when evaluated with a false second
// argument: a CASE that evaluates a branch it should not fails.

//go:wasmexport when_condition
func whenCondition(nulls int64, v, evaluate int32) int32 {
	primitive(nulls, 0)
	primitive(nulls, 1)
	if evaluate == 0 {
		panic("When condition in case is not running lazily!")
	}
	return v
}

//go:wasmexport when_result
func whenResult(nulls int64, v, evaluate int32) int32 {
	primitive(nulls, 0)
	primitive(nulls, 1)
	if evaluate == 0 {
		panic("Then expression in case is not running lazily!")
	}
	return v
}

//go:wasmexport to_struct
func toStruct(nulls int64, p, n int32) int64 {
	if null(nulls, 0) {
		return retJSON(map[string]any{"A": nil})
	}
	return retJSON(map[string]string{"A": string(wasmguest.Bytes(p, n))})
}

// TEST_UDTF and THROWING_UDTF

// javaDouble is Java's Double.toString of d: plain between 10^-3 and
// 10^7, with at least one digit after the point; scientific otherwise.
func javaDouble(d float64) string {
	if math.IsNaN(d) || math.IsInf(d, 0) {
		switch {
		case math.IsNaN(d):
			return "NaN"
		case d > 0:
			return "Infinity"
		}
		return "-Infinity"
	}
	if a := math.Abs(d); d == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(d, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(d, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	return mant + "E" + strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "0")
}

// javaStruct is Kafka Connect's Struct.toString of a STRUCT<A STRING>.
func javaStruct(raw json.RawMessage) string {
	var s struct{ A *string }
	if err := json.Unmarshal(raw, &s); err != nil {
		panic(err)
	}
	if s.A == nil {
		return "Struct{}"
	}
	return "Struct{A=" + *s.A + "}"
}

// javaValue is String.valueOf of a JSON element of the calling
// convention, for the declared kind.
func javaValue(kind byte, raw json.RawMessage) string {
	text := string(raw)
	switch kind {
	case 'd':
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			panic(err)
		}
		return javaDouble(f)
	case 's':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			panic(err)
		}
		return s
	case 'r':
		return javaStruct(raw)
	}
	return text // INT, BIGINT, BOOLEAN and DECIMAL print as their JSON
}

var kinds = [7]byte{'i', 'l', 'd', 'b', 's', 'n', 'r'}

//go:wasmexport test_udtf_standard
func testUDTFStandard(nulls int64, i int32, l int64, d float64, b int32, sp, sn, dp, dn, rp, rn int32) int64 {
	for a := range uint(7) {
		if a != 4 {
			primitive(nulls, a)
		}
	}
	s := ""
	if !null(nulls, 4) {
		s = string(wasmguest.Bytes(sp, sn))
	}
	return retJSON([]string{
		strconv.Itoa(int(i)), strconv.FormatInt(l, 10), javaDouble(d), strconv.FormatBool(b != 0), s,
		string(wasmguest.Bytes(dp, dn)), javaStruct(wasmguest.Bytes(rp, rn)),
	})
}

// firsts is the first element of each of the seven collections (JSON
// arrays, or objects whose first value counts), as String.valueOf prints
// it.
func firsts(nulls int64, ptrs [14]int32, object bool) int64 {
	out := make([]string, 7)
	for a := range 7 {
		if null(nulls, uint(a)) {
			panic("NullPointerException: a NULL collection")
		}
		raw := wasmguest.Bytes(ptrs[2*a], ptrs[2*a+1])
		var first json.RawMessage
		if object {
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			if _, err := dec.Token(); err != nil { // {
				panic(err)
			}
			if _, err := dec.Token(); err != nil { // the first key
				panic(err)
			}
			if err := dec.Decode(&first); err != nil {
				panic(err)
			}
		} else {
			var all []json.RawMessage
			if err := json.Unmarshal(raw, &all); err != nil {
				panic(err)
			}
			if len(all) == 0 {
				panic("IndexOutOfBoundsException: an empty list")
			}
			first = all[0]
		}
		out[a] = javaValue(kinds[a], first)
	}
	return retJSON(out)
}

//go:wasmexport test_udtf_lists
func testUDTFLists(nulls int64, p0, n0, p1, n1, p2, n2, p3, n3, p4, n4, p5, n5, p6, n6 int32) int64 {
	return firsts(nulls, [14]int32{p0, n0, p1, n1, p2, n2, p3, n3, p4, n4, p5, n5, p6, n6}, false)
}

//go:wasmexport test_udtf_maps
func testUDTFMaps(nulls int64, p0, n0, p1, n1, p2, n2, p3, n3, p4, n4, p5, n5, p6, n6 int32) int64 {
	return firsts(nulls, [14]int32{p0, n0, p1, n1, p2, n2, p3, n3, p4, n4, p5, n5, p6, n6}, true)
}

// The one-argument TEST_UDTFs return their argument as the one row.

//go:wasmexport test_udtf_int
func testUDTFInt(nulls int64, x int32) int64 {
	primitive(nulls, 0)
	return retJSON([]int32{x})
}

//go:wasmexport test_udtf_long
func testUDTFLong(nulls int64, x int64) int64 {
	primitive(nulls, 0)
	return retJSON([]int64{x})
}

//go:wasmexport test_udtf_double
func testUDTFDouble(nulls int64, x float64) int64 {
	primitive(nulls, 0)
	return retJSON([]float64{x})
}

//go:wasmexport test_udtf_boolean
func testUDTFBoolean(nulls int64, x int32) int64 {
	primitive(nulls, 0)
	return retJSON([]bool{x != 0})
}

// test_udtf_value returns its one argument in memory (STRING, DECIMAL or
// STRUCT) as a one-element JSON array; a STRING is quoted, the others are
// JSON already (a DECIMAL as its text, a STRUCT as an object).
//
//go:wasmexport test_udtf_string
func testUDTFString(nulls int64, p, n int32) int64 {
	if null(nulls, 0) {
		return retJSON([]any{nil})
	}
	return retJSON([]string{string(wasmguest.Bytes(p, n))})
}

//go:wasmexport test_udtf_raw
func testUDTFRaw(nulls int64, p, n int32) int64 {
	if null(nulls, 0) {
		return retJSON([]any{nil})
	}
	return retJSON([]json.RawMessage{wasmguest.Bytes(p, n)})
}

//go:wasmexport throwing_udtf
func throwingUDTF(nulls int64, b int32) int64 {
	primitive(nulls, 0)
	if b != 0 {
		panic("You asked me to throw...")
	}
	return retJSON([]bool{false})
}
