package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

func TestStandbyAssignment(t *testing.T) {
	owns := func(ps ...int32) map[string][]Partition {
		out := []Partition{}
		for _, p := range ps {
			out = append(out, Partition{Topic: "in", Partition: p, State: "RUNNING"})
		}
		return map[string][]Partition{"Q": out}
	}
	in := func(id string, alive bool, ps ...int32) Instance {
		return Instance{Status: Status{ID: id, Queries: owns(ps...)}, Alive: alive}
	}
	for _, tc := range []struct {
		name      string
		instances []Instance
		self      string
		replicas  int
		want      map[string]map[string][]int32
	}{
		{"no replicas", []Instance{in("a", true, 0), in("b", true, 1)}, "a", 0, map[string]map[string][]int32{}},
		{"two, one replica", []Instance{in("a", true, 0), in("b", true, 1, 2)}, "a", 1, map[string]map[string][]int32{"Q": {"in": {1, 2}}}},
		{"three: b's follower is c", []Instance{in("a", true, 0), in("b", true, 1), in("c", true, 2)}, "c", 1, map[string]map[string][]int32{"Q": {"in": {1}}}},
		{"three: the ring wraps to a", []Instance{in("a", true, 0), in("b", true, 1), in("c", true, 2)}, "a", 1, map[string]map[string][]int32{"Q": {"in": {2}}}},
		{"three, two replicas", []Instance{in("a", true, 0), in("b", true, 1), in("c", true, 2)}, "a", 2, map[string]map[string][]int32{"Q": {"in": {1, 2}}}},
		{"more replicas than others", []Instance{in("a", true, 0), in("b", true, 1)}, "a", 3, map[string]map[string][]int32{"Q": {"in": {1}}}},
		{"a stale owner is skipped, and so is it in the ring", []Instance{in("a", true, 0), in("b", false, 1), in("c", true, 2)}, "a", 1, map[string]map[string][]int32{"Q": {"in": {2}}}},
		{"a stale owner's follower keeps standing by", []Instance{in("a", true, 0), in("b", false, 1), in("c", true, 2)}, "c", 1, map[string]map[string][]int32{"Q": {"in": {0, 1}}}},
		{"until a live instance owns the partition", []Instance{in("a", true, 0, 1), in("b", false, 1), in("c", true, 2)}, "c", 1, map[string]map[string][]int32{"Q": {"in": {0, 1}}}},
		{"a stale owner's partition owned by nobody, follower wraps", []Instance{in("a", true, 0), in("c", false, 2)}, "a", 1, map[string]map[string][]int32{"Q": {"in": {2}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := StandbyAssignment(tc.instances, tc.self, func(string) int { return tc.replicas })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestStandbyTakeover runs a per-user count on two instances with
// num.standby.replicas=1, each owning one of two partitions and standing
// by for the other. Once the standby has caught up, the other instance
// stops: the survivor takes its partition over replaying only the tail
// of its changelog (here nothing), not the thousands of records in it,
// and the counts stay exact as input keeps coming.
func TestStandbyTakeover(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "clicks"), testkafka.Name(t, "per_user"), testkafka.Name(t, "svc")
	conn := []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)}
	sql := fmt.Sprintf(`
		CREATE STREAM %[1]s (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE TABLE %[2]s AS SELECT user_id, COUNT(*) AS views FROM %[1]s GROUP BY user_id;`, in, out)
	qid := "CTAS_" + out

	type instance = standbyInstance
	start := func(id string) instance { return startStandbyInstance(t, conn, svc, sql, id) }
	stop := func(i instance) { i.stop(t) }
	// With two instances on the ring each stands by for the other.
	a := start("a")
	defer stop(a)
	b := start("b")
	want := map[string]float64{}
	produced := 0
	batch := func(n int) {
		var recs []*kgo.Record
		for i := range n {
			user := fmt.Sprintf("user%d", (produced+i)%5000)
			want[user]++
			recs = append(recs, &kgo.Record{Topic: in, Key: []byte(user), Value: []byte(`{"page":"home"}`)})
		}
		produced += n
		testkafka.Produce(t, brokers, recs...)
	}

	running := func(i instance) []exec.TaskInfo { return i.running() }
	moved := awaitStandingBy(t, a, b, in)
	for range 4 {
		batch(1000)
	}
	qa, qb := a.e.Queries()[0], b.e.Queries()[0]
	testkafka.Await(t, 60*time.Second, "every record counted", func() bool {
		return qa.Metrics.RecordsIn.Load()+qb.Metrics.RecordsIn.Load() >= int64(produced)
	})

	// The standby has caught up when its checkpoint is the changelog's end.
	store := qa.Plan.Topology.Stores[0]
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	// b commits the state of records it has processed at its next commit,
	// so the changelog may still grow after every record was counted: the
	// standby counts as caught up once it is at the end and the end has
	// stayed put for longer than a commit interval.
	var end, lastEnd int64
	var stableSince time.Time
	testkafka.Await(t, 30*time.Second, "standby caught up", func() bool {
		ends, err := adm.ListEndOffsets(context.Background(), store.Changelog)
		if err != nil {
			return false
		}
		o, _ := ends.Lookup(store.Changelog, moved)
		end = o.Offset
		if end != lastEnd {
			lastEnd, stableSince = end, time.Now()
		}
		cp, err := a.e.DB().Store(store.Name, moved).Checkpoint()
		return err == nil && end > 0 && cp.ChangelogOffset == end && time.Since(stableSince) > 500*time.Millisecond
	})
	// Commits coalesce updates of a key, so how many changelog records
	// there are depends on commit timing: enough that replaying none of
	// them (below) means something.
	if end < 200 {
		t.Fatalf("changelog partition %d has %d records, want hundreds at least", moved, end)
	}
	if got := statusOf(t, a.r, "a").Standbys[qid]; !cmp.Equal(got, []Partition{{Topic: in, Partition: moved, State: "STANDBY"}}) {
		t.Errorf("a publishes standbys %v", got)
	}

	// Pull queries read the standby's state only when asked to
	// (engine.WithStandbyPartitions): with a's own partition, every
	// count. A caught-up standby lags by 0 offsets; a's own partition
	// has no standby here.
	own := running(a)[0].Partition
	sum := func(ctx context.Context) (int64, error) {
		res, err := a.e.Execute(ctx, "SELECT * FROM "+out+";")
		if err != nil {
			return 0, err
		}
		var n int64
		for row := range res[0].Rows.C {
			v, _ := row.Cols[1].(int64)
			n += v
		}
		return n, nil
	}
	noLag := engine.WithProperties(context.Background(), map[string]string{engine.PullMaxOffsetLagProperty: "0"})
	var fromStandby, fromOwn int64
	testkafka.Await(t, 30*time.Second, "standby and owned state adding up to every record", func() bool {
		var err1, err2 error
		fromStandby, err1 = sum(engine.WithStandbyPartitions(noLag, []int32{moved}))
		fromOwn, err2 = sum(engine.WithPartitions(context.Background(), []int32{own}))
		return err1 == nil && err2 == nil && fromStandby+fromOwn == int64(produced)
	})
	if fromStandby == 0 {
		t.Errorf("the standby of partition %d read no counts", moved)
	}
	// A standby read of a partition that is a's own now answers from its
	// running task (the asker took a for its standby before it moved).
	if n, err := sum(engine.WithStandbyPartitions(context.Background(), []int32{own})); err != nil || n != fromOwn {
		t.Errorf("standby read of a's own partition %d: %d, %v; want %d", own, n, err, fromOwn)
	}
	if _, err := sum(engine.WithStandbyPartitions(engine.WithProperties(context.Background(), map[string]string{engine.PullMaxOffsetLagProperty: "-1"}), []int32{moved})); err == nil {
		t.Error("a negative max offset lag was accepted")
	}

	restoredBefore := qa.Metrics.RestoredRecordsOf(store.Name, moved)
	stop(b)
	testkafka.Await(t, 60*time.Second, "a owning both partitions", func() bool {
		ps := running(a)
		return len(ps) == 2 && ps[0].State == exec.TaskRunning && ps[1].State == exec.TaskRunning
	})
	// The moved partition's own restore is the claim; a's other
	// partition may restore too if a rebalance under load takes it away
	// and back (its count is logged, not asserted).
	replayed := qa.Metrics.RestoredRecordsOf(store.Name, moved) - restoredBefore
	t.Logf("takeover replayed %d of the changelog's %d records (all restores on a: %d)", replayed, end, qa.Metrics.RestoredRecords.Load())
	if got := replayed; got > end/10 {
		t.Errorf("takeover replayed %d changelog records of %d, want only the tail", got, end)
	}
	if got := qa.Standbys(); len(got) != 0 {
		t.Errorf("a still standing by for %v after taking over", got)
	}

	batch(500)
	var got map[string]float64
	testkafka.Await(t, 60*time.Second, "exact counts", func() bool {
		got = map[string]float64{}
		for _, r := range testkafka.ReadAll(t, brokers, out) {
			var v map[string]any
			if json.Unmarshal(r.Value, &v) == nil {
				got[string(r.Key)], _ = v["VIEWS"].(float64)
			}
		}
		return cmp.Equal(want, got)
	})
}

func statusOf(t *testing.T, r *Registry, id string) Status {
	t.Helper()
	for _, in := range r.Instances() {
		if in.ID == id {
			return in.Status
		}
	}
	t.Fatalf("no instance %s", id)
	return Status{}
}

// standbyInstance is one instance of a service: an engine running a SQL
// script with num.standby.replicas=1, and its registry.
type standbyInstance struct {
	e *engine.Engine
	r *Registry
}

func startStandbyInstance(t *testing.T, conn []kgo.Opt, svc, sql, id string) standbyInstance {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var reg atomic.Pointer[Registry]
	e, err := engine.Open(context.Background(), engine.Config{ConnOpts: conn, DataDir: t.TempDir(), ServiceID: svc, Log: quiet,
		Properties: map[string]string{"auto.offset.reset": "earliest", "commit.interval.ms": "100", "ksql.streams.num.standby.replicas": "1"},
		OnPartitionsChange: func() {
			if r := reg.Load(); r != nil {
				r.Changed()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Execute(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
	r, err := Start(context.Background(), Config{ConnOpts: conn, ServiceID: svc, InstanceID: id, URL: "http://" + id, Log: quiet, Interval: 200 * time.Millisecond,
		Local:         func() map[string][]Partition { return EnginePartitions(e) },
		LocalStandbys: func() map[string][]Partition { return EngineStandbys(e) },
		OnInstances:   func(ins []Instance) { ApplyStandbys(e, ins) }})
	if err != nil {
		t.Fatal(err)
	}
	reg.Store(r)
	return standbyInstance{e, r}
}

// running lists the partitions the instance's first query runs.
func (i standbyInstance) running() []exec.TaskInfo { return i.e.Queries()[0].Partitions() }

// awaitStandingBy waits until a and b run one partition of topic each and
// a stands by for b's, and returns b's.
func awaitStandingBy(t *testing.T, a, b standbyInstance, topic string) int32 {
	t.Helper()
	testkafka.Await(t, 60*time.Second, "one partition each, running", func() bool {
		pa, pb := a.running(), b.running()
		return len(pa) == 1 && len(pb) == 1 && pa[0].State == exec.TaskRunning && pb[0].State == exec.TaskRunning
	})
	moved := b.running()[0].Partition
	testkafka.Await(t, 30*time.Second, "a standing by for b's partition", func() bool {
		return cmp.Equal(a.e.Queries()[0].Standbys(), []exec.TaskInfo{{Topic: topic, Partition: moved, State: exec.TaskStandby}})
	})
	return moved
}

func (i standbyInstance) stop(t *testing.T) {
	t.Helper()
	if err := i.r.Close(); err != nil {
		t.Error(err)
	}
	if err := i.e.Close(); err != nil {
		t.Error(err)
	}
}

// TestStandbyDropsExpiredWindows runs a tumbling count of 1 s windows on
// two instances standing by for each other, over a minute of event time.
// The owner expires windows without changelog tombstones; the standby of
// its partition must drop them too, and end up holding exactly the
// windows the owner holds (committed), not every window there ever was.
func TestStandbyDropsExpiredWindows(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "clicks"), testkafka.Name(t, "per_user_1s"), testkafka.Name(t, "svc")
	conn := []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)}
	sql := fmt.Sprintf(`
		CREATE STREAM %[1]s (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE TABLE %[2]s AS SELECT user_id, COUNT(*) AS views FROM %[1]s
		  WINDOW TUMBLING (SIZE 1 SECOND, GRACE PERIOD 0 SECONDS) GROUP BY user_id;`, in, out)
	a := startStandbyInstance(t, conn, svc, sql, "a")
	defer a.stop(t)
	b := startStandbyInstance(t, conn, svc, sql, "b")
	defer b.stop(t)
	moved := awaitStandingBy(t, a, b, in)
	// 3,000 records of 50 users, 20 ms of event time apart: a minute,
	// sixty windows per user, of which the last one or two are live. They
	// go in batches of two seconds, each counted and committed before the
	// next, so that the windows reach the changelog before they expire
	// (a window that expires within a commit interval is never written).
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	qa, qb := a.e.Queries()[0], b.e.Queries()[0]
	for batch := range 30 {
		var recs []*kgo.Record
		for i := batch * 100; i < (batch+1)*100; i++ {
			recs = append(recs, &kgo.Record{Topic: in, Key: []byte(fmt.Sprintf("user%d", i%50)), Value: []byte(`{"page":"home"}`),
				Timestamp: base.Add(time.Duration(i) * 20 * time.Millisecond)})
		}
		testkafka.Produce(t, brokers, recs...)
		testkafka.Await(t, 60*time.Second, "the batch counted", func() bool {
			return qa.Metrics.RecordsIn.Load()+qb.Metrics.RecordsIn.Load() >= int64((batch+1)*100)
		})
		time.Sleep(150 * time.Millisecond) // a commit interval and more
	}
	store := qa.Plan.Topology.Stores[0].Name
	keys := func(e *engine.Engine) []string {
		var ks []string
		err := e.DB().Store(store, moved).RangeCommitted(nil, func(k, _ []byte) bool {
			ks = append(ks, fmt.Sprintf("%x", k))
			return true
		})
		if err != nil {
			return nil
		}
		return ks
	}
	var owner, standby []string
	testkafka.Await(t, 60*time.Second, "the standby holding the owner's windows", func() bool {
		owner, standby = keys(b.e), keys(a.e)
		return len(owner) > 0 && cmp.Equal(owner, standby)
	})
	// Each user of the partition had about sixty windows, of which one or
	// two are live: the standby applied many more than it keeps.
	if applied := qa.Metrics.StandbyRecords.Load(); applied < 10*int64(len(standby)) {
		t.Errorf("the standby applied %d changelog records and holds %d keys: want most windows dropped", applied, len(standby))
	}
}
