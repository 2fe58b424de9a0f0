package engine_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/types"
)

// TestJoinRepartitionCarriesUsedColumns: a stream re-keyed for its join
// writes to its repartition topic only the columns the query reads (the
// join-column-pruning rule): here USER_ID and URL, not CLICK_ID or
// AGENT. The joined output is what it always was.
func TestJoinRepartitionCarriesUsedColumns(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc, clicks, users, out := testkafka.Name(t, "svc"), testkafka.Name(t, "clicks"), testkafka.Name(t, "users"), testkafka.Name(t, "enriched")
	repart := "_sluice-" + svc + "-query-CSAS_ENRICHED-Join-left-repartition"
	testkafka.CreateTopic(t, brokers, clicks, 1)
	testkafka.CreateTopic(t, brokers, users, 1)
	user := func(id, name string) *kgo.Record {
		return &kgo.Record{Topic: users, Key: []byte(id), Value: fmt.Appendf(nil, `{"NAME":%q}`, name), Timestamp: time.UnixMilli(1000)}
	}
	click := func(id, userID, url, agent string) *kgo.Record {
		return &kgo.Record{Topic: clicks, Key: []byte(id), Value: fmt.Appendf(nil, `{"USER_ID":%q,"URL":%q,"AGENT":%q}`, userID, url, agent), Timestamp: time.UnixMilli(2000)}
	}
	testkafka.Produce(t, brokers, user("u1", "ann"), user("u2", "bob"))
	testkafka.Produce(t, brokers, click("c1", "u1", "/a", "firefox"), click("c2", "u2", "/b", "curl"), click("c3", "u3", "/c", "curl"))

	runClicksJoin(t, brokers, svc, clicks, users, out)
	// Each repartition record is a binary row of two columns (the byte
	// after the magic counts them), USER_ID and URL.
	cols := []types.Column{{Name: "C_USER_ID", Type: types.StringType}, {Name: "C_URL", Type: types.StringType}}
	codec, err := format.NewValueCodec(format.Rows, cols, format.Props{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range testkafka.ReadAll(t, brokers, repart) {
		if len(r.Value) < 2 || r.Value[1] != 2 {
			t.Errorf("repartition record %x: want a row of 2 columns", r.Value)
			continue
		}
		dst := make([]any, len(cols))
		if err := codec.Decode(r.Value, dst); err != nil {
			t.Fatalf("repartition record %x: %v", r.Value, err)
		}
		rows = append(rows, fmt.Sprintf("%s %v", r.Key, dst))
	}
	wantRows := []string{"u1 [u1 /a]", "u2 [u2 /b]", "u3 [u3 /c]"}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("repartition rows (-want +got):\n%s", diff)
	}
}

// TestJoinRepartitionReadsUnprunedRecords: a query started by a Sluice
// before the join-column-pruning rule left full-width binary rows in its
// join's repartition topic (every column of CLICKS); restarted on this
// one, whose plan carries only USER_ID and URL, it reads those rows by
// name alongside its own narrow ones: no record is lost as malformed.
func TestJoinRepartitionReadsUnprunedRecords(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc, clicks, users, out := testkafka.Name(t, "svc"), testkafka.Name(t, "clicks"), testkafka.Name(t, "users"), testkafka.Name(t, "enriched")
	repart := "_sluice-" + svc + "-query-CSAS_ENRICHED-Join-left-repartition"
	testkafka.CreateTopic(t, brokers, clicks, 1)
	testkafka.CreateTopic(t, brokers, users, 1)
	testkafka.CreateTopic(t, brokers, repart, 1)
	user := func(id, name string) *kgo.Record {
		return &kgo.Record{Topic: users, Key: []byte(id), Value: fmt.Appendf(nil, `{"NAME":%q}`, name), Timestamp: time.UnixMilli(1000)}
	}
	testkafka.Produce(t, brokers, user("u1", "ann"), user("u2", "bob"))
	// What the unpruned plan wrote: the Rows codec over the full layout.
	full := []types.Column{{Name: "C_CLICK_ID", Type: types.StringType}, {Name: "C_USER_ID", Type: types.StringType},
		{Name: "C_URL", Type: types.StringType}, {Name: "C_AGENT", Type: types.StringType}}
	wide, err := format.NewValueCodec(format.Rows, full, format.Props{})
	if err != nil {
		t.Fatal(err)
	}
	old := func(clickID, userID, url, agent string) *kgo.Record {
		v, err := wide.Encode([]any{clickID, userID, url, agent})
		if err != nil {
			t.Fatal(err)
		}
		return &kgo.Record{Topic: repart, Key: []byte(userID), Value: v, Timestamp: time.UnixMilli(2000)}
	}
	testkafka.Produce(t, brokers, old("c1", "u1", "/a", "firefox"), old("c2", "u2", "/b", "curl"))
	testkafka.Produce(t, brokers, &kgo.Record{Topic: clicks, Key: []byte("c3"), Value: []byte(`{"USER_ID":"u3","URL":"/c","AGENT":"curl"}`), Timestamp: time.UnixMilli(3000)})

	q := runClicksJoin(t, brokers, svc, clicks, users, out)
	if n := q.Metrics.Errors()["deserialize"]; n != 0 {
		t.Errorf("deserialize errors %d, want 0", n)
	}
}

// TestJoinStoresOfTheUnprunedPlan: a stream-stream join run by a Sluice
// before the join-column-pruning rule (the same query planned without
// it) keeps full-width rows in its window stores; restarted on the plan
// with the rule, whose rows carry only USER_ID, PAGE and ITEM, its new
// rows match the old ones exactly: the stores' rows are rewritten by
// name when the join opens.
func TestJoinStoresOfTheUnprunedPlan(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc, views, buys, out := testkafka.Name(t, "svc"), testkafka.Name(t, "views"), testkafka.Name(t, "buys"), testkafka.Name(t, "joined")
	testkafka.CreateTopic(t, brokers, views, 1)
	testkafka.CreateTopic(t, brokers, buys, 1)
	view := func(id, userID, page string, ms int64) *kgo.Record {
		return &kgo.Record{Topic: views, Key: []byte(id), Value: fmt.Appendf(nil, `{"USER_ID":%q,"PAGE":%q,"AGENT":"curl"}`, userID, page), Timestamp: time.UnixMilli(ms)}
	}
	buy := func(id, userID, item string, ms int64) *kgo.Record {
		return &kgo.Record{Topic: buys, Key: []byte(id), Value: fmt.Appendf(nil, `{"USER_ID":%q,"ITEM":%q,"PRICE":7}`, userID, item), Timestamp: time.UnixMilli(ms)}
	}
	sql := fmt.Sprintf(`
		CREATE STREAM views (view_id VARCHAR KEY, user_id VARCHAR, page VARCHAR, agent VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM buys (buy_id VARCHAR KEY, user_id VARCHAR, item VARCHAR, price INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM joined WITH (KAFKA_TOPIC='%s') AS SELECT v.user_id, page, item FROM views v JOIN buys b WITHIN 1 HOUR ON v.user_id = b.user_id;`, views, buys, out)
	var got []string
	produceAndAwait := func(r *kgo.Record, want int) {
		t.Helper()
		testkafka.Produce(t, brokers, r)
		testkafka.Await(t, 30*time.Second, fmt.Sprintf("%d joined rows", want), func() bool {
			got = got[:0]
			for _, r := range testkafka.ReadAll(t, brokers, out) {
				got = append(got, string(r.Key)+" "+string(r.Value))
			}
			return len(got) >= want
		})
	}
	dir := t.TempDir()
	cfg := testConfig(brokers, dir, svc, quiet)
	cfg.SkipPlannerRules = []string{"join-column-pruning"}
	e := openConfig(t, cfg)
	execute(t, e, sql)
	testkafka.Produce(t, brokers, view("v1", "u1", "/a", 1000), view("v2", "u2", "/b", 1000))
	produceAndAwait(buy("b1", "u1", "pen", 2000), 1)
	produceAndAwait(buy("b2", "u2", "cup", 2000), 2)
	closeEngine(t, e)

	e = openEngine(t, brokers, dir, svc)
	q := execute(t, e, sql)[2].Query
	produceAndAwait(buy("b3", "u1", "ink", 3000), 3)
	produceAndAwait(buy("b4", "u2", "mug", 3000), 4)
	produceAndAwait(view("v3", "u1", "/c", 3500), 6)
	closeEngine(t, e)
	want := []string{`u1 {"PAGE":"/a","ITEM":"pen"}`, `u2 {"PAGE":"/b","ITEM":"cup"}`, `u1 {"PAGE":"/a","ITEM":"ink"}`, `u2 {"PAGE":"/b","ITEM":"mug"}`,
		`u1 {"PAGE":"/c","ITEM":"ink"}`, `u1 {"PAGE":"/c","ITEM":"pen"}`}
	slices.Sort(want[4:])
	slices.Sort(got[min(4, len(got)):])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("joined rows (-want +got):\n%s", diff)
	}
	if n := q.Metrics.Errors()["deserialize"]; n != 0 {
		t.Errorf("deserialize errors %d, want 0", n)
	}
}

// runClicksJoin runs the clicks LEFT JOIN users query of the tests above
// on a fresh engine until its three joined clicks are out, checks them
// exactly and returns the query, its engine closed.
func runClicksJoin(t *testing.T, brokers, svc, clicks, users, out string) *engine.Query {
	t.Helper()
	e := openEngine(t, brokers, t.TempDir(), svc)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM clicks (click_id VARCHAR KEY, user_id VARCHAR, url VARCHAR, agent VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM enriched WITH (KAFKA_TOPIC='%s') AS SELECT c.user_id, url, name FROM clicks c LEFT JOIN users u ON c.user_id = u.id;`, clicks, users, out))
	var got []string
	testkafka.Await(t, 30*time.Second, "the three joined clicks", func() bool {
		got = got[:0]
		for _, r := range testkafka.ReadAll(t, brokers, out) {
			got = append(got, string(r.Key)+" "+string(r.Value))
		}
		return len(got) >= 3
	})
	closeEngine(t, e)
	want := []string{`u1 {"URL":"/a","NAME":"ann"}`, `u2 {"URL":"/b","NAME":"bob"}`, `u3 {"URL":"/c","NAME":null}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("joined clicks (-want +got):\n%s", diff)
	}
	return res[2].Query
}
