package main

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestPrintBothBackends runs the same PRINT in the shell's own engine
// and through `sluice server` (the server streams ksqlDB's PRINT lines,
// the remote shell reads them back): both print the same table.
func TestPrintBothBackends(t *testing.T) {
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "printed")
	testkafka.CreateTopic(t, brokers, topic, 1)
	at := time.Date(2026, 5, 24, 12, 0, 0, 0, time.UTC)
	testkafka.Produce(t, brokers,
		&kgo.Record{Topic: topic, Key: []byte("a"), Value: []byte(`{"n":1,"s":"abc"}`), Timestamp: at},
		&kgo.Record{Topic: topic, Value: []byte(`{"n":2}`), Timestamp: at.Add(1500 * time.Millisecond)},
		&kgo.Record{Topic: topic, Key: []byte("c"), Timestamp: at.Add(time.Hour)})
	stmt := "PRINT '" + topic + "' FROM BEGINNING INTERVAL 1 LIMIT 3;"
	// Rows print as a push query's do, as they arrive, in columns of a
	// width fixed with the header (ROWTIME's fits its text); a longer
	// value wraps inside its column.
	want := `+---------------------------+------------+------------+------------+
| ROWTIME                   | PARTITION  | KEY        | VALUE      |
+---------------------------+------------+------------+------------+
| 2026/05/24 12:00:00.000 Z | 0          | a          | {"n":1,"s" |
|                           |            |            | :"abc"}    |
| 2026/05/24 12:00:01.500 Z | 0          | NULL       | {"n":2}    |
| 2026/05/24 13:00:00.000 Z | 0          | c          | NULL       |
+---------------------------+------------+------------+------------+
`

	out, errOut, code := runSluice(t, "shell", "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"), "-e", stmt)
	if code != 0 || out != want {
		t.Errorf("embedded: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}

	srv := startSluice(t, "server", "--listen", "127.0.0.1:0", "--brokers", brokers, "--data-dir", t.TempDir(),
		"--service-id", testkafka.Name(t, "svc"))
	var base string
	srv.waitFor(t, time.Minute, "the listening line", func(lines []string) bool {
		for _, l := range lines {
			if a, ok := strings.CutPrefix(l, "sluice server listening on "); ok {
				base = a
				return true
			}
		}
		return false
	})
	out, errOut, code = runSluice(t, "shell", "--server", base, "-e", stmt)
	if code != 0 || out != want {
		t.Errorf("--server: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	out, errOut, code = runSluice(t, "shell", "--server", base, "-e", "PRINT nope;")
	if wantErr := "Could not find topic 'nope', or the KSQL user does not have permissions to list the topic. Topic names are case-sensitive."; code != 2 || out != "" || !strings.Contains(errOut, wantErr) {
		t.Errorf("--server, missing topic: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}
