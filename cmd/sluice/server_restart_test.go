package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// serverProc is a running `sluice server` and its base URL.
type serverProc struct {
	*proc
	base string
}

func startServer(t *testing.T, args ...string) *serverProc {
	t.Helper()
	return waitServer(t, startSluice(t, append([]string{"server", "--listen", "127.0.0.1:0"}, args...)...))
}

// waitServer waits for a started `sluice server` to print where it listens.
func waitServer(t *testing.T, p *proc) *serverProc {
	t.Helper()
	s := &serverProc{proc: p}
	p.waitFor(t, time.Minute, "the listening line", func(lines []string) bool {
		for _, l := range lines {
			if a, ok := strings.CutPrefix(l, "sluice server listening on "); ok {
				s.base = a
				return true
			}
		}
		return false
	})
	return s
}

// post sends a request body to path and returns the status and body.
func (s *serverProc) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(s.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// pullUntil repeats a pull query until its rows (without the header
// line) are want, as state commits at most a commit interval later.
func (s *serverProc) pullUntil(t *testing.T, sql, want string) {
	t.Helper()
	var got string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, body := s.post(t, "/query-stream", `{"sql":"`+sql+`"}`)
		lines := strings.SplitN(strings.TrimSpace(body), "\n", 2)
		got = ""
		if len(lines) == 2 {
			got = lines[1]
		}
		if got == want {
			return
		}
	}
	t.Fatalf("%s: rows %q, want %q", sql, got, want)
}

// TestServerRestartAndSecondInstance: the catalog lives in the service's
// command topic, so a restarted server resumes its query (it keeps
// counting), and a second server of the same service, with its own data
// directory, has the same streams, tables and queries.
func TestServerRestartAndSecondInstance(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc, dir := testkafka.Name(t, "svc"), t.TempDir()
	topic := testkafka.Name(t, "visits")
	a := startServer(t, "--brokers", brokers, "--service-id", svc, "--data-dir", dir)
	if code, body := a.post(t, "/ksql", `{"ksql":"CREATE STREAM visits (page VARCHAR KEY, ms INT) WITH (KAFKA_TOPIC='`+topic+`', VALUE_FORMAT='JSON', PARTITIONS=1); CREATE TABLE visit_counts AS SELECT page, COUNT(*) AS n FROM visits GROUP BY page; INSERT INTO visits VALUES ('home', 1); INSERT INTO visits VALUES ('home', 2);","streamsProperties":{"auto.offset.reset":"earliest"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	a.pullUntil(t, "SELECT * FROM visit_counts WHERE page = 'home';", `["home",2]`)
	a.stop(t, 30*time.Second)

	// Restarted with no statements: the query runs again and counts on.
	a = startServer(t, "--brokers", brokers, "--service-id", svc, "--data-dir", dir)
	defer a.stop(t, 30*time.Second)
	if code, body := a.post(t, "/ksql", `{"ksql":"INSERT INTO visits VALUES ('home', 3);"}`); code != 200 {
		t.Fatalf("insert after restart: %d %s", code, body)
	}
	a.pullUntil(t, "SELECT * FROM visit_counts WHERE page = 'home';", `["home",3]`)

	// A second instance of the service sees the same catalog.
	b := startServer(t, "--brokers", brokers, "--service-id", svc, "--data-dir", t.TempDir())
	defer b.stop(t, 30*time.Second)
	for _, srv := range []*serverProc{a, b} {
		_, tables := srv.post(t, "/ksql", `{"ksql":"LIST TABLES;"}`)
		if !strings.Contains(tables, `"name":"VISIT_COUNTS"`) {
			t.Errorf("%s LIST TABLES: %s", srv.base, tables)
		}
		_, queries := srv.post(t, "/ksql", `{"ksql":"SHOW QUERIES;"}`)
		if !strings.Contains(queries, `"id":"CTAS_VISIT_COUNTS"`) {
			t.Errorf("%s SHOW QUERIES: %s", srv.base, queries)
		}
	}
}
