package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// pageTotals is one row of the test's table: COUNT(*) AS n, SUM(ms) AS
// total.
type pageTotals struct {
	N     int64 `json:"N"`
	Total int64 `json:"TOTAL"`
}

// TestRunSameFileContinues runs one SQL file with a GROUP BY on a value
// column three times in separate processes: first on a fresh data
// directory, then again on the same one, then on an empty one, so that
// the state must come back from the changelog. Input is produced while
// each run is going; after each run the table's latest value per key
// must equal the totals over all input so far, exactly.
func TestRunSameFileContinues(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, table, svc := testkafka.Name(t, "clicks"), testkafka.Name(t, "per_page"), testkafka.Name(t, "svc")
	// The test creates the input topic so that it can produce at once,
	// without waiting for the process to run CREATE STREAM.
	testkafka.CreateTopic(t, brokers, in, 4)

	file := filepath.Join(t.TempDir(), "per_page.sql")
	sql := fmt.Sprintf(`SET 'auto.offset.reset'='earliest';

CREATE STREAM %[1]s (user_id VARCHAR KEY, page VARCHAR, ms BIGINT)
  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=4);

CREATE TABLE %[2]s AS
  SELECT page, COUNT(*) AS n, SUM(ms) AS total
  FROM %[1]s GROUP BY page;
`, in, table)
	if err := os.WriteFile(file, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}

	// Ten pages, so that every partition of the repartition topic, and
	// so every task's store, gets some of them.
	pages := []string{"home", "cart", "search", "help", "about", "login", "orders", "faq", "blog", "jobs"}
	want := map[string]pageTotals{}
	produced := 0
	batch := func(n int) {
		t.Helper()
		var recs []*kgo.Record
		for i := range n {
			k := produced + i
			page := pages[(k*7)%len(pages)]
			ms := int64(k%97 + 1)
			w := want[page]
			w.N++
			w.Total += ms
			want[page] = w
			recs = append(recs, &kgo.Record{
				Topic: in,
				Key:   fmt.Appendf(nil, "user%d", k%13),
				Value: fmt.Appendf(nil, `{"page":%q,"ms":%d}`, page, ms),
				// No timestamp: the client's clock, so a broker's
				// time-based retention cannot delete the input mid-test.
			})
		}
		produced += n
		testkafka.Produce(t, brokers, recs...)
	}

	tail := newTableTail(t, brokers, table)
	run := func(stage, dataDir string, n int) {
		t.Helper()
		start := time.Now()
		p := startSluice(t, "run", file, "--brokers", brokers, "--data-dir", dataDir, "--service-id", svc)
		batch(n)
		tail.awaitTotals(t, p, stage, 90*time.Second, want)
		reached := time.Since(start)
		stopAt := time.Now()
		p.stop(t, 30*time.Second)
		t.Logf("%s: totals reached after %s, stopped in %s", stage, reached.Round(time.Millisecond), time.Since(stopAt).Round(time.Millisecond))
		if len(p.all) != 0 {
			t.Errorf("%s: stdout, want none:\n%s", stage, strings.Join(p.all, "\n"))
		}
		checkTableTopic(t, brokers, table, stage, want)
	}

	d1 := t.TempDir()
	run("first run", d1, 300)
	checkInputSpread(t, brokers, in)
	checkInternalTopics(t, brokers, svc)

	// Same file, same data directory: resumes from local state.
	run("same data directory", d1, 200)

	// Same file, empty data directory: the state is rebuilt from the
	// changelog before the new records are counted.
	d2 := t.TempDir()
	run("empty data directory", d2, 250)
	if fi, err := os.Stat(filepath.Join(d2, "state")); err != nil || !fi.IsDir() {
		t.Errorf("state directory %s after the run: %v", filepath.Join(d2, "state"), err)
	}
}

// tableTail follows a table's output topic for the whole test, keeping
// the latest value per key.
type tableTail struct {
	cl     *kgo.Client
	latest map[string]pageTotals
}

func newTableTail(t *testing.T, brokers, topic string) *tableTail {
	t.Helper()
	cl := testkafka.Client(t, brokers, kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	return &tableTail{cl: cl, latest: map[string]pageTotals{}}
}

// awaitTotals reads the table topic until its latest values equal want.
// It fails at once when a count goes past the expected one (input
// counted twice), when a count goes down (state lost), or when the
// process exits.
func (tt *tableTail) awaitTotals(t *testing.T, p *proc, stage string, timeout time.Duration, want map[string]pageTotals) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cmp.Equal(want, tt.latest) {
		for k, got := range tt.latest {
			if w, ok := want[k]; !ok || got.N > w.N || got.Total > w.Total {
				t.Fatalf("%s: key %q = %+v, want %+v: counted past the input", stage, k, got, w)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no exact totals within %s (-want +got):\n%s", stage, timeout, cmp.Diff(want, tt.latest))
		}
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.stopping = true
				err := p.cmd.Wait()
				t.Fatalf("%s: sluice exited before the totals were reached: %v\nstderr:\n%s", stage, err, p.stderr.String())
			}
			p.all = append(p.all, line)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		fs := tt.cl.PollFetches(ctx)
		cancel()
		fs.EachError(func(topic string, part int32, err error) {
			if ctx.Err() == nil {
				t.Fatalf("%s: read %s/%d: %v", stage, topic, part, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			v := decodeTotals(t, r)
			// A count going down means the run counted from zero again
			// instead of continuing from the restored state.
			if prev, ok := tt.latest[string(r.Key)]; ok && (v.N < prev.N || v.Total < prev.Total) {
				t.Fatalf("%s: key %q went down from %+v to %+v at %s/%d@%d: state not continued", stage, r.Key, prev, v, r.Topic, r.Partition, r.Offset)
			}
			tt.latest[string(r.Key)] = v
		})
	}
}

func decodeTotals(t *testing.T, r *kgo.Record) pageTotals {
	t.Helper()
	var v pageTotals
	dec := json.NewDecoder(strings.NewReader(string(r.Value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("value %q of key %q at %s/%d@%d: %v", r.Value, r.Key, r.Topic, r.Partition, r.Offset, err)
	}
	return v
}

// checkTableTopic reads the whole table topic: the latest value per key
// must equal want, and no key's count may ever go down, which it would
// if a run had counted from zero again before its state was back.
func checkTableTopic(t *testing.T, brokers, topic, stage string, want map[string]pageTotals) {
	t.Helper()
	latest := map[string]pageTotals{}
	for _, r := range testkafka.ReadAll(t, brokers, topic) {
		v := decodeTotals(t, r)
		if prev, ok := latest[string(r.Key)]; ok && (v.N < prev.N || v.Total < prev.Total) {
			t.Errorf("%s: key %q went down from %+v to %+v at %s/%d@%d", stage, r.Key, prev, v, r.Topic, r.Partition, r.Offset)
		}
		latest[string(r.Key)] = v
	}
	if diff := cmp.Diff(want, latest); diff != "" {
		t.Errorf("%s: latest values in %s (-want +got):\n%s", stage, topic, diff)
	}
}

// checkInputSpread requires input on every partition, so that the run
// really had four tasks' worth of state to restore.
func checkInputSpread(t *testing.T, brokers, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(testkafka.Client(t, brokers)).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ends.Each(func(o kadm.ListedOffset) {
		n++
		if o.Err != nil || o.Offset == 0 {
			t.Errorf("input partition %d is empty", o.Partition)
		}
	})
	if n != 4 {
		t.Errorf("input topic has %d partitions, want 4", n)
	}
}

// checkInternalTopics requires the service's query to have a repartition
// topic and at least one changelog topic, every changelog with
// cleanup.policy including compact.
func checkInternalTopics(t *testing.T, brokers, svc string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "_sluice-" + svc + "-query-"
	var changelogs, repartitions []string
	for _, name := range topics.Names() {
		switch {
		case !strings.HasPrefix(name, prefix):
		case strings.HasSuffix(name, "-changelog"):
			changelogs = append(changelogs, name)
		case strings.HasSuffix(name, "-repartition"):
			repartitions = append(repartitions, name)
		}
	}
	sort.Strings(changelogs)
	if len(changelogs) == 0 || len(repartitions) == 0 {
		t.Fatalf("topics %s*: changelogs %q, repartition topics %q; want at least one of each", prefix, changelogs, repartitions)
	}
	t.Logf("internal topics: %q %q", changelogs, repartitions)
	rcs, err := adm.DescribeTopicConfigs(ctx, changelogs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range changelogs {
		rc, err := rcs.On(name, nil)
		if err != nil || rc.Err != nil {
			t.Fatalf("describe %s: %v %v", name, err, rc.Err)
		}
		policy := ""
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil {
				policy = *c.Value
			}
		}
		if !strings.Contains(policy, "compact") {
			t.Errorf("changelog %s has cleanup.policy=%q, want compact", name, policy)
		}
		if parts := len(topics[name].Partitions); parts != 4 {
			t.Errorf("changelog %s has %d partitions, want 4 (one per task)", name, parts)
		}
	}
	// Every store partition has something to restore from.
	ends, err := adm.ListEndOffsets(ctx, changelogs...)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset == 0 {
			t.Errorf("changelog %s partition %d: end offset %d, err %v; want records", o.Topic, o.Partition, o.Offset, o.Err)
		}
	})
}
