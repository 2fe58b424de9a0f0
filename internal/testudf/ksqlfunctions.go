package testudf

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// KsqlFunctionsDir makes dir a --udf-dir of ksqlDB's test-only functions:
// testrunner/testdata/ksqlfunctions's functions.sql beside its module,
// built from source with GOOS=wasip1 (as scripts/conformance builds it).
func KsqlFunctionsDir(t testing.TB, dir string) {
	t.Helper()
	src := filepath.Join(repoRoot(), "testrunner", "testdata", "ksqlfunctions")
	if err := goBuild(src, filepath.Join(dir, "ksqlfunctions.wasm")); err != nil {
		t.Fatalf("build ksqlDB's test functions: %v", err)
	}
	manifest, err := os.ReadFile(filepath.Join(src, "functions.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "functions.sql"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	tableOnce sync.Once
	tableWasm []byte
	tableErr  error
)

// TableModule returns udf/testdata/tablefuncs built with GOOS=wasip1: table
// functions and a VARIADIC function.
func TableModule(t testing.TB) []byte {
	t.Helper()
	tableOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sluice-testudf-table-")
		if err != nil {
			tableErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "tablefuncs.wasm")
		if tableErr = goBuild(filepath.Join(repoRoot(), "udf", "testdata", "tablefuncs"), out); tableErr == nil {
			tableWasm, tableErr = os.ReadFile(out)
		}
	})
	if tableErr != nil {
		t.Fatalf("build the table function test module: %v", tableErr)
	}
	return tableWasm
}

// goBuild builds the Go package in dir as a wasip1 module into out.
func goBuild(dir, out string) error {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if log, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, log)
	}
	return nil
}
