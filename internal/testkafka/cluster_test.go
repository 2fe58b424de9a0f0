package testkafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestCluster3LeaderKill checks the three-node cluster scripts/kafka starts
// and what Sluice relies on it for: a topic created with the broker default
// replication has 3 replicas; transactional (acks=all, idempotent) writes
// survive the SIGKILL of the leader and its return with a preferred
// election, and a read_committed reader sees every record exactly once.
func TestCluster3LeaderKill(t *testing.T) {
	c := testkafka.StartCluster(t, 3, "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := "fault-in"
	adm := kadm.NewClient(testkafka.Client(t, c.Brokers))
	if _, err := adm.CreateTopic(ctx, 3, -1, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	// Metadata learns of a topic a moment after CreateTopics answers: ask
	// until it lists the three partitions, each with a leader.
	var td kadm.TopicDetails
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		if td, err = adm.ListTopics(ctx, topic); err != nil {
			t.Fatalf("describe %s: %v", topic, err)
		}
		ready := len(td[topic].Partitions) == 3
		for _, p := range td[topic].Partitions {
			ready = ready && p.Leader >= 1
		}
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed with 3 partitions and their leaders: %+v", topic, td[topic])
		}
	}
	for _, p := range td[topic].Partitions.Sorted() {
		if len(p.Replicas) != 3 {
			t.Fatalf("partition %d: %d replicas, want 3 (default.replication.factor)", p.Partition, len(p.Replicas))
		}
	}
	leader := td[topic].Partitions[0].Leader

	pr := testkafka.Client(t, c.Brokers, kgo.TransactionalID("fault-tx"), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	const batches, per = 20, 100
	write := func(b int) error {
		if err := pr.BeginTransaction(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		for i := range per {
			n := b*per + i
			pr.Produce(ctx, &kgo.Record{Partition: int32(n % 3), Value: fmt.Appendf(nil, "%d", n)}, nil)
		}
		if err := pr.Flush(ctx); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
		if err := pr.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	}
	// retry writes one batch until it commits; an aborted attempt is
	// invisible to read_committed readers, so a retry does not duplicate.
	retry := func(b int) time.Duration {
		t0 := time.Now()
		for {
			err := write(b)
			if err == nil {
				return time.Since(t0)
			}
			if ctx.Err() != nil {
				t.Fatalf("batch %d: %v", b, err)
			}
			_ = pr.AbortBufferedRecords(ctx)
			_ = pr.EndTransaction(ctx, kgo.TryAbort)
			time.Sleep(200 * time.Millisecond)
		}
	}
	for b := range batches / 2 {
		retry(b)
	}
	c.StopNode(t, int(leader))
	t.Logf("resume after leader kill: %s", retry(batches/2).Round(100*time.Millisecond))
	c.StartNode(t, int(leader))
	t0 := time.Now()
	if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil); err != nil {
		t.Logf("preferred election: %v (retried by the cluster's auto rebalance)", err)
	}
	for b := batches/2 + 1; b < batches; b++ {
		retry(b)
	}
	t.Logf("resume after leader return and preferred election: %s", time.Since(t0).Round(100*time.Millisecond))

	rd := testkafka.Client(t, c.Brokers, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	for len(seen) < batches*per && ctx.Err() == nil {
		fs := rd.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
	}
	for n := range batches * per {
		if k := fmt.Sprint(n); seen[k] != 1 {
			t.Errorf("record %s read %d times, want once", k, seen[k])
		}
	}
	if len(seen) != batches*per {
		t.Fatalf("read %d distinct records, want %d", len(seen), batches*per)
	}
}
