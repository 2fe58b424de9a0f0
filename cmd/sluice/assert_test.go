package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunStopsAtFailedAssert runs a deployment script whose second
// ASSERT fails: the run stops there with the assertion's text, and the
// statement after it does not run.
func TestRunStopsAtFailedAssert(t *testing.T) {
	file := filepath.Join(t.TempDir(), "deploy.sql")
	script := "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='assert_s', VALUE_FORMAT='JSON', PARTITIONS=2);\n" +
		"ASSERT TOPIC assert_s WITH (PARTITIONS=2);\n" +
		"ASSERT TOPIC assert_missing TIMEOUT 0 SECONDS;\n" +
		"CREATE STREAM never WITH (KAFKA_TOPIC='never', VALUE_FORMAT='JSON', PARTITIONS=1);\n"
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runSluice(t, "run", file, "--data-dir", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "Topic assert_s exists\n") || !strings.HasSuffix(stderr, file+": Topic assert_missing does not exist\n") ||
		strings.Count(stderr, "Stream created") != 1 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}
