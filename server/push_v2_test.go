package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/server"
)

// TestScalablePushQueryEnds runs scalable push queries through
// /query-stream (the property in the request's properties) and ends one
// by /close-query, one by the client going away, one by TERMINATE of its
// persistent query (ksqlDB's error object ends the stream) and one by
// Shutdown: each time the query unsubscribes from its persistent query. The CSAS reads
// from earliest: from latest it could miss the INSERT made before its
// group is assigned.
func TestScalablePushQueryEnds(t *testing.T) {
	brokers := testkafka.Brokers(t)
	e, err := engine.Open(context.Background(), engine.Config{
		ConnOpts: []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)},
		DataDir:  t.TempDir(), ServiceID: testkafka.Name(t, "svc"), Log: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(e, server.Options{Log: quiet})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	f := &fixture{srv: srv, base: "http://" + ln.Addr().String(), done: done}
	c := clients()["HTTP/2"]
	in := testkafka.Name(t, "spq_srv")
	r := f.post(t, c, "/ksql", ksqlBody(fmt.Sprintf(`CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE STREAM o AS SELECT id, v FROM s;`, in), map[string]string{"auto.offset.reset": "earliest"}), false)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var csas *engine.Query
	for _, q := range e.Queries() {
		csas = q
	}
	subscribers := func(n int) {
		t.Helper()
		testkafka.Await(t, 10*time.Second, fmt.Sprintf("%d subscribers", n), func() bool { return csas.PushSubscribers() == n })
	}
	// open starts a scalable push query and returns its id and rows.
	open := func(ctx context.Context) (string, *bufio.Reader) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.base+"/query-stream",
			strings.NewReader(`{"sql":"SELECT * FROM o EMIT CHANGES;","properties":{"ksql.query.push.v2.enabled":true}}`))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("header: %v", err)
		}
		var hdr struct {
			QueryID string `json:"queryId"`
		}
		if err := json.Unmarshal([]byte(line), &hdr); err != nil || !strings.HasPrefix(hdr.QueryID, "SCALABLE_PUSH_QUERY_") {
			t.Fatalf("header %q (%v), want a SCALABLE_PUSH_QUERY_… id", line, err)
		}
		return hdr.QueryID, br
	}

	id, br := open(context.Background())
	subscribers(1)
	if r := f.post(t, c, "/ksql", ksqlBody("INSERT INTO s VALUES ('a', 1);", nil), false); r.status != 200 {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	if line, err := br.ReadString('\n'); err != nil || line != `["a",1]`+"\n" {
		t.Errorf("row %q, %v; want [\"a\",1]", line, err)
	}
	if r := f.post(t, c, "/close-query", fmt.Sprintf(`{"queryId":%q}`, id), false); r.status != 200 {
		t.Fatalf("close-query: %d %s", r.status, r.body)
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("after /close-query: %q, %v; want a clean end", rest, err)
	}
	subscribers(0)

	ctx, cancel := context.WithCancel(context.Background())
	open(ctx)
	subscribers(1)
	cancel()
	subscribers(0)

	// TERMINATE of the persistent query ends the push query with
	// ksqlDB's error object as its last line.
	if r := f.post(t, c, "/ksql", ksqlBody("CREATE STREAM o2 AS SELECT id, v FROM s;", nil), false); r.status != 200 {
		t.Fatalf("create o2: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest(http.MethodPost, f.base+"/query-stream",
		strings.NewReader(`{"sql":"SELECT * FROM o2 EMIT CHANGES;","properties":{"ksql.query.push.v2.enabled":true}}`))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br2 := bufio.NewReader(resp.Body)
	if _, err := br2.ReadString('\n'); err != nil {
		t.Fatalf("o2 header: %v", err)
	}
	var o2 *engine.Query
	for _, q := range e.Queries() {
		if q.ID == "CSAS_O2" {
			o2 = q
		}
	}
	if o2 == nil {
		t.Fatal("no query CSAS_O2")
	}
	testkafka.Await(t, 10*time.Second, "o2's subscriber", func() bool { return o2.PushSubscribers() == 1 })
	if r := f.post(t, c, "/ksql", ksqlBody("TERMINATE CSAS_O2;", nil), false); r.status != 200 {
		t.Fatalf("terminate: %d %s", r.status, r.body)
	}
	want := `{"@type":"generic_error","error_code":50000,"message":"the persistent query feeding this scalable push query stopped"}` + "\n"
	if rest, err := io.ReadAll(br2); err != nil || string(rest) != want {
		t.Errorf("after TERMINATE: %q, %v; want %q", rest, err, want)
	}

	_, br = open(context.Background())
	subscribers(1)
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("after shutdown: %q, %v; want a clean end", rest, err)
	}
	subscribers(0)
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
