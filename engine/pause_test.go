package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestPauseResume pauses a persistent query: it reads nothing more and
// shows PAUSED, while records wait in its input; resumed, it goes on
// from where it stopped, every record once.
func TestPauseResume(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "pause_in"), testkafka.Name(t, "pause_out")
	testkafka.CreateTopic(t, brokers, in, 2)
	rec := func(k string, v int) *kgo.Record { return vRecord(in, k, v) }
	testkafka.Produce(t, brokers, rec("a", 1), rec("b", 2))
	e := openConfig(t, testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet))
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM o WITH (KAFKA_TOPIC='%s') AS SELECT k, v * 10 AS v10 FROM s;`, in, out))
	q := res[1].Query
	testkafka.Await(t, 30*time.Second, "2 results", func() bool { return q.Metrics.RecordsOut.Load() >= 2 })
	state := func() string {
		for _, s := range execute(t, e, "SHOW QUERIES;")[0].Entity.(*engine.QueryList).Queries {
			if s.ID == q.ID {
				return s.State
			}
		}
		return ""
	}
	if msg := execute(t, e, "PAUSE "+q.ID+";")[0].Message; msg != fmt.Sprintf("Query %s paused.", q.ID) {
		t.Errorf("PAUSE said %q", msg)
	}
	if st := state(); st != engine.QueryPaused {
		t.Errorf("state %q after PAUSE, want %s", st, engine.QueryPaused)
	}
	testkafka.Produce(t, brokers, rec("c", 3), rec("d", 4))
	time.Sleep(1500 * time.Millisecond) // ten commit intervals
	if n := q.Metrics.RecordsOut.Load(); n != 2 {
		t.Fatalf("%d results while paused, want the 2 from before", n)
	}
	if msg := execute(t, e, "RESUME ALL;")[0].Message; msg != "All queries resumed." {
		t.Errorf("RESUME ALL said %q", msg)
	}
	testkafka.Await(t, 30*time.Second, "4 results", func() bool { return q.Metrics.RecordsOut.Load() >= 4 })
	if st := state(); st != "RUNNING" {
		t.Errorf("state %q after RESUME, want RUNNING", st)
	}
	if _, err := e.Execute(t.Context(), "PAUSE NO_SUCH_QUERY;"); err == nil {
		t.Errorf("PAUSE of an unknown query succeeded")
	}
	closeEngine(t, e)
	if n := len(testkafka.ReadAll(t, brokers, out)); n != 4 {
		t.Errorf("%d records in %s, want 4", n, out)
	}
}

// vRecord is a record of key k and JSON value {"v": v} on topic.
func vRecord(topic, k string, v int) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte(k), Value: []byte(fmt.Sprintf(`{"v":%d}`, v))}
}
