package main

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/broker"
)

// TestRunSurvivesBrokerClosingFirstRequest: the broker closes the
// connection carrying the run's first CreateTopics without answering, as
// a Kafka node killed under a fresh connection does (CreateTopics opens a
// connection of its own). franz-go's default gives up on such a "first
// read EOF"; the run must retry it and go on to print its rows, the topic
// created once.
func TestRunSurvivesBrokerClosingFirstRequest(t *testing.T) {
	b, err := broker.Start(broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var closed atomic.Int32
	// A control function runs once unless kept: only the first
	// CreateTopics is cut off.
	b.Cluster().ControlKey(int16(kmsg.CreateTopics), func(kmsg.Request) (kmsg.Response, error, bool) {
		closed.Add(1)
		return nil, errors.New("broker going away"), true
	})

	r := startSluice(t, "run", "cmd/sluice/testdata/pings.sql", "--brokers", b.Addr(), "--data-dir", t.TempDir())
	const header = "| HOST       | DOUBLE_MS  |"
	r.waitFor(t, 30*time.Second, "2 rows", func(lines []string) bool { return len(tableRows(lines, header)) >= 2 })
	r.stop(t, 30*time.Second)
	if diff := cmp.Diff([][]string{{"b", "300"}, {"c", "600"}}, tableRows(r.all, header)); diff != "" {
		t.Errorf("rows (-want +got):\n%s\nstdout:\n%s\nstderr:\n%s", diff, strings.Join(r.all, "\n"), r.stderr.String())
	}
	if n := closed.Load(); n != 1 {
		t.Errorf("the broker cut off %d CreateTopics requests, want 1", n)
	}
}
