package server_test

import (
	"bufio"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// consolePaths are the console page, its script and every data endpoint.
var consolePaths = []string{"/", "/console/console.js", "/console/console.css",
	"/console/api/queries", "/console/api/catalog", "/console/api/events"}

// TestConsoleAuth: with users set, the console and each of its data
// endpoints, the event stream too, answer 401 without credentials and
// 200 with them.
func TestConsoleAuth(t *testing.T) {
	f := start(t)
	r := f.post(t, http.DefaultClient, "/ksql", ksqlBody(fmt.Sprintf(`CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM t AS SELECT * FROM s;`, testkafka.Name(t, "s")), nil), true)
	if r.status != http.StatusOK {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	for _, path := range append(consolePaths, "/console/api/query/CSAS_T") {
		for _, auth := range []bool{false, true} {
			req, err := http.NewRequest(http.MethodGet, f.base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if auth {
				req.SetBasicAuth("alice", "secret")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			want := http.StatusUnauthorized
			if auth {
				want = http.StatusOK
			}
			if resp.StatusCode != want {
				t.Errorf("GET %s with credentials %v: status %d, want %d", path, auth, resp.StatusCode, want)
			}
			if auth && path == "/console/api/events" {
				line, err := bufio.NewReader(resp.Body).ReadString('\n')
				if err != nil {
					t.Fatalf("read event: %v", err)
				}
				if line != "event: queries\n" {
					t.Errorf("first event line %q, want %q", line, "event: queries\n")
				}
			}
			resp.Body.Close()
		}
	}
}

// TestConsoleAPI checks the catalog and queries endpoints' JSON for one
// stream and a windowed aggregation over it.
func TestConsoleAPI(t *testing.T) {
	f := start(t)
	c := http.DefaultClient
	topic := testkafka.Name(t, "clicks")
	out := testkafka.Name(t, "counts")
	r := f.post(t, c, "/ksql", ksqlBody(fmt.Sprintf(`CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE counts WITH (KAFKA_TOPIC='%s') AS SELECT user, COUNT(*) AS n FROM clicks WINDOW TUMBLING (SIZE 10 SECONDS, GRACE PERIOD 1 SECOND) GROUP BY user EMIT CHANGES;`, topic, out), nil), true)
	if r.status != http.StatusOK {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	got := f.get(t, "/console/api/catalog")
	want := compact(t, `[
		{"name":"CLICKS","kind":"STREAM","topic":"`+topic+`","columns":[{"name":"USER","type":"STRING","key":true},{"name":"PAGE","type":"STRING"}]},
		{"name":"COUNTS","kind":"TABLE","topic":"`+out+`","columns":[{"name":"USER","type":"STRING","key":true},{"name":"N","type":"BIGINT"}]}
	]`)
	if got.body != want {
		t.Errorf("catalog:\n got %s\nwant %s", got.body, want)
	}
	// No record was written, so every count is 0 and the store is empty;
	// the lone engine has no cluster, so no owners.
	got = f.get(t, "/console/api/queries")
	want = compact(t, `[{"id":"CTAS_COUNTS","statement":"CREATE TABLE counts WITH (KAFKA_TOPIC='`+out+`') AS SELECT user, COUNT(*) AS n FROM clicks WINDOW TUMBLING (SIZE 10 SECONDS, GRACE PERIOD 1 SECOND) GROUP BY user EMIT CHANGES",
		"state":"RUNNING","sources":["CLICKS"],"sinks":["COUNTS"],"recordsIn":0,"recordsOut":0,"lag":0,"lateDropped":0,
		"errors":{},"inputRate":0,"restores":[],
		"stores":[{"name":"CTAS_COUNTS-Aggregate-Materialize","windowed":true,"bytes":0,"entries":0}],"owners":[]}]`)
	if got.body != want {
		t.Errorf("queries:\n got %s\nwant %s", got.body, want)
	}
	// The graph: the chain EXPLAIN prints, the sink topic, the store; no
	// record read yet, so no lateness measured. The service id in the
	// changelog's name is the fixture's, so it is replaced by SVC.
	got = f.get(t, "/console/api/query/ctas_counts")
	body := regexp.MustCompile(`_sluice-[A-Z0-9_]+-query-`).ReplaceAllString(got.body, "_sluice-SVC-query-")
	want = compact(t, `{"id":"CTAS_COUNTS","nodes":[
		{"kind":"source","label":"source `+topic+` (key KAFKA, value JSON, event time record timestamp, reads 0 of 1 value columns: )","sub":0,"step":-1,"rows":0},
		{"kind":"operator","label":"project KSQL_INTERNAL_GROUP_0","sub":0,"step":0,"rows":0},
		{"kind":"operator","label":"aggregate COUNT(*) by USER window TUMBLING size 10s grace 1s retention 11s emit changes [store CTAS_COUNTS-Aggregate-Materialize]","sub":0,"step":1,"rows":0},
		{"kind":"operator","label":"project USER, N","sub":0,"step":2,"rows":0},
		{"kind":"operator","label":"sink `+out+` (key KAFKA [USER], value JSON [N])","sub":0,"step":3,"rows":0},
		{"kind":"sink","label":"topic `+out+`","sub":0,"step":-1,"rows":0},
		{"kind":"store","label":"store CTAS_COUNTS-Aggregate-Materialize → changelog _sluice-SVC-query-CTAS_COUNTS-Aggregate-Materialize-changelog","sub":-1,"step":-1,"rows":0}],
		"edges":[[0,1],[1,2],[2,3],[3,4],[4,5]],
		"lateness":[{"topic":"`+topic+`","count":0,"max":0,"graceMs":1000,"aboveGrace":0,"grace99":0,"grace999":0,"quantiles":[]}],"hotKeys":[],"warnings":[]}`)
	if body != want {
		t.Errorf("query graph:\n got %s\nwant %s", body, want)
	}
	if r := f.get(t, "/console/api/query/nope"); r.status != http.StatusNotFound {
		t.Errorf("unknown query: status %d, want 404", r.status)
	}
}
