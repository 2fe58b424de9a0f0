package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestDiskFullFailsOnlyStatefulQuery runs a stateless and a stateful
// query, then raises the free-space reserve above what the disk has, as
// a filling disk would: the aggregation's next commit fails with "disk
// full", visibly in SHOW QUERIES and DESCRIBE EXTENDED, while the process
// and the stateless query go on.
func TestDiskFullFailsOnlyStatefulQuery(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, big, totals, svc := testkafka.Name(t, "orders"), testkafka.Name(t, "big"), testkafka.Name(t, "totals"), testkafka.Name(t, "svc")
	e := openEngine(t, brokers, t.TempDir(), svc)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, amount INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE STREAM %[2]s AS SELECT id, amount FROM %[1]s WHERE amount > 10;
		CREATE TABLE %[3]s AS SELECT id, SUM(amount) AS total FROM %[1]s GROUP BY id;`, in, big, totals))
	stateless, stateful := res[1].Query, res[2].Query
	now := time.Now().UnixMilli()
	testkafka.Produce(t, brokers, rec(in, "a", `{"amount":20}`, now), rec(in, "a", `{"amount":5}`, now))
	testkafka.Await(t, 30*time.Second, "both queries read 2 records", func() bool {
		return stateless.Metrics.RecordsIn.Load() == 2 && stateful.Metrics.RecordsIn.Load() == 2
	})

	execute(t, e, "SET 'sluice.state.min.free.bytes'='1152921504606846976';") // 1 EiB
	testkafka.Produce(t, brokers, rec(in, "b", `{"amount":30}`, now))
	testkafka.Await(t, 30*time.Second, "the aggregation fails", func() bool { return stateful.Err() != nil })
	if err := stateful.Err(); !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("aggregation failed with %v, want disk full", err)
	}
	listed := map[string]string{}
	for _, q := range execute(t, e, "SHOW QUERIES;")[0].Entity.(*engine.QueryList).Queries {
		listed[q.ID] = strings.Join(q.SinkTopics, ",") + " " + q.State
		if q.Error != "" {
			listed[q.ID] += ": " + q.Error
		}
	}
	if got := listed[stateful.ID]; !strings.HasPrefix(got, totals+" ERROR: ") || !strings.Contains(got, "disk full") {
		t.Errorf("SHOW QUERIES lists %s as %q, want %s ERROR: … disk full", stateful.ID, got, totals)
	}
	if got, want := listed[stateless.ID], big+" RUNNING"; got != want {
		t.Errorf("SHOW QUERIES lists %s as %q, want %q", stateless.ID, got, want)
	}
	if desc := shown(execute(t, e, "DESCRIBE "+totals+" EXTENDED;")[0]); !strings.Contains(desc, "Query FAILED: ") || !strings.Contains(desc, "disk full") {
		t.Errorf("DESCRIBE EXTENDED does not show the failure:\n%s", desc)
	}

	// The stateless query keeps going.
	testkafka.Produce(t, brokers, rec(in, "c", `{"amount":40}`, now))
	testkafka.Await(t, 30*time.Second, "the stateless query reads on", func() bool { return stateless.Metrics.RecordsIn.Load() == 4 })
	if stateless.Err() != nil {
		t.Fatalf("stateless query failed: %v", stateless.Err())
	}
	testkafka.Await(t, 30*time.Second, "3 big orders", func() bool { return len(outputs(t, brokers, big)) == 3 })
	var got []string
	for _, o := range outputs(t, brokers, big) {
		got = append(got, o.Key+"="+o.Value)
	}
	if want := `a={"AMOUNT":20} b={"AMOUNT":30} c={"AMOUNT":40}`; strings.Join(got, " ") != want {
		t.Errorf("stateless output = %v, want %s", got, want)
	}

	// Lowering the reserve again lets new stateful queries commit.
	execute(t, e, "SET 'sluice.state.min.free.bytes'='-1';")
	if _, err := e.Execute(t.Context(), "SET 'sluice.state.min.free.bytes'='lots';"); err == nil || !strings.Contains(err.Error(), "must be a number of bytes") {
		t.Errorf("SET of a bad reserve: err = %v", err)
	}
	// Closing reports the failed query, and nothing else.
	if err := e.Close(); err == nil || !strings.Contains(err.Error(), stateful.ID) || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("close: %v, want the aggregation's disk full", err)
	}
}
