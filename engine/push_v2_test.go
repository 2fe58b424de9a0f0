package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/planner"
)

// v2 are the request properties of a scalable push query.
var v2 = map[string]string{engine.PushV2EnabledProperty: "true", "auto.offset.reset": "latest"}

// pushRows starts a push query with props and returns its rows.
func pushRows(t *testing.T, e *engine.Engine, sql string, props map[string]string) *engine.RowStream {
	t.Helper()
	res, err := e.ExecuteWith(context.Background(), sql, props)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	rs := res[0].Rows
	t.Cleanup(rs.Close)
	return rs
}

// take reads n rows of rs, each printed with fmt.Sprint.
func take(t *testing.T, rs *engine.RowStream, n int) []string {
	t.Helper()
	var out []string
	timeout := time.After(30 * time.Second)
	for len(out) < n {
		select {
		case row, ok := <-rs.C:
			if !ok {
				t.Fatalf("%s ended after %v (err %v), want %d rows", rs.QueryID, out, rs.Err(), n)
			}
			out = append(out, fmt.Sprint(row.Cols))
		case <-timeout:
			t.Fatalf("%s: %v after 30s, want %d rows", rs.QueryID, out, n)
		}
	}
	return out
}

// groups lists the broker's consumer groups.
func groups(t *testing.T, brokers string) []string {
	t.Helper()
	ls, err := kadm.NewClient(testkafka.Client(t, brokers)).ListGroups(context.Background())
	if err != nil {
		t.Fatalf("list groups: %v", err)
	}
	gs := ls.Groups()
	slices.Sort(gs)
	return gs
}

// awaitCommitted waits until group has committed the end of every
// partition of topic: under at-least-once a commit follows the flush of
// every output, so the results of the records before it are all written.
func awaitCommitted(t *testing.T, brokers, group, topic string) {
	t.Helper()
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	testkafka.Await(t, 30*time.Second, group+" caught up with "+topic, func() bool {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		if err != nil {
			return false
		}
		cs, err := adm.FetchOffsets(context.Background(), group)
		if err != nil {
			return false
		}
		ok := true
		ends.Each(func(o kadm.ListedOffset) {
			c, found := cs.Lookup(topic, o.Partition)
			if o.Offset > 0 && (!found || c.At < o.Offset) {
				ok = false
			}
		})
		return ok
	})
}

// keysOnTwoPartitions returns two keys that a 2-partition topic keyed by
// KAFKA strings puts on different partitions.
func keysOnTwoPartitions(t *testing.T, topic string) (string, string) {
	t.Helper()
	for _, b := range []string{"b", "c", "d", "e", "f", "g"} {
		if exec.KeyPartition(topic, []byte("a"), 2) != exec.KeyPartition(topic, []byte(b), 2) {
			return "a", b
		}
	}
	t.Fatal("no two keys on different partitions")
	return "", ""
}

// TestScalablePushQuery runs two scalable push queries on a CSAS's
// output: each gets exactly the rows written after it subscribed, in
// order per key (so per partition), through its own WHERE, projection
// and LIMIT, and no consumer group is created for them. With the
// property off a push query on the same stream runs as before.
func TestScalablePushQuery(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "spq_in"), testkafka.Name(t, "spq_out")
	svc := testkafka.Name(t, "svc")
	testkafka.CreateTopic(t, brokers, in, 2)
	a, b := keysOnTwoPartitions(t, in)
	rec := func(k string, v int) { testkafka.Produce(t, brokers, vRecord(in, k, v)) }
	e := openConfig(t, testConfig(brokers, t.TempDir(), svc, quiet))
	defer closeEngine(t, e)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE STREAM o WITH (KAFKA_TOPIC='%s') AS SELECT k, v * 10 AS v10 FROM s;`, in, out))
	q := res[1].Query
	rec(a, 1)
	rec(b, 2)
	awaitCommitted(t, brokers, planner.InternalPrefix(svc, q.ID), in)
	before := groups(t, brokers)

	where := pushRows(t, e, "SELECT k, v10 FROM o WHERE v10 > 35 EMIT CHANGES;", v2)
	limit := pushRows(t, e, "SELECT * FROM o EMIT CHANGES LIMIT 3;", v2)
	for _, rs := range []*engine.RowStream{where, limit} {
		if !strings.HasPrefix(rs.QueryID, "SCALABLE_PUSH_QUERY_") {
			t.Errorf("query id %q, want SCALABLE_PUSH_QUERY_…", rs.QueryID)
		}
	}
	if n := q.PushSubscribers(); n != 2 {
		t.Errorf("%d push subscribers of %s, want 2", n, q.ID)
	}
	if desc := shown(execute(t, e, "DESCRIBE o EXTENDED;")[0]); !strings.Contains(desc, "\nScalable push queries on this instance: 2\n") {
		t.Errorf("DESCRIBE o EXTENDED does not count the 2 scalable push queries:\n%s", desc)
	}
	rec(a, 3)
	rec(a, 4)
	rec(a, 5)
	if got, want := take(t, limit, 3), []string{"[" + a + " 30]", "[" + a + " 40]", "[" + a + " 50]"}; !slices.Equal(got, want) {
		t.Errorf("LIMIT 3 query got %v, want %v", got, want)
	}
	select {
	case row, ok := <-limit.C:
		if ok {
			t.Errorf("LIMIT 3 query gave a 4th row %v", row)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("LIMIT 3 query did not end after 3 rows")
	}
	if err := limit.Err(); err != nil {
		t.Errorf("LIMIT 3 query ended with %v", err)
	}
	testkafka.Await(t, 10*time.Second, "the LIMIT query unsubscribed", func() bool { return q.PushSubscribers() == 1 })
	rec(b, 6)
	rec(a, 7)
	rec(b, 8)
	got := take(t, where, 5)
	byKey := func(k string) []string {
		var out []string
		for _, r := range got {
			if strings.HasPrefix(r, "["+k+" ") {
				out = append(out, r)
			}
		}
		return out
	}
	if got, want := byKey(a), []string{"[" + a + " 40]", "[" + a + " 50]", "[" + a + " 70]"}; !slices.Equal(got, want) {
		t.Errorf("WHERE query: key %s rows %v, want %v", a, got, want)
	}
	if got, want := byKey(b), []string{"[" + b + " 60]", "[" + b + " 80]"}; !slices.Equal(got, want) {
		t.Errorf("WHERE query: key %s rows %v, want %v", b, got, want)
	}
	where.Close()
	if _, ok := <-where.C; ok {
		t.Errorf("rows after Close")
	}
	if n := q.PushSubscribers(); n != 0 {
		t.Errorf("%d push subscribers after both ended, want 0", n)
	}
	// SET turns it on for a session as the request's properties do.
	set, err := e.ExecuteWith(context.Background(), "SET 'ksql.query.push.v2.enabled'='true'; SET 'auto.offset.reset'='latest'; SELECT * FROM o EMIT CHANGES;", nil)
	if err != nil {
		t.Fatal(err)
	}
	if id := set[2].Rows.QueryID; !strings.HasPrefix(id, "SCALABLE_PUSH_QUERY_") {
		t.Errorf("query id %q after SET, want SCALABLE_PUSH_QUERY_…", id)
	}
	set[2].Rows.Close()
	if after := groups(t, brokers); !slices.Equal(before, after) {
		t.Errorf("consumer groups changed under scalable push queries:\nbefore %v\nafter  %v", before, after)
	}

	// Off (the default): a push query of its own, from earliest.
	plain := pushRows(t, e, "SELECT * FROM o EMIT CHANGES LIMIT 8;", map[string]string{"auto.offset.reset": "earliest"})
	if !strings.HasPrefix(plain.QueryID, "transient_") {
		t.Errorf("query id %q with the property off, want transient_…", plain.QueryID)
	}
	all := take(t, plain, 8)
	slices.Sort(all)
	want := []string{"[" + a + " 10]", "[" + a + " 30]", "[" + a + " 40]", "[" + a + " 50]", "[" + a + " 70]", "[" + b + " 20]", "[" + b + " 60]", "[" + b + " 80]"}
	if !slices.Equal(all, want) {
		t.Errorf("push query with the property off got %v, want %v", all, want)
	}
}

// TestScalablePushSlowSubscriber: a subscriber that does not read falls
// more than its buffer behind and is dropped with
// exec.ErrPushSubscriberBehind, while the persistent query writes every
// record and a subscriber that keeps up gets every row.
func TestScalablePushSlowSubscriber(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "spq_slow_in"), testkafka.Name(t, "spq_slow_out")
	testkafka.CreateTopic(t, brokers, in, 1)
	e := openConfig(t, testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet))
	defer closeEngine(t, e)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM o WITH (KAFKA_TOPIC='%s') AS SELECT k, v FROM s;`, in, out))
	q := res[1].Query
	props := map[string]string{engine.PushV2EnabledProperty: "true", "auto.offset.reset": "latest", engine.PushV2BufferProperty: "10"}
	slow := pushRows(t, e, "SELECT v FROM o EMIT CHANGES;", props)
	fast := pushRows(t, e, "SELECT v FROM o EMIT CHANGES;", v2)
	const n = 1000 // more than the slow one's 256 buffered rows and 10 records
	got := make(chan []string)
	go func() {
		var rows []string
		for row := range fast.C {
			rows = append(rows, fmt.Sprint(row.Cols))
			if len(rows) == n {
				break
			}
		}
		got <- rows
	}()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = vRecord(in, "k", i)
	}
	testkafka.Produce(t, brokers, recs...)
	testkafka.Await(t, 60*time.Second, "the slow subscriber dropped", func() bool { return q.PushSubscribers() == 1 })
	rows := <-got
	if len(rows) != n || rows[0] != "[0]" || rows[n-1] != fmt.Sprintf("[%d]", n-1) {
		t.Errorf("fast subscriber got %d rows (%.3v…), want %d in order", len(rows), rows, n)
	}
	for i, r := range rows {
		if r != fmt.Sprintf("[%d]", i) {
			t.Fatalf("fast subscriber row %d is %s", i, r)
		}
	}
	// RecordsOut counts a record when the producer takes it; the topic
	// has it a moment later.
	written := 0
	testkafka.Await(t, 60*time.Second, "every record written", func() bool {
		written = len(testkafka.ReadAll(t, brokers, out))
		return q.Metrics.RecordsOut.Load() >= n && written >= n
	})
	if written != n {
		t.Errorf("%d records in %s, want %d", written, out, n)
	}
	// The slow client then reads what was buffered, in order, and the end.
	var late []string
	for row := range slow.C {
		late = append(late, fmt.Sprint(row.Cols))
	}
	if len(late) == 0 || len(late) >= n {
		t.Errorf("slow subscriber read %d rows after the drop, want some and fewer than %d", len(late), n)
	}
	for i, r := range late {
		if r != fmt.Sprintf("[%d]", i) {
			t.Fatalf("slow subscriber row %d is %s", i, r)
		}
	}
	if err := slow.Err(); !errors.Is(err, exec.ErrPushSubscriberBehind) {
		t.Errorf("slow subscriber ended with %v, want %v", err, exec.ErrPushSubscriberBehind)
	}
}

// TestScalablePushIneligible: with the property on, a push query that is
// not a simple SELECT over a persistent query's output, or that reads from
// earliest, runs as an ordinary push query, as in ksqlDB.
func TestScalablePushIneligible(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, tbl := testkafka.Name(t, "spq_inel_in"), testkafka.Name(t, "spq_inel_out"), testkafka.Name(t, "spq_inel_t")
	testkafka.CreateTopic(t, brokers, in, 1)
	testkafka.CreateTopic(t, brokers, tbl, 1)
	e := openConfig(t, testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet))
	defer closeEngine(t, e)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE TABLE t (k VARCHAR PRIMARY KEY, w INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM o WITH (KAFKA_TOPIC='%s') AS SELECT k, v FROM s;`, in, tbl, out))
	q := res[2].Query
	testkafka.Produce(t, brokers, vRecord(in, "x", 1))
	testkafka.Await(t, 30*time.Second, "1 result", func() bool { return q.Metrics.RecordsOut.Load() >= 1 })
	for _, sql := range []string{
		"SELECT k, COUNT(*) AS n FROM o GROUP BY k EMIT CHANGES;",
		"SELECT o.k, v, w FROM o JOIN t ON o.k = t.k EMIT CHANGES;",
		"SELECT k, v FROM o PARTITION BY v EMIT CHANGES;",
		"SELECT k, COUNT(*) AS n FROM o WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY k HAVING COUNT(*) > 1 EMIT CHANGES;",
		"SELECT k, v FROM s EMIT CHANGES;", // no persistent query writes s
	} {
		rs := pushRows(t, e, sql, v2)
		if !strings.HasPrefix(rs.QueryID, "transient_") {
			t.Errorf("%s ran as %s, want a transient_… push query", sql, rs.QueryID)
		}
		rs.Close()
	}
	if n := q.PushSubscribers(); n != 0 {
		t.Errorf("%d push subscribers, want 0", n)
	}
	// From earliest it reads the rows written before it, as ksqlDB's
	// fallback does.
	rs := pushRows(t, e, "SELECT k, v FROM o EMIT CHANGES LIMIT 1;", map[string]string{engine.PushV2EnabledProperty: "true", "auto.offset.reset": "earliest"})
	if !strings.HasPrefix(rs.QueryID, "transient_") {
		t.Errorf("earliest ran as %s, want a transient_… push query", rs.QueryID)
	}
	if got := take(t, rs, 1); !slices.Equal(got, []string{"[x 1]"}) {
		t.Errorf("earliest push query got %v, want [[x 1]]", got)
	}
}

// TestScalablePushExactlyOnce: the rows of an exactly-once query reach a
// scalable push query (after their transaction commits, see
// exec.TestPushRegistryExactlyOnce), with the records' ROWTIME.
func TestScalablePushExactlyOnce(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "spq_eos_in"), testkafka.Name(t, "spq_eos_out")
	testkafka.CreateTopic(t, brokers, in, 1)
	e := openConfig(t, testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet, "processing.guarantee", "exactly_once_v2"))
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`
		CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM o WITH (KAFKA_TOPIC='%s') AS SELECT k, v FROM s;`, in, out))
	rs := pushRows(t, e, "SELECT ROWTIME, k, v FROM o WHERE v <> 2 EMIT CHANGES;", v2)
	if !strings.HasPrefix(rs.QueryID, "SCALABLE_PUSH_QUERY_") {
		t.Fatalf("query id %q, want SCALABLE_PUSH_QUERY_…", rs.QueryID)
	}
	var recs []*kgo.Record
	for i := 1; i <= 3; i++ {
		r := vRecord(in, "k", i)
		r.Timestamp = time.UnixMilli(int64(1000 * i))
		recs = append(recs, r)
	}
	testkafka.Produce(t, brokers, recs...)
	if got, want := take(t, rs, 2), []string{"[1000 k 1]", "[3000 k 3]"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Its persistent query ends: so does the push query, saying why.
	execute(t, e, "TERMINATE CSAS_O;")
	select {
	case row, ok := <-rs.C:
		if ok {
			t.Errorf("row %v after TERMINATE", row)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("push query still open after TERMINATE")
	}
	if err := rs.Err(); !errors.Is(err, exec.ErrPushSourceStopped) {
		t.Errorf("ended with %v after TERMINATE, want %v", err, exec.ErrPushSourceStopped)
	}
}

// TestPushLatestFromItsStart: a push query reading from latest delivers
// every record produced once it has started (its answer's header sent),
// however soon: its consumer group starts at the ends the query saw when
// it started, not at those of its first fetch after joining the group.
// Its group is deleted when it ends.
func TestPushLatestFromItsStart(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in := testkafka.Name(t, "push_latest_in")
	testkafka.CreateTopic(t, brokers, in, 4)
	svc := testkafka.Name(t, "svc")
	e := openConfig(t, testConfig(brokers, t.TempDir(), svc, quiet))
	defer closeEngine(t, e)
	ctx := context.Background()
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	execute(t, e, fmt.Sprintf(`CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');`, in))
	testkafka.Produce(t, brokers, &kgo.Record{Topic: in, Key: []byte("before"), Value: []byte(`{"v":0}`)})
	before := groups(t, brokers)
	for i := 1; i <= 5; i++ {
		rs := pushRows(t, e, "SELECT k, v FROM s EMIT CHANGES LIMIT 1;", map[string]string{"auto.offset.reset": "latest"})
		// Where it starts is settled before it answers: its group has
		// the topic's ends committed (i-1 records after "before").
		committed, err := adm.FetchOffsets(ctx, planner.InternalPrefix(svc, rs.QueryID))
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		committed.Each(func(o kadm.OffsetResponse) { sum += o.At })
		if n := len(committed[in]); n != 4 || sum != int64(i) {
			t.Fatalf("run %d: the query's group has %d partitions committed, summing to %d; want 4 summing to %d", i, n, sum, i)
		}
		testkafka.Produce(t, brokers, &kgo.Record{Topic: in, Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprintf(`{"v":%d}`, i))})
		if got, want := take(t, rs, 1), []string{fmt.Sprintf("[k%d %d]", i, i)}; !slices.Equal(got, want) {
			t.Fatalf("run %d: rows %v, want %v", i, got, want)
		}
		rs.Close()
	}
	testkafka.Await(t, 10*time.Second, "the push queries' groups deleted", func() bool {
		return slices.Equal(groups(t, brokers), before)
	})
}
