package engine_test

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/types"
)

// TestWindowedAggregationChangelogRestores runs a windowed aggregation
// under exactly-once in two batches of bookings, the second after a
// restart with an empty data directory. The aggregate folds records into
// its cache and writes a window's state once per commit: the changelog
// must hold, per window, the state a restore needs (read here and
// decoded), at most one record per booking, and the restarted engine,
// rebuilt from it, must carry the sums on exactly.
func TestWindowedAggregationChangelogRestores(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "bookings"), testkafka.Name(t, "hotel_5m"), testkafka.Name(t, "svc")
	sql := fmt.Sprintf(`
		CREATE STREAM %[1]s (hotel VARCHAR KEY, price DOUBLE, booked_at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='booked_at', PARTITIONS=1);
		CREATE TABLE %[2]s AS
		  SELECT hotel, COUNT(*) AS bookings, SUM(price) AS revenue
		  FROM %[1]s WINDOW TUMBLING 5m GRACE 2m GROUP BY hotel EMIT CHANGES;`, in, out)
	const m = 60_000
	v := func(price float64, at int64) string { return fmt.Sprintf(`{"price":%v,"booked_at":%d}`, price, at) }
	open := func() *engine.Engine {
		e := openEngineLog(t, brokers, t.TempDir(), svc, quiet, "processing.guarantee", "exactly_once")
		execute(t, e, sql)
		return e
	}
	e := open()
	q := e.Queries()[0]
	testkafka.Produce(t, brokers,
		rec(in, "ritz", v(220, 0*m), 1),
		rec(in, "savoy", v(100, 1*m), 2),
		rec(in, "ritz", v(250, 4*m), 3),
		rec(in, "ritz", v(200, 6*m), 4),
		rec(in, "savoy", v(120, 3*m), 5),
	)
	testkafka.Await(t, 30*time.Second, "5 results", func() bool { return q.Metrics.RecordsOut.Load() >= 5 })
	changelog := "_sluice-" + svc + "-query-" + q.ID + "-Aggregate-Materialize-changelog"
	closeEngine(t, e)

	// The changelog's last record per window is that window's state:
	// maxTs, then COUNT and SUM.
	recs := testkafka.ReadAll(t, brokers, changelog)
	if len(recs) == 0 || len(recs) > 5 {
		t.Fatalf("changelog holds %d records for 5 bookings, want 1 to 5", len(recs))
	}
	state := map[string]string{}
	for _, r := range recs {
		start := int64(binary.BigEndian.Uint64(r.Key[:8]) ^ (1 << 63))
		group, _, err := types.DecodeValues(r.Key[8:])
		if err != nil {
			t.Fatalf("changelog key %x: %v", r.Key, err)
		}
		maxTs, rest, err := types.DecodeValue(r.Value)
		if err != nil {
			t.Fatalf("changelog value %x: %v", r.Value, err)
		}
		accs, _, err := types.DecodeValues(rest)
		if err != nil {
			t.Fatalf("changelog value %x: %v", r.Value, err)
		}
		state[fmt.Sprintf("%v [%dm]", group[0], start/m)] = fmt.Sprintf("%v %v @%dm", accs[0], accs[1], maxTs.(int64)/m)
	}
	wantState := map[string]string{
		"ritz [0m]":  "2 470 @4m",
		"savoy [0m]": "2 220 @3m",
		"ritz [5m]":  "1 200 @6m",
	}
	if diff := cmp.Diff(wantState, state); diff != "" {
		t.Fatalf("window state in the changelog (-want +got):\n%s", diff)
	}

	// Empty data directory: the state comes back from the changelog.
	e = open()
	q = e.Queries()[0]
	testkafka.Produce(t, brokers,
		rec(in, "savoy", v(80, 2*m), 6), // [0,5m) is open until 7m
		rec(in, "ritz", v(210, 9*m), 7),
		rec(in, "ritz", v(999, 1*m), 8), // stream time 9m: [0,5m) closed, dropped
	)
	testkafka.Await(t, 30*time.Second, "2 more results", func() bool { return q.Metrics.RecordsOut.Load() >= 2 })
	testkafka.Await(t, 30*time.Second, "3 records processed", func() bool { return q.Metrics.RecordsIn.Load() >= 3 })
	closeEngine(t, e)
	want := []windowedOutput{
		{"ritz", 0, `{"BOOKINGS":1,"REVENUE":220.0}`, 0},
		{"savoy", 0, `{"BOOKINGS":1,"REVENUE":100.0}`, 1 * m},
		{"ritz", 0, `{"BOOKINGS":2,"REVENUE":470.0}`, 4 * m},
		{"ritz", 5 * m, `{"BOOKINGS":1,"REVENUE":200.0}`, 6 * m},
		{"savoy", 0, `{"BOOKINGS":2,"REVENUE":220.0}`, 3 * m},
		{"savoy", 0, `{"BOOKINGS":3,"REVENUE":300.0}`, 3 * m},
		{"ritz", 5 * m, `{"BOOKINGS":2,"REVENUE":410.0}`, 9 * m},
	}
	if diff := cmp.Diff(want, windowedOutputs(t, brokers, out)); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

// TestCountDistinctChangelogRestores runs COUNT_DISTINCT of guests per
// hotel in tumbling windows under exactly-once, in two batches, the second
// after a restart with an empty data directory. The changelog must carry
// each window's distinct guests as entries of their own beside the
// window's count, never the set; the restarted engine, rebuilt from it,
// must know which guests each window has seen: a guest seen before the
// restart does not count again, a new one does.
func TestCountDistinctChangelogRestores(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "stays"), testkafka.Name(t, "guests_5m"), testkafka.Name(t, "svc")
	sql := fmt.Sprintf(`
		CREATE STREAM %[1]s (hotel VARCHAR KEY, guest VARCHAR, at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='at', PARTITIONS=1);
		CREATE TABLE %[2]s AS
		  SELECT hotel, COUNT_DISTINCT(guest) AS guests, COUNT(*) AS stays
		  FROM %[1]s WINDOW TUMBLING 5m GRACE 2m GROUP BY hotel EMIT CHANGES;`, in, out)
	const m = 60_000
	v := func(guest string, at int64) string { return fmt.Sprintf(`{"guest":%q,"at":%d}`, guest, at) }
	open := func() *engine.Engine {
		e := openEngineLog(t, brokers, t.TempDir(), svc, quiet, "processing.guarantee", "exactly_once")
		execute(t, e, sql)
		return e
	}
	e := open()
	q := e.Queries()[0]
	testkafka.Produce(t, brokers,
		rec(in, "ritz", v("ann", 0*m), 1),
		rec(in, "ritz", v("bob", 1*m), 2),
		rec(in, "ritz", v("ann", 2*m), 3),
		rec(in, "savoy", v("ann", 3*m), 4),
	)
	testkafka.Await(t, 30*time.Second, "4 results", func() bool { return q.Metrics.RecordsOut.Load() >= 4 })
	changelog := "_sluice-" + svc + "-query-" + q.ID + "-Aggregate-Materialize-changelog"
	closeEngine(t, e)

	// The changelog's last record per key: a window's state (maxTs, then
	// COUNT_DISTINCT's count and COUNT), or a member, start ‖ 0xFF ‖
	// group key ‖ aggregate index ‖ value, with an empty value.
	state := map[string]string{}
	for _, r := range testkafka.ReadAll(t, brokers, changelog) {
		start := int64(binary.BigEndian.Uint64(r.Key[:8]) ^ (1 << 63))
		if r.Key[8] == 0xFF {
			group, rest, err := types.DecodeValues(r.Key[9:])
			if err != nil || len(rest) < 2 || len(r.Value) != 0 {
				t.Fatalf("changelog member %x = %x: %v", r.Key, r.Value, err)
			}
			guest, _, err := types.DecodeValue(rest[1:])
			if err != nil {
				t.Fatalf("changelog member %x: %v", r.Key, err)
			}
			state[fmt.Sprintf("%v [%dm] #%d %v", group[0], start/m, rest[0], guest)] = "member"
			continue
		}
		group, _, err := types.DecodeValues(r.Key[8:])
		if err != nil {
			t.Fatalf("changelog key %x: %v", r.Key, err)
		}
		maxTs, rest, err := types.DecodeValue(r.Value)
		if err != nil {
			t.Fatalf("changelog value %x: %v", r.Value, err)
		}
		accs, _, err := types.DecodeValues(rest)
		if err != nil {
			t.Fatalf("changelog value %x: %v", r.Value, err)
		}
		state[fmt.Sprintf("%v [%dm]", group[0], start/m)] = fmt.Sprintf("%v %v @%dm", accs[0], accs[1], maxTs.(int64)/m)
	}
	wantState := map[string]string{
		"ritz [0m]":         "2 3 @2m",
		"ritz [0m] #0 ann":  "member",
		"ritz [0m] #0 bob":  "member",
		"savoy [0m]":        "1 1 @3m",
		"savoy [0m] #0 ann": "member",
	}
	if diff := cmp.Diff(wantState, state); diff != "" {
		t.Fatalf("state in the changelog (-want +got):\n%s", diff)
	}

	// Empty data directory: the members come back from the changelog.
	e = open()
	q = e.Queries()[0]
	testkafka.Produce(t, brokers,
		rec(in, "ritz", v("bob", 4*m), 5),  // seen: the count stays
		rec(in, "savoy", v("cid", 4*m), 6), // new: counted
		rec(in, "ritz", v("bob", 6*m), 7),  // a new window counts anew
	)
	testkafka.Await(t, 30*time.Second, "3 more results", func() bool { return q.Metrics.RecordsOut.Load() >= 3 })
	// A pull query scans the windows and passes over their members.
	scan := fmt.Sprintf("SELECT hotel, WINDOWSTART, guests, stays FROM %s;", out)
	wantRows := []string{"ritz0 2 4", "savoy0 2 2", fmt.Sprintf("ritz%d 1 1", 5*m)}
	var rows []string
	testkafka.Await(t, 30*time.Second, "the pull query's rows", func() bool {
		rows = pullRows(t, e, scan)
		return cmp.Equal(wantRows, rows)
	})
	// DESCRIBE EXTENDED counts the three windows, not their five values.
	testkafka.Await(t, 30*time.Second, "3 windows in the state report", func() bool {
		st, err := e.QueryState(q.ID)
		return err == nil && len(st) == 1 && st[0].Entries == 3
	})
	closeEngine(t, e)
	want := []windowedOutput{
		{"ritz", 0, `{"GUESTS":1,"STAYS":1}`, 0},
		{"ritz", 0, `{"GUESTS":2,"STAYS":2}`, 1 * m},
		{"ritz", 0, `{"GUESTS":2,"STAYS":3}`, 2 * m},
		{"savoy", 0, `{"GUESTS":1,"STAYS":1}`, 3 * m},
		{"ritz", 0, `{"GUESTS":2,"STAYS":4}`, 4 * m},
		{"savoy", 0, `{"GUESTS":2,"STAYS":2}`, 4 * m},
		{"ritz", 5 * m, `{"GUESTS":1,"STAYS":1}`, 6 * m},
	}
	if diff := cmp.Diff(want, windowedOutputs(t, brokers, out)); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}
