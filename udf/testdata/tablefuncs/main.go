// Command tablefuncs is a WebAssembly module of test table functions and
// VARIADIC functions following Sluice's calling convention (see package
// udf), built by the tests with GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared.
package main

import (
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/wasmguest"
)

func main() {}

// split(s STRING, sep STRING) RETURNS ARRAY<STRING>: a row per part; a
// NULL s gives NULL (no rows).
//
//go:wasmexport split
func split(nulls int64, sp, sn, pp, pn int32) int64 {
	if nulls != 0 {
		wasmguest.Null()
		return 0
	}
	out := []byte{'['}
	for i, part := range strings.Split(string(wasmguest.Bytes(sp, sn)), string(wasmguest.Bytes(pp, pn))) {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, part)
	}
	return wasmguest.Return(append(out, ']'))
}

// upto(n INT) RETURNS ARRAY<INT>: the rows 1…n; n = 13 traps.
//
//go:wasmexport upto
func upto(nulls int64, n int32) int64 {
	if wasmguest.IsNull(nulls, 0) {
		wasmguest.Null()
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
	return wasmguest.Return(append(out, ']'))
}

// join_all(sep STRING, VARIADIC parts ARRAY<STRING>) RETURNS STRING: the
// parts joined by sep, NULL parts as "null"; it tells how many it got.
//
//go:wasmexport join_all
func joinAll(nulls int64, sp, sn, ap, an int32) int64 {
	if wasmguest.IsNull(nulls, 1) {
		return wasmguest.Return([]byte("no array"))
	}
	// The elements are JSON strings without escapes, or null: the
	// tests' inputs are.
	var texts []string
	b := wasmguest.Bytes(ap, an)
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
	return wasmguest.Return([]byte(strconv.Itoa(len(texts)) + ":" + strings.Join(texts, string(wasmguest.Bytes(sp, sn)))))
}
