package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/planner"
)

// TestCreateReplicas checks that REPLICAS in WITH sets the replication of
// the topic a CREATE makes, and that a bad value is an invalid statement.
func TestCreateReplicas(t *testing.T) {
	brokers := testkafka.Brokers(t)
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	topic := testkafka.Name(t, "replicas_one")
	ctx := context.Background()
	if _, err := e.Execute(ctx, "CREATE STREAM r1 (v INT) WITH (KAFKA_TOPIC='"+topic+"', PARTITIONS=2, REPLICAS=1, VALUE_FORMAT='JSON');"); err != nil {
		t.Fatalf("create: %v", err)
	}
	td, err := kadm.NewClient(testkafka.Client(t, brokers)).ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	for _, p := range td[topic].Partitions.Sorted() {
		if len(p.Replicas) != 1 {
			t.Errorf("partition %d: %d replicas, want 1", p.Partition, len(p.Replicas))
		}
	}
	_, err = e.Execute(ctx, "CREATE STREAM r0 (v INT) WITH (KAFKA_TOPIC='"+testkafka.Name(t, "replicas_zero")+"', PARTITIONS=1, REPLICAS=0, VALUE_FORMAT='JSON');")
	if !errors.Is(err, planner.ErrInvalid) {
		t.Fatalf("REPLICAS=0: got %v, want an invalid statement", err)
	}
	const want = `REPLICAS must be a positive integer, got "0"`
	if got := err.Error(); !strings.Contains(got, want) {
		t.Fatalf("REPLICAS=0: got %q, want it to say %q", got, want)
	}
}
