package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestServerSIGTERM runs the real binary on its embedded broker: flags from a --config file and
// the command line, statements from --file, Basic auth on everything but
// /healthcheck, a push query over HTTP/2 cleartext; then SIGTERM ends the
// push query's response cleanly and the process exits 0.
func TestServerSIGTERM(t *testing.T) {
	dir := t.TempDir()
	svc := testkafka.Name(t, "svc")
	cfg := filepath.Join(dir, "server.json")
	if err := os.WriteFile(cfg, []byte(`{"service_id": "`+svc+`", "auth": ["alice:secret"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startSluice(t, "server", "--config", cfg, "--listen", "127.0.0.1:0", "--data-dir", dir, "--file", "cmd/sluice/testdata/server.sql")
	var base string
	p.waitFor(t, time.Minute, "the listening line", func(lines []string) bool {
		for _, l := range lines {
			if a, ok := strings.CutPrefix(l, "sluice server listening on "); ok {
				base = a
				return true
			}
		}
		return false
	})
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	c := &http.Client{Transport: &http.Transport{Protocols: &h2}}
	do := func(method, path, body string, auth bool) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth {
			req.SetBasicAuth("alice", "secret")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return resp
	}
	read := func(r *http.Response) string {
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(b)
	}

	tests := []struct {
		method, path, body string
		auth               bool
		status             int
		want               string
	}{
		{"GET", "/healthcheck", "", false, 200, `{"isHealthy":true,"details":{"commandRunner":{"isHealthy":true},"kafka":{"isHealthy":true},"metastore":{"isHealthy":true}}}`},
		{"GET", "/info", "", false, 401, `{"@type":"generic_error","error_code":40100,"message":"Unauthorized"}`},
		{"GET", "/info", "", true, 200, `{"KsqlServerInfo":{"version":"0.29.0-sluice","kafkaClusterId":"kfake","ksqlServiceId":"` + svc + `","serverStatus":"RUNNING"}}`},
		{"POST", "/ksql", `{"ksql":"LIST STREAMS;"}`, true, 200, `[{"@type":"streams","statementText":"LIST STREAMS;","streams":[{"type":"STREAM","name":"PINGS","topic":"server_pings","keyFormat":"KAFKA","valueFormat":"JSON","isWindowed":false}],"warnings":[]}]`},
	}
	for _, tc := range tests {
		r := do(tc.method, tc.path, tc.body, tc.auth)
		if got := read(r); r.StatusCode != tc.status || got != tc.want+"\n" || r.ProtoMajor != 2 {
			t.Errorf("%s %s: HTTP/%d %d %s\nwant HTTP/2 %d %s", tc.method, tc.path, r.ProtoMajor, r.StatusCode, got, tc.status, tc.want)
		}
	}

	// A pull query reads the materialized table once its state has
	// committed, and ends.
	var pulled string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		r := do("POST", "/query-stream", `{"sql":"SELECT * FROM ping_totals WHERE host = 'a';"}`, true)
		if pulled = read(r); strings.Count(pulled, "\n") == 2 {
			break
		}
	}
	if lines := strings.Split(strings.TrimSpace(pulled), "\n"); len(lines) != 2 || lines[1] != `["a",1,12]` || !strings.Contains(lines[0], `"columnNames":["HOST","N","TOTAL"]`) {
		t.Errorf("pull query: %q", pulled)
	}
	// Prometheus metrics, behind the same authentication.
	if r := do("GET", "/metrics", "", false); r.StatusCode != 401 {
		t.Errorf("GET /metrics without credentials: %d", r.StatusCode)
	}
	scrape := read(do("GET", "/metrics", "", true))
	for _, want := range []string{`sluice_records_in_total{query="CTAS_PING_TOTALS"} 1`, `sluice_state_entries{query="CTAS_PING_TOTALS",store="CTAS_PING_TOTALS-Aggregate-Materialize"} 1`, `sluice_kafka_`} {
		if !strings.Contains(scrape, want) {
			t.Errorf("GET /metrics lacks %q:\n%s", want, scrape)
		}
	}

	resp := do("POST", "/query-stream", `{"sql":"SELECT * FROM pings EMIT CHANGES;","properties":{"auto.offset.reset":"earliest"}}`, true)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var lines []string
	for range 2 {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("push query: %v after %q", err, lines)
		}
		lines = append(lines, l)
	}
	var hdr struct{ ColumnNames []string }
	if err := json.Unmarshal([]byte(lines[0]), &hdr); err != nil || strings.Join(hdr.ColumnNames, ",") != "HOST,MS" || lines[1] != "[\"a\",12]\n" {
		t.Fatalf("push query: %q", lines)
	}
	p.stop(t, 30*time.Second)
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("push query after SIGTERM: %q, %v; want a clean end", rest, err)
	}
}
