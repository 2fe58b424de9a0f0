package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestQueryRowNumbers reads DOUBLE and DECIMAL values back through
// /query-stream (push, and pull on a table) and /query as ksqlDB's REST
// API writes them: a DOUBLE as Java's Double.toString (30.0, 1.0E7,
// 1.5E-4; NaN and the infinities as strings), a DECIMAL(38, 16) with every
// digit at its scale, ROUND of it exact.
func TestQueryRowNumbers(t *testing.T) {
	brokers := testkafka.Brokers(t)
	f := startWith(t, brokers, nil)
	c := clients()["HTTP/1.1"]
	topic := testkafka.Name(t, "numbers")
	testkafka.CreateTopic(t, brokers, topic, 1)
	// The values are written as JSON text, so that no client-side double
	// touches the decimals' digits.
	testkafka.Produce(t, brokers,
		&kgo.Record{Topic: topic, Key: []byte("a"), Value: []byte(`{"D": 30, "V": 12345678987654321.0000000000000001}`)},
		&kgo.Record{Topic: topic, Key: []byte("b"), Value: []byte(`{"D": 1e7, "V": -1234567898765432123.4567898765432150}`)},
		&kgo.Record{Topic: topic, Key: []byte("c"), Value: []byte(`{"D": 0.00015, "V": 0.5}`)})

	create := fmt.Sprintf(`CREATE STREAM nums (K STRING KEY, D DOUBLE, V DECIMAL(38, 16)) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE TABLE latest AS SELECT K, LATEST_BY_OFFSET(D) AS D, LATEST_BY_OFFSET(V) AS V FROM nums GROUP BY K;`, topic)
	if r := f.post(t, c, "/ksql", ksqlBody(create, map[string]string{"auto.offset.reset": "earliest"}), true); r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}

	rowA := `["a",30.0,12345678987654321.0000000000000001,12345678987654321,12345678987654321.0000000000000000,"NaN","Infinity"]`
	rowB := `["b",1.0E7,-1234567898765432123.4567898765432150,-1234567898765432123,-1234567898765432123.4600000000000000,"NaN","Infinity"]`
	rowC := `["c",1.5E-4,0.5000000000000000,1,0.5000000000000000,"NaN","Infinity"]`
	sel := "SELECT K, D, V, ROUND(V) AS R, ROUND(V, 2) AS R2, D * 0E0 / 0E0 AS NANV, 1E0 / 0E0 AS INF FROM nums"

	checkRowsEverywhere(t, f, c, sel, []string{rowA, rowB, rowC},
		`{"sql":"SELECT K, D, V, ROUND(V, 15) AS R FROM latest WHERE K = 'b';"}`,
		`["b",1.0E7,-1234567898765432123.4567898765432150,-1234567898765432123.4567898765432150]`)
}

// checkRowsEverywhere reads sel's first rows (want, one JSON array each)
// through /query-stream and /query as push queries from the start, and
// pull's row from /query-stream once the table has it (pullWant), each
// exactly as the server writes them.
func checkRowsEverywhere(t *testing.T, f *fixture, c *http.Client, sel string, want []string, pull, pullWant string) {
	t.Helper()
	limit := fmt.Sprintf(" EMIT CHANGES LIMIT %d;", len(want))
	t.Run("query-stream push", func(t *testing.T) {
		r := f.post(t, c, "/query-stream", `{"sql":"`+sel+limit+`","properties":{"auto.offset.reset":"earliest"}}`, true)
		lines := strings.SplitAfterN(r.body, "\n", 2)
		if r.status != 200 || len(lines) != 2 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if diff := cmp.Diff(strings.Join(want, "\n")+"\n", lines[1]); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
	})
	t.Run("query push", func(t *testing.T) {
		r := f.post(t, c, "/query", ksqlBody(sel+limit, map[string]string{"auto.offset.reset": "earliest"}), true)
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.body), &msgs); err != nil || len(msgs) != len(want)+2 {
			t.Fatalf("%d %v\n%s", r.status, err, r.body)
		}
		var got, wantRows []string
		for i, m := range msgs[1 : len(want)+1] {
			got = append(got, string(m["row"]))
			wantRows = append(wantRows, `{"columns":`+want[i]+`}`)
		}
		if diff := cmp.Diff(wantRows, got); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
	})
	t.Run("query-stream pull", func(t *testing.T) {
		var r response
		// The table has the row once the query has processed it.
		testkafka.Await(t, 60*time.Second, "the pull query's row", func() bool {
			r = f.post(t, c, "/query-stream", pull, true)
			lines := strings.SplitAfterN(r.body, "\n", 2)
			return r.status == 200 && len(lines) == 2 && lines[1] != ""
		})
		if diff := cmp.Diff(pullWant+"\n", strings.SplitAfterN(r.body, "\n", 2)[1]); diff != "" {
			t.Errorf("row (-want +got):\n%s", diff)
		}
	})
}
