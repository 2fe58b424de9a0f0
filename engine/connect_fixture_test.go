package engine_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// startConnect starts a Kafka Connect worker on brokers with
// scripts/connect for one test and gives its REST URL, or skips the test
// unless SLUICE_TEST_CDC=1 and the broker is Apache Kafka.
//
// TODO(merge): replace with part A's internal/testcdc.StartConnect.
func startConnect(t *testing.T, brokers string) string {
	t.Helper()
	if os.Getenv("SLUICE_TEST_CDC") != "1" || !testkafka.External() {
		t.Skip("set SLUICE_TEST_CDC=1 and SLUICE_TEST_BROKERS (Apache Kafka) to run the tests on a real Kafka Connect (scripts/connect start)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "connect")
	if s := os.Getenv("SLUICE_CONNECT_SCRIPT"); s != "" {
		script = s
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(script, args...)
		cmd.Env = append(os.Environ(), "SLUICE_CONNECT_DIR="+dir)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("scripts/connect %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String()
	}
	out := run("start", brokers)
	t.Cleanup(func() { run("stop") })
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
