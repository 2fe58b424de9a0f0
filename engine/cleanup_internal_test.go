package engine

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// A push query's consumer group is deleted once its consumer has left,
// even when the broker still counts the member as the deletion first
// comes (NonEmptyGroup): the group is the query's alone, so the member
// can only be leaving.
func TestDeleteOwnGroupWaitsForItsMember(t *testing.T) {
	brokers := testkafka.Brokers(t)
	topic, group := testkafka.Name(t, "own_group_in"), testkafka.Name(t, "own_group")
	testkafka.CreateTopic(t, brokers, topic, 1)
	seeds := kgo.SeedBrokers(strings.Split(brokers, ",")...)
	member, err := kgo.NewClient(seeds, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	testkafka.Await(t, 30*time.Second, "the member in the group", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		member.PollRecords(ctx, 1)
		d, err := adm.DescribeGroups(context.Background(), group)
		return err == nil && len(d[group].Members) == 1
	})
	e, err := Open(context.Background(), Config{ConnOpts: []kgo.Opt{seeds}, DataDir: t.TempDir(), ServiceID: testkafka.Name(t, "svc"),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	go func() {
		time.Sleep(300 * time.Millisecond)
		member.Close()
	}()
	if err := e.deleteOwnGroup(context.Background(), group); err != nil {
		t.Fatalf("deleteOwnGroup: %v", err)
	}
	ls, err := adm.ListGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ls.Groups(), group) {
		t.Errorf("group %s still listed after deleteOwnGroup", group)
	}
}
