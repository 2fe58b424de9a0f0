package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/metrics"
)

// TestMetricsExposition runs a windowed aggregation over the embedded
// broker with one late and one unreadable record and scrapes /metrics:
// every per-query family has its exact value, and franz-go's client
// metrics are there, labelled by client.
func TestMetricsExposition(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "clicks"), testkafka.Name(t, "per_user"), testkafka.Name(t, "svc")
	reg := metrics.New()
	e, err := engine.Open(context.Background(), engine.Config{
		ConnOpts:   []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)},
		DataDir:    t.TempDir(),
		ServiceID:  svc,
		Properties: map[string]string{"auto.offset.reset": "earliest", "commit.interval.ms": "100"},
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		ClientOpts: reg.ClientOpts,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := reg.Watch(e); err != nil {
		t.Fatal(err)
	}
	res, err := e.Execute(context.Background(), fmt.Sprintf(`
		CREATE STREAM %[1]s (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE %[2]s AS SELECT user_id, COUNT(*) AS n FROM %[1]s
		  WINDOW TUMBLING (SIZE 1 MINUTE, GRACE PERIOD 0 SECONDS) GROUP BY user_id EMIT CHANGES;`, in, out))
	if err != nil {
		t.Fatal(err)
	}
	q := res[1].Query
	base := time.Now().Truncate(time.Hour).Add(-time.Hour).UnixMilli()
	rec := func(key, value string, ts int64) *kgo.Record {
		return &kgo.Record{Topic: in, Key: []byte(key), Value: []byte(value), Timestamp: time.UnixMilli(ts)}
	}
	testkafka.Produce(t, brokers,
		rec("u1", `{"page":"a"}`, base),
		rec("u2", `{"page":"b"}`, base+1000),
		rec("u1", `{"page":"c"}`, base+61_000), // stream time 61s: [0, 60s) closed
		rec("u2", `{"page":"d"}`, base+2000),   // late
		rec("u1", `not json`, base+62_000),     // unreadable
	)
	testkafka.Await(t, 30*time.Second, "5 records read", func() bool { return q.Metrics.RecordsIn.Load() == 5 })
	testkafka.Await(t, 30*time.Second, "3 windows committed", func() bool {
		st, err := e.QueryState(q.ID)
		return err == nil && len(st) == 1 && st[0].Entries == 3
	})

	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	text := string(body)
	store := q.ID + "-Aggregate-Materialize"
	for _, want := range []string{
		fmt.Sprintf(`sluice_records_in_total{query="%s"} 5`, q.ID),
		fmt.Sprintf(`sluice_records_out_total{query="%s"} 3`, q.ID),
		fmt.Sprintf(`sluice_late_records_dropped_total{query="%s"} 1`, q.ID),
		fmt.Sprintf(`sluice_errors_total{kind="deserialize",query="%s"} 1`, q.ID),
		fmt.Sprintf(`sluice_state_entries{query="%s",store="%s"} 3`, q.ID, store),
		fmt.Sprintf(`sluice_restore_records_total{query="%s",store="%s"} 0`, q.ID, store),
		fmt.Sprintf(`sluice_consumer_lag{query="%s"} 0`, q.ID),
		fmt.Sprintf(`sluice_query_running{query="%s"} 1`, q.ID),
		fmt.Sprintf(`sluice_state_bytes{query="%s",store="%s"} `, q.ID, store),
		fmt.Sprintf(`sluice_restore_seconds{query="%s",store="%s"} `, q.ID, store),
		// franz-go's own metrics, one set per client.
		`sluice_kafka_connects_total{client_id="_sluice-` + svc + `-query-` + q.ID,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", text)
	}
}
