package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// An EMIT FINAL query with an idle timeout closes its last window once
// its input has been quiet that long; the same query without one keeps
// it open. The timeout comes from WITH (IDLE_TIMEOUT=…) or from the
// session property; under exactly-once the window's result must commit
// in a transaction like any other output.
func TestIdleTimeoutClosesLastWindow(t *testing.T) {
	cases := []struct {
		guarantee string
		with, set string // how the idle query gets its timeout
	}{
		{"at_least_once", "WITH (IDLE_TIMEOUT='1s') ", ""},
		{"exactly_once", "", "SET 'sluice.idle.timeout'='1s';"},
	}
	for _, c := range cases {
		t.Run(c.guarantee, func(t *testing.T) {
			brokers := testkafka.Brokers(t)
			in, idle, stuck := testkafka.Name(t, "bookings"), testkafka.Name(t, "idle_10s"), testkafka.Name(t, "stuck_10s")
			e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet, "processing.guarantee", c.guarantee)
			defer closeEngine(t, e)
			query := ` AS SELECT hotel, COUNT(*) AS n FROM ` + in + ` WINDOW TUMBLING 10s GROUP BY hotel EMIT FINAL;`
			res := execute(t, e, fmt.Sprintf(`
				CREATE STREAM %[1]s (hotel VARCHAR KEY, booked_at BIGINT)
				  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='booked_at', PARTITIONS=1);
				CREATE TABLE %[2]s%[3]s
				%[4]s
				CREATE TABLE %[5]s %[6]s%[3]s`, in, stuck, query, c.set, idle, c.with))
			stuckQ, idleQ := res[1].Query, res[len(res)-1].Query
			explain := shown(execute(t, e, "EXPLAIN "+idleQ.ID+";")[0])
			if !strings.Contains(explain, "\nidle timeout 1s: ") {
				t.Errorf("EXPLAIN %s does not show the idle timeout:\n%s", idleQ.ID, explain)
			}
			if strings.Contains(shown(execute(t, e, "EXPLAIN "+stuckQ.ID+";")[0]), "idle timeout") {
				t.Errorf("EXPLAIN %s shows an idle timeout it does not have", stuckQ.ID)
			}

			// Event times near now: outputs carry them, and a broker's
			// retention check would delete records from 1970.
			now := time.Now().UnixMilli()
			base := (now - 3_600_000) / 10_000 * 10_000
			v := func(at int64) string { return fmt.Sprintf(`{"booked_at":%d}`, base+at) }
			testkafka.Produce(t, brokers,
				rec(in, "ritz", v(1_000), now),
				rec(in, "savoy", v(5_000), now),
				rec(in, "ritz", v(12_000), now), // closes [0, 10s)
				rec(in, "ritz", v(19_500), now), // [10s, 20s) needs 0.5s more
			)
			window0 := []windowedOutput{
				{"ritz", base, `{"N":1}`, base + 1_000},
				{"savoy", base, `{"N":1}`, base + 5_000},
			}
			want := append(window0, windowedOutput{"ritz", base + 10_000, `{"N":2}`, base + 19_500})
			var got []windowedOutput
			deadline := time.Now().Add(15 * time.Second)
			for len(got) < len(want) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				got = windowedOutputs(t, brokers, idle)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s with an idle timeout (-want +got):\n%s", idle, diff)
			}
			// The query without one has read the same input, has had as
			// long to act on it, and stays at the first window.
			testkafka.Await(t, 10*time.Second, "the query without idle timeout to read all input", func() bool {
				return stuckQ.Metrics.RecordsIn.Load() >= 4
			})
			// Its first window is out once its transaction commits (under
			// exactly-once a rebalance can abort one and replay it, so wait
			// for the output rather than assume a time); then it must stay
			// at that window.
			testkafka.Await(t, 20*time.Second, "the first window without idle timeout", func() bool {
				return len(windowedOutputs(t, brokers, stuck)) >= len(window0)
			})
			time.Sleep(2 * time.Second)
			if diff := cmp.Diff(window0, windowedOutputs(t, brokers, stuck)); diff != "" {
				t.Errorf("%s without idle timeout (-want +got):\n%s", stuck, diff)
			}
			for _, q := range e.Queries() {
				if q.Err() != nil {
					t.Errorf("query %s failed: %v", q.ID, q.Err())
				}
			}
		})
	}
}

// A partition that stays silent after a restart still closes its last
// window: its task starts once the partition has been assigned for the
// idle timeout, restores the stream time it had, and moves on from there.
func TestIdleTimeoutAfterRestart(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc, dir := testkafka.Name(t, "bookings"), testkafka.Name(t, "idle_10s"), testkafka.Name(t, "svc"), t.TempDir()
	statements := fmt.Sprintf(`
		CREATE STREAM %[1]s (hotel VARCHAR KEY, booked_at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='booked_at', PARTITIONS=1);
		CREATE TABLE %[2]s WITH (IDLE_TIMEOUT='3s') AS SELECT hotel, COUNT(*) AS n FROM %[1]s
		  WINDOW TUMBLING 10s GROUP BY hotel EMIT FINAL;`, in, out)
	e := openEngine(t, brokers, dir, svc)
	q := execute(t, e, statements)[1].Query
	// Event times near now: outputs carry them, and a broker's retention
	// check would delete records from 1970 during the test.
	now := time.Now().UnixMilli()
	base := (now - 3_600_000) / 10_000 * 10_000
	v := func(at int64) string { return fmt.Sprintf(`{"booked_at":%d}`, base+at) }
	testkafka.Produce(t, brokers, rec(in, "ritz", v(1_000), now), rec(in, "ritz", v(12_000), now))
	window0 := []windowedOutput{{"ritz", base, `{"N":1}`, base + 1_000}}
	testkafka.Await(t, 10*time.Second, "the first window", func() bool { return len(windowedOutputs(t, brokers, out)) == 1 })
	testkafka.Await(t, 10*time.Second, "2 records read", func() bool { return q.Metrics.RecordsIn.Load() == 2 })
	closeEngine(t, e) // well before 3 s of idleness
	if diff := cmp.Diff(window0, windowedOutputs(t, brokers, out)); diff != "" {
		t.Fatalf("before the restart (-want +got):\n%s", diff)
	}

	e = openEngine(t, brokers, dir, svc)
	defer closeEngine(t, e)
	execute(t, e, statements)
	want := append(window0, windowedOutput{"ritz", base + 10_000, `{"N":1}`, base + 12_000})
	var got []windowedOutput
	for deadline := time.Now().Add(20 * time.Second); len(got) < len(want) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		got = windowedOutputs(t, brokers, out)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the restart, with no new input (-want +got):\n%s", diff)
	}
}
