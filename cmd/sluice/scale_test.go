package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// Shape of the scale-out crash test's input.
const (
	scaleRecords    = 24_000
	scaleBatch      = 400
	scaleGroups     = 150 // distinct group keys of the count
	scaleKeys       = 1009
	scalePartitions = 6
)

// recordsIn reads sluice_records_in_total of query from s's /metrics.
func (s *serverProc) recordsIn(t *testing.T, query string) int64 {
	t.Helper()
	return s.metric(t, "sluice_records_in_total", query)
}

// metric reads a per-query metric from s's /metrics: 0 when absent.
func (s *serverProc) metric(t *testing.T, name, query string) int64 {
	t.Helper()
	code, _, body := s.authed(t, "GET", "/metrics", "")
	if code != 200 {
		t.Fatalf("%s /metrics: %d %s", s.base, code, body)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\{query="` + regexp.QuoteMeta(query) + `"\} (\d+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		t.Fatalf("%s /metrics: %q: %v", s.base, m[0], err)
	}
	return n
}

// kill SIGKILLs the process and waits for it to be gone.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.stopping = true
	for line := range p.lines {
		p.all = append(p.all, line)
	}
	_ = p.cmd.Wait()
}

// TestScaleOutCrash runs three `sluice server` processes of one service
// against a broker in its own process, counting records per group over
// a 6-partition topic with many keys. Every instance owns partitions of
// the count and reads records (/clusterStatus and /metrics say so). While
// records are being produced one instance that owns partitions is
// SIGKILLed: it writes no tombstone and leaves its group only when its
// session times out. The two survivors take its partitions, restore its
// state from the changelog and the count converges to the exact totals:
// pull queries on both survivors and the latest value per key in the
// table's topic give them. Beside it, EXPLAIN of a query over two
// partitions warns, on every instance, that a third cannot help.
func TestScaleOutCrash(t *testing.T) {
	brokers := crashBrokers(t)
	svc := testkafka.Name(t, "svc")
	topic, sink := testkafka.Name(t, "events"), testkafka.Name(t, "group_totals")
	const query = "CTAS_GROUP_TOTALS"
	repart := "_sluice-" + svc + "-query-" + query + "-Aggregate-GroupBy-repartition"

	args := serverArgs(t, brokers, svc)
	all := []*serverProc{startServer(t, args()...), startServer(t, args()...), startServer(t, args()...)}
	defer func() {
		if t.Failed() {
			for i, s := range all {
				t.Logf("instance %d (%s) stderr (tail):\n%s", i, s.base, tail(s.stderr.String(), 40))
			}
		}
	}()
	ddl := fmt.Sprintf("CREATE STREAM events (id VARCHAR KEY, grp VARCHAR, amount BIGINT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d); "+
		"CREATE TABLE group_totals WITH (KAFKA_TOPIC='%s') AS SELECT grp, COUNT(*) AS n, SUM(amount) AS total FROM events GROUP BY grp;", topic, scalePartitions, sink)
	if code, _, body := all[0].authed(t, "POST", "/ksql", `{"ksql":"`+ddl+`","streamsProperties":{"auto.offset.reset":"earliest"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}

	want := map[string]pageTotals{}
	value := func(seq int) (string, int64) {
		return fmt.Sprintf("g%03d", (seq*7+seq/scaleGroups)%scaleGroups), int64(seq%97 + 1)
	}
	for seq := range scaleRecords {
		grp, amount := value(seq)
		w := want[grp]
		w.N++
		w.Total += amount
		want[grp] = w
	}

	// The producer writes the first half in paced batches and the second
	// once instances are counting, so that the kill falls amid it.
	prodCl := testkafka.Client(t, brokers)
	prodDone := make(chan error, 1)
	secondHalf := make(chan struct{})
	var produced sync.Map // "done" → int: records acknowledged so far
	go func() {
		for lo := 0; lo < scaleRecords; lo += scaleBatch {
			if lo == scaleRecords/2 {
				<-secondHalf
			}
			var recs []*kgo.Record
			for seq := lo; seq < lo+scaleBatch; seq++ {
				grp, amount := value(seq)
				recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "id%04d", seq%scaleKeys),
					Value: fmt.Appendf(nil, `{"grp":%q,"amount":%d}`, grp, amount)})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err := prodCl.ProduceSync(ctx, recs...).FirstErr()
			cancel()
			if err != nil {
				prodDone <- fmt.Errorf("produce batch at %d: %w", lo, err)
				return
			}
			produced.Store("done", lo+scaleBatch)
			time.Sleep(30 * time.Millisecond)
		}
		prodDone <- nil
	}()
	releaseOnce := sync.OnceFunc(func() { close(secondHalf) })
	defer releaseOnce()

	// Every instance owns partitions of both sub-topologies' inputs, and
	// at least two have counted records.
	for _, s := range all {
		s.owners(t, query, []string{repart, topic}, scalePartitions, all)
	}
	// A query over two partitions cannot use a third instance: EXPLAIN
	// says so, counting the live instances in the registry.
	few := testkafka.Name(t, "few")
	fewDDL := fmt.Sprintf("CREATE STREAM few (id VARCHAR KEY, v BIGINT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=2); "+
		"CREATE STREAM few_copy AS SELECT * FROM few;", few)
	if code, _, body := all[1].authed(t, "POST", "/ksql", `{"ksql":"`+fewDDL+`"}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	wantWarnings := []string{"WARNING: CSAS_FEW_COPY has fewer input partitions than the service has instances; adding instances will not help: 2 partitions, 3 instances"}
	for _, s := range all {
		// The other instances apply the command from the command topic
		// a moment after the one that took it.
		code, body := 0, ""
		for deadline := time.Now().Add(30 * time.Second); code != 200 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			code, _, body = s.authed(t, "POST", "/ksql", `{"ksql":"EXPLAIN CSAS_FEW_COPY;"}`)
		}
		var resp []struct {
			Warnings []struct {
				Message string `json:"message"`
			} `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(body), &resp); code != 200 || err != nil || len(resp) != 1 {
			t.Fatalf("%s EXPLAIN: %d %v %s", s.base, code, err, body)
		}
		var got []string
		for _, w := range resp[0].Warnings {
			got = append(got, w.Message)
		}
		if diff := cmp.Diff(wantWarnings, got); diff != "" {
			t.Errorf("%s EXPLAIN CSAS_FEW_COPY warnings (-want +got):\n%s", s.base, diff)
		}
	}

	var victim *serverProc
	var reading []string
	testkafka.Await(t, 60*time.Second, "two instances reading records", func() bool {
		reading, victim = nil, nil
		for _, s := range all {
			if n := s.recordsIn(t, query); n > 0 {
				reading = append(reading, fmt.Sprintf("%s: %d", s.base, n))
				if s != all[0] {
					victim = s
				}
			}
		}
		return len(reading) >= 2 && victim != nil
	})
	// The kill lands while the producer is writing the second half.
	releaseOnce()
	testkafka.Await(t, 60*time.Second, "the second half under way", func() bool {
		n, _ := produced.Load("done")
		return n != nil && n.(int) >= scaleRecords/2+2*scaleBatch
	})
	victim.kill(t)
	done, _ := produced.Load("done")
	t.Logf("records in per instance before the kill: %v; killed %s with %v of %d records produced", reading, victim.base, done, scaleRecords)
	if done.(int) >= scaleRecords {
		t.Fatalf("the producer had finished before the kill")
	}
	var survivors []*serverProc
	for _, s := range all {
		if s != victim {
			survivors = append(survivors, s)
		}
	}
	if err := <-prodDone; err != nil {
		t.Fatal(err)
	}

	// The survivors own every partition between them once the victim's
	// session has timed out.
	for _, s := range survivors {
		s.owners(t, query, []string{repart, topic}, scalePartitions, survivors)
	}
	var rows []string
	for grp, w := range want {
		rows = append(rows, fmt.Sprintf(`[%q,%d,%d]`, grp, w.N, w.Total))
	}
	sort.Strings(rows)
	for _, s := range survivors {
		s.pullRows(t, "SELECT * FROM group_totals;", rows)
	}
	for _, s := range survivors {
		t.Logf("%s records in after the kill: %d", s.base, s.recordsIn(t, query))
	}

	// The table's topic: the latest value of each key is the exact total.
	// (Under at-least-once a key may show a value twice, or a lower one
	// after a higher one the victim wrote before its state was
	// committed; the last one written is what counts.)
	latest := map[string]pageTotals{}
	for _, r := range testkafka.ReadAll(t, brokers, sink) {
		latest[string(r.Key)] = decodeTotals(t, r)
	}
	if diff := cmp.Diff(want, latest); diff != "" {
		t.Errorf("latest values in %s (-want +got):\n%s", sink, diff)
	}
}

// TestScaleOutExactlyOnce runs a stateless query with a WHERE on two
// `sluice server` processes with processing.guarantee=exactly_once, and
// stops one while records are being produced, cleanly (SIGTERM: it
// commits and leaves the group) or not (SIGKILL: its open transaction is
// aborted when the other takes its partitions, after its session times
// out). The sink, read read_committed, holds every input record the WHERE
// keeps exactly once: no gaps, no duplicates.
func TestScaleOutExactlyOnce(t *testing.T) {
	for _, sig := range []string{"SIGTERM", "SIGKILL"} {
		t.Run(sig, func(t *testing.T) { scaleOutExactlyOnce(t, sig) })
	}
}

func scaleOutExactlyOnce(t *testing.T, sig string) {
	const records, batch, partitions = 20_000, 400, 4
	brokers := crashBrokers(t)
	svc := testkafka.Name(t, "svc")
	topic, sink := testkafka.Name(t, "orders"), testkafka.Name(t, "kept")
	const query = "CSAS_KEPT_ORDERS"

	args := serverArgs(t, brokers, svc)
	a, b := startServer(t, args()...), startServer(t, args()...)
	both := []*serverProc{a, b}
	defer func() {
		if t.Failed() {
			for i, s := range both {
				t.Logf("instance %d (%s) stderr (tail):\n%s", i, s.base, tail(s.stderr.String(), 40))
			}
		}
	}()
	ddl := fmt.Sprintf("CREATE STREAM orders (id VARCHAR KEY, seq BIGINT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d); "+
		"CREATE STREAM kept_orders WITH (KAFKA_TOPIC='%s') AS SELECT id, seq FROM orders WHERE seq %% 3 <> 0;", topic, partitions, sink)
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"`+ddl+`","streamsProperties":{"auto.offset.reset":"earliest","processing.guarantee":"exactly_once"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, s := range both {
		s.owners(t, query, []string{topic}, partitions, both)
	}

	prodCl := testkafka.Client(t, brokers)
	prodDone := make(chan error, 1)
	var produced atomic.Int64
	go func() {
		for lo := 0; lo < records; lo += batch {
			var recs []*kgo.Record
			for seq := lo; seq < lo+batch; seq++ {
				recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "o%04d", seq%997), Value: fmt.Appendf(nil, `{"seq":%d}`, seq)})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err := prodCl.ProduceSync(ctx, recs...).FirstErr()
			cancel()
			if err != nil {
				prodDone <- fmt.Errorf("produce batch at %d: %w", lo, err)
				return
			}
			produced.Store(int64(lo + batch))
			time.Sleep(40 * time.Millisecond)
		}
		prodDone <- nil
	}()

	// The stop falls a third of the way into the input, both instances
	// having read some.
	var readByB int64
	testkafka.Await(t, 60*time.Second, "both instances reading records", func() bool {
		readByB = b.recordsIn(t, query)
		return a.recordsIn(t, query) > 0 && readByB > 0 && produced.Load() >= records/3
	})
	atStop := produced.Load()
	if sig == "SIGKILL" {
		b.kill(t)
	} else {
		b.stop(t, 30*time.Second)
	}
	t.Logf("%s %s having read %d records, with %d of %d records produced", sig, b.base, readByB, atStop, records)
	if atStop >= records {
		t.Fatalf("the producer had finished before the stop")
	}
	if err := <-prodDone; err != nil {
		t.Fatal(err)
	}

	var want []int64
	for seq := range int64(records) {
		if seq%3 != 0 {
			want = append(want, seq)
		}
	}
	read := func() []int64 {
		var got []int64
		for _, r := range testkafka.ReadAll(t, brokers, sink) {
			var v struct {
				SEQ int64 `json:"SEQ"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("value %q at %s/%d@%d: %v", r.Value, r.Topic, r.Partition, r.Offset, err)
			}
			got = append(got, v.SEQ)
		}
		slices.Sort(got)
		return got
	}
	var got []int64
	testkafka.Await(t, 120*time.Second, "every kept record in the sink", func() bool {
		got = read()
		return len(got) >= len(want)
	})
	// Once a's consumer is at the end, nothing more may come.
	testkafka.Await(t, 30*time.Second, "no lag", func() bool { return a.lag(t, query) == 0 })
	got = read()
	if !slices.Equal(got, want) {
		counts := map[int64]int{}
		for _, s := range got {
			counts[s]++
		}
		var dups, missing []int64
		for _, s := range want {
			switch counts[s] {
			case 0:
				missing = append(missing, s)
			case 1:
			default:
				dups = append(dups, s)
			}
		}
		t.Fatalf("sink read_committed: %d records for %d kept inputs; %d missing (first %v), %d duplicated (first %v)",
			len(got), len(want), len(missing), missing[:min(len(missing), 10)], len(dups), dups[:min(len(dups), 10)])
	}
	t.Logf("%s holds each of the %d kept records once; a read %d records", sink, len(want), a.recordsIn(t, query))
}

// lag reads sluice_consumer_lag of query from s's /metrics.
func (s *serverProc) lag(t *testing.T, query string) int64 {
	t.Helper()
	return s.metric(t, "sluice_consumer_lag", query)
}
