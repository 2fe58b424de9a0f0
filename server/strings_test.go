package server_test

import (
	"fmt"
	"testing"

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

	checkRowsEverywhere(t, f, c, sel, []string{row},
		`{"sql":"SELECT K, S FROM latest WHERE K = 'a';"}`, `["a",`+str+`]`)
}
