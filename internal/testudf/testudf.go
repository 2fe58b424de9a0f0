// Package testudf builds the WebAssembly modules the user-defined function
// tests call, from source, once per test binary run: the Go wasip1 module
// of udf/testdata/gofuncs always (the Go toolchain running the tests
// builds it); the C and AssemblyScript ones where their compilers are
// installed (scripts/install-udf-toolchains; the tests skip, saying why,
// otherwise); and a small hand-assembled module for what Go cannot
// express (a WebAssembly trap).
package testudf

import (
	"fmt"
	"math/rand/v2"
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
		root := repoRoot()
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

var (
	cOnce, asOnce sync.Once
	cWasm, asWasm []byte
	cSkip, asSkip string
	cErr, asErr   error
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// build runs a compiler whose output is out and returns the module.
func build(name string, args []string, dir, out string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if log, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s %v: %v\n%s", name, args, err, log)
	}
	return os.ReadFile(out)
}

// CModule returns udf/testdata/cfuncs built with clang's wasm32 target,
// or skips the test when clang or wasm-ld is missing
// (scripts/install-udf-toolchains installs them).
func CModule(t testing.TB) []byte {
	t.Helper()
	cOnce.Do(func() {
		for _, tool := range []string{"clang", "wasm-ld"} {
			if _, err := exec.LookPath(tool); err != nil {
				cSkip = tool + " is not installed (scripts/install-udf-toolchains installs clang and lld)"
				return
			}
		}
		dir, err := os.MkdirTemp("", "sluice-testudf-c-")
		if err != nil {
			cErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "cfuncs.wasm")
		cWasm, cErr = build("clang", []string{"--target=wasm32", "-nostdlib", "-O2", "-Wl,--no-entry", "-o", out, "funcs.c"},
			filepath.Join(repoRoot(), "udf", "testdata", "cfuncs"), out)
	})
	if cSkip != "" {
		skip(t, cSkip)
	}
	if cErr != nil {
		t.Fatalf("build the C test module: %v", cErr)
	}
	return cWasm
}

// ascPath finds AssemblyScript's compiler: in scripts/install-udf-toolchains'
// prefix ($SLUICE_ASSEMBLYSCRIPT, default ~/.cache/sluice/assemblyscript),
// else on the PATH.
func ascPath() (string, bool) {
	prefix := os.Getenv("SLUICE_ASSEMBLYSCRIPT")
	if prefix == "" {
		if home, err := os.UserHomeDir(); err == nil {
			prefix = filepath.Join(home, ".cache", "sluice", "assemblyscript")
		}
	}
	if p := filepath.Join(prefix, "node_modules", ".bin", "asc"); prefix != "" {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	p, err := exec.LookPath("asc")
	return p, err == nil
}

// ASModule returns udf/testdata/asfuncs built with AssemblyScript, or skips
// the test when it is not installed (scripts/install-udf-toolchains).
func ASModule(t testing.TB) []byte {
	t.Helper()
	asOnce.Do(func() {
		asc, ok := ascPath()
		if !ok {
			asSkip = "AssemblyScript's asc is not installed (scripts/install-udf-toolchains installs it)"
			return
		}
		if _, err := exec.LookPath("node"); err != nil {
			asSkip = "node is not installed, which AssemblyScript's asc runs on"
			return
		}
		dir, err := os.MkdirTemp("", "sluice-testudf-as-")
		if err != nil {
			asErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "asfuncs.wasm")
		asWasm, asErr = build(asc, []string{"funcs.ts", "-o", out, "--runtime", "stub", "--use", "abort=", "-O"},
			filepath.Join(repoRoot(), "udf", "testdata", "asfuncs"), out)
	})
	if asSkip != "" {
		skip(t, asSkip)
	}
	if asErr != nil {
		t.Fatalf("build the AssemblyScript test module: %v", asErr)
	}
	return asWasm
}

// skip skips the test for a missing toolchain, except under CI (CI set),
// where .ci/run installs them and a skip would hide their absence.
func skip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; CI is set, where scripts/install-udf-toolchains must have run", why)
	}
	t.Skip(why)
}

// BigModule is TrapModule's function in a module that also holds n bytes
// of incompressible data in its memory: a module too large to travel in
// a command record.
func BigModule(n int) []byte {
	uleb := func(b []byte, v int) []byte {
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if v == 0 {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	section := func(b []byte, id byte, body []byte) []byte {
		return append(uleb(append(b, id), len(body)), body...)
	}
	data := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{38}).Read(data)
	pages := (n + 65535) / 65536
	out := append([]byte{}, TrapModule[:8]...)
	out = append(out, TrapModule[8:21]...) // type and function sections
	out = section(out, 5, uleb([]byte{0x01, 0x00}, pages))
	out = append(out, TrapModule[21:]...) // export and code sections
	seg := uleb([]byte{0x01, 0x00, 0x41, 0x00, 0x0b}, n)
	return section(out, 11, append(seg, data...))
}
