package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// TestCatalogStatements runs the statements a REST client sends (LIST as
// SHOW's synonym, SHOW TOPICS, DESCRIBE, DROP) and checks the structured
// results next to the text.
func TestCatalogStatements(t *testing.T) {
	brokers := testkafka.Brokers(t)
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	topic := testkafka.Name(t, "orders")
	execute(t, e, `CREATE STREAM orders (id VARCHAR KEY, amount INT) WITH (KAFKA_TOPIC='`+topic+`', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE STREAM big AS SELECT id, amount FROM orders WHERE amount > 10;`)

	one := func(sql string) *engine.Result {
		t.Helper()
		return execute(t, e, sql)[0]
	}
	streams := []engine.SourceSummary{
		{Name: "BIG", Kind: parser.KindStream, Topic: "BIG", KeyFormat: "KAFKA", ValueFormat: "JSON"},
		{Name: "ORDERS", Kind: parser.KindStream, Topic: topic, KeyFormat: "KAFKA", ValueFormat: "JSON"},
	}
	query := engine.QuerySummary{ID: "CSAS_BIG", State: "RUNNING", Sources: []string{"ORDERS"}, Sinks: []string{"BIG"}, SinkTopics: []string{"BIG"},
		Statement: "CREATE STREAM big AS SELECT id, amount FROM orders WHERE amount > 10"}
	tests := []struct {
		sql  string
		want engine.Entity
	}{
		{"LIST STREAMS;", &engine.SourceList{Kind: parser.KindStream, Sources: streams}},
		{"SHOW STREAMS;", &engine.SourceList{Kind: parser.KindStream, Sources: streams}},
		{"SHOW TABLES;", &engine.SourceList{Kind: parser.KindTable, Sources: []engine.SourceSummary{}}},
		{"LIST QUERIES;", &engine.QueryList{Queries: []engine.QuerySummary{query}}},
		{"DESCRIBE orders;", &engine.SourceDescription{SourceSummary: streams[1], Partitions: 2,
			Fields:      []engine.Field{{Name: "ID", Type: types.StringType, Key: true}, {Name: "AMOUNT", Type: types.IntegerType}},
			Statement:   "CREATE STREAM orders (id VARCHAR KEY, amount INT) WITH (KAFKA_TOPIC='" + topic + "', VALUE_FORMAT='JSON', PARTITIONS=2)",
			ReadQueries: []engine.QuerySummary{query}}},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, one(tc.sql).Entity); diff != "" {
				t.Errorf("entity (-want +got):\n%s", diff)
			}
		})
	}

	// SHOW TOPICS lists the user topics, not internal ones.
	tl := one("SHOW TOPICS;").Entity.(*engine.TopicList)
	found := map[string][]int{}
	for _, tp := range tl.Topics {
		found[tp.Name] = tp.Replicas
	}
	if got := found[topic]; !cmp.Equal(got, []int{1, 1}) {
		t.Errorf("SHOW TOPICS: %s has replicas %v, want [1 1]; topics %v", topic, got, found)
	}

	// DROP refuses a source that a query reads, drops the query's own
	// sink with the query, and DELETE TOPIC deletes the topic.
	_, err := e.Execute(context.Background(), "DROP STREAM orders;")
	if !errors.Is(err, planner.ErrInvalid) {
		t.Fatalf("DROP of a source a query reads: error %v, want ErrInvalid", err)
	}
	_, err = e.Execute(context.Background(), "DROP TABLE big;")
	if !errors.Is(err, planner.ErrInvalid) {
		t.Fatalf("DROP TABLE of a stream: error %v, want ErrInvalid", err)
	}
	msgs := []string{}
	for _, r := range execute(t, e, "DROP STREAM big; DROP STREAM orders DELETE TOPIC; DROP STREAM IF EXISTS orders;") {
		msgs = append(msgs, r.Message)
	}
	want := []string{"Source `BIG` (topic: BIG) was dropped.", "Source `ORDERS` (topic: " + topic + ") was dropped.", "Source `ORDERS` does not exist."}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("DROP messages (-want +got):\n%s", diff)
	}
	if n := len(e.Queries()); n != 0 {
		t.Errorf("%d queries left after dropping their sink, want 0", n)
	}
	if _, err := e.Execute(context.Background(), "DROP STREAM orders;"); !errors.Is(err, planner.ErrNotFound) {
		t.Errorf("DROP of a dropped stream: error %v, want ErrNotFound", err)
	}
	// Metadata answers may lag a deletion briefly.
	testkafka.Await(t, 10*time.Second, "topic "+topic+" gone from SHOW TOPICS", func() bool {
		for _, tp := range one("SHOW TOPICS;").Entity.(*engine.TopicList).Topics {
			if tp.Name == topic {
				return false
			}
		}
		return true
	})
}

// TestRequestProperties checks that properties passed with a request
// override the engine's for that request only.
func TestRequestProperties(t *testing.T) {
	brokers := testkafka.Brokers(t)
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	ctx := engine.WithProperties(context.Background(), map[string]string{"Auto.Offset.Reset": "latest"})
	get := func(ctx context.Context) string {
		res, err := e.Execute(ctx, "SHOW PROPERTIES;")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res[0].Entity.(*engine.PropertyList).Properties {
			if p.Name == "auto.offset.reset" {
				return p.Value
			}
		}
		return ""
	}
	if got := get(ctx); got != "latest" {
		t.Errorf("with the request's override: %q, want latest", got)
	}
	if got := get(context.Background()); got != "earliest" {
		t.Errorf("without it: %q, want the engine's earliest", got)
	}
}

// TestCreateOverNewTopic creates a second stream over the topic the first
// CREATE just made: the engine must see the topic at once, not through
// the client's metadata cache (which answered "does not exist").
func TestCreateOverNewTopic(t *testing.T) {
	brokers := testkafka.Brokers(t)
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	topic := testkafka.Name(t, "t")
	res := execute(t, e, `CREATE STREAM a (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='`+topic+`', VALUE_FORMAT='JSON', PARTITIONS=3);
		CREATE STREAM b (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='`+topic+`', VALUE_FORMAT='JSON');
		DESCRIBE b;`)
	if got := res[2].Entity.(*engine.SourceDescription).Partitions; got != 3 {
		t.Errorf("b has %d partitions, want the topic's 3", got)
	}
}
