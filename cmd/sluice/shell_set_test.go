package main

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestShellSetBothBackends: the shell's own engine and a shell of
// `sluice server` refuse the same SET in ksqlDB's words and stop the
// script there, and under exactly-once both show the commit interval an
// exactly-once query runs with (the remote shell keeps its properties
// and sends them with each request); both take and list a Kafka config
// the property table does not declare, as ksqlDB does.
func TestShellSetBothBackends(t *testing.T) {
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
		out, errOut, code := runSluiceStdin(t, "SET 'commit.interval.ms'='abc';\nSHOW STREAMS;\n", append([]string{"shell"}, tc.args...)...)
		if want := "Invalid value abc for configuration commit.interval.ms: Not a number of type LONG\n"; code != 2 || out != "" || errOut != want {
			t.Errorf("%s, a bad value: exit %d, stdout %q, stderr %q; want 2, nothing, %q", tc.name, code, out, errOut, want)
		}

		out, errOut, code = runSluiceStdin(t, "\\format csv\nSET 'processing.guarantee'='exactly_once_v2';\nSHOW PROPERTIES;\n", append([]string{"shell"}, tc.args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("%s, exactly once: exit %d, stderr %q", tc.name, code, errOut)
		}
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "commit.interval.ms,") || strings.HasPrefix(l, "processing.guarantee,") || strings.HasPrefix(l, "Successfully") {
				got = append(got, l)
			}
		}
		want := []string{"Successfully changed local property 'processing.guarantee' to 'exactly_once_v2'.", "commit.interval.ms,100", "processing.guarantee,exactly_once_v2"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s, exactly once: %q, want %q; stdout:\n%s", tc.name, got, want, out)
		}

		// Kafka configs the table does not declare: taken as ksqlDB takes
		// them, and listed; an unknown client config is refused.
		out, errOut, code = runSluiceStdin(t, "\\format csv\nSET 'cache.max.bytes.buffering'='0';\nSET 'consumer.max.poll.records'='500';\nSHOW PROPERTIES;\n", append([]string{"shell"}, tc.args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("%s, Kafka configs: exit %d, stderr %q", tc.name, code, errOut)
		}
		got = nil
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "cache.max.bytes.buffering,") || strings.HasPrefix(l, "consumer.max.poll.records,") || strings.HasPrefix(l, "Successfully") {
				got = append(got, l)
			}
		}
		want = []string{"Successfully changed local property 'cache.max.bytes.buffering' to '0'.", "Successfully changed local property 'consumer.max.poll.records' to '500'.", "cache.max.bytes.buffering,0", "consumer.max.poll.records,500"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s, Kafka configs: %q, want %q; stdout:\n%s", tc.name, got, want, out)
		}
		out, errOut, code = runSluiceStdin(t, "SET 'consumer.nope'='1';\nSHOW STREAMS;\n", append([]string{"shell"}, tc.args...)...)
		if want := "Not recognizable as ksql, streams, consumer, or producer property: 'consumer.nope'\n"; code != 2 || out != "" || errOut != want {
			t.Errorf("%s, an unknown consumer config: exit %d, stdout %q, stderr %q; want 2, nothing, %q", tc.name, code, out, errOut, want)
		}
	}
}
