// Package testudf builds the WebAssembly modules the user-defined function
// tests call, from source, once per test binary run: the Go wasip1 module
// of udf/testdata/gofuncs always (the Go toolchain running the tests
// builds it), and small hand-assembled modules for what Go cannot express
// (a WebAssembly trap).
package testudf

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	goOnce sync.Once
	goWasm []byte
	goErr  error
	goLog  []byte
)

// GoModule returns the bytes of udf/testdata/gofuncs built with
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
func GoModule(t testing.TB) []byte {
	t.Helper()
	goOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "sluice-testudf-")
		if err != nil {
			goErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "gofuncs.wasm")
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			gobin = "go"
		}
		cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-o", out, "./udf/testdata/gofuncs")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if goLog, goErr = cmd.CombinedOutput(); goErr != nil {
			return
		}
		goWasm, goErr = os.ReadFile(out)
	})
	if goErr != nil {
		t.Fatalf("build the Go wasip1 test module: %v\n%s", goErr, goLog)
	}
	return goWasm
}

// TrapModule is a module exporting trap13(nulls i64, x i64) -> i64, which
// returns x and executes `unreachable` (a trap) when x is 13.
var TrapModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
	0x01, 0x07, 0x01, 0x60, 0x02, 0x7e, 0x7e, 0x01, 0x7e, // type: (i64, i64) -> i64
	0x03, 0x02, 0x01, 0x00, // function 0 has type 0
	0x07, 0x0a, 0x01, 0x06, 't', 'r', 'a', 'p', '1', '3', 0x00, 0x00, // export "trap13"
	0x0a, 0x0f, 0x01, 0x0d, 0x00, // code: one body of 13 bytes, no locals
	0x20, 0x01, 0x42, 0x0d, 0x51, // local.get 1; i64.const 13; i64.eq
	0x04, 0x40, 0x00, 0x0b, // if unreachable end
	0x20, 0x01, 0x0b, // local.get 1; end
}
