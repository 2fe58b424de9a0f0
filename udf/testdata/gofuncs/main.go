// Command gofuncs is a WebAssembly module of test functions following
// Sluice's calling convention (see package udf), built by the tests with
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
package main

import (
	"strings"

	"github.com/sluice-sql/sluice/internal/wasmguest"
)

func main() {}

//go:wasmexport add_one
func addOne(nulls int64, x int64) int64 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return x + 1
}

//go:wasmexport add_ints
func addInts(nulls int64, x, y int32) int32 {
	if nulls != 0 {
		wasmguest.Null()
		return 0
	}
	return x + y
}

//go:wasmexport half
func half(nulls int64, x float64) float64 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return x / 2
}

//go:wasmexport negate
func negate(nulls int64, b int32) int32 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return 1 - b
}

//go:wasmexport shout
func shout(nulls int64, p, n int32) int64 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return wasmguest.Return([]byte(strings.ToUpper(string(wasmguest.Bytes(p, n))) + "!"))
}

//go:wasmexport concat2
func concat2(nulls int64, p1, n1, p2, n2 int32) int64 {
	if nulls != 0 {
		wasmguest.Null()
		return 0
	}
	return wasmguest.Return([]byte(string(wasmguest.Bytes(p1, n1)) + "-" + string(wasmguest.Bytes(p2, n2))))
}

//go:wasmexport reverse_bytes
func reverseBytes(nulls int64, p, n int32) int64 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	in := wasmguest.Bytes(p, n)
	out := make([]byte, len(in))
	for i, c := range in {
		out[len(in)-1-i] = c
	}
	return wasmguest.Return(out)
}

// echo returns its one variable-length argument as it came: DECIMAL text
// or the JSON of an ARRAY, MAP or STRUCT.
//
//go:wasmexport echo
func echo(nulls int64, p, n int32) int64 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return wasmguest.Return(wasmguest.Bytes(p, n))
}

//go:wasmexport next_day
func nextDay(nulls int64, d int32) int32 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return d + 1
}

//go:wasmexport later
func later(nulls int64, ts int64) int64 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return ts + 1000
}

// spin loops forever on 13.
//
//go:wasmexport spin
func spin(nulls int64, x int64) int64 {
	for x == 13 {
		x = (x*7 + 13) % 13
		x += 13
	}
	return x
}

var hoard [][]byte

// hog allocates without bound on 13.
//
//go:wasmexport hog
func hog(nulls int64, x int64) int64 {
	for x == 13 {
		hoard = append(hoard, make([]byte, 1<<20))
	}
	return x
}

// bad_bool returns 7 for a BOOLEAN: a bad return.
//
//go:wasmexport bad_bool
func badBool(nulls int64, x int64) int32 { return 7 }

// bad_string returns invalid UTF-8 on 13.
//
//go:wasmexport bad_string
func badString(nulls int64, x int64) int64 {
	if x == 13 {
		return wasmguest.Return([]byte{0xff, 0xfe})
	}
	return wasmguest.Return([]byte("ok"))
}

// to_euro is Nexmark q1's conversion: dollars to euros.
//
//go:wasmexport to_euro
func toEuro(nulls int64, price int64) float64 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
		return 0
	}
	return float64(price) * 0.908
}
