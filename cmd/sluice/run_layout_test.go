package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestRunPrintsAsShell: `sluice run` prints SHOW, DESCRIBE, EXPLAIN and
// DESCRIBE FUNCTION with the shell's layout, so a script's results read
// the same in both (run printed the engine's own text before), and both
// print DESCRIBE … EXTENDED's details of the running query (the shell
// left them out before).
func TestRunPrintsAsShell(t *testing.T) {
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "layout")
	statements := "DESCRIBE layout_s;\nDESCRIBE layout_out EXTENDED;\nSHOW STREAMS;\nEXPLAIN SELECT id, v FROM layout_s WHERE v > 1 EMIT CHANGES;\nDESCRIBE FUNCTION sum;\n"
	create := fmt.Sprintf("CREATE STREAM layout_s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);\n"+
		"CREATE STREAM layout_out WITH (KAFKA_TOPIC='%[1]s_out') AS SELECT id, v FROM layout_s;\n", topic)

	shellOut, errOut, code := runSluice(t, "shell", "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"),
		"-e", create+statements)
	// The shell prints the CREATEs' messages, which a run logs.
	lines := strings.SplitAfterN(shellOut, "\n", 3)
	if code != 0 || len(lines) != 3 || lines[0] != "Stream created\n" || !strings.HasPrefix(lines[1], "Created query with ID ") {
		t.Fatalf("shell: exit %d, stderr %q, stdout:\n%s", code, errOut, shellOut)
	}
	want := lines[2]
	for _, line := range []string{"Name          : LAYOUT_S\n", "Kafka topic   : " + topic + " (partitions: 1)\n", "Overview      : The sum of the non-NULL values.\n",
		"\nRecords in: 0, out: 0, late and dropped: 0\n", "\nTasks on this instance:\n (none yet: tasks start when their partition has records)\n"} {
		if !strings.Contains(want, line) {
			t.Fatalf("the shell's output lacks %q:\n%s", line, want)
		}
	}

	file := filepath.Join(t.TempDir(), "layout.sql")
	if err := os.WriteFile(file, []byte(create+statements), 0o644); err != nil {
		t.Fatal(err)
	}
	run := startSluice(t, "run", file, "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"))
	run.waitFor(t, time.Minute, "DESCRIBE FUNCTION's overview", func(lines []string) bool {
		return len(lines) > 0 && strings.HasPrefix(lines[len(lines)-1], "Overview")
	})
	run.stop(t, time.Minute)
	if got := strings.Join(run.all, "\n") + "\n"; got != want {
		t.Errorf("sluice run printed:\n%s\nwant, as the shell prints:\n%s", got, want)
	}
}
