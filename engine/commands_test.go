package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
)

// openShared opens an engine whose catalog lives in the service's
// command topic.
func openShared(t *testing.T, brokers, dataDir, service string, extra ...string) *engine.Engine {
	t.Helper()
	cfg := testConfig(brokers, dataDir, service, quiet, extra...)
	cfg.CommandTopic = true
	return openConfig(t, cfg)
}

// catalogOf prints what SHOW STREAMS, TABLES and QUERIES list, a line
// a source (name, topic, formats) or query (id, sink topic, state).
func catalogOf(t *testing.T, e *engine.Engine) string {
	t.Helper()
	var b strings.Builder
	for _, what := range []string{"STREAMS", "TABLES", "QUERIES"} {
		fmt.Fprintf(&b, "%s:\n", what)
		switch l := execute(t, e, "SHOW "+what+";")[0].Entity.(type) {
		case *engine.SourceList:
			for _, s := range l.Sources {
				fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", s.Name, s.Topic, s.KeyFormat, s.ValueFormat)
			}
		case *engine.QueryList:
			for _, q := range l.Queries {
				fmt.Fprintf(&b, "%s\t%s\t%s\n", q.ID, strings.Join(q.SinkTopics, ","), q.State)
			}
		default:
			t.Fatalf("SHOW %s: entity %T", what, l)
		}
	}
	return b.String()
}

// commandRecord is a command topic record reduced to what tests compare.
type commandRecord struct {
	Value   string
	Headers []string
}

func commandRecords(t *testing.T, brokers, service string) []commandRecord {
	t.Helper()
	var out []commandRecord
	for _, r := range testkafka.ReadAll(t, brokers, engine.CommandTopicName(service)) {
		c := commandRecord{Value: string(r.Value)}
		for _, h := range r.Headers {
			c.Headers = append(c.Headers, h.Key)
		}
		out = append(out, c)
	}
	return out
}

// TestCommandTopicSharedCatalog creates a stream and an aggregate table
// on one engine; a second engine of the same service, with its own data
// directory, opened afterwards has the same catalog and runs the query
// too. Then both stop and the first reopens without being told any
// statement: its query runs again and the table's totals stay exact.
func TestCommandTopicSharedCatalog(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "clicks"), testkafka.Name(t, "per_page"), testkafka.Name(t, "svc")
	pv := &pageViews{t: t, brokers: brokers, in: in, out: out, want: map[string]float64{}}
	batch, awaitTotals := pv.batch, pv.await

	d1 := t.TempDir()
	e1 := openShared(t, brokers, d1, svc)
	res := execute(t, e1, fmt.Sprintf(`
		CREATE STREAM %[1]s (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE TABLE %[2]s AS SELECT page, COUNT(*) AS views FROM %[1]s GROUP BY page;`, in, out))
	qid := "CTAS_" + out
	if got := res[1].Message; got != "Created query with ID "+qid {
		t.Fatalf("CTAS message %q", got)
	}
	if res[0].Command == nil || res[0].Command.Offset != 0 || res[1].Command == nil || res[1].Command.Offset != 1 {
		t.Errorf("command offsets: %+v %+v, want 0 and 1", res[0].Command, res[1].Command)
	}
	batch(100)
	awaitTotals("first engine")

	wantCatalog := fmt.Sprintf("STREAMS:\n%[1]s\t%[1]s\tKAFKA\tJSON\nTABLES:\n%[2]s\t%[2]s\tKAFKA\tJSON\nQUERIES:\n%[3]s\t%[2]s\tRUNNING\n", in, out, qid)
	if diff := cmp.Diff(wantCatalog, catalogOf(t, e1)); diff != "" {
		t.Errorf("first engine's catalog (-want +got):\n%s", diff)
	}

	// The second instance learns everything from the command topic.
	e2 := openShared(t, brokers, t.TempDir(), svc)
	if diff := cmp.Diff(wantCatalog, catalogOf(t, e2)); diff != "" {
		t.Errorf("second engine's catalog (-want +got):\n%s", diff)
	}
	// Both instances share the query's partitions: once the group has
	// rebalanced, the second one processes some of the new records.
	q2 := e2.Queries()[0]
	deadline := time.Now().Add(60 * time.Second)
	for q2.Metrics.RecordsIn.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the second engine processed no records in 60 s")
		}
		batch(10)
		time.Sleep(200 * time.Millisecond)
	}
	awaitTotals("two engines")
	closeEngine(t, e2)
	closeEngine(t, e1)

	// Reopened with no statements: the command topic brings the query
	// back, with its local state.
	e1 = openShared(t, brokers, d1, svc)
	defer closeEngine(t, e1)
	if diff := cmp.Diff(wantCatalog, catalogOf(t, e1)); diff != "" {
		t.Errorf("reopened engine's catalog (-want +got):\n%s", diff)
	}
	batch(100)
	awaitTotals("reopened first engine")
	if got := commandRecords(t, brokers, svc); len(got) != 2 {
		t.Errorf("command topic has %d records, want 2 (opening appends nothing)", len(got))
	}
}

// TestCommandTopicOnlyValidCommands runs statements that fail validation
// and statements that are not commands among good ones: the command
// topic holds exactly the good commands, with the session properties in
// force when each was issued and none of the instance's own.
func TestCommandTopicOnlyValidCommands(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "orders"), testkafka.Name(t, "big"), testkafka.Name(t, "svc")
	e := openShared(t, brokers, t.TempDir(), svc, engine.MinFreeBytesProperty, "-1")
	defer closeEngine(t, e)
	create := fmt.Sprintf(`CREATE STREAM %[1]s (id VARCHAR KEY, qty INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, in)
	csas := fmt.Sprintf(`CREATE STREAM %s AS SELECT id, qty FROM %s WHERE qty > 10;`, out, in)
	missing := testkafka.Name(t, "missing")
	copied := testkafka.Name(t, "copied")
	steps := []struct {
		sql     string
		wantErr string // the exact error; "" for success
		with    map[string]string
	}{
		{create, "", nil},
		{create, fmt.Sprintf("cannot add stream '%s': a stream with the same name already exists", in), nil},
		{fmt.Sprintf(`CREATE STREAM IF NOT EXISTS %[1]s (id VARCHAR KEY) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, in), "", nil},
		{fmt.Sprintf(`CREATE STREAM %[1]s (id VARCHAR KEY) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON');`, missing),
			fmt.Sprintf("invalid statement: topic '%s' does not exist. If you want to create a new topic for the stream please re-run the statement providing the required 'PARTITIONS' configuration in the WITH clause (and optionally 'REPLICAS')", missing), nil},
		{fmt.Sprintf(`CREATE TABLE t AS SELECT id, COUNT(*) AS n FROM %s GROUP BY id;`, missing), "line 1:49: " + missing + " does not exist", nil},
		{`TERMINATE CSAS_NOPE;`, "unknown queryId: CSAS_NOPE", nil},
		{fmt.Sprintf(`INSERT INTO %s (id, qty) VALUES ('a', 1);`, in), "", nil},
		{`SET 'processing.guarantee'='at_least_once';`, "", nil},
		{csas, "", nil},
		{fmt.Sprintf(`INSERT INTO %s SELECT id, qty FROM %s;`, missing, in), "Exception while preparing statement: Line: 1, Col: 13: Source `" + missing + "` does not exist.", nil},
		{"TERMINATE CSAS_" + out + ";", "", nil},
		// Properties of one call, and a SET inside it, go with its
		// commands and no further.
		{fmt.Sprintf(`SET 'sluice.idle.timeout'='1m'; CREATE STREAM %s AS SELECT id, qty FROM %s;`, copied, in), "",
			map[string]string{"AUTO.OFFSET.RESET": "latest"}},
		{"TERMINATE CSAS_" + copied + ";", "", nil},
	}
	for _, s := range steps {
		var err error
		if s.with != nil {
			_, err = e.ExecuteWith(context.Background(), s.sql, s.with)
		} else {
			_, err = e.Execute(context.Background(), s.sql)
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != s.wantErr {
			t.Errorf("%s\nerror %q, want %q", s.sql, got, s.wantErr)
		}
	}
	headers := []string{"sluice.instance", "sluice.request"}
	// Statements are stored without their ';'.
	create, csas = strings.TrimSuffix(create, ";"), strings.TrimSuffix(csas, ";")
	version := fmt.Sprint(planner.CurrentPlanVersion)
	want := []commandRecord{
		{fmt.Sprintf(`{"version":1,"statement":"%s","properties":{"auto.offset.reset":"earliest","commit.interval.ms":"100","sluice.plan.version":"%s"}}`, create, version), headers},
		{fmt.Sprintf(`{"version":1,"statement":"%s","properties":{"auto.offset.reset":"earliest","commit.interval.ms":"100","processing.guarantee":"at_least_once","sluice.plan.version":"%s"}}`, csas, version), headers},
		{fmt.Sprintf(`{"version":1,"statement":"TERMINATE CSAS_%s","properties":{"auto.offset.reset":"earliest","commit.interval.ms":"100","processing.guarantee":"at_least_once","sluice.plan.version":"%s"}}`, out, version), headers},
		{fmt.Sprintf(`{"version":1,"statement":"CREATE STREAM %s AS SELECT id, qty FROM %s","properties":{"auto.offset.reset":"latest","commit.interval.ms":"100","processing.guarantee":"at_least_once","sluice.idle.timeout":"1m","sluice.plan.version":"%s"}}`, copied, in, version), headers},
		{fmt.Sprintf(`{"version":1,"statement":"TERMINATE CSAS_%s","properties":{"auto.offset.reset":"earliest","commit.interval.ms":"100","processing.guarantee":"at_least_once","sluice.plan.version":"%s"}}`, copied, version), headers},
	}
	if diff := cmp.Diff(want, commandRecords(t, brokers, svc)); diff != "" {
		t.Errorf("command topic (-want +got):\n%s", diff)
	}
}

// TestCommandTopicFollow runs two engines of one service side by side: a
// stream created on one appears on the other, a query created on the
// second runs on the first, an INSERT query gets the same id on both,
// and TERMINATE on either stops a query on the other, each within a few
// seconds. Two instances racing to create the same name agree on the
// winner.
func TestCommandTopicFollow(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "events"), testkafka.Name(t, "copied"), testkafka.Name(t, "svc")
	e1 := openShared(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e1)
	e2 := openShared(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e2)
	const soon = 5 * time.Second

	execute(t, e1, fmt.Sprintf(`CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, in))
	testkafka.Await(t, soon, "the stream on the second engine", func() bool {
		_, err := e2.Catalog().Lookup(in)
		return err == nil
	})

	execute(t, e2, fmt.Sprintf(`CREATE STREAM %s AS SELECT id, v * 2 AS v2 FROM %s;`, out, in))
	qid := "CSAS_" + out
	testkafka.Await(t, soon, "the query on the first engine", func() bool {
		return len(e1.Queries()) == 1 && e1.Queries()[0].ID == qid
	})
	testkafka.Produce(t, brokers, rec(in, "a", `{"v":21}`, time.Now().UnixMilli()))
	testkafka.Await(t, 30*time.Second, "the copied record", func() bool {
		return len(testkafka.ReadAll(t, brokers, out)) == 1
	})

	// An INSERT query gets the same id on both instances.
	insert := "INSERTQUERY_" + out + "_1"
	if got := execute(t, e1, fmt.Sprintf(`INSERT INTO %s SELECT id, v AS v2 FROM %s;`, out, in))[0].Message; got != "Created query with ID "+insert {
		t.Errorf("INSERT … SELECT: %q", got)
	}
	ids := func(e *engine.Engine) string {
		var out []string
		for _, q := range e.Queries() {
			out = append(out, q.ID)
		}
		return strings.Join(out, ",")
	}
	testkafka.Await(t, soon, "the INSERT query on the second engine", func() bool {
		return ids(e2) == qid+","+insert
	})

	execute(t, e1, "TERMINATE "+qid+";")
	testkafka.Await(t, soon, "the query to stop on the second engine", func() bool {
		return ids(e2) == insert
	})
	execute(t, e2, "TERMINATE "+insert+";")
	testkafka.Await(t, soon, "the INSERT query to stop on the first engine", func() bool {
		return ids(e1) == ""
	})
	// A third instance replays the query and its end: it has both
	// streams and runs nothing, though the input topic has gained a
	// partition since it was created. COPIED_… sorts before EVENTS_….
	if _, err := kadm.NewClient(testkafka.Client(t, brokers)).CreatePartitions(context.Background(), 1, in); err != nil {
		t.Fatalf("add a partition to %s: %v", in, err)
	}
	e3 := openShared(t, brokers, t.TempDir(), svc)
	wantCatalog := fmt.Sprintf("STREAMS:\n%[1]s\t%[1]s\tKAFKA\tJSON\n%[2]s\t%[2]s\tKAFKA\tJSON\nTABLES:\nQUERIES:\n", out, in)
	if diff := cmp.Diff(wantCatalog, catalogOf(t, e3)); diff != "" {
		t.Errorf("third engine's catalog (-want +got):\n%s", diff)
	}
	closeEngine(t, e3)

	// Both append CREATE STREAM race with different columns; the one
	// first in the command topic wins on both instances.
	race := testkafka.Name(t, "race")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, e := range []*engine.Engine{e1, e2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.Execute(context.Background(), fmt.Sprintf(
				`CREATE STREAM %[1]s (id VARCHAR KEY, from_engine%[2]d INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, race, i+1))
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			if !errors.Is(err, planner.ErrExists) {
				t.Errorf("the losing CREATE failed with %v, want %v", err, planner.ErrExists)
			}
		}
	}
	if failed != 1 {
		t.Fatalf("%d of 2 racing CREATEs failed, want 1: %v", failed, errs)
	}
	// Whichever engine lost applied the winner before reporting its loss;
	// the winner's catalog had it before its own CREATE returned.
	s1, err1 := e1.Catalog().Lookup(race)
	s2, err2 := e2.Catalog().Lookup(race)
	if err1 != nil || err2 != nil || s1.Statement != s2.Statement {
		t.Errorf("the engines disagree on %s:\n%v %v\n%v\n%v", race, err1, err2, s1, s2)
	}
}

// TestInsertQueryIDs numbers INSERT INTO … SELECT queries per target and
// never reuses the number of a terminated one, so ids are the same
// wherever the same statements run in the same order.
func TestInsertQueryIDs(t *testing.T) {
	ctx := context.Background()
	if _, err := engine.Open(ctx, engine.Config{Memory: true, CommandTopic: true, Log: quiet}); err == nil {
		t.Error("a Memory engine opened with a command topic")
	}
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE STREAM a (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='a', VALUE_FORMAT='JSON');
		CREATE STREAM b (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='b', VALUE_FORMAT='JSON');`)
	var got []string
	for _, sql := range []string{
		"INSERT INTO b SELECT id, v FROM a;",
		"INSERT INTO b SELECT id, v + 1 AS v FROM a;",
		"TERMINATE INSERTQUERY_B_1;",
		"INSERT INTO b SELECT id, v + 2 AS v FROM a;",
		"INSERT INTO a SELECT id, v FROM b;",
	} {
		got = append(got, execute(t, e, sql)[0].Message)
	}
	want := []string{
		"Created query with ID INSERTQUERY_B_1",
		"Created query with ID INSERTQUERY_B_2",
		"Query INSERTQUERY_B_1 terminated.",
		"Created query with ID INSERTQUERY_B_3",
		"Created query with ID INSERTQUERY_A_1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// TestCommandTopicOnePartition refuses a command topic someone created
// with more than one partition: commands would have no single order.
func TestCommandTopicOnePartition(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	testkafka.CreateTopic(t, brokers, engine.CommandTopicName(svc), 2)
	e, err := engine.Open(context.Background(), engine.Config{
		ConnOpts: []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)}, DataDir: t.TempDir(), ServiceID: svc, Log: quiet, CommandTopic: true,
	})
	if err == nil {
		e.Close()
		t.Fatal("opened with a two-partition command topic")
	}
	want := fmt.Sprintf("command topic: topic _sluice-%s-commands has 2 partitions, want 1: existing topic does not match", svc)
	if !errors.Is(err, state.ErrTopicMismatch) || err.Error() != want {
		t.Errorf("error %q, want %q (state.ErrTopicMismatch)", err, want)
	}
}

// pageViews produces clicks on five pages and waits until a views-per-page
// table's latest values equal what was produced.
type pageViews struct {
	t                *testing.T
	brokers, in, out string
	want             map[string]float64
	produced         int
}

func (p *pageViews) batch(n int) {
	p.t.Helper()
	pages := []string{"home", "cart", "search", "help", "about"}
	var recs []*kgo.Record
	for i := range n {
		k := p.produced + i
		page := pages[(k*7)%len(pages)]
		p.want[page]++
		recs = append(recs, rec(p.in, fmt.Sprintf("user%d", k%13), fmt.Sprintf(`{"page":%q}`, page), time.Now().UnixMilli()))
	}
	p.produced += n
	testkafka.Produce(p.t, p.brokers, recs...)
}

func (p *pageViews) await(stage string) {
	p.t.Helper()
	var got map[string]float64
	deadline := time.Now().Add(60 * time.Second)
	for {
		got = map[string]float64{}
		for page, v := range latestTotals(p.t, p.brokers, p.out) {
			got[page], _ = v["VIEWS"].(float64)
		}
		if cmp.Equal(p.want, got) || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if diff := cmp.Diff(p.want, got); diff != "" {
		p.t.Fatalf("%s: views per page (-want +got):\n%s", stage, diff)
	}
}
