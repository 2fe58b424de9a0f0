package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// runShell runs `sluice shell ARGS` with stdin and no terminal, against
// the test's Kafka, and returns stdout, stderr and the exit code.
func runShell(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	args = append([]string{"shell", "--brokers", testkafka.Brokers(t), "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc")}, args...)
	return runSluiceIn(t, t.TempDir(), stdin, args...)
}

// TestShellNonInteractive runs the shell as scripts do: statements from
// -e or stdin, no terminal, so no prompt, banner or colours; results in
// the chosen format; the first error ends it with exit code 2 and the
// statement's line with a caret on stderr.
func TestShellNonInteractive(t *testing.T) {
	topic, topic2, topic3 := testkafka.Name(t, "shell"), testkafka.Name(t, "shell"), testkafka.Name(t, "shell")
	dir := t.TempDir()
	script := filepath.Join(dir, "more.sql")
	if err := os.WriteFile(script, []byte("INSERT INTO s VALUES ('c', 3, 0.5);\nSELECT id, d FROM s EMIT CHANGES LIMIT 3;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spool := filepath.Join(dir, "spool.txt")
	create := func(topic string) string {
		return "CREATE STREAM s (id VARCHAR KEY, v INT, d DOUBLE)\n  WITH (KAFKA_TOPIC='" + topic + "', VALUE_FORMAT='JSON', PARTITIONS=1);\n"
	}
	tests := []struct {
		name, stdin string
		args        []string
		stdout      string
		stderr      string
		code        int
	}{
		{
			name: "-e",
			args: []string{"-e", create(topic) + `INSERT INTO s VALUES ('a', 1, 2.0); INSERT INTO s (id, v) VALUES ('b', NULL);
SET 'auto.offset.reset'='earliest';
SELECT * FROM s EMIT CHANGES LIMIT 2;
DESCRIBE s;
\format csv
SHOW STREAMS;
\format json
SELECT id, v FROM s EMIT CHANGES LIMIT 2`},
			stdout: `Stream created
1 row inserted
1 row inserted
Successfully changed local property 'auto.offset.reset' to 'earliest'.
+------------+------------+------------+
| ID         | V          | D          |
+------------+------------+------------+
| a          | 1          | 2.0        |
| b          | NULL       | NULL       |
+------------+------------+------------+
Name          : S
Type          : STREAM
Kafka topic   : ` + topic + ` (partitions: 1)
Key format    : KAFKA
Value format  : JSON
+-------+--------------+
| Field | Type         |
+-------+--------------+
| ID    | STRING (key) |
| V     | INTEGER      |
| D     | DOUBLE       |
+-------+--------------+
Stream Name,Kafka Topic,Key Format,Value Format,Windowed
S,` + topic + `,KAFKA,JSON,false
{"ID":"a","V":1}
{"ID":"b","V":null}
`,
		},
		{
			name: "stdin script with RUN SCRIPT and SPOOL",
			stdin: create(topic2) + "INSERT INTO s VALUES ('a', 1, 2.0);\nINSERT INTO s VALUES ('b', 2, NULL);\n" +
				"SET 'auto.offset.reset' = 'earliest';\nSPOOL '" + spool + "'\nRUN SCRIPT '" + script + "';\nSPOOL OFF\n-- the end\n",
			stdout: `Stream created
1 row inserted
1 row inserted
Successfully changed local property 'auto.offset.reset' to 'earliest'.
1 row inserted
+------------+------------+
| ID         | D          |
+------------+------------+
| a          | 2.0        |
| b          | NULL       |
| c          | 0.5        |
+------------+------------+
`,
		},
		{
			name:   "parse error stops the script",
			stdin:  "SHOW TABLES;\nSELECT *\n  FORM s;\nSHOW STREAMS;\n",
			stdout: "+------------+-------------+------------+--------------+----------+\n| Table Name | Kafka Topic | Key Format | Value Format | Windowed |\n+------------+-------------+------------+--------------+----------+\n+------------+-------------+------------+--------------+----------+\n",
			stderr: "line 2:3: Syntax Error\nExpecting {'FROM'}\n  FORM s;\n  ^\n",
			code:   2,
		},
		{
			name: "bad WITH value: the caret is under the value",
			args: []string{"-e", "CREATE STREAM s (id INT)\n  WITH (KAFKA_TOPIC='t', value_format='jsn', PARTITIONS=1);"},
			stderr: "line 2:39: invalid statement: value format: Unknown format: JSN (supported formats are JSON, KAFKA, DELIMITED, NONE, AVRO, PROTOBUF, PROTOBUF_NOSR, JSON_SR)\n" +
				"  WITH (KAFKA_TOPIC='t', value_format='jsn', PARTITIONS=1);\n" +
				"                                      ^\n",
			code: 2,
		},
		{
			name:   "bad WITH value of CREATE … AS SELECT",
			args:   []string{"-e", "CREATE STREAM s (id INT) WITH (KAFKA_TOPIC='" + topic3 + "', VALUE_FORMAT='JSON', PARTITIONS=1);\nCREATE STREAM s2 WITH (FORMAT='json', PARTITIONS=0) AS SELECT * FROM s;"},
			stdout: "Stream created\n",
			stderr: "line 1:50: invalid statement: PARTITIONS must be a positive integer, got \"0\"\n" +
				"CREATE STREAM s2 WITH (FORMAT='json', PARTITIONS=0) AS SELECT * FROM s;\n" +
				"                                                 ^\n",
			code: 2,
		},
		{
			name:   "planning error with -e",
			args:   []string{"-e", "SELECT nope FROM nowhere EMIT CHANGES; SHOW TABLES;"},
			stderr: "line 1:18: NOWHERE does not exist\nSELECT nope FROM nowhere EMIT CHANGES;\n                 ^\n",
			code:   2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runShell(t, tc.stdin, tc.args...)
			if stdout != tc.stdout || code != tc.code || stderr != tc.stderr {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", code, tc.code, stdout, tc.stdout, stderr, tc.stderr)
			}
		})
	}
	got, err := os.ReadFile(spool)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 row inserted\n+------------+------------+\n| ID         | D          |\n+------------+------------+\n| a          | 2.0        |\n| b          | NULL       |\n| c          | 0.5        |\n+------------+------------+\n"; string(got) != want {
		t.Errorf("spool file:\n%s\nwant:\n%s", got, want)
	}
}

// TestShellScriptInterrupt: in a script, SIGINT (Ctrl-C) stops the
// running push query and the script goes on to its end, exit 0.
func TestShellScriptInterrupt(t *testing.T) {
	topic := testkafka.Name(t, "shell")
	p := startSluice(t, "shell", "--brokers", testkafka.Brokers(t), "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"), "-e",
		"CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='"+topic+"', VALUE_FORMAT='JSON', PARTITIONS=1);\n"+
			"SELECT * FROM s EMIT CHANGES;\n\\format csv\nSHOW STREAMS;")
	p.waitFor(t, time.Minute, "the query's header", func(lines []string) bool { return len(lines) >= 4 })
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.stopping = true
	for line := range p.lines {
		p.all = append(p.all, line)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\nstderr:\n%s", err, p.stderr.String())
	}
	want := []string{"Stream created",
		"+------------+------------+", "| ID         | V          |", "+------------+------------+", "+------------+------------+",
		"Query terminated", "Stream Name,Kafka Topic,Key Format,Value Format,Windowed", "S," + topic + ",KAFKA,JSON,false"}
	if got := strings.Join(p.all, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestShellCatalogPersists: the embedded shell keeps its catalog in the
// service's command topic, so a stream created in one session is there
// in the next (same broker and service id).
func TestShellCatalogPersists(t *testing.T) {
	brokers, svc, dir, topic := testkafka.Brokers(t), testkafka.Name(t, "svc"), t.TempDir(), testkafka.Name(t, "shell")
	run := func(statements string) string {
		t.Helper()
		out, err := exec.Command(sluiceBin, "shell", "--brokers", brokers, "--data-dir", dir, "--service-id", svc, "-e", statements).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return string(out)
	}
	run("CREATE STREAM kept (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='" + topic + "', VALUE_FORMAT='JSON', PARTITIONS=1);")
	if got, want := run("\\format csv\nSHOW STREAMS;"), "Stream Name,Kafka Topic,Key Format,Value Format,Windowed\nKEPT,"+topic+",KAFKA,JSON,false\n"; got != want {
		t.Errorf("second session:\n%s\nwant:\n%s", got, want)
	}
}

// TestShellEmbeddedBrokerScript: a script run on the embedded broker
// prints only what its statements print. The embedded registry's
// address, like the broker's, belongs to the interactive banner; a busy
// --schema-registry-listen falls back to a free port without a word.
func TestShellEmbeddedBrokerScript(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	out, errOut, code := runSluice(t, "shell", "--data-dir", t.TempDir(), "--schema-registry-listen", busy.Addr().String(), "-e", "SHOW TYPES;")
	want := "+-----------+--------+\n| Type Name | Schema |\n+-----------+--------+\n+-----------+--------+\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr (want none):\n%s", code, out, want, errOut)
	}
}
