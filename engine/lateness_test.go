package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// A query over out-of-order input measures how late its source's records
// arrive; DESCRIBE EXTENDED shows it, and EXPLAIN warns about a grace
// that would have dropped more than 1% of them.
func TestLatenessDescribeAndExplain(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "bookings"), testkafka.Name(t, "hotel_1m")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (hotel VARCHAR KEY, price DOUBLE, booked_at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='booked_at', PARTITIONS=1);
		CREATE TABLE %[2]s AS
		  SELECT hotel, COUNT(*) AS bookings FROM %[1]s
		  WINDOW TUMBLING 1m GRACE 1s GROUP BY hotel EMIT CHANGES;`, in, out))
	q := res[1].Query

	// 200 records on one partition: 170 on time, one second apart; after
	// every fifth of them from the tenth on, one late record, behind
	// stream time by 1.2s (20 of them), 4s (8), 7s and 9s.
	late := append(append(repeatMs(1200, 20), repeatMs(4000, 8)...), 7000, 9000)
	const base = 1_700_000_000_000
	var recs []*kgo.Record
	now := time.Now().UnixMilli() // the broker's retention must not delete the input
	add := func(at int64) {
		recs = append(recs, rec(in, "ritz", fmt.Sprintf(`{"price":1,"booked_at":%d}`, at), now))
	}
	for i := int64(0); i < 170; i++ {
		streamTime := base + i*1000
		add(streamTime)
		if i >= 10 && i%5 == 0 && len(late) > 0 {
			add(streamTime - late[0])
			late = late[1:]
		}
	}
	if len(recs) != 200 {
		t.Fatalf("test input has %d records, want 200", len(recs))
	}
	testkafka.Produce(t, brokers, recs...)
	testkafka.Await(t, 30*time.Second, "200 records read", func() bool { return q.Metrics.RecordsIn.Load() >= 200 })

	// Ranks: 1–170 on time, 171–190 1.2s, 191–198 4s, 199 7s, 200 9s.
	// Quantiles round up to their histogram bucket (4s to 4.031s) and are
	// shown to two digits.
	desc := shown(execute(t, e, "DESCRIBE "+in+" EXTENDED;")[0])
	wantDesc := "\nLateness (records behind stream time, 200 seen): p50 0s, p90 1.2s, p99 4s, max 9s\n" +
		"Grace to keep 99%: 4s, 99.9%: 9s\n"
	if !strings.HasSuffix(desc, wantDesc) {
		t.Errorf("DESCRIBE %s EXTENDED:\n%s\nwant it to end with:\n%s", in, desc, wantDesc)
	}

	// 30 records are more than 1s late; p99 (4.031s) rounds up to 5s.
	warning := fmt.Sprintf("WARNING: GRACE 1s would have dropped 15.0%% of the 200 records recently read from %s (p99 lateness 4s); GRACE 5s keeps 99%%\n", in)
	explains := []struct {
		stmt, want string // want "": no warning
	}{
		{"EXPLAIN " + q.ID + ";", warning},
		{fmt.Sprintf("EXPLAIN SELECT hotel, COUNT(*) FROM %s WINDOW TUMBLING 1m GRACE 1200ms GROUP BY hotel EMIT CHANGES;", in),
			fmt.Sprintf("WARNING: GRACE 1200ms would have dropped 5.0%% of the 200 records recently read from %s (p99 lateness 4s); GRACE 5s keeps 99%%\n", in)},
		// Without GRACE, EMIT FINAL waits for nothing: every late record counts.
		{fmt.Sprintf("EXPLAIN CREATE TABLE x AS SELECT hotel, COUNT(*) FROM %s WINDOW HOPPING 1m ADVANCE 10s GROUP BY hotel EMIT FINAL;", in),
			fmt.Sprintf("WARNING: GRACE 0s would have dropped 15.0%% of the 200 records recently read from %s (p99 lateness 4s); GRACE 5s keeps 99%%\n", in)},
		{fmt.Sprintf("EXPLAIN SELECT hotel, COUNT(*) FROM %s WINDOW TUMBLING 1m GRACE 5s GROUP BY hotel EMIT CHANGES;", in), ""},
		{fmt.Sprintf("EXPLAIN SELECT hotel, COUNT(*) FROM %s GROUP BY hotel EMIT CHANGES;", in), ""},
	}
	for _, x := range explains {
		text := shown(execute(t, e, x.stmt)[0])
		lines := strings.SplitAfter(text, "\n")
		last := lines[len(lines)-2] // the text ends with a newline
		if x.want == "" && strings.Contains(text, "WARNING") || x.want != "" && last != x.want {
			t.Errorf("%s\n%s\nwant last line %q", x.stmt, text, x.want)
		}
	}
}

func repeatMs(ms int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = ms
	}
	return out
}
