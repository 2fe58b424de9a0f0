// Command tablefuncs is a WebAssembly module of test table functions and
// VARIADIC functions following Sluice's calling convention (see package
// udf), built by the tests with GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared.
package main

import (
	"strconv"
	"strings"
	"unsafe"
)

func main() {}

//go:wasmimport sluice result_null
func resultNull()

var args, result []byte

//go:wasmexport sluice_alloc
func alloc(n int32) int32 {
	if cap(args) < int(n) {
		args = make([]byte, n)
	}
	args = args[:n]
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(args))))
}

func bytesAt(p, n int32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(uintptr(p))), n) }

func ret(b []byte) int64 {
	result = append(result[:0], b...)
	if len(result) == 0 {
		return 0
	}
	return int64(uintptr(unsafe.Pointer(unsafe.SliceData(result))))<<32 | int64(len(result))
}

func isNull(nulls int64, i uint) bool { return nulls&(1<<i) != 0 }

// split(s STRING, sep STRING) RETURNS ARRAY<STRING>: a row per part; a
// NULL s gives NULL (no rows).
//
//go:wasmexport split
func split(nulls int64, sp, sn, pp, pn int32) int64 {
	if nulls != 0 {
		resultNull()
		return 0
	}
	out := []byte{'['}
	for i, part := range strings.Split(string(bytesAt(sp, sn)), string(bytesAt(pp, pn))) {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, part)
	}
	return ret(append(out, ']'))
}

// upto(n INT) RETURNS ARRAY<INT>: the rows 1…n; n = 13 traps.
//
//go:wasmexport upto
func upto(nulls int64, n int32) int64 {
	if isNull(nulls, 0) {
		resultNull()
		return 0
	}
	if n == 13 {
		panic("13")
	}
	out := []byte{'['}
	for i := int32(1); i <= n; i++ {
		if i > 1 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(out, int64(i), 10)
	}
	return ret(append(out, ']'))
}

// join_all(sep STRING, VARIADIC parts ARRAY<STRING>) RETURNS STRING: the
// parts joined by sep, NULL parts as "null"; it tells how many it got.
//
//go:wasmexport join_all
func joinAll(nulls int64, sp, sn, ap, an int32) int64 {
	if isNull(nulls, 1) {
		return ret([]byte("no array"))
	}
	// The elements are JSON strings without escapes, or null: the
	// tests' inputs are.
	var texts []string
	b := bytesAt(ap, an)
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := i + 1
			for b[end] != '"' {
				end++
			}
			texts = append(texts, string(b[i+1:end]))
			i = end
		case 'n':
			texts = append(texts, "null")
			i += 3
		}
	}
	return ret([]byte(strconv.Itoa(len(texts)) + ":" + strings.Join(texts, string(bytesAt(sp, sn)))))
}
