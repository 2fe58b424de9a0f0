package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/internal/testudf"
)

// TestUDFDir starts `sluice server --udf-dir` on ksqlDB's test functions
// (a table function, VARIADIC and fixed overloads): a query calls them;
// DESCRIBE FUNCTION names the manifest line they come from; a statement
// cannot redefine them; and nothing of them enters the command topic (the
// module, 3 MB, would not fit a command record anyway).
func TestUDFDir(t *testing.T) {
	dir := t.TempDir()
	testudf.KsqlFunctionsDir(t, dir)
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	in, out := testkafka.Name(t, "udfdir_in"), testkafka.Name(t, "udfdir_out")
	srv := startServer(t, "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", svc, "--udf-dir", dir)
	defer srv.stop(t, 30*time.Second)

	stdout, stderr, code := runSluice(t, "shell", "--server", srv.base, "-e", `
		CREATE STREAM `+in+` (k VARCHAR KEY, f0 INT, b BIGINT) WITH (kafka_topic='`+in+`', value_format='JSON', partitions=1);
		SET 'auto.offset.reset'='earliest';
		CREATE STREAM `+out+` AS SELECT k, TEST_UDTF(f0) AS x, TEST_UDF(b, b, b) AS v, TEST_UDF(b, 's') AS w FROM `+in+`;
		INSERT INTO `+in+` (k, f0, b) VALUES ('a', 5, 1);`)
	requireExit(t, code, 0, stderr+stdout)
	var got []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server's log:\n%s", srv.stderr.String())
		}
	})
	testkafka.Await(t, 60*time.Second, "a record in "+out, func() bool {
		got = nil
		for _, r := range testkafka.ReadAll(t, brokers, out) {
			got = append(got, string(r.Key)+" "+string(r.Value))
		}
		return len(got) > 0
	})
	if diff := cmp.Diff([]string{`a {"X":5,"V":"doStuffLongVarargs","W":"doStuffLongString"}`}, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", out, diff)
	}

	stdout, stderr, code = runSluice(t, "shell", "--server", srv.base, "-e", "DESCRIBE FUNCTION throwing_udtf;")
	requireExit(t, code, 0, stderr)
	manifest := filepath.Join(dir, "functions.sql")
	if want := "udf-dir " + manifest + ":"; !strings.Contains(stdout, want) || !strings.Contains(stdout, "THROWING_UDTF(SHOULD_THROW BOOLEAN)") ||
		!strings.HasPrefix(stdout, "Name          : THROWING_UDTF\nType          : TABLE\n") {
		t.Errorf("DESCRIBE FUNCTION printed:\n%s\nwant the name, type TABLE, the signature and %q", stdout, want)
	}
	stdout, stderr, code = runSluice(t, "shell", "--server", srv.base, "-e", "DESCRIBE FUNCTION test_udf;")
	requireExit(t, code, 0, stderr)
	if want := "Variation   : TEST_UDF(VARIADIC LONGS ARRAY<BIGINT>)"; !strings.Contains(stdout, want) {
		t.Errorf("DESCRIBE FUNCTION printed:\n%s\nwant %q", stdout, want)
	}
	_, stderr, code = runSluice(t, "shell", "--server", srv.base, "-e",
		"CREATE OR REPLACE FUNCTION test_udf(a INT, b STRING) RETURNS STRING LANGUAGE WASM WITH (MODULE='AGFzbQEAAAA=', EXPORT='f');")
	if want := "Function 'TEST_UDF' comes from this instance's --udf-dir (" + manifest + ":5) and cannot be redefined by a statement"; code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("CREATE OR REPLACE of a --udf-dir function: exit %d, stderr %q, want %q", code, stderr, want)
	}
	_, stderr, code = runSluice(t, "shell", "--server", srv.base, "--udf-dir", dir, "-e", "SHOW FUNCTIONS;")
	if want := "sluice shell: --udf-dir loads functions into the shell's own engine; with --server, give it to sluice server"; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("shell --server --udf-dir: exit %d, stderr %q, want 2 and %q", code, stderr, want)
	}
	for _, r := range testkafka.ReadAll(t, brokers, engine.CommandTopicName(svc)) {
		if strings.Contains(string(r.Value), "FUNCTION") {
			t.Errorf("a function in the command topic: %.200s", r.Value)
		}
	}
}

// TestUDFDirBadManifest: a --udf-dir whose manifest does not parse or
// names a module that is not there stops the server at start, naming the
// manifest and the line.
func TestUDFDirBadManifest(t *testing.T) {
	brokers := testkafka.Brokers(t)
	for _, c := range []struct{ name, manifest, want string }{
		{"missing module", "-- functions\nCREATE FUNCTION f(x INT) RETURNS INT LANGUAGE WASM WITH (PATH='gone.wasm', EXPORT='f');\n",
			"sluice: udf-dir: DIR/functions.sql: line 2:58: invalid statement: PATH: open DIR/gone.wasm: no such file or directory\n" +
				"CREATE FUNCTION f(x INT) RETURNS INT LANGUAGE WASM WITH (PATH='gone.wasm', EXPORT='f');\n" +
				"                                                         ^\n"},
		{"syntax", "CREATE FUNCTION f(x INT) RETURNS INT LANGUAGE WASM WITH (PATH='f.wasm', EXPORT='f');\nCREATE FUNCTON g(x INT) RETURNS INT;\n",
			"sluice: udf-dir: DIR/functions.sql: line 2:8: Syntax Error\n"},
		{"not a function", "CREATE STREAM s (x INT) WITH (kafka_topic='s', value_format='JSON');\n",
			"sluice: udf-dir: DIR/functions.sql: line 1:1: invalid statement: functions.sql holds CREATE FUNCTION statements only\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "functions.sql"), []byte(c.manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runSluice(t, "server", "--listen", "127.0.0.1:0", "--brokers", brokers, "--data-dir", t.TempDir(),
				"--service-id", testkafka.Name(t, "svc"), "--udf-dir", dir)
			got := strings.ReplaceAll(stderr, dir, "DIR")
			if code == 0 || !strings.HasPrefix(got, c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant it to start with:\n%s", code, got, c.want)
			}
		})
	}
}
