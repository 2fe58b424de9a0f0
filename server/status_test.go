package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

func (f *fixture) get(t *testing.T, path string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("alice", "secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", path, err)
	}
	return response{status: resp.StatusCode, proto: resp.ProtoMajor, header: resp.Header, body: string(b)}
}

// TestStatus reads back, through GET /status/{commandId} and GET /status,
// the command statuses /ksql answered with, and gets ksqlDB's 404 for an
// id it never gave.
func TestStatus(t *testing.T) {
	f := start(t)
	topic := testkafka.Name(t, "visits")
	r := f.post(t, &http.Client{}, "/ksql", ksqlBody("CREATE STREAM visits (page VARCHAR KEY, n INT) WITH (KAFKA_TOPIC='"+topic+"', VALUE_FORMAT='JSON', PARTITIONS=1);"+
		"CREATE TABLE per_page AS SELECT page, COUNT(*) AS n FROM visits GROUP BY page; CREATE TYPE pair AS STRUCT<a INT, b INT>;", nil), true)
	if r.status != http.StatusOK {
		t.Fatalf("/ksql: %d %s", r.status, r.body)
	}
	for _, s := range []struct {
		path   string
		status int
		want   string
	}{
		{"/status/stream/%60VISITS%60/create", 200, `{"status":"SUCCESS","message":"Stream created","queryId":null}`},
		{"/status/table/%60PER_PAGE%60/create", 200, `{"status":"SUCCESS","message":"Created query with ID CTAS_PER_PAGE","queryId":"CTAS_PER_PAGE"}`},
		{"/status/type/PAIR/create", 200, `{"status":"SUCCESS","message":"Registered custom type with name 'PAIR' and SQL type STRUCT<` + "`A` INTEGER, `B`" + ` INTEGER>","queryId":null}`},
		{"/status/stream/%60NOPE%60/create", 404, `{"@type":"generic_error","error_code":40400,"message":"Command not found"}`},
		{"/status", 200, `{"commandStatuses":{"stream/` + "`VISITS`" + `/create":"SUCCESS","table/` + "`PER_PAGE`" + `/create":"SUCCESS","type/PAIR/create":"SUCCESS"}}`},
	} {
		r := f.get(t, s.path)
		// As Jackson, the server writes < and > as they are.
		body := r.body
		if diff := cmp.Diff(compact(t, s.want), body); r.status != s.status || diff != "" {
			t.Errorf("GET %s: status %d (want %d), body (-want +got):\n%s", s.path, r.status, s.status, diff)
		}
	}
}
