package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestCluster3SluiceLeaderKill runs the real binary, under each guarantee,
// on a three-node Apache Kafka cluster (scripts/kafka start --nodes 3): a
// stateless copy and a GROUP BY on a value column (a repartition topic
// and a changelog) over a 4-partition input. Halfway through the input
// the node leading the input's partition 0 is SIGKILLed; once output
// flows again it is restarted and a preferred leader election moves
// leadership back. The table must hold the exact totals, and the copy
// every record: once each under exactly-once (read_committed), at least
// once under at-least-once. It logs the time from each fault to the next
// committed output. It runs only with SLUICE_TEST_CLUSTER=1 (.ci/run's
// cluster step).
func TestCluster3SluiceLeaderKill(t *testing.T) {
	c := testkafka.StartCluster(t, 3, "")
	for _, guarantee := range []string{"exactly_once", "at_least_once"} {
		t.Run(guarantee, func(t *testing.T) { cluster3LeaderKill(t, c, guarantee) })
	}
}

func cluster3LeaderKill(t *testing.T, c *testkafka.Cluster, guarantee string) {
	brokers := c.Brokers
	const records, groups, batch = 6000, 12, 200
	in, out, table := testkafka.Name(t, "c3_in"), testkafka.Name(t, "c3_out"), testkafka.Name(t, "c3_totals")
	svc := testkafka.Name(t, "c3_svc")
	testkafka.CreateTopic(t, brokers, in, 4)
	file := filepath.Join(t.TempDir(), "c3.sql")
	if err := os.WriteFile(file, []byte(crashStatements(in, out, table, guarantee, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]pageTotals{}
	var recs []*kgo.Record
	for seq := 0; seq < records; seq++ {
		grp := fmt.Sprintf("g%02d", seq%groups)
		amount := int64(seq%97 + 1)
		w := want[grp]
		w.N++
		w.Total += amount
		want[grp] = w
		recs = append(recs, &kgo.Record{Topic: in, Key: []byte(fmt.Sprintf("id%03d", seq%300)),
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
	// committed counts the copy's committed records (read_committed end
	// offsets are the last stable offsets).
	committed := func() int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ends, err := adm.ListCommittedOffsets(ctx, out)
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
	// The leader of the input's partition 0.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	md, err := adm.Metadata(ctx, in)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics[in].Partitions[0].Leader
	before := committed()
	killed := time.Now()
	c.StopNode(int(leader))
	t.Logf("killed node %d (leader of %s/0) with %d outputs committed", leader, in, before)
	// Produced while the node is down: the producer must find the new
	// leaders itself.
	prodErr := make(chan error, 1)
	go func() { prodErr <- produce(records/2, records*3/4) }()
	waitGrowth(fmt.Sprintf("leader kill (node %d)", leader), before, killed)
	if err := <-prodErr; err != nil {
		t.Fatal(err)
	}

	c.StartNode(int(leader))
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	_, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{})
	cancel()
	if err != nil {
		t.Logf("preferred election: %v", err)
	}
	before = committed()
	moved := time.Now()
	mustProduce(records*3/4, records)
	waitGrowth("leader return and preferred election", before, moved)

	// Every record once in the copy, exact totals in the table.
	seen := map[int64]int{}
	last := map[string]pageTotals{}
	cl := testkafka.Client(t, brokers, kgo.ConsumeTopics(out, table), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	deadline := time.Now().Add(90 * time.Second)
	done := func() bool {
		if len(seen) != records {
			return false
		}
		for g, w := range want {
			if last[g] != w {
				return false
			}
		}
		return true
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
				var v pageTotals
				if err := json.Unmarshal(r.Value, &v); err != nil {
					t.Errorf("table record %q at %s/%d@%d: %v", r.Value, r.Topic, r.Partition, r.Offset, err)
					return
				}
				last[string(r.Key)] = v
			}
		})
	}
	dups := 0
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	if len(seen) != records || (guarantee == "exactly_once" && dups > 0) {
		t.Errorf("copy (%s): %d distinct records of %d, %d seen more than once", guarantee, len(seen), records, dups)
	}
	t.Logf("copy: %d records, %d seen more than once", len(seen), dups)
	for g, w := range want {
		if last[g] != w {
			t.Errorf("table %s: %+v, want %+v", g, last[g], w)
		}
	}
}
