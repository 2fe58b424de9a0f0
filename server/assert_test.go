package server_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/registry"
)

// TestAssertEntities checks ASSERT TOPIC and ASSERT SCHEMA on /ksql:
// ksqlDB's assert_topic and assert_schema entities when they hold, a
// statement_error with the assertion's text when they do not.
func TestAssertEntities(t *testing.T) {
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "assert_srv")
	testkafka.CreateTopic(t, brokers, topic, 2)
	reg, err := registry.Serve("127.0.0.1:0", filepath.Join(t.TempDir(), "schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cl, err := registry.NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	id, err := cl.Register(context.Background(), "a-value", `"string"`)
	if err != nil {
		t.Fatal(err)
	}
	f := startWith(t, brokers, func(c *engine.Config) { c.SchemaRegistry = cl })
	c := &http.Client{}
	ids := strconv.Itoa(id)
	for _, s := range []struct {
		name, sql string
		status    int
		want      string
	}{
		{"topic", "ASSERT TOPIC `" + topic + "` WITH (PARTITIONS=2); ASSERT NOT EXISTS TOPIC nope;", 200, `[
			{"@type":"assert_topic","statementText":"ASSERT TOPIC ` + "`" + topic + "`" + ` WITH (PARTITIONS=2);","topicName":"` + topic + `","exists":true,"warnings":[]},
			{"@type":"assert_topic","statementText":"ASSERT NOT EXISTS TOPIC nope;","topicName":"nope","exists":false,"warnings":[]}]`},
		{"schema", "ASSERT SCHEMA SUBJECT 'a-value' ID " + ids + "; ASSERT NOT EXISTS SCHEMA SUBJECT 'b-value';", 200, `[
			{"@type":"assert_schema","statementText":"ASSERT SCHEMA SUBJECT 'a-value' ID ` + ids + `;","subject":"a-value","id":` + ids + `,"exists":true,"warnings":[]},
			{"@type":"assert_schema","statementText":"ASSERT NOT EXISTS SCHEMA SUBJECT 'b-value';","subject":"b-value","id":null,"exists":false,"warnings":[]}]`},
		{"failed", "ASSERT NOT EXISTS SCHEMA ID " + ids + " TIMEOUT 0 SECONDS; ASSERT TOPIC nope;", 400, `{"@type":"statement_error","error_code":40001,
			"message":"Schema with id ` + ids + ` exists","statementText":"ASSERT NOT EXISTS SCHEMA ID ` + ids + ` TIMEOUT 0 SECONDS;","entities":[]}`},
	} {
		r := f.post(t, c, "/ksql", ksqlBody(s.sql, nil), true)
		if diff := cmp.Diff(compact(t, s.want), r.body); r.status != s.status || diff != "" {
			t.Errorf("%s: status %d (want %d), body (-want +got):\n%s", s.name, r.status, s.status, diff)
		}
	}
}
