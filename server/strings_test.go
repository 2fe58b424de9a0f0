package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestQueryRowStrings reads strings back through /query-stream (push, and
// pull on a table) and /query escaped as ksqlDB's Jackson escapes them:
// '"', '\\' and control characters only (\b \t \n \f \r by name, the
// others as upper-case \u00XX); HTML characters, U+2028 and non-ASCII
// as they are, in map keys and struct fields too.
func TestQueryRowStrings(t *testing.T) {
	brokers := testkafka.Brokers(t)
	f := startWith(t, brokers, nil)
	c := clients()["HTTP/1.1"]
	topic := testkafka.Name(t, "strings")
	testkafka.CreateTopic(t, brokers, topic, 1)
	testkafka.Produce(t, brokers, &kgo.Record{Topic: topic, Key: []byte("a"),
		Value: []byte(`{"S": "<a&b> \u2028 é \u0001\u001f\b\f\t \"q\" \\", "M": {"<k>": "v&"}, "T": {"F": "x<y"}}`)})

	create := fmt.Sprintf(`CREATE STREAM strs (K STRING KEY, S STRING, M MAP<STRING, STRING>, T STRUCT<F STRING>) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE TABLE latest AS SELECT K, LATEST_BY_OFFSET(S) AS S FROM strs GROUP BY K;`, topic)
	if r := f.post(t, c, "/ksql", ksqlBody(create, map[string]string{"auto.offset.reset": "earliest"}), true); r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	str := `"<a&b> ` + "\u2028" + ` é \u0001\u001F\b\f\t \"q\" \\"`
	row := `["a",` + str + `,{"<k>":"v&"},{"F":"x<y"}]`
	sel := "SELECT K, S, M, T FROM strs"

	t.Run("query-stream push", func(t *testing.T) {
		r := f.post(t, c, "/query-stream", `{"sql":"`+sel+` EMIT CHANGES LIMIT 1;","properties":{"auto.offset.reset":"earliest"}}`, true)
		lines := strings.SplitAfterN(r.body, "\n", 2)
		if r.status != 200 || len(lines) != 2 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if diff := cmp.Diff(row+"\n", lines[1]); diff != "" {
			t.Errorf("row (-want +got):\n%s", diff)
		}
	})
	t.Run("query push", func(t *testing.T) {
		r := f.post(t, c, "/query", ksqlBody(sel+" EMIT CHANGES LIMIT 1;", map[string]string{"auto.offset.reset": "earliest"}), true)
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.body), &msgs); err != nil || len(msgs) != 3 {
			t.Fatalf("%d %v\n%s", r.status, err, r.body)
		}
		if diff := cmp.Diff(`{"columns":`+row+`}`, string(msgs[1]["row"])); diff != "" {
			t.Errorf("row (-want +got):\n%s", diff)
		}
	})
	t.Run("query-stream pull", func(t *testing.T) {
		pull := `{"sql":"SELECT K, S FROM latest WHERE K = 'a';"}`
		want := `["a",` + str + `]` + "\n"
		var r response
		// The table has the row once the query has processed it.
		testkafka.Await(t, 60*time.Second, "the pull query's row", func() bool {
			r = f.post(t, c, "/query-stream", pull, true)
			lines := strings.SplitAfterN(r.body, "\n", 2)
			return r.status == 200 && len(lines) == 2 && lines[1] != ""
		})
		if diff := cmp.Diff(want, strings.SplitAfterN(r.body, "\n", 2)[1]); diff != "" {
			t.Errorf("row (-want +got):\n%s", diff)
		}
	})
}
