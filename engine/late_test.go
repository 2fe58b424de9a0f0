package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestLateTopicThroughKafka sends a record after its window closed: it
// lands in the query's LATE_TOPIC with its event time as the record time
// and headers naming the query, the window and the stream time, it is
// counted, and the window results stay as if it never came.
func TestLateTopicThroughKafka(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, late, svc := testkafka.Name(t, "bookings"), testkafka.Name(t, "hotel_5m"), testkafka.Name(t, "late"), testkafka.Name(t, "svc")
	e := openEngine(t, brokers, t.TempDir(), svc)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (hotel VARCHAR KEY, price DOUBLE, booked_at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='booked_at', PARTITIONS=1);
		CREATE TABLE %[2]s WITH (LATE_TOPIC='%[3]s') AS
		  SELECT hotel, COUNT(*) AS bookings, SUM(price) AS revenue
		  FROM %[1]s WINDOW TUMBLING 5m GRACE 1m GROUP BY hotel EMIT CHANGES;`, in, out, late))
	q := res[1].Query
	// Event times near now, so no broker retention check deletes them.
	const m = 60_000
	base := time.Now().Add(-time.Hour).UnixMilli() / (5 * m) * (5 * m)
	v := func(price float64, at int64) string {
		return fmt.Sprintf(`{"price":%v,"booked_at":%d}`, price, base+at)
	}
	lateValue := v(999, 2*m)
	testkafka.Produce(t, brokers,
		rec(in, "ritz", v(220, 0), base),
		rec(in, "ritz", v(250, 4*m), base),
		rec(in, "ritz", v(200, 6*m), base), // stream time 6m: [0, 5m) closed at 5m + 1m
		rec(in, "ritz", lateValue, base),   // late for [0, 5m)
		rec(in, "ritz", v(210, 7*m), base),
	)
	testkafka.Await(t, 30*time.Second, "5 records processed", func() bool { return q.Metrics.RecordsIn.Load() >= 5 })
	testkafka.Await(t, 30*time.Second, "4 results", func() bool { return q.Metrics.RecordsOut.Load() >= 4 })
	if n := q.Metrics.LateDropped.Load(); n != 1 {
		t.Errorf("late records counted = %d, want 1", n)
	}
	closeEngine(t, e)

	got := windowedOutputs(t, brokers, out)
	want := []windowedOutput{
		{"ritz", base, `{"BOOKINGS":1,"REVENUE":220.0}`, base},
		{"ritz", base, `{"BOOKINGS":2,"REVENUE":470.0}`, base + 4*m},
		{"ritz", base + 5*m, `{"BOOKINGS":1,"REVENUE":200.0}`, base + 6*m},
		{"ritz", base + 5*m, `{"BOOKINGS":2,"REVENUE":410.0}`, base + 7*m},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("window results (-want +got):\n%s", diff)
	}

	lates := testkafka.ReadAll(t, brokers, late)
	if len(lates) != 1 {
		t.Fatalf("late topic holds %d records, want 1", len(lates))
	}
	r := lates[0]
	headers := map[string]string{}
	for _, h := range r.Headers {
		headers[h.Key] = string(h.Value)
	}
	wantHeaders := map[string]string{
		"sluice.query":        q.ID,
		"sluice.window.start": fmt.Sprint(base),
		"sluice.window.end":   fmt.Sprint(base + 5*m),
		"sluice.stream.time":  fmt.Sprint(base + 6*m),
		"sluice.topic":        in,
		"sluice.partition":    "0",
		"sluice.offset":       "3",
	}
	if diff := cmp.Diff(wantHeaders, headers); diff != "" {
		t.Errorf("late record headers (-want +got):\n%s", diff)
	}
	if string(r.Key) != "ritz" || string(r.Value) != lateValue || r.Timestamp.UnixMilli() != base+2*m {
		t.Errorf("late record = %s=%s at %d, want ritz=%s at %d (its event time)", r.Key, r.Value, r.Timestamp.UnixMilli(), lateValue, base+2*m)
	}
}
