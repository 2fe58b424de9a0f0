package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestStallBrokerFrozen stops the broker under a running server query
// (SIGSTOP: connections stay open and nothing answers, as with a hung
// broker or a partitioned network) while the query works through a
// backlog. Within the stall timeout the server logs one WARN naming the
// query, sub-topology and partition, /ksql's SHOW QUERIES says STALLED and
// /metrics has sluice_query_stalled 1; after SIGCONT all of it clears and
// the backlog is finished. The broker is a `sluice broker` process of the
// test's own, whatever SLUICE_TEST_BROKERS says: freezing a cluster other
// tests share would stall them too.
func TestStallBrokerFrozen(t *testing.T) {
	b, brokers := startBroker(t)
	in := testkafka.Name(t, "frozen_in")
	const backlog = 600_000
	testkafka.CreateTopic(t, brokers, in, 1)
	prod := testkafka.Client(t, brokers, kgo.ProducerLinger(20*time.Millisecond), kgo.MaxBufferedRecords(100_000))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for lo := 0; lo < backlog; lo += 50_000 {
		recs := make([]*kgo.Record, 0, 50_000)
		for i := lo; i < lo+50_000; i++ {
			recs = append(recs, &kgo.Record{Topic: in, Key: []byte(strconv.Itoa(i % 1000)), Value: fmt.Appendf(nil, `{"v":%d}`, i)})
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	file := filepath.Join(t.TempDir(), "frozen.sql")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(`SET 'auto.offset.reset'='earliest';
SET 'sluice.stall.timeout'='2s';
SET 'num.stream.threads'='1';
CREATE STREAM %[1]s (id VARCHAR KEY, v BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON');
CREATE STREAM frozen_out AS SELECT id, v * 2 AS v2 FROM %[1]s;
`, in)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLUICE_LOG_LEVEL", "info")
	srv := startServer(t, "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "frozen_svc"), "--file", file)
	p, base := srv.proc, srv.base
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(method, path, body string) string {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	metric := func(name string) int64 {
		t.Helper()
		re := regexp.MustCompile(`(?m)^` + name + `\{query="CSAS_FROZEN_OUT"\} (\d+)`)
		if m := re.FindStringSubmatch(get("GET", "/metrics", "")); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return n
		}
		return -1
	}
	state := func() string {
		body := get("POST", "/ksql", `{"ksql":"SHOW QUERIES;"}`)
		if m := regexp.MustCompile(`"id":"CSAS_FROZEN_OUT".*?"state":"([A-Z_]+)"`).FindStringSubmatch(body); m != nil {
			return m[1]
		}
		return body
	}

	// The query works through the backlog; freeze the broker in the middle.
	testkafka.Await(t, time.Minute, "the query under way", func() bool { return metric("sluice_records_in_total") > 0 })
	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	continued := false
	defer func() {
		if !continued {
			_ = syscall.Kill(b.cmd.Process.Pid, syscall.SIGCONT)
		}
	}()
	if n := metric("sluice_records_in_total"); n >= backlog {
		t.Fatalf("the query read all %d records before the broker froze", n)
	}
	testkafka.Await(t, 15*time.Second, "sluice_query_stalled 1", func() bool { return metric("sluice_query_stalled") == 1 })
	t.Logf("stalled %s after the broker froze (timeout 2s)", time.Since(frozen).Round(time.Millisecond))
	if st := state(); st != "STALLED" {
		t.Errorf("SHOW QUERIES state %s, want STALLED", st)
	}
	warn := regexp.MustCompile(`level=WARN msg="query stalled: input waits but nothing is committed" query=CSAS_FROZEN_OUT subtopology=0 topic=` + in + ` partition=0 waiting_on=(fetch|produce|transaction) lag=\d+`)
	testkafka.Await(t, 5*time.Second, "the WARN", func() bool { return warn.MatchString(p.stderr.String()) })
	t.Logf("logged: %s", warn.FindString(p.stderr.String()))

	// The broker comes back: the stall clears and the backlog finishes.
	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	continued = true
	testkafka.Await(t, 90*time.Second, "sluice_query_stalled 0", func() bool { return metric("sluice_query_stalled") == 0 })
	testkafka.Await(t, 90*time.Second, "the whole backlog", func() bool { return metric("sluice_records_out_total") == backlog })
	if st := state(); st != "RUNNING" {
		t.Errorf("SHOW QUERIES state %s after the broker came back, want RUNNING", st)
	}
	if !strings.Contains(p.stderr.String(), "query progressing again") {
		t.Errorf("no INFO line saying the query progresses again:\n%s", tail(p.stderr.String(), 30))
	}
	if n := strings.Count(p.stderr.String(), "query stalled"); n != 1 {
		t.Errorf("%d WARN lines, want one:\n%s", n, tail(p.stderr.String(), 30))
	}
	p.stop(t, 30*time.Second)
}
