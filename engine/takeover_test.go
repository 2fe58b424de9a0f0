package engine_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestExactlyOnceTakeoverWaitsForOpenTransaction: an instance cut off
// between its transaction's offset commit and its EndTxn loses its
// partitions to another instance, and the transaction still commits when
// the EndTxn gets through (Kafka checks the group generation at the offset
// commit, not at the end). The taker's offset fetch waits for it (KIP-447)
// and then reads on past that transaction's input, so the taker must
// restore the partitions' state only after the transaction has ended, or
// its counts stay one short, as the cut-off test of cmd/sluice once found
// on Apache Kafka. The embedded broker answers the first instance's EndTxn
// CONCURRENT_TRANSACTIONS (retried) and drops its heartbeats until the
// second instance has taken both partitions; every count must come out
// exact.
func TestExactlyOnceTakeoverWaitsForOpenTransaction(t *testing.T) {
	b := testkafka.Embedded(t) // the faults need the embedded broker
	brokers := b.Addr()
	in, out, svc := testkafka.Name(t, "takeover_in"), testkafka.Name(t, "takeover_out"), testkafka.Name(t, "svc")
	sql := fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE TABLE %[2]s AS SELECT id, COUNT(*) AS n FROM %[1]s GROUP BY id;`, in, out)
	const keys = 10
	// Records carry the time they are produced: the embedded broker
	// applies the output topic's retention to their timestamps.
	round := func() {
		ts := time.Now().UnixMilli()
		var recs []*kgo.Record
		for k := range keys {
			recs = append(recs, rec(in, fmt.Sprintf("k%d", k), `{"v":1}`, ts))
		}
		testkafka.Produce(t, brokers, recs...)
	}
	// latest reads the committed output: each key's last count.
	latest := func() map[string]string {
		got := map[string]string{}
		for _, r := range testkafka.ReadAll(t, brokers, out) {
			got[string(r.Key)] = string(r.Value)
		}
		return got
	}
	counted := func(n int) func() bool {
		return func() bool {
			got := latest()
			for k := range keys {
				if got[fmt.Sprintf("k%d", k)] != fmt.Sprintf(`{"N":%d}`, n) {
					return false
				}
			}
			return true
		}
	}

	e1 := openEngineLog(t, brokers, t.TempDir(), svc, quiet, "processing.guarantee", "exactly_once_v2")
	defer closeEngine(t, e1)
	execute(t, e1, sql)
	round()
	testkafka.Await(t, 30*time.Second, "the first counts", counted(1))

	// Keep open the first transaction after this that commits input
	// offsets: the broker answers its EndTxn (commit) CONCURRENT_TRANSACTIONS,
	// which the client retries, until release.
	c := b.Cluster()
	var offsetsSent atomic.Bool
	observe := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Observe: true, Count: -1,
		When: func(req kmsg.Request) bool {
			// The query reads one topic (v6 names it by ID).
			if len(req.(*kmsg.TxnOffsetCommitRequest).Topics) > 0 {
				offsetsSent.Store(true)
			}
			return false
		}})
	defer observe.Remove()
	hold := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.ConcurrentTransactions, Count: -1,
		When: func(req kmsg.Request) bool {
			return req.(*kmsg.EndTxnRequest).Commit && offsetsSent.Load()
		}})
	var silence *kfake.FaultHandle
	released := sync.OnceFunc(func() {
		if silence != nil {
			silence.Remove()
		}
		hold.Remove()
	})
	defer released()

	round()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hold.Wait(ctx, 1); err != nil {
		t.Fatalf("no transaction committed the second round's offsets: %v", err)
	}
	// Now the first instance's heartbeats fail (the coordinator does not
	// see them), so the group drops it after its session timeout, as if
	// it were cut off between its offsets and its EndTxn; nor may it join
	// again, so the second instance keeps every partition. Its ids are
	// those of the first heartbeat from here on: the second instance
	// heartbeats only once the group has dropped the first.
	var silenced atomic.Pointer[kmsg.HeartbeatRequest]
	silence = c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Heartbeat}, Err: kerr.CoordinatorNotAvailable, Count: -1,
		When: func(req kmsg.Request) bool {
			hb := req.(*kmsg.HeartbeatRequest)
			silenced.CompareAndSwap(nil, hb)
			return silenced.Load().MemberID == hb.MemberID
		}})
	shut := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.JoinGroup}, Err: kerr.CoordinatorNotAvailable, Count: -1,
		When: func(req kmsg.Request) bool {
			first, join := silenced.Load(), req.(*kmsg.JoinGroupRequest)
			return first != nil && first.InstanceID != nil && join.InstanceID != nil && *first.InstanceID == *join.InstanceID
		}})
	defer shut.Remove()

	// The second instance joins; once the group has dropped the first
	// (its session timeout, 10 s), it takes both partitions and restores
	// them.
	e2 := openEngineLog(t, brokers, t.TempDir(), svc, quiet, "processing.guarantee", "exactly_once_v2")
	defer closeEngine(t, e2)
	execute(t, e2, sql)
	testkafka.Await(t, 60*time.Second, "the second instance to take a partition", func() bool {
		for _, q := range e2.Queries() {
			for _, ti := range q.Tasks() {
				if ti.State != exec.TaskAssigned {
					return true
				}
			}
		}
		return false
	})
	// A restore that read the changelog only up to the open transaction
	// is done by now; one that waits for it is still waiting.
	time.Sleep(500 * time.Millisecond)
	released()

	round()
	// A count one short stays short: wait for all of them, then say which.
	deadline := time.Now().Add(60 * time.Second)
	for !counted(3)() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	got := latest()
	for k := range keys {
		key := fmt.Sprintf("k%d", k)
		if got[key] != `{"N":3}` {
			t.Errorf("key %s: last committed count %q, want {\"N\":3}", key, got[key])
		}
	}
	if t.Failed() {
		for _, r := range testkafka.ReadAll(t, brokers, out) {
			t.Logf("%s/%d@%d %s = %s", out, r.Partition, r.Offset, r.Key, r.Value)
		}
	}
}
