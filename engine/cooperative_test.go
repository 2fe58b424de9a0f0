package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// restoreCount is how many store partition restores a query's only
// store has finished on one engine.
func restoreCount(e *engine.Engine) int64 {
	var n int64
	for _, r := range e.Queries()[0].Metrics.Restores() {
		n += r.Count
	}
	return n
}

// TestCooperativeRebalanceKeepsTasks runs a stateful query on one
// instance over four partitions, then starts a second: the rebalance is
// cooperative, so the first instance gives up some partitions and keeps
// the tasks (and state) of the others without restoring them again,
// which an eager rebalance, revoking everything first, would.
func TestCooperativeRebalanceKeepsTasks(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "clicks"), testkafka.Name(t, "per_user"), testkafka.Name(t, "svc")
	sql := fmt.Sprintf(`
		CREATE STREAM %[1]s (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=4);
		CREATE TABLE %[2]s AS SELECT user_id, COUNT(*) AS views FROM %[1]s GROUP BY user_id;`, in, out)
	var recs []*kgo.Record
	for i := range 200 {
		recs = append(recs, rec(in, fmt.Sprintf("user%d", i%20), `{"page":"home"}`, time.Now().UnixMilli()))
	}
	e1 := openEngine(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e1)
	execute(t, e1, sql)
	testkafka.Produce(t, brokers, recs...)
	q1 := e1.Queries()[0]
	testkafka.Await(t, 60*time.Second, "first instance counts every record", func() bool {
		return q1.Metrics.RecordsIn.Load() >= 200
	})
	if got := restoreCount(e1); got != 4 {
		t.Fatalf("first instance alone: %d restores, want 4", got)
	}

	e2 := openEngine(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e2)
	execute(t, e2, sql)
	testkafka.Await(t, 60*time.Second, "partitions split 2 and 2, tasks running", func() bool {
		return runningTasks(e1) == 2 && runningTasks(e2) == 2
	})
	if got := restoreCount(e1); got != 4 {
		t.Errorf("first instance after the second joined: %d restores, want 4 (kept partitions keep their tasks)", got)
	}
	if got := restoreCount(e2); got != 2 {
		t.Errorf("second instance: %d restores, want 2", got)
	}
}

func runningTasks(e *engine.Engine) int {
	n := 0
	for _, ti := range e.Queries()[0].Tasks() {
		if ti.State == "RUNNING" {
			n++
		}
	}
	return n
}
