// Package udf runs user-defined functions compiled to WebAssembly, on
// wazero (pure Go, no cgo), and defines the calling convention a module
// exports them with; and functions written inline in JavaScript, on goja.
//
// Place in the flow: CREATE FUNCTION … LANGUAGE WASM (engine/function.go)
// compiles the module once per (function, version) with a Runtime and
// keeps a *Function per overload in the planner's catalog; expr's binder
// resolves a call to it beside the built-ins, and each compiled call site
// (one per query) calls it through its own pool of module instances, one
// instance per goroutine at a time. A call that traps, runs past the time
// limit, exhausts the memory limit or returns a value that breaks the
// convention returns a *CallError; the instance is discarded and the
// query's task treats the input record as a bad record (exec/task.go).
//
// # Calling convention
//
// A function `f(a1 T1, …, an Tn) RETURNS R` is an export of the module
// whose WebAssembly signature is
//
//	(nulls i64, p1…, pn…) -> r
//
// nulls has bit i set when argument i (from 0) is NULL; the argument's
// own parameters are then zero. Each argument travels as
//
//	BOOLEAN                 i32 (0 or 1)
//	INT                     i32
//	BIGINT                  i64
//	DOUBLE                  f64
//	DATE                    i32, days since 1970-01-01
//	TIME                    i32, milliseconds since midnight
//	TIMESTAMP               i64, milliseconds since the epoch
//	STRING, BYTES, DECIMAL,
//	ARRAY, MAP, STRUCT      i32 pointer, i32 length: bytes in the module's
//	                        linear memory
//
// and the result the same way, except that a value in linear memory is
// returned as one i64: the pointer in the high 32 bits, the length in the
// low 32. The bytes are: STRING UTF-8; BYTES as they are; DECIMAL its
// plain decimal text ("-12.30"); ARRAY, MAP and STRUCT JSON text (an
// array; an object with string keys; an object keyed by the declared
// field names), whose elements are JSON as well: numbers for the numeric
// types and the time types (as above), strings for STRING, base64 strings
// for BYTES, DECIMAL as a JSON number, null for NULL.
//
// Argument bytes are written into a buffer the host asks the module for
// once per call, with the export
//
//	sluice_alloc(size i32) -> i32
//
// (only a module with a variable-length argument needs it); the arguments
// lie there one after another. The buffer needs to stay valid only until
// the function returns, so a module may hand out the same buffer each
// time. The result's bytes need to stay valid only until the function
// returns too.
//
// A NULL result is signalled by calling the host import
//
//	(import "sluice" "result_null" (func))
//
// before returning; the returned value is then ignored.
//
// A module may also export `_initialize` (a Go wasip1 -buildmode=c-shared
// or a WASI reactor module), which runs once when an instance starts. WASI
// is there as far as such a module needs to start: no files, no network,
// no environment variables, no arguments, standard output and error
// discarded, a fake clock.
//
// A bad return is a pointer and length outside the memory, a BOOLEAN other
// than 0 or 1, a STRING that is not UTF-8, a DECIMAL that does not parse
// or does not fit the declared type, JSON that does not parse into the
// declared type.
//
// Example (Go, GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared):
//
//	//go:wasmexport add_one
//	func addOne(nulls int64, x int64) int64 { return x + 1 }
//
//	CREATE FUNCTION add_one(x BIGINT) RETURNS BIGINT LANGUAGE WASM
//	  WITH (PATH='add_one.wasm', EXPORT='add_one');
//
// # JavaScript
//
// CREATE FUNCTION … LANGUAGE JAVASCRIPT AS $$ body $$ runs on goja (pure
// Go). The body is the body of a strict-mode function whose parameters
// are the SQL parameters' names in lower case; return gives the result.
// CompileJavaScript compiles it once per (function, version) into a
// JSProgram; each call site binds a JSFunction with its own pool of VMs.
// Values map to JavaScript as docs/udf.md tables them (BIGINT a Number,
// or a BigInt beyond 2^53; DECIMAL its text; BYTES a Uint8Array; DATE and
// TIMESTAMP a Date; ARRAY, MAP, STRUCT arrays and objects; NULL null). An
// exception, the time limit (Interrupt), the memory limit (the live
// heap's growth during a call, javascript_heap.go) or a result that does
// not convert is a *CallError, as for a module.
//
//	CREATE FUNCTION add_one(x BIGINT) RETURNS BIGINT LANGUAGE JAVASCRIPT
//	  AS $$ return x + 1; $$;
package udf
