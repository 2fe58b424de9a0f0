package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
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
	// The graph: the chain EXPLAIN prints, the sink topic, the store with
	// an edge from the aggregate that owns it; no
	// record read yet, so no lateness measured. The service id in the
	// changelog's name is the fixture's, so it is replaced by SVC.
	got = f.get(t, "/console/api/query/ctas_counts")
	body := regexp.MustCompile(`_sluice-[A-Z0-9_]+-query-`).ReplaceAllString(got.body, "_sluice-SVC-query-")
	want = compact(t, `{"id":"CTAS_COUNTS","nodes":[
		{"kind":"source","label":"source `+topic+` (key KAFKA, value JSON, event time record timestamp, reads none of 1 value columns)","sub":0,"step":-1,"rows":0,"rate":0},
		{"kind":"operator","label":"project KSQL_INTERNAL_GROUP_0","sub":0,"step":0,"rows":0,"rate":0},
		{"kind":"operator","label":"aggregate COUNT(*) by USER window TUMBLING size 10s grace 1s retention 11s emit changes [store CTAS_COUNTS-Aggregate-Materialize]","sub":0,"step":1,"rows":0,"rate":0},
		{"kind":"operator","label":"project USER, N","sub":0,"step":2,"rows":0,"rate":0},
		{"kind":"operator","label":"sink `+out+` (key KAFKA [USER], value JSON [N])","sub":0,"step":3,"rows":0,"rate":0},
		{"kind":"sink","label":"topic `+out+`","sub":0,"step":-1,"rows":0,"rate":0},
		{"kind":"store","label":"store CTAS_COUNTS-Aggregate-Materialize → changelog _sluice-SVC-query-CTAS_COUNTS-Aggregate-Materialize-changelog","sub":-1,"step":-1,"rows":0,"rate":0}],
		"edges":[[0,1],[1,2],[2,3],[3,4],[4,5],[2,6]],
		"lateness":[{"topic":"`+topic+`","count":0,"max":0,"graceMs":1000,"aboveGrace":0,"grace99":0,"grace999":0,"quantiles":[]}],"hotKeys":[],"warnings":[]}`)
	if body != want {
		t.Errorf("query graph:\n got %s\nwant %s", body, want)
	}
	if r := f.get(t, "/console/api/query/nope"); r.status != http.StatusNotFound {
		t.Errorf("unknown query: status %d, want 404", r.status)
	}
}

// TestConsoleGraphJoin: the graph of a stream–table join on a column the
// stream is not keyed by. The stream is re-keyed in sub-topology 0, whose
// repartition sink has an edge to the repartition topic; that topic is
// sub-topology 1's main input, the table its second input straight into
// the join, and the table's store hangs off the join. A window's grace is
// reported for the stream flowing into the window only.
func TestConsoleGraphJoin(t *testing.T) {
	f := start(t)
	clicks, pages, out := testkafka.Name(t, "clicks"), testkafka.Name(t, "pages"), testkafka.Name(t, "out")
	r := f.post(t, http.DefaultClient, "/ksql", ksqlBody(fmt.Sprintf(`CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE pages (url VARCHAR PRIMARY KEY, title VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM page_clicks WITH (KAFKA_TOPIC='%s') AS SELECT c.page AS page, p.title AS title, c.user AS user FROM clicks c JOIN pages p ON c.page = p.url EMIT CHANGES;`, clicks, pages, out), nil), true)
	if r.status != http.StatusOK {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	got := f.get(t, "/console/api/query/CSAS_PAGE_CLICKS")
	var g struct {
		Nodes []struct{ Kind, Label string }
		Edges [][2]int
	}
	if err := json.Unmarshal([]byte(got.body), &g); err != nil {
		t.Fatalf("graph: %v\n%s", err, got.body)
	}
	// Each node as its kind and the first two words of its label, each
	// edge as the two nodes it joins, so the test reads as the picture.
	name := func(i int) string {
		words := strings.Fields(g.Nodes[i].Label)
		return g.Nodes[i].Kind + ":" + strings.Join(words[:min(2, len(words))], " ")
	}
	var edges []string
	for _, e := range g.Edges {
		edges = append(edges, name(e[0])+" → "+name(e[1]))
	}
	svc := regexp.MustCompile(`_sluice-[A-Z0-9_]+-query-`)
	gotEdges := svc.ReplaceAllString(strings.Join(edges, "\n"), "_sluice-SVC-query-")
	const repart = "_sluice-SVC-query-CSAS_PAGE_CLICKS-Join-left-repartition"
	want := strings.Join([]string{
		"source:source " + clicks + " → operator:project KSQL_INTERNAL_JOINKEY,",
		"operator:project KSQL_INTERNAL_JOINKEY, → operator:repartition " + repart,
		"operator:repartition " + repart + " → repartition:repartition " + repart,
		"repartition:repartition " + repart + " → operator:join stream-table",
		"operator:join stream-table → operator:project PAGE,",
		"operator:project PAGE, → operator:sink " + out,
		"source:source " + pages + " → operator:join stream-table",
		"operator:sink " + out + " → sink:topic " + out,
		"operator:join stream-table → store:store CSAS_PAGE_CLICKS-Join-right-table",
	}, "\n")
	if gotEdges != want {
		t.Errorf("graph edges:\n got %s\nwant %s", gotEdges, want)
	}
	if len(g.Nodes) != 10 {
		t.Errorf("graph has %d nodes, want 10 (2 sources, a repartition topic, 5 operators, the sink topic, a store): %s", len(g.Nodes), got.body)
	}

	// A windowed count of the joined rows by title: its grace applies to
	// the stream whose records flow, through two repartition topics, into
	// the window, not to the table joined to them; the repartition topics,
	// never measured, are not listed.
	r = f.post(t, http.DefaultClient, "/ksql", ksqlBody(`CREATE TABLE views AS SELECT p.title AS title, COUNT(*) AS n FROM clicks c JOIN pages p ON c.page = p.url WINDOW TUMBLING (SIZE 10 SECONDS, GRACE PERIOD 2 SECONDS) GROUP BY p.title EMIT CHANGES;`, nil), true)
	if r.status != http.StatusOK {
		t.Fatalf("create views: %d %s", r.status, r.body)
	}
	got = f.get(t, "/console/api/query/CTAS_VIEWS")
	var l struct {
		Lateness []struct {
			Topic   string
			GraceMs int64
		}
	}
	if err := json.Unmarshal([]byte(got.body), &l); err != nil {
		t.Fatalf("graph: %v\n%s", err, got.body)
	}
	var graces []string
	for _, in := range l.Lateness {
		graces = append(graces, fmt.Sprintf("%s %d", svc.ReplaceAllString(in.Topic, "_sluice-SVC-query-"), in.GraceMs))
	}
	wantGraces := strings.Join([]string{
		clicks + " 2000",
		pages + " -1",
	}, "\n")
	if got := strings.Join(graces, "\n"); got != wantGraces {
		t.Errorf("graces by input:\n got %s\nwant %s", got, wantGraces)
	}
}
