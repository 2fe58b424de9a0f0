package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/server"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fixture is a server over a real engine on a test broker, listening on
// loopback, with the user alice:secret.
type fixture struct {
	srv  *server.Server
	base string
	done chan error
}

func start(t *testing.T) *fixture { return startWith(t, testkafka.Brokers(t), nil) }

// startWith is start on brokers with the engine's configuration changed
// by edit.
func startWith(t *testing.T, brokers string, edit func(*engine.Config)) *fixture {
	t.Helper()
	cfg := engine.Config{
		ConnOpts:  []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)},
		DataDir:   t.TempDir(),
		ServiceID: testkafka.Name(t, "svc"),
		Log:       quiet,
	}
	if edit != nil {
		edit(&cfg)
	}
	e, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open engine: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: server.New(e, server.Options{Users: map[string]string{"alice": "secret"}, Log: quiet}),
		base: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	go func() { f.done <- f.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-f.done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	return f
}

// clients speak HTTP/1.1 only, and HTTP/2 cleartext with prior knowledge
// only, so each test shows the API on both.
func clients() map[string]*http.Client {
	var h1, h2 http.Protocols
	h1.SetHTTP1(true)
	h2.SetUnencryptedHTTP2(true)
	return map[string]*http.Client{
		"HTTP/1.1": {Transport: &http.Transport{Protocols: &h1}},
		"HTTP/2":   {Transport: &http.Transport{Protocols: &h2}},
	}
}

type response struct {
	status int
	proto  int
	header http.Header
	body   string
}

func (f *fixture) post(t *testing.T, c *http.Client, path, body string, auth bool, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth {
		req.SetBasicAuth("alice", "secret")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: read body: %v", path, err)
	}
	return response{status: resp.StatusCode, proto: resp.ProtoMajor, header: resp.Header, body: string(b)}
}

func ksqlBody(sql string, props map[string]string) string {
	b, _ := json.Marshal(map[string]any{"ksql": sql, "streamsProperties": props})
	return string(b)
}

// compact re-encodes JSON without insignificant space, so expected
// bodies can be written readably.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("expected JSON does not parse: %v\n%s", err, s)
	}
	return b.String() + "\n"
}

// TestAPI drives one server through a client's day over HTTP/1.1 and
// over HTTP/2: create a stream and a table, insert through /ksql and
// /inserts-stream, list, read the rows back with a push query from
// earliest, and get errors in ksqlDB's shape.
func TestAPI(t *testing.T) {
	for proto, c := range clients() {
		t.Run(proto, func(t *testing.T) {
			f := start(t)
			topic := testkafka.Name(t, "clicks")

			r := f.post(t, c, "/ksql", ksqlBody("LIST STREAMS;", nil), false)
			if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != `Basic realm="sluice", charset="UTF-8"` ||
				r.body != `{"@type":"generic_error","error_code":40100,"message":"Unauthorized"}`+"\n" {
				t.Fatalf("without credentials: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
			}
			wantMajor := 1
			if proto == "HTTP/2" {
				wantMajor = 2
			}
			if r.proto != wantMajor {
				t.Fatalf("response protocol HTTP/%d, want HTTP/%d", r.proto, wantMajor)
			}

			create := fmt.Sprintf(`CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR, n INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
				CREATE TABLE per_user AS SELECT user, COUNT(*) AS clicks FROM clicks GROUP BY user;
				INSERT INTO clicks (user, page, n) VALUES ('ann', 'home', 1);`, topic)
			steps := []struct {
				name, path, body string
				status           int
				want             string
			}{
				{"create", "/ksql", ksqlBody(create, nil), 200, `[
					{"@type":"currentStatus","statementText":"CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR, n INT) WITH (KAFKA_TOPIC='` + topic + `', VALUE_FORMAT='JSON', PARTITIONS=1);",
					 "commandId":"stream/` + "`CLICKS`" + `/create","commandStatus":{"status":"SUCCESS","message":"Stream created","queryId":null},"commandSequenceNumber":1,"warnings":[]},
					{"@type":"currentStatus","statementText":"CREATE TABLE per_user AS SELECT user, COUNT(*) AS clicks FROM clicks GROUP BY user;",
					 "commandId":"table/` + "`PER_USER`" + `/create","commandStatus":{"status":"SUCCESS","message":"Created query with ID CTAS_PER_USER","queryId":"CTAS_PER_USER"},"commandSequenceNumber":2,"warnings":[]}]`},
				{"list", "/ksql", ksqlBody("LIST STREAMS; SHOW TABLES;", nil), 200, `[
					{"@type":"streams","statementText":"LIST STREAMS;","streams":[{"type":"STREAM","name":"CLICKS","topic":"` + topic + `","keyFormat":"KAFKA","valueFormat":"JSON","isWindowed":false}],"warnings":[]},
					{"@type":"tables","statementText":"SHOW TABLES;","tables":[{"type":"TABLE","name":"PER_USER","topic":"PER_USER","keyFormat":"KAFKA","valueFormat":"JSON","isWindowed":false}],"warnings":[]}]`},
				{"bad statement", "/ksql", ksqlBody("SHOW STREAMS; DESCRIBE nope;", nil), 400, `{"@type":"statement_error","error_code":40001,"message":"NOPE does not exist","statementText":"DESCRIBE nope;",
					"entities":[{"@type":"streams","statementText":"SHOW STREAMS;","streams":[{"type":"STREAM","name":"CLICKS","topic":"` + topic + `","keyFormat":"KAFKA","valueFormat":"JSON","isWindowed":false}],"warnings":[]}]}`},
				{"syntax error", "/ksql", ksqlBody("SHOW STREAMZ;", nil), 400, `{"@type":"statement_error","error_code":40001,"message":"line 1:6: Syntax Error\n\nStatement: SHOW STREAMZ;\nExpecting {'STREAMS', 'TABLES', 'QUERIES', 'TOPICS', 'PROPERTIES', 'FUNCTIONS', 'TYPES'}\nSHOW STREAMZ;\n     ^","statementText":"SHOW STREAMZ;","entities":[]}`},
				{"select on /ksql", "/ksql", ksqlBody("SELECT * FROM clicks EMIT CHANGES;", nil), 400, `{"@type":"statement_error","error_code":40002,"message":"The following statement types should be issued to the websocket endpoint '/query':\n\t* PRINT\n\t* SELECT","statementText":"SELECT * FROM clicks EMIT CHANGES;","entities":[]}`},
				{"bad property value", "/ksql", ksqlBody("SET 'commit.interval.ms'='abc'; SHOW STREAMS;", nil), 400, `{"@type":"statement_error","error_code":40001,"message":"Invalid value abc for configuration commit.interval.ms: Not a number of type LONG","statementText":"SET 'commit.interval.ms'='abc';","entities":[]}`},
				{"unknown property", "/ksql", ksqlBody("SHOW STREAMS; SET 'no.such.property'='1';", nil), 400, `{"@type":"statement_error","error_code":40001,"message":"Not recognizable as ksql, streams, consumer, or producer property: 'no.such.property'","statementText":"SET 'no.such.property'='1';",
					"entities":[{"@type":"streams","statementText":"SHOW STREAMS;","streams":[{"type":"STREAM","name":"CLICKS","topic":"` + topic + `","keyFormat":"KAFKA","valueFormat":"JSON","isWindowed":false}],"warnings":[]}]}`},
				{"bad json", "/ksql", `{"ksql":`, 400, `{"@type":"generic_error","error_code":40000,"message":"Invalid JSON in request: unexpected EOF"}`},
			}
			for _, s := range steps {
				r := f.post(t, c, s.path, s.body, true)
				if diff := cmp.Diff(compact(t, s.want), r.body); r.status != s.status || diff != "" {
					t.Fatalf("%s: status %d (want %d), body (-want +got):\n%s", s.name, r.status, s.status, diff)
				}
			}

			r = f.post(t, c, "/inserts-stream", "{\"target\":\"clicks\"}\n{\"USER\":\"bob\",\"PAGE\":\"cart\",\"N\":2}\n{\"user\":\"ann\",\"page\":\"pay\",\"n\":3}\n", true)
			if want := "{\"status\":\"ok\",\"seq\":0}\n{\"status\":\"ok\",\"seq\":1}\n"; r.status != 200 || r.body != want {
				t.Fatalf("inserts-stream: %d %q, want 200 %q", r.status, r.body, want)
			}

			// A push query from earliest returns the three rows and ends at
			// its LIMIT, in both content types.
			query := `{"sql":"SELECT user, page, n * 10 AS tens FROM clicks EMIT CHANGES LIMIT 3;","properties":{"auto.offset.reset":"earliest"}}`
			r = f.post(t, c, "/query-stream", query, true)
			lines := strings.SplitAfterN(r.body, "\n", 2)
			var hdr struct {
				QueryID     string   `json:"queryId"`
				ColumnNames []string `json:"columnNames"`
				ColumnTypes []string `json:"columnTypes"`
			}
			if err := json.Unmarshal([]byte(lines[0]), &hdr); err != nil || len(lines) != 2 {
				t.Fatalf("query-stream: %d %q", r.status, r.body)
			}
			wantHdr := fmt.Sprintf(`{"queryId":%q,"columnNames":["USER","PAGE","TENS"],"columnTypes":["STRING","STRING","INTEGER"]}`+"\n", hdr.QueryID)
			wantRows := "[\"ann\",\"home\",10]\n[\"bob\",\"cart\",20]\n[\"ann\",\"pay\",30]\n"
			if r.status != 200 || r.header.Get("Content-Type") != "application/vnd.ksqlapi.delimited.v1" || lines[0] != wantHdr || lines[1] != wantRows {
				t.Fatalf("query-stream: %d %s\n%s\nwant header %s rows\n%s", r.status, r.header.Get("Content-Type"), r.body, wantHdr, wantRows)
			}
			r = f.post(t, c, "/query-stream", query, true, "Accept", "application/json")
			var arr []json.RawMessage
			if err := json.Unmarshal([]byte(r.body), &arr); err != nil || len(arr) != 4 {
				t.Fatalf("query-stream as JSON: %v\n%s", err, r.body)
			}
			if got, want := string(arr[1])+string(arr[2])+string(arr[3]), `["ann","home",10]["bob","cart",20]["ann","pay",30]`; got != want {
				t.Errorf("query-stream as JSON rows %s, want %s", got, want)
			}

			// The older /query endpoint, chunked.
			r = f.post(t, c, "/query", ksqlBody("SELECT * FROM clicks EMIT CHANGES LIMIT 2;", map[string]string{"auto.offset.reset": "earliest"}), true)
			var first []map[string]json.RawMessage
			if err := json.Unmarshal([]byte(r.body), &first); err != nil || len(first) != 4 {
				t.Fatalf("query: %v\n%s", err, r.body)
			}
			var qh struct{ QueryID string }
			_ = json.Unmarshal(first[0]["header"], &qh)
			wantQuery := `[{"header":{"queryId":"` + qh.QueryID + "\",\"schema\":\"`USER` STRING, `PAGE` STRING, `N` INTEGER\"}},\n" +
				`{"row":{"columns":["ann","home",1]}},` + "\n" + `{"row":{"columns":["bob","cart",2]}},` + "\n" + `{"finalMessage":"Limit Reached"}]` + "\n"
			if diff := cmp.Diff(wantQuery, r.body); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTypesAPI registers, lists and drops custom types through /ksql:
// command statuses for CREATE and DROP TYPE, and SHOW TYPES as ksqlDB's
// type_list, each type's schema by name.
func TestTypesAPI(t *testing.T) {
	f := start(t)
	c := clients()["HTTP/1.1"]
	steps := []struct {
		name, sql string
		status    int
		want      string
	}{
		{"create", "CREATE TYPE address AS STRUCT<number INTEGER, street VARCHAR>; CREATE TYPE ids AS ARRAY<BIGINT>;", 200, `[
			{"@type":"currentStatus","statementText":"CREATE TYPE address AS STRUCT<number INTEGER, street VARCHAR>;","commandId":"type/ADDRESS/create",
			 "commandStatus":{"status":"SUCCESS","message":"Registered custom type with name 'ADDRESS' and SQL type STRUCT<` + "`NUMBER` INTEGER, `STREET`" + ` STRING>","queryId":null},"commandSequenceNumber":1,"warnings":[]},
			{"@type":"currentStatus","statementText":"CREATE TYPE ids AS ARRAY<BIGINT>;","commandId":"type/IDS/create",
			 "commandStatus":{"status":"SUCCESS","message":"Registered custom type with name 'IDS' and SQL type ARRAY<BIGINT>","queryId":null},"commandSequenceNumber":2,"warnings":[]}]`},
		{"show", "SHOW TYPES;", 200, `[{"@type":"type_list","statementText":"SHOW TYPES;","types":{
			"ADDRESS":{"type":"STRUCT","fields":[{"name":"NUMBER","schema":{"type":"INTEGER","fields":null,"memberSchema":null}},{"name":"STREET","schema":{"type":"STRING","fields":null,"memberSchema":null}}],"memberSchema":null},
			"IDS":{"type":"ARRAY","fields":null,"memberSchema":{"type":"BIGINT","fields":null,"memberSchema":null}}},"warnings":[]}]`},
		{"again", "CREATE TYPE address AS INT;", 400, `{"@type":"statement_error","error_code":40001,
			"message":"line 1:1: Cannot register custom type 'ADDRESS' since it is already registered with type: STRUCT<` + "`NUMBER` INTEGER, `STREET`" + ` STRING>\nCREATE TYPE address AS INT;\n^",
			"statementText":"CREATE TYPE address AS INT;","entities":[]}`},
		{"drop", "DROP TYPE ids; LIST TYPES;", 200, `[
			{"@type":"currentStatus","statementText":"DROP TYPE ids;","commandId":"type/IDS/drop","commandStatus":{"status":"SUCCESS","message":"Dropped type 'IDS'","queryId":null},"commandSequenceNumber":3,"warnings":[]},
			{"@type":"type_list","statementText":"LIST TYPES;","types":{
			"ADDRESS":{"type":"STRUCT","fields":[{"name":"NUMBER","schema":{"type":"INTEGER","fields":null,"memberSchema":null}},{"name":"STREET","schema":{"type":"STRING","fields":null,"memberSchema":null}}],"memberSchema":null}},"warnings":[]}]`},
	}
	for _, s := range steps {
		r := f.post(t, c, "/ksql", ksqlBody(s.sql, nil), true)
		// As Jackson, the server writes < and > as they are.
		body := r.body
		if diff := cmp.Diff(compact(t, s.want), body); r.status != s.status || diff != "" {
			t.Fatalf("%s: status %d (want %d), body (-want +got):\n%s", s.name, r.status, s.status, diff)
		}
	}
}

// TestShutdownEndsPushQueries starts a push query without LIMIT over
// HTTP/2 and shuts the server down: the response ends cleanly after the
// rows it had, and Serve returns.
func TestShutdownEndsPushQueries(t *testing.T) {
	f := start(t)
	c := clients()["HTTP/2"]
	topic := testkafka.Name(t, "s")
	r := f.post(t, c, "/ksql", ksqlBody(fmt.Sprintf(`CREATE STREAM s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
		INSERT INTO s VALUES ('a', 1);`, topic), nil), true)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest(http.MethodPost, f.base+"/query-stream", strings.NewReader(`{"sql":"SELECT * FROM s EMIT CHANGES;","properties":{"auto.offset.reset":"earliest"}}`))
	req.SetBasicAuth("alice", "secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for range 2 { // header and the one row
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatalf("reading the push query: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	rest, err := io.ReadAll(br)
	if err != nil || len(rest) != 0 {
		t.Errorf("after shutdown: read %q, %v; want a clean end", rest, err)
	}
	if err := <-f.done; err != nil {
		t.Errorf("serve: %v", err)
	}
	f.done <- nil // for the cleanup
}
