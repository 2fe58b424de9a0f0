package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/server"
)

var queryIDs = regexp.MustCompile(`"queryId":"[^"]*"`)

// TestAccept answers each streaming endpoint in the content type the
// request's Accept header asks for, over HTTP/1.1 and HTTP/2: one JSON
// array for application/json (and ksqlDB's v1 JSON on /query), delimited
// lines for application/vnd.ksqlapi.delimited.v1, and each endpoint's
// ksqlDB default without Accept.
func TestAccept(t *testing.T) {
	f := start(t)
	topic := testkafka.Name(t, "acc")
	h1 := clients()["HTTP/1.1"]
	// Inserts of the cases go to acc_in, so the rows the queries read stay put.
	create := fmt.Sprintf(`CREATE STREAM acc (id VARCHAR KEY, n INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE acc_n WITH (KAFKA_TOPIC='%s', PARTITIONS=1) AS SELECT id, SUM(n) AS n FROM acc GROUP BY id;
		CREATE STREAM acc_in (id VARCHAR KEY, n INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);`,
		topic, testkafka.Name(t, "acc_n"), testkafka.Name(t, "acc_in"))
	// The table reads its input from the start: the seed rows are written
	// right after the CREATE, and with ksqlDB's default (latest) a query
	// whose consumer has not joined yet on a busy machine would skip them.
	if r := f.post(t, h1, "/ksql", ksqlBody(create, map[string]string{"auto.offset.reset": "earliest"}), true); r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if r := f.post(t, h1, "/inserts-stream", "{\"target\":\"acc\"}\n{\"ID\":\"a\",\"N\":1}\n{\"ID\":\"b\",\"N\":2}\n", true); r.status != 200 {
		t.Fatalf("seed rows: %d %s", r.status, r.body)
	}
	// The table's state commits a commit interval after the inserts.
	pull := `{"sql":"SELECT id, n FROM acc_n;"}`
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r := f.post(t, h1, "/query-stream", pull, true)
		if strings.HasSuffix(r.body, "[\"a\",1]\n[\"b\",2]\n") || strings.HasSuffix(r.body, "[\"b\",2]\n[\"a\",1]\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("table acc_n: %d %s", r.status, r.body)
		}
	}

	const (
		delimited = "application/vnd.ksqlapi.delimited.v1"
		appJSON   = "application/json"
		ksqlJSON  = "application/vnd.ksql.v1+json"
	)
	push := `{"sql":"SELECT id, n FROM acc EMIT CHANGES LIMIT 2;","properties":{"auto.offset.reset":"earliest"}}`
	oldPush := ksqlBody("SELECT id, n FROM acc EMIT CHANGES LIMIT 2;", map[string]string{"auto.offset.reset": "earliest"})
	streamHdr := `{"queryId":"Q","columnNames":["ID","N"],"columnTypes":["STRING","INTEGER"]}`
	streamDelimited := streamHdr + "\n[\"a\",1]\n[\"b\",2]\n"
	streamJSON := "[" + streamHdr + `,["a",1],["b",2]]`
	queryJSON := "[{\"header\":{\"queryId\":\"Q\",\"schema\":\"`ID` STRING, `N` INTEGER\"}},\n" +
		`{"row":{"columns":["a",1]}},` + "\n" + `{"row":{"columns":["b",2]}},` + "\n" + `{"finalMessage":"Limit Reached"}]` + "\n"
	// A key lookup: on /query its header marks the key column and, as a
	// pull query on a table, it has no final message (ksqlDB's shape); in
	// protobuf its row is a proto3 message in base64.
	lookup := `{"sql":"SELECT id, n FROM acc_n WHERE id = 'b';"}`
	lookupQueryJSON := "[{\"header\":{\"queryId\":\"Q\",\"schema\":\"`ID` STRING KEY, `N` INTEGER\"}},\n" + `{"row":{"columns":["b",2]}}]` + "\n"
	// ID "b" is field 1 (0a 01 62), N 2 is field 2 (10 02).
	lookupProto := "[{\"header\":{\"queryId\":\"Q\",\"schema\":\"`ID` STRING KEY, `N` INTEGER\"," +
		`"protoSchema":"syntax = \"proto3\";\n\nmessage ConnectDefault1 {\n  string ID = 1;\n  int32 N = 2;\n}\n"}},` + "\n" +
		`{"row":{"protobufBytes":"CgFiEAI="}}]` + "\n"
	oldLookup := ksqlBody("SELECT id, n FROM acc_n WHERE id = 'b';", nil)
	lookupDelimited := streamHdr + "\n[\"b\",2]\n"
	lookupJSON := "[" + streamHdr + `,["b",2]]`
	inserts := "{\"target\":\"acc_in\"}\n{\"ID\":\"c\",\"N\":3}\n{\"ID\":\"d\",\"N\":4}\n"
	badInsert := "{\"target\":\"acc_in\"}\n{\"ID\":\"e\",\"N\":5}\n{\"ID\":\"f\",\"N\":\"x\"}\n"

	cases := []struct {
		name, path, body, accept string
		contentType, want        string
	}{
		{"query-stream default", "/query-stream", push, "", delimited, streamDelimited},
		{"query-stream delimited", "/query-stream", push, delimited, delimited, streamDelimited},
		{"query-stream json", "/query-stream", push, appJSON, appJSON, streamJSON},
		{"query-stream json preferred", "/query-stream", push, appJSON + ", " + delimited + ";q=0.9", appJSON, streamJSON},
		{"query default", "/query", oldPush, "", appJSON, queryJSON},
		{"query json", "/query", oldPush, appJSON, appJSON, queryJSON},
		{"query ksql v1 json", "/query", oldPush, ksqlJSON, ksqlJSON, queryJSON},
		{"query delimited", "/query", oldPush, delimited, delimited, streamDelimited},
		{"pull query-stream default", "/query-stream", lookup, "", delimited, lookupDelimited},
		{"pull query-stream delimited", "/query-stream", lookup, delimited, delimited, lookupDelimited},
		{"pull query-stream json", "/query-stream", lookup, appJSON, appJSON, lookupJSON},
		{"pull query delimited", "/query", oldLookup, delimited, delimited, lookupDelimited},
		{"pull query json", "/query", oldLookup, appJSON, appJSON, lookupQueryJSON},
		{"pull query-stream protobuf", "/query-stream", lookup, server.ContentProtobuf, server.ContentProtobuf, lookupProto},
		{"inserts-stream default", "/inserts-stream", inserts, "", delimited, "{\"status\":\"ok\",\"seq\":0}\n{\"status\":\"ok\",\"seq\":1}\n"},
		{"inserts-stream delimited", "/inserts-stream", inserts, delimited, delimited, "{\"status\":\"ok\",\"seq\":0}\n{\"status\":\"ok\",\"seq\":1}\n"},
		{"inserts-stream json", "/inserts-stream", inserts, appJSON, appJSON, `[{"status":"ok","seq":0},{"status":"ok","seq":1}]`},
		{"inserts-stream json no rows", "/inserts-stream", "{\"target\":\"acc_in\"}\n", appJSON, appJSON, `[]`},
		{"inserts-stream json error", "/inserts-stream", badInsert, appJSON, appJSON,
			`[{"status":"ok","seq":0},{"status":"error","seq":1,"error_code":40000,"message":"column N: malformed record: cannot read JSON string \"x\" as INTEGER"}]`},
	}
	for proto, c := range clients() {
		for _, tc := range cases {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				var hdr []string
				if tc.accept != "" {
					hdr = []string{"Accept", tc.accept}
				}
				r := f.post(t, c, tc.path, tc.body, true, hdr...)
				got := queryIDs.ReplaceAllString(r.body, `"queryId":"Q"`)
				if diff := cmp.Diff(tc.want, got); r.status != http.StatusOK || r.header.Get("Content-Type") != tc.contentType || diff != "" {
					t.Fatalf("status %d, Content-Type %q (want %q), body (-want +got):\n%s", r.status, r.header.Get("Content-Type"), tc.contentType, diff)
				}
			})
		}
	}
}
