package engine_test

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// kcatProduce writes key:value lines to topic with the kcat binary. An
// empty value is a tombstone (-Z). Keys are partitioned with murmur2 as
// the Java producer does (librdkafka's default is CRC32), so that the
// topic is co-partitioned with what Sluice writes.
func kcatProduce(t *testing.T, brokers, topic string, lines ...string) {
	t.Helper()
	bin := kcat(t)
	cmd := exec.Command(bin, "-P", "-b", brokers, "-t", topic, "-K:", "-Z", "-X", "partitioner=murmur2_random")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
}

// kcat returns the kcat binary, installing it with scripts/install-kcat
// when it is missing (as .ci/run does), so that `go test ./...` needs
// nothing installed by hand.
func kcat(t *testing.T) string {
	t.Helper()
	kcatOnce.Do(func() {
		if _, err := exec.LookPath("kcat"); err != nil {
			if out, err := exec.Command("../scripts/install-kcat").CombinedOutput(); err != nil {
				t.Logf("scripts/install-kcat: %v\n%s", err, out)
			}
		}
	})
	bin, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatal("kcat is not installed and scripts/install-kcat could not install it: apt-get install -y kcat")
	}
	return bin
}

var kcatOnce sync.Once

// TestJoinStreamTableThroughKafka enriches clicks (keyed by click id, so
// repartitioned by user id) with a users table whose topic kcat wrote
// before the query started: every click sees the table as it was
// written, tombstone included (the table is bootstrapped from its topic
// before stream records are joined). The engine is then closed, the
// table updated and more clicks produced: after a restart on the same
// data directory the new clicks see the updated table and nothing is
// output twice; table changes read while the query runs are seen too, and
// so is the table after a restart with an empty data directory.
func TestJoinStreamTableThroughKafka(t *testing.T) {
	kcat(t)
	brokers := testkafka.Brokers(t)
	users, clicks, out, svc := testkafka.Name(t, "users"), testkafka.Name(t, "clicks"), testkafka.Name(t, "enriched"), testkafka.Name(t, "svc")
	// Two partitions: carol lands in 0, heidi and frank in 1 (murmur2);
	// CRC32 would put carol and heidi in the other partition each.
	testkafka.CreateTopic(t, brokers, users, 2)
	kcatProduce(t, brokers, users,
		`carol:{"name":"Carol","tier":"gold","region":"eu"}`,
		`heidi:{"name":"Heidi","tier":"silver","region":"us"}`,
		`frank:{"name":"Frank","tier":"bronze","region":"eu"}`,
		`frank:`, // tombstone: frank is deleted
		`carol:{"name":"Carol","tier":"platinum","region":"eu"}`,
	)
	sql := fmt.Sprintf(`
		CREATE TABLE %[1]s (id VARCHAR PRIMARY KEY, name VARCHAR, tier VARCHAR, region VARCHAR)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE STREAM %[2]s (click_id VARCHAR KEY, user_id VARCHAR, page VARCHAR, region VARCHAR)
		  WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE STREAM %[3]s AS
		  SELECT c.user_id, c.click_id, c.page, c.region, u.name, u.tier, u.region
		  FROM %[2]s c LEFT JOIN %[1]s u ON c.user_id = u.id;`, users, clicks, out)
	const s = 1000
	base := time.Now().Add(-time.Hour).UnixMilli() / (60 * s) * (60 * s)
	click := func(id, user, page, region string, at int64) outRecord {
		return outRecord{Key: id, Value: fmt.Sprintf(`{"user_id":%q,"page":%q,"region":%q}`, user, page, region), Ts: base + at}
	}
	produce := func(cs ...outRecord) {
		t.Helper()
		recs := make([]*kgo.Record, 0, len(cs))
		for _, c := range cs {
			recs = append(recs, rec(clicks, c.Key, c.Value, c.Ts))
		}
		testkafka.Produce(t, brokers, recs...)
	}
	// run starts the engine, waits for it to read the table's records it
	// has not read before (tableRecords: a click joins the table as its
	// task has read it, so one produced at once could meet the table half
	// read), produces clicks, waits for them to come out, then runs then
	// (if set) with the query, which returns how many more outputs to
	// wait for.
	run := func(dir string, tableRecords int64, cs []outRecord, then func(q *engine.Query) int) {
		t.Helper()
		e := openEngine(t, brokers, dir, svc)
		q := execute(t, e, sql)[2].Query
		testkafka.Await(t, 60*time.Second, fmt.Sprintf("%d table records read", tableRecords), func() bool {
			return q.Metrics.RecordsIn.Load() >= tableRecords
		})
		produce(cs...)
		n := int64(len(cs))
		testkafka.Await(t, 60*time.Second, fmt.Sprintf("%d enriched clicks", n), func() bool {
			return q.Metrics.RecordsOut.Load() >= n
		})
		if then != nil {
			n += int64(then(q))
			testkafka.Await(t, 60*time.Second, fmt.Sprintf("%d enriched clicks", n), func() bool {
				return q.Metrics.RecordsOut.Load() >= n
			})
		}
		time.Sleep(500 * time.Millisecond) // room for anything output twice
		if got := q.Metrics.RecordsOut.Load(); got != n {
			t.Errorf("query output %d records, want %d", got, n)
		}
		if err := q.Err(); err != nil {
			t.Errorf("query failed: %v", err)
		}
		closeEngine(t, e)
	}
	enriched := func(user, id, page, cRegion, name, tier, uRegion string, at int64) outRecord {
		str := func(v string) string {
			if v == "" {
				return "null"
			}
			return fmt.Sprintf("%q", v)
		}
		return outRecord{Key: user, Ts: base + at, Value: fmt.Sprintf(`{"CLICK_ID":%q,"PAGE":%q,"C_REGION":%q,"NAME":%s,"TIER":%s,"U_REGION":%s}`,
			id, page, cRegion, str(name), str(tier), str(uRegion))}
	}
	check := func(stage string, want []outRecord) {
		t.Helper()
		got := outputs(t, brokers, out)
		// Partitions hold different users: order by click id.
		sort.SliceStable(got, func(i, j int) bool { return got[i].Value < got[j].Value })
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: enriched clicks (-want +got):\n%s", stage, diff)
		}
	}

	dir := t.TempDir()
	run(dir, 5, []outRecord{
		click("k01", "carol", "home", "eu", 1*s),
		click("k02", "heidi", "cart", "us", 2*s),
		click("k03", "frank", "home", "apac", 3*s), // deleted user
		click("k04", "zoe", "help", "us", 4*s),     // unknown user
		click("k05", "carol", "cart", "us", 5*s),
	}, nil)
	want := []outRecord{
		enriched("carol", "k01", "home", "eu", "Carol", "platinum", "eu", 1*s),
		enriched("heidi", "k02", "cart", "us", "Heidi", "silver", "us", 2*s),
		enriched("frank", "k03", "home", "apac", "", "", "", 3*s),
		enriched("zoe", "k04", "help", "us", "", "", "", 4*s),
		enriched("carol", "k05", "cart", "us", "Carol", "platinum", "eu", 5*s),
	}
	check("first run", want)

	// While the engine is down the table changes.
	kcatProduce(t, brokers, users,
		`heidi:{"name":"Heidi","tier":"gold","region":"us"}`,
		`frank:{"name":"Frank","tier":"bronze","region":"apac"}`,
		`carol:`,
	)
	run(dir, 3, []outRecord{
		click("k06", "carol", "home", "eu", 6*s), // deleted now
		click("k07", "heidi", "home", "us", 7*s),
		click("k08", "frank", "cart", "apac", 8*s),
		click("k09", "zoe", "home", "eu", 9*s),
	}, func(q *engine.Query) int {
		// Table changes while the query runs (a new user, a deletion):
		// once the query has read them, clicks see them.
		read := q.Metrics.RecordsIn.Load()
		kcatProduce(t, brokers, users, `zoe:{"name":"Zoe","tier":"gold","region":"eu"}`, `heidi:`)
		testkafka.Await(t, 30*time.Second, "the table changes read", func() bool { return q.Metrics.RecordsIn.Load() >= read+2 })
		produce(click("k10", "zoe", "cart", "eu", 10*s), click("k11", "heidi", "cart", "us", 11*s))
		return 2
	})
	want = append(want,
		enriched("carol", "k06", "home", "eu", "", "", "", 6*s),
		enriched("heidi", "k07", "home", "us", "Heidi", "gold", "us", 7*s),
		enriched("frank", "k08", "cart", "apac", "Frank", "bronze", "apac", 8*s),
		enriched("zoe", "k09", "home", "eu", "", "", "", 9*s),
		enriched("zoe", "k10", "cart", "eu", "Zoe", "gold", "eu", 10*s),
		enriched("heidi", "k11", "cart", "us", "", "", "", 11*s),
	)
	check("after restart", want)

	// An empty data directory: the table comes back from its topic (a
	// restore, before the query reads anything).
	run(t.TempDir(), 0, []outRecord{
		click("k12", "carol", "home", "eu", 12*s),
		click("k13", "zoe", "home", "eu", 13*s),
		click("k14", "frank", "home", "eu", 14*s),
	}, nil)
	want = append(want,
		enriched("carol", "k12", "home", "eu", "", "", "", 12*s),
		enriched("zoe", "k13", "home", "eu", "Zoe", "gold", "eu", 13*s),
		enriched("frank", "k14", "home", "eu", "Frank", "bronze", "apac", 14*s),
	)
	check("after restart with an empty data directory", want)
}

// TestJoinStreamStreamThroughKafka left-joins impressions with clicks
// within 10 minutes, grace 1 minute, with out-of-order records: a click
// before its impression, one 9 minutes after (a match), one 11 minutes
// after (no match: the impression comes out alone when its window
// closes), a late click beyond the grace (dropped, counted), and a
// restart between batches: an impression before it is matched by a click
// after it, another is emitted alone after it when its window closes; a
// click exactly 10 minutes after its impression, arriving within the grace
// after stream time passed the window, still matches. A last restart with
// an empty data directory finds the waiting impressions in the changelogs.
func TestJoinStreamStreamThroughKafka(t *testing.T) {
	brokers := testkafka.Brokers(t)
	imps, clicks, out, svc := testkafka.Name(t, "impressions"), testkafka.Name(t, "clicks"), testkafka.Name(t, "ad_clicks"), testkafka.Name(t, "svc")
	sql := fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, ad VARCHAR, at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='at', PARTITIONS=1);
		CREATE STREAM %[2]s (id VARCHAR KEY, at BIGINT)
		  WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', TIMESTAMP='at', PARTITIONS=1);
		CREATE STREAM %[3]s AS
		  SELECT i.id, i.ad, i.at, c.at
		  FROM %[1]s i LEFT JOIN %[2]s c WITHIN 10 MINUTES GRACE PERIOD 1 MINUTE ON i.id = c.id;`, imps, clicks, out)
	const m = 60_000
	base := time.Now().Add(-time.Hour).UnixMilli() / (10 * m) * (10 * m)
	var e *engine.Engine
	var q *engine.Query
	in := int64(0)
	// send produces one record and waits until the query has read it, so
	// that the query sees the two topics' records in this order.
	send := func(topic, id, value string, at int64) {
		t.Helper()
		testkafka.Produce(t, brokers, rec(topic, id, value, base+at))
		in++
		testkafka.Await(t, 30*time.Second, fmt.Sprintf("record %d read", in), func() bool { return q.Metrics.RecordsIn.Load() >= in })
	}
	imp := func(id string, at int64) {
		t.Helper()
		send(imps, id, fmt.Sprintf(`{"ad":"ad-%s","at":%d}`, id, base+at), at)
	}
	clk := func(id string, at int64) {
		t.Helper()
		send(clicks, id, fmt.Sprintf(`{"at":%d}`, base+at), at)
	}
	start := func(dir string) {
		t.Helper()
		e = openEngine(t, brokers, dir, svc)
		q = execute(t, e, sql)[2].Query
		in = 0
	}
	joined := func(id string, impAt, clickAt, ts int64) outRecord {
		c := "null"
		if clickAt >= 0 {
			c = fmt.Sprint(base + clickAt)
		}
		return outRecord{Key: id, Value: fmt.Sprintf(`{"AD":"ad-%s","I_AT":%d,"C_AT":%s}`, id, base+impAt, c), Ts: base + ts}
	}

	dir := t.TempDir()
	start(dir)
	clk("a", 1*m)  // before its impression
	imp("a", 2*m)  // matches the click at 1m
	imp("b", 3*m)  // waits for a click
	imp("c", 13*m) // stream time 13m
	clk("b", 12*m) // 9 minutes after b: matches
	clk("c", 24*m) // 11 minutes after c: no match; c closes once stream time passes 24m
	imp("d", 25*m) // stream time 25m: c comes out alone
	imp("e", 26*m)
	testkafka.Await(t, 30*time.Second, "3 results", func() bool { return q.Metrics.RecordsOut.Load() >= 3 })
	closeEngine(t, e)
	want := []outRecord{
		joined("a", 2*m, 1*m, 2*m),
		joined("b", 3*m, 12*m, 12*m),
		joined("c", 13*m, -1, 13*m),
	}
	if diff := cmp.Diff(want, outputs(t, brokers, out)); diff != "" {
		t.Errorf("before restart: outputs (-want +got):\n%s", diff)
	}

	// d and e wait in the join's state across the restart.
	start(dir)
	clk("d", 30*m) // matches d at 25m
	clk("b", 2*m)  // clicks seen up to 30m: beyond 10m + 10m + 1m, late
	imp("g", 31*m) // its window ends at 41m and closes after 42m
	imp("f", 40*m) // stream time 40m: e (26m + 10m + 1m) comes out alone
	clk("h", 42*m) // stream time 42m: past g's window, within its grace
	clk("g", 41*m) // exactly 10 minutes after g, out of order: matches
	imp("i", 50*m) // stream time 50m: g matched, so it does not come out alone
	testkafka.Await(t, 30*time.Second, "3 results", func() bool { return q.Metrics.RecordsOut.Load() >= 3 })
	time.Sleep(300 * time.Millisecond) // room for anything more
	if n := q.Metrics.LateDropped.Load(); n != 1 {
		t.Errorf("late records = %d, want 1", n)
	}
	if err := q.Err(); err != nil {
		t.Errorf("query failed: %v", err)
	}
	closeEngine(t, e)
	want = append(want,
		joined("d", 25*m, 30*m, 30*m),
		joined("e", 26*m, -1, 26*m),
		joined("g", 31*m, 41*m, 41*m),
	)
	if diff := cmp.Diff(want, outputs(t, brokers, out)); diff != "" {
		t.Errorf("after restart: outputs (-want +got):\n%s", diff)
	}

	// An empty data directory: f and i wait in the join's changelogs.
	start(t.TempDir())
	clk("i", 55*m) // stream time 55m: f (40m + 10m + 1m) comes out alone; i matches
	testkafka.Await(t, 30*time.Second, "2 results", func() bool { return q.Metrics.RecordsOut.Load() >= 2 })
	time.Sleep(300 * time.Millisecond)
	if err := q.Err(); err != nil {
		t.Errorf("query failed: %v", err)
	}
	closeEngine(t, e)
	want = append(want,
		joined("f", 40*m, -1, 40*m),
		joined("i", 50*m, 55*m, 55*m),
	)
	if diff := cmp.Diff(want, outputs(t, brokers, out)); diff != "" {
		t.Errorf("after restart with an empty data directory: outputs (-want +got):\n%s", diff)
	}
}

// TestJoinPushQuery runs a stream-table join as a push query: it keeps
// no changelog and reads only new clicks, yet the users table written
// before it started is restored from its topic, so the first click is
// enriched.
func TestJoinPushQuery(t *testing.T) {
	brokers := testkafka.Brokers(t)
	users, clicks, svc := testkafka.Name(t, "users"), testkafka.Name(t, "clicks"), testkafka.Name(t, "svc")
	// Push queries read from the end, as they do by default.
	e := openEngineLog(t, brokers, t.TempDir(), svc, quiet, "auto.offset.reset", "latest")
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`
		CREATE TABLE %[1]s (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE STREAM %[2]s (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, users, clicks))
	now := time.Now().UnixMilli()
	testkafka.Produce(t, brokers, rec(users, "ann", `{"name":"Ann"}`, now), rec(users, "bob", `{"name":"Bob"}`, now))
	rs := execute(t, e, fmt.Sprintf(`SELECT c.user_id, page, name FROM %s c LEFT JOIN %s u ON c.user_id = u.id EMIT CHANGES;`, clicks, users))[0].Rows
	if rs == nil {
		t.Fatal("push query returned no row stream")
	}
	defer rs.Close()
	text := func(row []any) string {
		parts := make([]string, len(row))
		for i, v := range row {
			parts[i] = fmt.Sprintf("%v", v)
		}
		return strings.Join(parts, " ")
	}
	// The query reads clicks from their end: ann's click is produced
	// until the query's consumer has started, which its first row shows;
	// then bob's and zoe's, once.
	var first string
	var rest []string
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for len(rest) < 2 {
		select {
		case row, ok := <-rs.C:
			if !ok {
				t.Fatalf("row stream closed; rows so far %q, %q", first, rest)
			}
			switch r := text(row.Cols); {
			case first == "":
				first = r
				testkafka.Produce(t, brokers, rec(clicks, "bob", `{"page":"/b"}`, now+2), rec(clicks, "zoe", `{"page":"/z"}`, now+3))
			case !strings.HasPrefix(r, "ann "):
				rest = append(rest, r)
			}
		case <-tick.C:
			if first == "" {
				testkafka.Produce(t, brokers, rec(clicks, "ann", `{"page":"/a"}`, now+1))
			}
		case <-deadline:
			t.Fatalf("rows so far %q, %q", first, rest)
		}
	}
	if first != "ann /a Ann" {
		t.Errorf("first row %q, want %q", first, "ann /a Ann")
	}
	if diff := cmp.Diff([]string{"bob /b Bob", "zoe /z <nil>"}, rest); diff != "" {
		t.Errorf("later rows (-want +got):\n%s", diff)
	}
}
