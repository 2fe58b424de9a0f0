package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// quiet keeps expected warnings (bad records) out of test output.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openEngine(t *testing.T, brokers, dataDir, service string) *engine.Engine {
	t.Helper()
	return openEngineLog(t, brokers, dataDir, service, quiet)
}

func openEngineLog(t *testing.T, brokers, dataDir, service string, log *slog.Logger, extra ...string) *engine.Engine {
	t.Helper()
	return openConfig(t, testConfig(brokers, dataDir, service, log, extra...))
}

// testConfig is an engine's configuration for tests: earliest offsets,
// 100 ms commits, and extra properties as name, value pairs.
func testConfig(brokers, dataDir, service string, log *slog.Logger, extra ...string) engine.Config {
	props := map[string]string{"auto.offset.reset": "earliest", "commit.interval.ms": "100"}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	return engine.Config{
		ConnOpts:   []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)},
		DataDir:    dataDir,
		ServiceID:  service,
		Properties: props,
		Log:        log,
	}
}

func openConfig(t *testing.T, cfg engine.Config) *engine.Engine {
	t.Helper()
	e, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open engine: %v", err)
	}
	return e
}

func execute(t *testing.T, e *engine.Engine, sql string) []*engine.Result {
	t.Helper()
	res, err := e.Execute(context.Background(), sql)
	if err != nil {
		t.Fatalf("execute: %v\n%s", err, sql)
	}
	return res
}

// pullRows runs a pull query and gives its rows' columns, joined.
func pullRows(t *testing.T, e *engine.Engine, sql string) []string {
	t.Helper()
	res := execute(t, e, sql)[0]
	if res.Rows == nil || !res.Rows.Pull {
		t.Fatalf("%s: not answered as a pull query", sql)
	}
	var out []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case r, ok := <-res.Rows.C:
			if !ok {
				return out
			}
			out = append(out, fmt.Sprint(r.Cols...))
		case <-timeout:
			t.Fatalf("%s: rows did not end", sql)
		}
	}
}

func closeEngine(t *testing.T, e *engine.Engine) {
	t.Helper()
	if err := e.Close(); err != nil {
		t.Fatalf("close engine: %v", err)
	}
}

// outRecord is an output record reduced to what the tests compare.
type outRecord struct {
	Key   string
	Value string
	Ts    int64
}

func outputs(t *testing.T, brokers, topic string) []outRecord {
	t.Helper()
	var out []outRecord
	for _, r := range testkafka.ReadAll(t, brokers, topic) {
		out = append(out, outRecord{Key: string(r.Key), Value: string(r.Value), Ts: r.Timestamp.UnixMilli()})
	}
	return out
}

func rec(topic, key, value string, ts int64) *kgo.Record {
	r := &kgo.Record{Topic: topic, Value: []byte(value), Timestamp: time.UnixMilli(ts)}
	if key != "" {
		r.Key = []byte(key)
	}
	return r
}

// TestStatelessQueryThroughKafka runs a filter and a projection with
// arithmetic over a two-partition topic, with one record that is not JSON
// and one that lacks a column among the good ones.
func TestStatelessQueryThroughKafka(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, dead := testkafka.Name(t, "orders"), testkafka.Name(t, "big_orders"), testkafka.Name(t, "orders_dead")
	var logs syncBuffer
	e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), slog.New(slog.NewTextHandler(&logs, nil)))
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, item VARCHAR, qty INT, price DOUBLE)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE STREAM %[2]s WITH (ERROR_TOPIC='%[3]s') AS
		  SELECT id, UCASE(item) AS item, qty * price AS total, qty + 1 AS next_qty
		  FROM %[1]s WHERE qty * price >= 10;`, in, out, dead))
	q := res[1].Query
	testkafka.Produce(t, brokers,
		rec(in, "o1", `{"item":"pen","qty":2,"price":1.5}`, 1000),
		rec(in, "o2", `{"item":"ink","qty":4,"price":2.5}`, 2000),
		rec(in, "o3", `this is not json`, 3000),
		rec(in, "o4", `{"item":"pad","qty":10}`, 4000), // no price: NULL total, filtered out
		rec(in, "o5", `{"ITEM":"Box","QTY":1,"PRICE":12.0}`, 5000),
		rec(in, "o6", `{"qty":3,"price":4}`, 6000), // no item: NULL item in the output
	)
	testkafka.Await(t, 30*time.Second, "3 results", func() bool { return q.Metrics.RecordsOut.Load() >= 3 })
	testkafka.Await(t, 30*time.Second, "all 6 records read", func() bool { return q.Metrics.RecordsIn.Load() >= 6 })
	closeEngine(t, e) // flushes outputs
	got := outputs(t, brokers, out)
	sort.Slice(got, func(i, j int) bool { return got[i].Key < got[j].Key })
	want := []outRecord{
		{"o2", `{"ITEM":"INK","TOTAL":10.0,"NEXT_QTY":5}`, 2000},
		{"o5", `{"ITEM":"BOX","TOTAL":12.0,"NEXT_QTY":2}`, 5000},
		{"o6", `{"ITEM":null,"TOTAL":12.0,"NEXT_QTY":4}`, 6000},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if n := q.Metrics.Errors()["deserialize"]; n != 1 {
		t.Errorf("deserialize errors = %d, want 1", n)
	}
	// o4 lacks price and o6 lacks item: both read on with NULL, counted.
	if n := q.Metrics.Errors()["missing_column"]; n != 2 {
		t.Errorf("records with missing columns = %d, want 2", n)
	}
	// The bad record lands in the error topic, unchanged, with headers
	// saying where it came from and why it was skipped.
	deadRecs := testkafka.ReadAll(t, brokers, dead)
	if len(deadRecs) != 1 || string(deadRecs[0].Key) != "o3" || string(deadRecs[0].Value) != "this is not json" || deadRecs[0].Timestamp.UnixMilli() != 3000 {
		t.Fatalf("error topic holds %d records, want the one bad record: %v", len(deadRecs), deadRecs)
	}
	p3, o3 := badRecordPosition(t, brokers, in, "o3")
	headers := map[string]string{}
	for _, h := range deadRecs[0].Headers {
		headers[h.Key] = string(h.Value)
	}
	wantHeaders := map[string]string{
		"sluice.query": q.ID, "sluice.topic": in, "sluice.partition": fmt.Sprint(p3), "sluice.offset": fmt.Sprint(o3),
		"sluice.error.kind": "deserialize",
	}
	for k, v := range wantHeaders {
		if headers[k] != v {
			t.Errorf("dead letter header %s = %q, want %q", k, headers[k], v)
		}
	}
	if !strings.Contains(headers["sluice.error"], "value") {
		t.Errorf("dead letter error header %q does not say the value was bad", headers["sluice.error"])
	}
	// The bad record is logged once, with where it is.
	var bad []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "skipping bad record") {
			bad = append(bad, line)
		}
	}
	if len(bad) != 1 {
		t.Fatalf("bad-record log lines = %d, want 1:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	p, o := badRecordPosition(t, brokers, in, "o3")
	for _, want := range []string{"topic=" + in, fmt.Sprintf("partition=%d", p), fmt.Sprintf("offset=%d", o), "kind=deserialize"} {
		if !strings.Contains(bad[0], want) {
			t.Errorf("bad-record log line lacks %q: %s", want, bad[0])
		}
	}
	if q.Err() != nil {
		t.Errorf("query failed: %v", q.Err())
	}
}

// windowedOutput decodes a windowed table record: KAFKA string key with
// the window start appended.
type windowedOutput struct {
	Key   string
	Start int64
	Value string
	Ts    int64
}

func windowedOutputs(t *testing.T, brokers, topic string) []windowedOutput {
	t.Helper()
	var out []windowedOutput
	for _, r := range testkafka.ReadAll(t, brokers, topic) {
		k, start, err := format.DecodeTimeWindowedKey(r.Key)
		if err != nil {
			t.Fatalf("windowed key %x: %v", r.Key, err)
		}
		out = append(out, windowedOutput{string(k), start, string(r.Value), r.Timestamp.UnixMilli()})
	}
	return out
}

// TestWindowedAggregationThroughKafka checks tumbling windows with a
// correction inside grace and a drop beyond it, and the changelog topic's
// configuration.
func TestWindowedAggregationThroughKafka(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "bookings"), testkafka.Name(t, "hotel_5m"), testkafka.Name(t, "svc")
	e := openEngine(t, brokers, t.TempDir(), svc)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (hotel VARCHAR KEY, price DOUBLE, booked_at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='booked_at', PARTITIONS=1);
		CREATE TABLE %[2]s AS
		  SELECT hotel, COUNT(*) AS bookings, SUM(price) AS revenue
		  FROM %[1]s WINDOW TUMBLING 5m GRACE 2m GROUP BY hotel EMIT CHANGES;`, in, out))
	q := res[1].Query
	const m = 60_000
	v := func(price float64, at int64) string { return fmt.Sprintf(`{"price":%v,"booked_at":%d}`, price, at) }
	testkafka.Produce(t, brokers,
		rec(in, "ritz", v(220, 0*m), 1),
		rec(in, "ritz", v(250, 4*m), 2),
		rec(in, "ritz", v(200, 6*m), 3), // stream time 6m
		rec(in, "ritz", v(300, 3*m), 4), // late, inside grace: [0,5m) closes at 7m
		rec(in, "ritz", v(210, 9*m), 5), // stream time 9m
		rec(in, "ritz", v(999, 2*m), 6), // beyond grace: dropped
	)
	testkafka.Await(t, 30*time.Second, "6 records processed", func() bool { return q.Metrics.RecordsIn.Load() >= 6 })
	testkafka.Await(t, 30*time.Second, "5 results", func() bool { return q.Metrics.RecordsOut.Load() >= 5 })
	checkChangelogs(t, brokers, e)
	// Both windows ([0, 5m) and [5m, 10m)) stay within retention 7m.
	testkafka.Await(t, 30*time.Second, "2 windows committed", func() bool {
		st, err := e.QueryState(q.ID)
		return err == nil && len(st) == 1 && st[0].Entries == 2
	})
	desc := shown(execute(t, e, "DESCRIBE "+out+" EXTENDED;")[0])
	for _, want := range []string{
		"Type          : TABLE\n",
		"Window        : TUMBLING\n",
		"STRING (primary key)",
		"Written by    : " + q.ID + "\n",
		"Window: TUMBLING size 5m0s grace 2m0s retention 7m0s\n",
		"Records in: 6, out: 5, late and dropped: 1",
		"-Aggregate-Materialize-changelog  2 windows, ~",
		" " + in + "/0  RUNNING",
		"changelog _sluice-" + svc + "-query-" + q.ID + "-Aggregate-Materialize-changelog",
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("DESCRIBE EXTENDED lacks %q:\n%s", want, desc)
		}
	}
	closeEngine(t, e) // flushes outputs
	got := windowedOutputs(t, brokers, out)
	want := []windowedOutput{
		{"ritz", 0, `{"BOOKINGS":1,"REVENUE":220.0}`, 0},
		{"ritz", 0, `{"BOOKINGS":2,"REVENUE":470.0}`, 4 * m},
		{"ritz", 5 * m, `{"BOOKINGS":1,"REVENUE":200.0}`, 6 * m},
		{"ritz", 0, `{"BOOKINGS":3,"REVENUE":770.0}`, 4 * m},
		{"ritz", 5 * m, `{"BOOKINGS":2,"REVENUE":410.0}`, 9 * m},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if n := q.Metrics.LateDropped.Load(); n != 1 {
		t.Errorf("late records dropped = %d, want 1", n)
	}
}

// checkChangelogs requires every state store of every query to have a
// changelog topic whose cleanup.policy includes compact.
func checkChangelogs(t *testing.T, brokers string, e *engine.Engine) {
	t.Helper()
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	stores := 0
	for _, q := range e.Queries() {
		for _, st := range q.Plan.Topology.Stores {
			stores++
			rcs, err := adm.DescribeTopicConfigs(context.Background(), st.Changelog)
			if err != nil {
				t.Fatalf("describe %s: %v", st.Changelog, err)
			}
			rc, err := rcs.On(st.Changelog, nil)
			if err != nil || rc.Err != nil {
				t.Fatalf("describe %s: %v %v", st.Changelog, err, rc.Err)
			}
			policy := ""
			for _, c := range rc.Configs {
				if c.Key == "cleanup.policy" && c.Value != nil {
					policy = *c.Value
				}
			}
			if !strings.Contains(policy, "compact") {
				t.Errorf("changelog %s has cleanup.policy=%q, want compact", st.Changelog, policy)
			}
		}
	}
	if stores == 0 {
		t.Fatal("no state stores found")
	}
}

// latestTotals reads a non-windowed table topic and keeps the last value
// per key, as a table consumer would.
func latestTotals(t *testing.T, brokers, topic string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, r := range testkafka.ReadAll(t, brokers, topic) {
		var v map[string]any
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("output value %q: %v", r.Value, err)
		}
		out[string(r.Key)] = v
	}
	return out
}

// TestGroupByValueColumnRestarts aggregates a value column of a
// 4-partition topic (through a repartition topic), stops and restarts
// the engine with its local state, then with an empty data directory
// (state rebuilt from the changelog), producing more input each time:
// the totals stay exact.
func TestGroupByValueColumnRestarts(t *testing.T) {
	for _, guarantee := range []string{"at_least_once", "exactly_once"} {
		t.Run(guarantee, func(t *testing.T) { groupByRestarts(t, guarantee) })
	}
}

func groupByRestarts(t *testing.T, guarantee string) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "clicks"), testkafka.Name(t, "per_page"), testkafka.Name(t, "svc")
	sql := fmt.Sprintf(`
		CREATE STREAM %[1]s (user_id VARCHAR KEY, page VARCHAR, ms BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=4);
		CREATE TABLE %[2]s AS
		  SELECT page, COUNT(*) AS views, SUM(ms) AS total_ms, MAX(ms) AS longest
		  FROM %[1]s GROUP BY page;`, in, out)
	pages := []string{"home", "cart", "search", "help", "about"}
	want := map[string][3]int64{}
	produced := 0
	batch := func(n int) {
		var recs []*kgo.Record
		for i := 0; i < n; i++ {
			k := produced + i
			page := pages[(k*7)%len(pages)]
			ms := int64(k%97 + 1)
			w := want[page]
			w[0]++
			w[1] += ms
			w[2] = max(w[2], ms)
			want[page] = w
			// Timestamps near now: a broker's time-based retention must not
			// delete the input while the test runs.
			recs = append(recs, rec(in, fmt.Sprintf("user%d", k%13), fmt.Sprintf(`{"page":%q,"ms":%d}`, page, ms), time.Now().UnixMilli()))
		}
		produced += n
		testkafka.Produce(t, brokers, recs...)
	}
	check := func(stage string) {
		t.Helper()
		got := latestTotals(t, brokers, out)
		for page, w := range want {
			g := got[page]
			if g == nil || g["VIEWS"] != float64(w[0]) || g["TOTAL_MS"] != float64(w[1]) || g["LONGEST"] != float64(w[2]) {
				t.Errorf("%s: %s = %v, want views %d total %d longest %d", stage, page, g, w[0], w[1], w[2])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d keys, want %d", stage, len(got), len(want))
		}
	}
	waitFor := func(e *engine.Engine, n int64) {
		t.Helper()
		q := e.Queries()[0]
		testkafka.Await(t, 60*time.Second, fmt.Sprintf("%d aggregated records", n), func() bool {
			return q.Metrics.RecordsOut.Load() >= n
		})
	}

	open := func(dir string) *engine.Engine {
		return openEngineLog(t, brokers, dir, svc, quiet, "processing.guarantee", guarantee)
	}
	dir := t.TempDir()
	e := open(dir)
	execute(t, e, sql)
	batch(1000)
	waitFor(e, 1000)
	checkChangelogs(t, brokers, e)
	closeEngine(t, e)
	check("first run")

	// Same statements, same data directory: resumes from local state.
	e = open(dir)
	execute(t, e, sql)
	batch(500)
	waitFor(e, 500)
	closeEngine(t, e)
	check("restart with local state")

	// Same statements, empty data directory: state comes back from the
	// changelog before new records are counted.
	e = open(t.TempDir())
	execute(t, e, sql)
	batch(500)
	waitFor(e, 500)
	closeEngine(t, e)
	check("restart with empty data directory")
}

// syncBuffer is a log sink the engine's goroutines can share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// badRecordPosition finds where the record with key landed.
func badRecordPosition(t *testing.T, brokers, topic, key string) (int32, int64) {
	t.Helper()
	for _, r := range testkafka.ReadAll(t, brokers, topic) {
		if string(r.Key) == key {
			return r.Partition, r.Offset
		}
	}
	t.Fatalf("no record with key %s in %s", key, topic)
	return 0, 0
}

// TestExactlyOnceCommitsWhenCaughtUp: under exactly-once a result is
// visible only once its transaction commits. A query that has caught up
// with its input commits after a quarter of the commit interval instead
// of holding its last results back for all of it: with a 12 s interval
// the result is visible in about 3 s, not 12.
func TestExactlyOnceCommitsWhenCaughtUp(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "orders"), testkafka.Name(t, "orders_copy")
	e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet,
		"processing.guarantee", "exactly_once", "commit.interval.ms", "12000")
	defer closeEngine(t, e)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, qty INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE STREAM %[2]s AS SELECT id, qty * 2 AS twice FROM %[1]s;`, in, out))
	q := res[1].Query
	cl := testkafka.Client(t, brokers, kgo.ConsumeTopics(out), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	testkafka.Produce(t, brokers, rec(in, "o1", `{"qty":2}`, 1000))
	testkafka.Await(t, 30*time.Second, "the record processed", func() bool { return q.Metrics.RecordsOut.Load() >= 1 })
	processed := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	var got []outRecord
	for len(got) == 0 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			got = append(got, outRecord{Key: string(r.Key), Value: string(r.Value), Ts: r.Timestamp.UnixMilli()})
		})
	}
	if want := []outRecord{{"o1", `{"TWICE":4}`, 1000}}; !cmp.Equal(want, got) {
		t.Fatalf("%v after processing, read_committed output %v, want %v", time.Since(processed).Round(time.Millisecond), got, want)
	}
}
