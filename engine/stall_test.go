package engine_test

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
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/metrics"
)

// TestStallOnOpenTransaction forces a stall a user meets in practice: a
// producer begins a transaction on the query's input and neither commits
// nor aborts it, so the records after it stay behind the partition's last
// stable offset and a read_committed query cannot read them. Within the
// stall timeout the query logs one WARN naming the query, sub-topology,
// partition and that it waits on a transaction; SHOW QUERIES and
// DESCRIBE EXTENDED say STALLED and /metrics has sluice_query_stalled 1.
// Once the transaction commits, all of it clears.
func TestStallOnOpenTransaction(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "stall_in"), testkafka.Name(t, "stall_out")
	var logs syncBuffer
	e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), slog.New(slog.NewTextHandler(&logs, nil)),
		engine.StallTimeoutProperty, "1500ms")
	defer closeEngine(t, e)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE STREAM %[2]s AS SELECT id, v * 10 AS v10 FROM %[1]s;`, in, out))
	q := res[1].Query
	reg := metrics.New()
	if err := reg.Watch(e); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	stalledMetric := func() string {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "sluice_query_stalled{") && strings.Contains(line, `query="`+q.ID+`"`) {
				return line
			}
		}
		return ""
	}
	showState := func() string {
		l := execute(t, e, "SHOW QUERIES;")[0].Entity.(*engine.QueryList)
		for _, s := range l.Queries {
			if s.ID == q.ID {
				return s.State
			}
		}
		return ""
	}

	// A transactional producer writes the first record and commits, so
	// the input ends with a transaction marker: a query caught up with it
	// is not stalled.
	txn := testkafka.Client(t, brokers, kgo.TransactionalID(testkafka.Name(t, "stall_txn")), kgo.TransactionTimeout(60*time.Second))
	produceTxn := func(commit bool, recs ...*kgo.Record) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := txn.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
	}
	produceTxn(true, rec(in, "a", `{"v":1}`, 1000))
	testkafka.Await(t, 30*time.Second, "the first record", func() bool { return q.Metrics.RecordsOut.Load() == 1 })
	time.Sleep(2500 * time.Millisecond) // past the stall timeout
	if s := q.Stalls(); len(s) != 0 || showState() != "RUNNING" {
		t.Fatalf("caught up with a committed transaction: stalls %+v, state %s; want none, RUNNING", s, showState())
	}
	if m := stalledMetric(); m != fmt.Sprintf(`sluice_query_stalled{query="%s"} 0`, q.ID) {
		t.Fatalf("metric %q, want 0", m)
	}

	// Now a transaction stays open and plain records follow it.
	produceTxn(false, rec(in, "b", `{"v":2}`, 2000))
	testkafka.Produce(t, brokers, rec(in, "c", `{"v":3}`, 3000), rec(in, "d", `{"v":4}`, 4000))
	testkafka.Await(t, 10*time.Second, "STALLED", func() bool { return len(q.Stalls()) > 0 })
	stalls := q.Stalls()
	if len(stalls) != 1 {
		t.Fatalf("stalls %+v, want one", stalls)
	}
	s := stalls[0]
	if s.Query != q.ID || s.SubTopology != 0 || s.Topic != in || s.Partition != 0 || s.WaitingOn != exec.WaitTransaction || s.Lag != 3 {
		t.Errorf("stall %+v, want query %s, sub-topology 0, %s/0 waiting on %s with 3 records to read (b, c and d: end offset 5 less position 2)",
			s, q.ID, in, exec.WaitTransaction)
	}
	if st := showState(); st != engine.QueryStalled {
		t.Errorf("SHOW QUERIES state %q, want %s", st, engine.QueryStalled)
	}
	desc := shown(execute(t, e, fmt.Sprintf("DESCRIBE %s EXTENDED;", out))[0])
	if want := fmt.Sprintf("Query STALLED: sub-topology 0, %s/0 waits on transaction: 3 records to read", in); !strings.Contains(desc, want) {
		t.Errorf("DESCRIBE EXTENDED lacks %q:\n%s", want, desc)
	}
	if m := stalledMetric(); m != fmt.Sprintf(`sluice_query_stalled{query="%s"} 1`, q.ID) {
		t.Errorf("metric %q, want 1", m)
	}
	warns := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "query stalled") {
			warns++
			for _, want := range []string{"level=WARN", "query=" + q.ID, "subtopology=0", "topic=" + in, "partition=0", "waiting_on=transaction"} {
				if !strings.Contains(line, want) {
					t.Errorf("WARN lacks %q: %s", want, line)
				}
			}
		}
	}
	time.Sleep(2 * time.Second) // still stalled: still one WARN
	if n := strings.Count(logs.String(), "query stalled"); warns != 1 || n != 1 {
		t.Errorf("%d WARN lines, then %d; want one", warns, n)
	}

	// The transaction commits: the records behind it are read and the
	// stall clears.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	testkafka.Await(t, 30*time.Second, "all four records", func() bool { return q.Metrics.RecordsOut.Load() == 4 })
	testkafka.Await(t, 10*time.Second, "the stall to clear", func() bool { return len(q.Stalls()) == 0 })
	if st := showState(); st != "RUNNING" {
		t.Errorf("SHOW QUERIES state %q after the transaction committed, want RUNNING", st)
	}
	if m := stalledMetric(); m != fmt.Sprintf(`sluice_query_stalled{query="%s"} 0`, q.ID) {
		t.Errorf("metric %q after the transaction committed, want 0", m)
	}
	if !strings.Contains(logs.String(), "query progressing again") {
		t.Errorf("no log line saying the query progresses again")
	}
}

// TestSinkNamedChangelog writes a stream to a topic whose name ends in
// -changelog, beside an aggregation that has a real changelog: the sink
// keeps the key partitioning of its input (murmur2 of the key, as Java
// clients write) and only the store's changelog is partitioned by store
// partition.
func TestSinkNamedChangelog(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in := testkafka.Name(t, "orders_in")
	sink := testkafka.Name(t, "orders") + "-changelog"
	totals := testkafka.Name(t, "orders_totals")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=4);
		CREATE STREAM orders_copy WITH (KAFKA_TOPIC='%[2]s', PARTITIONS=4) AS SELECT * FROM %[1]s;
		CREATE TABLE %[3]s AS SELECT id, COUNT(*) AS n FROM %[1]s GROUP BY id;`, in, sink, totals))
	var recs []*kgo.Record
	for i := range 40 {
		recs = append(recs, rec(in, fmt.Sprintf("k%02d", i), fmt.Sprintf(`{"v":%d}`, i), int64(1000+i)))
	}
	testkafka.Produce(t, brokers, recs...)
	testkafka.Await(t, 30*time.Second, "40 copies and 40 totals", func() bool {
		return res[1].Query.Metrics.RecordsOut.Load() == 40 && res[2].Query.Metrics.RecordsOut.Load() == 40
	})
	closeEngine(t, e)
	got := testkafka.ReadAll(t, brokers, sink)
	if len(got) != 40 {
		t.Fatalf("%d records in %s, want 40", len(got), sink)
	}
	parts := map[int32]bool{}
	for _, r := range got {
		parts[r.Partition] = true
		if want := exec.KeyPartition(sink, r.Key, 4); r.Partition != want {
			t.Errorf("key %s in %s/%d, want partition %d (murmur2 of the key)", r.Key, sink, r.Partition, want)
		}
	}
	if len(parts) != 4 {
		t.Errorf("40 keys over %d partitions of %s, want all 4", len(parts), sink)
	}
}

// TestStallIdleThenBurst runs a query through a quiet spell longer than
// the stall timeout and then hands it one record, with the default commit
// interval (1 s): the record waits for its commit for up to a second, far
// less than the timeout, so the query is never STALLED and logs no WARN.
// A first record, before any quiet spell, lets the query finish starting
// (group join, under exactly-once the transactional producer's fencing),
// which on a loaded machine with Apache Kafka can itself take seconds.
// Before, the record counted as waiting since the commit before the quiet
// spell and the query showed STALLED until its commit. Under exactly-once
// the record waits for its transaction's early commit instead.
func TestStallIdleThenBurst(t *testing.T) {
	for _, guarantee := range []string{"at_least_once", "exactly_once_v2"} {
		t.Run(guarantee, func(t *testing.T) { testStallIdleThenBurst(t, guarantee) })
	}
}

func testStallIdleThenBurst(t *testing.T, guarantee string) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "burst_in"), testkafka.Name(t, "burst_out")
	var logs syncBuffer
	const timeout = 3 * time.Second
	e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), slog.New(slog.NewTextHandler(&logs, nil)),
		engine.StallTimeoutProperty, timeout.String(), "commit.interval.ms", "1000", "processing.guarantee", guarantee)
	defer closeEngine(t, e)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE STREAM %[2]s AS SELECT id, v * 10 AS v10 FROM %[1]s;`, in, out))
	q := res[1].Query
	showState := func() string {
		l := execute(t, e, "SHOW QUERIES;")[0].Entity.(*engine.QueryList)
		for _, s := range l.Queries {
			if s.ID == q.ID {
				return s.State
			}
		}
		return ""
	}
	testkafka.Produce(t, brokers, rec(in, "a", `{"v":0}`, 1000))
	testkafka.Await(t, 60*time.Second, "the first record's result", func() bool { return q.Metrics.RecordsOut.Load() == 1 })
	time.Sleep(timeout + 500*time.Millisecond)
	started := len(logs.String())
	for i := 1; i <= 2; i++ {
		testkafka.Produce(t, brokers, rec(in, "a", fmt.Sprintf(`{"v":%d}`, i), int64(1000+i)))
		// Watch the state from the record's arrival until well past its
		// commit: never STALLED.
		arrived := time.Now()
		for time.Since(arrived) < timeout+time.Second {
			if s := q.Stalls(); len(s) != 0 {
				t.Fatalf("burst %d, %s after it was produced: stalls %+v, want none", i, time.Since(arrived).Round(time.Millisecond), s)
			}
			if st := showState(); st != "RUNNING" {
				t.Fatalf("burst %d: SHOW QUERIES state %s, want RUNNING", i, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := q.Metrics.RecordsOut.Load(); n != int64(i+1) {
			t.Fatalf("burst %d: %d records out, want %d", i, n, i+1)
		}
		// The quiet spell: past the stall timeout with nothing to read.
		time.Sleep(timeout + 500*time.Millisecond)
	}
	if bursts := logs.String()[started:]; strings.Contains(bursts, "query stalled") {
		t.Errorf("WARN logged for an idle query's bursts:\n%s", bursts)
	}
}
