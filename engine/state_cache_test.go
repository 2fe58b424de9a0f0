package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestStateCacheBytesProperty checks that statestore.cache.max.bytes
// reaches the aggregate of each query from wherever it was set: the
// server's configuration, SET (0 turns the cache off), a request's
// properties, and UNSET (which removes the configuration's value too, as
// for every property) back to the default. The query run without the cache must still write
// every update, exactly.
func TestStateCacheBytesProperty(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, svc := testkafka.Name(t, "bids"), testkafka.Name(t, "svc")
	testkafka.CreateTopic(t, brokers, in, 1)
	e := openEngineLog(t, brokers, t.TempDir(), svc, quiet, "statestore.cache.max.bytes", "65536")
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`CREATE STREAM %[1]s (auction VARCHAR KEY, price BIGINT)
		WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON');`, in))
	create := func(ctx context.Context, name string) *engine.Query {
		t.Helper()
		out := testkafka.Name(t, name)
		if _, err := e.Execute(ctx, fmt.Sprintf(`CREATE TABLE %s AS SELECT auction, COUNT(*) AS n, SUM(price) AS total
			FROM %s WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY auction EMIT CHANGES;`, out, in)); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		qs := e.Queries()
		return qs[len(qs)-1]
	}
	cacheBytes := func(q *engine.Query) int64 {
		t.Helper()
		for _, sub := range q.Plan.Topology.Subs {
			for _, n := range sub.Nodes {
				if a, ok := n.(*exec.AggregateNode); ok {
					return a.CacheBytes
				}
			}
		}
		t.Fatalf("query %s has no aggregate", q.ID)
		return 0
	}
	ctx := context.Background()
	fromConfig := create(ctx, "config")
	execute(t, e, "SET 'statestore.cache.max.bytes'='0';")
	off := create(ctx, "off")
	requested := create(engine.WithProperties(ctx, map[string]string{"statestore.cache.max.bytes": "4096"}), "request")
	execute(t, e, "UNSET 'statestore.cache.max.bytes';")
	unset := create(ctx, "unset")
	for _, c := range []struct {
		q    *engine.Query
		want int64
	}{{fromConfig, 65536}, {off, -1}, {requested, 4096}, {unset, exec.DefaultAggCacheBytes}} {
		if got := cacheBytes(c.q); got != c.want {
			t.Errorf("query %s: the aggregate's cache bound is %d, want %d", c.q.ID, got, c.want)
		}
	}

	testkafka.Produce(t, brokers,
		rec(in, "a", `{"price":1}`, 1_000),
		rec(in, "b", `{"price":2}`, 2_000),
		rec(in, "a", `{"price":3}`, 3_000),
		rec(in, "a", `{"price":4}`, 12_000),
		rec(in, "b", `{"price":5}`, 13_000),
		rec(in, "a", `{"price":6}`, 14_000),
	)
	// RecordsOut counts a result when it is handed to the producer, before
	// the broker has it: wait for the topic itself.
	var out []*kgo.Record
	testkafka.Await(t, 30*time.Second, "6 results in the sink topic", func() bool {
		out = testkafka.ReadAll(t, brokers, off.Plan.Topology.SinkTopic)
		return len(out) >= 6
	})
	var got []string
	for _, r := range out {
		got = append(got, fmt.Sprintf("%s@%d %s", r.Key[:1], r.Timestamp.UnixMilli(), r.Value))
	}
	want := []string{
		`a@1000 {"N":1,"TOTAL":1}`, `b@2000 {"N":1,"TOTAL":2}`, `a@3000 {"N":2,"TOTAL":4}`,
		`a@12000 {"N":1,"TOTAL":4}`, `b@13000 {"N":1,"TOTAL":5}`, `a@14000 {"N":2,"TOTAL":10}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output without the cache (-want +got):\n%s", diff)
	}
}
