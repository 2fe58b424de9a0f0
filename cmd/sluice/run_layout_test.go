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
// the same in both (run printed the engine's own text before).
func TestRunPrintsAsShell(t *testing.T) {
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "layout")
	statements := "DESCRIBE layout_s;\nSHOW STREAMS;\nEXPLAIN SELECT id, v FROM layout_s WHERE v > 1 EMIT CHANGES;\nDESCRIBE FUNCTION sum;\n"
	create := fmt.Sprintf("CREATE STREAM layout_s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);\n", topic)

	shellOut, errOut, code := runSluice(t, "shell", "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"),
		"-e", create+statements)
	created, want, ok := strings.Cut(shellOut, "\n")
	if code != 0 || !ok || created != "Stream created" {
		t.Fatalf("shell: exit %d, stderr %q, stdout:\n%s", code, errOut, shellOut)
	}
	for _, line := range []string{"Name          : LAYOUT_S\n", "Kafka topic   : " + topic + " (partitions: 1)\n", "Overview      : The sum of the non-NULL values.\n"} {
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
