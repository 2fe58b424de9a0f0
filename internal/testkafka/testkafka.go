package testkafka

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/broker"
)

// EnvBrokers names the environment variable that points tests at an
// existing cluster.
const EnvBrokers = "SLUICE_TEST_BROKERS"

// External reports whether tests run against an existing cluster.
func External() bool { return os.Getenv(EnvBrokers) != "" }

// Brokers returns the bootstrap address for a test: the cluster named by
// SLUICE_TEST_BROKERS, or a fresh embedded broker closed at cleanup.
func Brokers(t testing.TB) string {
	t.Helper()
	if b := os.Getenv(EnvBrokers); b != "" {
		return b
	}
	return Embedded(t).Addr()
}

// Embedded starts a fresh embedded broker, closed at cleanup, whatever
// SLUICE_TEST_BROKERS says. It is for tests that need powers only the
// embedded broker has (b.Cluster().Compact() forces compaction now);
// everything else should use Brokers.
func Embedded(t testing.TB) *broker.Broker {
	t.Helper()
	b, err := broker.Start(broker.Config{})
	if err != nil {
		t.Fatalf("start embedded broker: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

var (
	runID   = fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)
	counter atomic.Int64
	unsafe  = regexp.MustCompile(`[^A-Za-z0-9_]`)
)

// Name returns base made unique to this test run: upper-case letters,
// digits and underscores only, so it works unquoted in SQL as a stream
// name and as a topic name alike.
func Name(t testing.TB, base string) string {
	t.Helper()
	n := counter.Add(1)
	return strings.ToUpper(unsafe.ReplaceAllString(fmt.Sprintf("%s_%s_%d", base, runID, n), "_"))
}

// Client returns a client for the test's cluster, closed at cleanup.
func Client(t testing.TB, brokers string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// CreateTopic creates a topic with n partitions.
func CreateTopic(t testing.TB, brokers, topic string, partitions int32) {
	t.Helper()
	adm := kadm.NewClient(Client(t, brokers))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, partitions, -1, nil, topic); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	// Apache Kafka answers CreateTopics once its controller has the
	// topic; a broker's metadata may list it a moment later, and a
	// statement run at once would find no such topic. Return once the
	// metadata shows every partition with a leader.
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == int(partitions) && allLed(td.Partitions) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("create topic %s: not in the brokers' metadata within 30 s (last error: %v)", topic, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func allLed(ps kadm.PartitionDetails) bool {
	for _, p := range ps {
		if p.Err != nil || p.Leader < 0 {
			return false
		}
	}
	return true
}

// Produce writes records synchronously, partitioned by key like Java
// clients.
func Produce(t testing.TB, brokers string, recs ...*kgo.Record) {
	t.Helper()
	cl := Client(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// ReadAll reads every committed record of topic, from the start to the
// end offsets measured now, in partition order then offset order.
func ReadAll(t testing.TB, brokers, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(Client(t, brokers))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("start offsets of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := starts.Lookup(topic, o.Partition); ok && o.Offset > s.Offset {
			want[o.Partition] = o.Offset
		}
	})
	byPart := map[int32][]*kgo.Record{}
	last := map[int32]int64{}
	if len(want) > 0 {
		// Control records (transaction markers) take offsets too; keeping
		// them lets the loop see each partition reach its end offset.
		cl := Client(t, brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
		for !reached(last, want) {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("read %s: timed out at offsets %v, want ends %v", topic, last, want)
			}
			fs.EachError(func(_ string, p int32, err error) { t.Fatalf("read %s/%d: %v", topic, p, err) })
			fs.EachRecord(func(r *kgo.Record) {
				last[r.Partition] = r.Offset
				if r.Offset < want[r.Partition] && !r.Attrs.IsControl() {
					byPart[r.Partition] = append(byPart[r.Partition], r)
				}
			})
		}
	}
	var out []*kgo.Record
	for p := int32(0); p < 1024; p++ {
		out = append(out, byPart[p]...)
	}
	return out
}

func reached(last, want map[int32]int64) bool {
	for p, end := range want {
		if off, ok := last[p]; !ok || off < end-1 {
			return false
		}
	}
	return true
}

// Await polls cond until it holds or the deadline passes.
func Await(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
