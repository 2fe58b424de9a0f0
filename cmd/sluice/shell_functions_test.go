package main

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestShellFunctionsBothBackends: SHOW FUNCTIONS, LIST FUNCTIONS and
// DESCRIBE FUNCTION print the same from the shell's own engine and
// through `sluice server`, from -e and from a script on stdin (they
// printed nothing: the shell had no layout for function entities).
func TestShellFunctionsBothBackends(t *testing.T) {
	var list strings.Builder
	list.WriteString("Function Name,Type,Category\n")
	for _, f := range expr.Functions() {
		list.WriteString(f.Name + "," + f.Type + "," + f.Category + "\n")
	}
	if !strings.Contains(list.String(), "\nABS,SCALAR,MATHEMATICAL\n") || !strings.Contains(list.String(), "\nSUM,AGGREGATE,AGGREGATE\n") {
		t.Fatalf("expr.Functions lacks ABS or SUM:\n%s", list.String())
	}
	script := "\\format csv\nSHOW FUNCTIONS;\nLIST FUNCTIONS;\nDESCRIBE FUNCTION sum;\n"
	want := list.String() + list.String() +
		"Name          : SUM\nType          : AGGREGATE\nOverview      : The sum of the non-NULL values.\n"

	brokers := testkafka.Brokers(t)
	base := startServer(t, "--brokers", brokers, "--data-dir", t.TempDir(),
		"--service-id", testkafka.Name(t, "svc")).base
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"embedded", []string{"--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc")}},
		{"--server", []string{"--server", base}},
	} {
		out, errOut, code := runSluice(t, append(append([]string{"shell"}, tc.args...), "-e", script)...)
		if code != 0 || out != want {
			t.Errorf("%s -e: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", tc.name, code, errOut, out, want)
		}
		out, errOut, code = runSluiceStdin(t, script, append([]string{"shell"}, tc.args...)...)
		if code != 0 || out != want {
			t.Errorf("%s stdin: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", tc.name, code, errOut, out, want)
		}
	}
}
