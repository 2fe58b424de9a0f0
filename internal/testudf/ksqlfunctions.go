package testudf

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// KsqlFunctionsDir makes dir a --udf-dir of ksqlDB's test-only functions:
// testrunner/testdata/ksqlfunctions's functions.sql beside its module,
// built from source with GOOS=wasip1 (as scripts/conformance builds it).
func KsqlFunctionsDir(t testing.TB, dir string) {
	t.Helper()
	src := filepath.Join(repoRoot(), "testrunner", "testdata", "ksqlfunctions")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "ksqlfunctions.wasm"), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build ksqlDB's test functions: %v\n%s", err, out)
	}
	manifest, err := os.ReadFile(filepath.Join(src, "functions.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "functions.sql"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
}
