package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestExactlyOnceFencedCommitReprocesses: Kafka answers the offset commit
// of a transaction its coordinator has fenced with INVALID_PRODUCER_EPOCH
// (it aborted the transaction when transaction.timeout.ms passed, as it
// does to an instance cut off from the cluster for longer than that).
// The query treats it as an aborted transaction: it keeps running,
// reprocesses from the last commit with the state of that commit, and
// its committed output counts every record once. The embedded broker
// answers one TxnOffsetCommit with the error, as the cut-off test of
// cmd/sluice met it on a three-node Apache Kafka by chance.
func TestExactlyOnceFencedCommitReprocesses(t *testing.T) {
	reprocessesAfterFaultedCommit(t, kerr.InvalidProducerEpoch, "transaction fenced by its coordinator")
}

// TestExactlyOnceOffsetCommitErrorReprocesses: a transaction whose offsets
// do not commit (here the coordinator refuses them with an error franz-go
// does not take as abortable; in the three-node cluster test the group's
// coordinator was killed during the commit, and the offsets failed to
// dial it) is aborted by franz-go, and the query reprocesses from the last
// commit instead of failing. Before, it failed the query, which left
// the three-node cluster test's table empty.
func TestExactlyOnceOffsetCommitErrorReprocesses(t *testing.T) {
	reprocessesAfterFaultedCommit(t, kerr.OffsetMetadataTooLarge, "transaction aborted; reprocessing from the last commit")
}

// reprocessesAfterFaultedCommit has the embedded broker answer one
// TxnOffsetCommit of an exactly-once query with fault, then checks that
// the query logs wantLog once, keeps running, and commits every record's
// count once.
func reprocessesAfterFaultedCommit(t *testing.T, fault *kerr.Error, wantLog string) {
	b := testkafka.Embedded(t) // the fault needs the embedded broker
	brokers := b.Addr()
	in, out := testkafka.Name(t, "fenced_in"), testkafka.Name(t, "fenced_out")
	var logs syncBuffer
	e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), slog.New(slog.NewTextHandler(&logs, nil)),
		"processing.guarantee", "exactly_once_v2")
	defer closeEngine(t, e)
	q := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE %[2]s AS SELECT id, COUNT(*) AS n FROM %[1]s GROUP BY id;`, in, out))[1].Query

	// counts reads the committed output: each key's counts in order.
	counts := func() map[string][]string {
		got := map[string][]string{}
		for _, r := range testkafka.ReadAll(t, brokers, out) {
			got[string(r.Key)] = append(got[string(r.Key)], string(r.Value))
		}
		return got
	}
	latest := func(want map[string]string) func() bool {
		return func() bool {
			got := counts()
			for k, v := range want {
				if n := len(got[k]); n == 0 || got[k][n-1] != v {
					return false
				}
			}
			return true
		}
	}

	testkafka.Produce(t, brokers, rec(in, "a", `{"v":1}`, 1000), rec(in, "a", `{"v":2}`, 2000), rec(in, "b", `{"v":3}`, 3000))
	testkafka.Await(t, 30*time.Second, "the first counts", latest(map[string]string{"a": `{"N":2}`, "b": `{"N":1}`}))

	faulted := b.Cluster().Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Err: fault})
	testkafka.Produce(t, brokers, rec(in, "a", `{"v":4}`, 4000), rec(in, "b", `{"v":5}`, 5000))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := faulted.Wait(ctx, 1); err != nil {
		t.Fatalf("no transaction committed its offsets: %v", err)
	}
	testkafka.Produce(t, brokers, rec(in, "c", `{"v":6}`, 6000))
	want := map[string]string{"a": `{"N":3}`, "b": `{"N":2}`, "c": `{"N":1}`}
	testkafka.Await(t, 30*time.Second, "the counts after the faulted transaction", latest(want))

	// Every committed count of a key is one more than a count before it:
	// a reprocessed record counted twice would skip or repeat one.
	for k, vs := range counts() {
		last := 0
		for _, v := range vs {
			var n int
			if _, err := fmt.Sscanf(v, `{"N":%d}`, &n); err != nil || n <= last {
				t.Errorf("key %s: committed counts %v, want rising to %s", k, vs, want[k])
				break
			}
			last = n
		}
	}
	if n := faulted.Hits(); n != 1 {
		t.Errorf("the fault answered %d offset commits, want 1", n)
	}
	if n := strings.Count(logs.String(), wantLog); n != 1 {
		t.Errorf("%d WARN lines %q, want 1:\n%s", n, wantLog, logs.String())
	}
	for _, s := range execute(t, e, "SHOW QUERIES;")[0].Entity.(*engine.QueryList).Queries {
		if s.ID == q.ID && s.State != "RUNNING" {
			t.Errorf("query %s is %s after the faulted transaction, want RUNNING", q.ID, s.State)
		}
	}
}
