package broker_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/broker"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// topicPartitions lists the broker's topics with their partition counts.
func topicPartitions(t *testing.T, addr string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tds, err := kadm.NewClient(testkafka.Client(t, addr)).ListTopics(ctx)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	got := map[string]int{}
	for _, td := range tds.Sorted() {
		got[td.Topic] = len(td.Partitions)
	}
	return got
}

// TestAutoCreateTopicOnProduce: a producer that allows auto-creation (as
// every Kafka producer does) writes to a topic that does not exist yet;
// the broker creates it with Kafka's default of one partition, and the
// records are there. The topic survives a restart on the same data
// directory. A client that does not allow auto-creation (Sluice's own)
// asks for a missing topic and leaves it missing, and an illegal name is
// never created.
func TestAutoCreateTopicOnProduce(t *testing.T) {
	dir := t.TempDir()
	b, err := broker.Start(broker.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	plain := testkafka.Client(t, b.Addr())
	if _, err := kadm.NewClient(plain).ListTopics(ctx, "not_created"); err != nil {
		t.Fatalf("metadata of a missing topic: %v", err)
	}

	cl := testkafka.Client(t, b.Addr(), kgo.AllowAutoTopicCreation())
	recs := []*kgo.Record{{Topic: "fresh", Key: []byte("k1"), Value: []byte("v1")}, {Topic: "fresh", Key: []byte("k2"), Value: []byte("v2")}}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to a new topic: %v", err)
	}
	// The metadata request for an illegal name allows auto-creation too.
	bad := []*kgo.Record{{Topic: "no/slash", Value: []byte("x")}}
	badCtx, badCancel := context.WithTimeout(ctx, 2*time.Second)
	defer badCancel()
	if err := cl.ProduceSync(badCtx, bad...).FirstErr(); err == nil {
		t.Errorf("produce to topic %q succeeded; want it refused", "no/slash")
	}

	want := map[string]int{"fresh": 1}
	if diff := cmp.Diff(want, topicPartitions(t, b.Addr())); diff != "" {
		t.Fatalf("topics after producing (-want +got):\n%s", diff)
	}

	b.Close()
	if b, err = broker.Start(broker.Config{DataDir: dir}); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if diff := cmp.Diff(want, topicPartitions(t, b.Addr())); diff != "" {
		t.Fatalf("topics after a restart (-want +got):\n%s", diff)
	}
	var got []string
	for _, r := range testkafka.ReadAll(t, b.Addr(), "fresh") {
		got = append(got, string(r.Key)+"="+string(r.Value))
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{"k1=v1", "k2=v2"}, got); diff != "" {
		t.Errorf("records of the auto-created topic after a restart (-want +got):\n%s", diff)
	}
}

// TestDefaultPartitions: a topic created without a partition count gets
// Kafka's num.partitions, 1, or Config.Partitions.
func TestDefaultPartitions(t *testing.T) {
	for _, tc := range []struct {
		partitions, want int
	}{{0, 1}, {3, 3}} {
		b, err := broker.Start(broker.Config{Partitions: tc.partitions})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := kadm.NewClient(testkafka.Client(t, b.Addr())).CreateTopic(ctx, -1, -1, nil, "defaulted"); err != nil {
			t.Fatalf("create topic: %v", err)
		}
		cancel()
		if diff := cmp.Diff(map[string]int{"defaulted": tc.want}, topicPartitions(t, b.Addr())); diff != "" {
			t.Errorf("Partitions %d: topics (-want +got):\n%s", tc.partitions, diff)
		}
		b.Close()
	}
}
