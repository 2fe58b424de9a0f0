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

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/netns"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestCluster3Sluice runs the fault tests of docs/faults.md with the real
// binary on one three-node Apache Kafka cluster (scripts/kafka start
// --nodes 3) that listens on a private bridge (internal/netns), so that
// `sluice server` instances can run on hosts of their own. It runs only
// with SLUICE_TEST_CLUSTER=1 (.ci/run's cluster step), as root.
func TestCluster3Sluice(t *testing.T) {
	hosts := netns.New(t)
	c := testkafka.StartCluster(t, 3, hosts.HostIP())
	for _, guarantee := range []string{"exactly_once", "at_least_once"} {
		t.Run("leader kill/"+guarantee, func(t *testing.T) { cluster3LeaderKill(t, c, guarantee) })
	}
	t.Run("command topic leader kill", func(t *testing.T) { cluster3CommandLeaderKill(t, c) })
	t.Run("instance cut off", func(t *testing.T) { cluster3CutOff(t, c, hosts) })
}

// cluster3Statements are the queries of cluster3LeaderKill.
func cluster3Statements(in, labels, out, table, windowed, joined, guarantee string) string {
	return fmt.Sprintf(`SET 'auto.offset.reset'='earliest';
SET 'processing.guarantee'='%[7]s';

CREATE STREAM %[1]s (id VARCHAR KEY, seq BIGINT, grp VARCHAR, amount BIGINT)
  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=4);
CREATE TABLE %[2]s (grp VARCHAR PRIMARY KEY, label VARCHAR)
  WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', PARTITIONS=4);

CREATE STREAM %[3]s AS
  SELECT id, seq, grp, amount * 2 AS doubled FROM %[1]s;

CREATE TABLE %[4]s AS
  SELECT grp, COUNT(*) AS n, SUM(amount) AS total
  FROM %[1]s GROUP BY grp;

CREATE TABLE %[5]s AS
  SELECT grp, COUNT(*) AS n, SUM(amount) AS total
  FROM %[1]s WINDOW TUMBLING (SIZE 1 MINUTE, GRACE PERIOD 2 HOURS) GROUP BY grp;

CREATE STREAM %[6]s AS
  SELECT i.grp AS grp, i.seq AS seq, l.label AS label
  FROM %[1]s i JOIN %[2]s l ON i.grp = l.grp;
`, in, labels, out, table, windowed, joined, guarantee)
}

// cluster3LeaderKill is faults (1) and (2) of docs/faults.md: the real
// binary, under one guarantee, with four queries over one 4-partition
// input: a stateless copy, a GROUP BY on a value column (a repartition
// topic and a changelog), a tumbling-window count per group (another
// changelog), and a stream–table join of the input, repartitioned by
// group, with a table of group labels. Halfway through the input the node
// leading the most partitions of the input, the repartition topics and
// the changelogs is SIGKILLed, with input produced while it is down; once
// output flows again it is restarted and a preferred leader election
// moves leadership back. The tables must hold the exact totals per group
// and per window; the copy and the join every record: once each under
// exactly-once (read_committed), at least once under at-least-once. It
// logs the time from each fault to the next committed output.
func cluster3LeaderKill(t *testing.T, c *testkafka.Cluster, guarantee string) {
	brokers := c.Brokers
	const records, groups, batch = 6000, 12, 200
	in, labels := testkafka.Name(t, "c3_in"), testkafka.Name(t, "c3_labels")
	out, table := testkafka.Name(t, "c3_out"), testkafka.Name(t, "c3_totals")
	windowed, joined := testkafka.Name(t, "c3_win"), testkafka.Name(t, "c3_joined")
	svc := testkafka.Name(t, "c3_svc")
	testkafka.CreateTopic(t, brokers, in, 4)
	testkafka.CreateTopic(t, brokers, labels, 4)
	file := filepath.Join(t.TempDir(), "c3.sql")
	if err := os.WriteFile(file, []byte(cluster3Statements(in, labels, out, table, windowed, joined, guarantee)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The labels are in their topic before the join starts: it restores
	// the table before it joins the first record.
	label := func(grp string) string { return "label-" + grp }
	var labelRecs []*kgo.Record
	for g := range groups {
		grp := fmt.Sprintf("g%02d", g)
		labelRecs = append(labelRecs, &kgo.Record{Topic: labels, Key: []byte(grp), Value: fmt.Appendf(nil, `{"LABEL":%q}`, label(grp))})
	}
	testkafka.Produce(t, brokers, labelRecs...)

	// Event time: 100 ms apart from two hours ago, so the 6,000 records
	// span ten one-minute windows, every one inside the grace period.
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Minute)
	type windowKey struct {
		grp   string
		start int64
	}
	want := map[string]pageTotals{}
	wantWin := map[windowKey]pageTotals{}
	wantGroup := map[int64]string{}
	var recs []*kgo.Record
	for seq := 0; seq < records; seq++ {
		grp := fmt.Sprintf("g%02d", seq%groups)
		amount := int64(seq%97 + 1)
		ts := base.Add(time.Duration(seq) * 100 * time.Millisecond)
		w := want[grp]
		w.N++
		w.Total += amount
		want[grp] = w
		wk := windowKey{grp, ts.Truncate(time.Minute).UnixMilli()}
		ww := wantWin[wk]
		ww.N++
		ww.Total += amount
		wantWin[wk] = ww
		wantGroup[int64(seq)] = grp
		recs = append(recs, &kgo.Record{Topic: in, Key: []byte(fmt.Sprintf("id%03d", seq%300)), Timestamp: ts,
			Value: fmt.Appendf(nil, `{"seq":%d,"grp":%q,"amount":%d}`, seq, grp, amount)})
	}
	cr := newCrashRuns(t, brokers, file, svc)
	p := cr.run()
	defer p.stop(t, 30*time.Second)
	adm := cr.adm
	prod := testkafka.Client(t, brokers, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	produce := func(lo, hi int) error {
		for b := lo; b < hi; b += batch {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err := prod.ProduceSync(ctx, recs[b:min(b+batch, hi)]...).FirstErr()
			cancel()
			if err != nil {
				return fmt.Errorf("produce records %d–%d: %w", b, min(b+batch, hi), err)
			}
		}
		return nil
	}
	mustProduce := func(lo, hi int) {
		if err := produce(lo, hi); err != nil {
			t.Fatal(err)
		}
	}
	// committed counts the committed records of the copy and the join
	// (read_committed end offsets are the last stable offsets).
	committed := func() int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ends, err := adm.ListCommittedOffsets(ctx, out, joined)
		if err != nil {
			return -1
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		return n
	}
	waitGrowth := func(what string, from int64, fault time.Time) {
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) {
			if n := committed(); n > from {
				t.Logf("resume after %s: %s", what, time.Since(fault).Round(100*time.Millisecond))
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("no committed output within 90 s after %s (%d committed before)", what, from)
	}

	mustProduce(0, records/2)
	waitGrowth("start", 0, cr.start)
	leader, led := busiestLeader(t, adm, svc, in)
	before := committed()
	killed := time.Now()
	c.StopNode(t, int(leader))
	t.Logf("killed node %d, leader of %s, with %d outputs committed", leader, led, before)
	// Produced while the node is down: the producer must find the new
	// leaders itself.
	prodErr := make(chan error, 1)
	go func() { prodErr <- produce(records/2, records*3/4) }()
	waitGrowth(fmt.Sprintf("leader kill (node %d)", leader), before, killed)
	if err := <-prodErr; err != nil {
		t.Fatal(err)
	}

	c.StartNode(t, int(leader))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{})
	cancel()
	if err != nil {
		t.Logf("preferred election: %v", err)
	}
	before = committed()
	moved := time.Now()
	mustProduce(records*3/4, records)
	waitGrowth("leader return and preferred election", before, moved)

	// Every record in the copy and the join, exact totals in the tables.
	seen, seenJoined := map[int64]int{}, map[int64]int{}
	last := map[string]pageTotals{}
	lastWin := map[windowKey]pageTotals{}
	cl := testkafka.Client(t, brokers, kgo.ConsumeTopics(out, table, windowed, joined), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	deadline := time.Now().Add(90 * time.Second)
	done := func() bool {
		if len(seen) != records || len(seenJoined) != records || len(lastWin) != len(wantWin) {
			return false
		}
		for g, w := range want {
			if last[g] != w {
				return false
			}
		}
		for k, w := range wantWin {
			if lastWin[k] != w {
				return false
			}
		}
		return true
	}
	totals := func(r *kgo.Record) pageTotals {
		var v pageTotals
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Errorf("table record %q at %s/%d@%d: %v", r.Value, r.Topic, r.Partition, r.Offset, err)
		}
		return v
	}
	for !done() && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			switch r.Topic {
			case out:
				seen[*decodeCrashOut(t, r).SEQ]++
			case table:
				last[string(r.Key)] = totals(r)
			case windowed:
				key, start, err := format.DecodeTimeWindowedKey(r.Key)
				if err != nil {
					t.Errorf("windowed key %x at %s/%d@%d: %v", r.Key, r.Topic, r.Partition, r.Offset, err)
					return
				}
				lastWin[windowKey{string(key), start}] = totals(r)
			case joined:
				var v struct {
					SEQ   int64  `json:"SEQ"`
					LABEL string `json:"LABEL"`
				}
				if err := json.Unmarshal(r.Value, &v); err != nil {
					t.Errorf("joined record %q at %s/%d@%d: %v", r.Value, r.Topic, r.Partition, r.Offset, err)
					return
				}
				if grp := wantGroup[v.SEQ]; string(r.Key) != grp || v.LABEL != label(grp) {
					t.Errorf("joined record %s=%s at %s/%d@%d: want key %s, label %s", r.Key, r.Value, r.Topic, r.Partition, r.Offset, grp, label(grp))
				}
				seenJoined[v.SEQ]++
			}
		})
	}
	for _, c := range []struct {
		what string
		seen map[int64]int
	}{{"copy", seen}, {"join", seenJoined}} {
		dups := 0
		for _, n := range c.seen {
			if n > 1 {
				dups++
			}
		}
		if len(c.seen) != records || (guarantee == "exactly_once" && dups > 0) {
			t.Errorf("%s (%s): %d distinct records of %d, %d seen more than once", c.what, guarantee, len(c.seen), records, dups)
		}
		t.Logf("%s: %d records, %d seen more than once", c.what, len(c.seen), dups)
	}
	for g, w := range want {
		if last[g] != w {
			t.Errorf("table %s: %+v, want %+v", g, last[g], w)
		}
	}
	if len(lastWin) != len(wantWin) {
		t.Errorf("windowed table: %d windows, want %d", len(lastWin), len(wantWin))
	}
	for k, w := range wantWin {
		if lastWin[k] != w {
			t.Errorf("windowed table %s@%s: %+v, want %+v", k.grp, time.UnixMilli(k.start).UTC().Format(time.TimeOnly), lastWin[k], w)
		}
	}
}

// busiestLeader returns the broker leading the most partitions of the
// input and of the service's internal topics (repartition topics and
// changelogs), and a summary of what it leads.
func busiestLeader(t *testing.T, adm *kadm.Client, svc, input string) (int32, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	led := map[int32]map[string]int{}
	for name, td := range md.Topics {
		if name != input && !strings.HasPrefix(name, "_sluice-"+svc+"-") {
			continue
		}
		for _, p := range td.Partitions {
			if led[p.Leader] == nil {
				led[p.Leader] = map[string]int{}
			}
			led[p.Leader][name]++
		}
	}
	var best int32 = -1
	total := func(n int32) (s int) {
		for _, c := range led[n] {
			s += c
		}
		return s
	}
	for n := range led {
		if best < 0 || total(n) > total(best) || (total(n) == total(best) && n < best) {
			best = n
		}
	}
	if best < 0 {
		t.Fatalf("no partition of %s or of the service's internal topics has a leader", input)
	}
	var parts []string
	for name, n := range led[best] {
		parts = append(parts, fmt.Sprintf("%d of %s", n, name))
	}
	sort.Strings(parts)
	return best, fmt.Sprintf("%d partitions (%s)", total(best), strings.Join(parts, ", "))
}
