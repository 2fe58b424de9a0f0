//go:build wasip1

package wasmguest

import "unsafe"

//go:wasmimport sluice result_null
func resultNull()

// args is the buffer the host writes a call's arguments into; result
// keeps a result's bytes alive until the host has read them.
var args, result []byte

//go:wasmexport sluice_alloc
func alloc(n int32) int32 {
	if cap(args) < int(n) {
		args = make([]byte, n)
	}
	args = args[:n]
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(args))))
}

// Bytes is the argument at pointer p, n bytes long.
func Bytes(p, n int32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(uintptr(p))), n) }

// Return hands b to the host as a value in memory: pointer << 32 | length.
func Return(b []byte) int64 {
	result = append(result[:0], b...)
	if len(result) == 0 {
		return 0
	}
	return int64(uintptr(unsafe.Pointer(unsafe.SliceData(result))))<<32 | int64(len(result))
}

// Null makes the call's result NULL; the function's return value is then
// ignored (it returns 0).
func Null() { resultNull() }

// IsNull reports whether argument i is NULL.
func IsNull(nulls int64, i uint) bool { return nulls&(1<<i) != 0 }
