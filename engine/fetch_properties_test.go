package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestFetchProperties: a query's consumer fetches its input with the
// sizes fetch.max.wait.ms, fetch.min.bytes, fetch.max.bytes and
// max.partition.fetch.bytes (or their consumer., ksql.streams. and
// ksql.streams.consumer. forms) set: Kafka's defaults unless set, but a
// wait no longer than the commit interval (100 ms in these tests), and
// half of Kafka's bytes of a partition for a query that keeps state. The
// embedded broker observes the query's Fetch requests of its input.
func TestFetchProperties(t *testing.T) {
	type fetch struct{ wait, min, max, part int32 }
	const stateless, stateful = "CREATE STREAM %[2]s AS SELECT id, v FROM %[1]s;", "CREATE TABLE %[2]s AS SELECT id, COUNT(*) AS n FROM %[1]s GROUP BY id;"
	for _, c := range []struct {
		name  string
		props []string
		want  fetch
		query string
	}{
		{"defaults", nil, fetch{100, 1, 52428800, 1048576}, stateless},
		{"fetch.max.wait.ms", []string{"commit.interval.ms", "1000", "fetch.max.wait.ms", "250"}, fetch{250, 1, 52428800, 1048576}, stateless},
		{"commit interval", []string{"commit.interval.ms", "1000"}, fetch{500, 1, 52428800, 1048576}, stateless},
		{"consumer.fetch.min.bytes", []string{"consumer.fetch.min.bytes", "7"}, fetch{100, 7, 52428800, 1048576}, stateless},
		{"ksql.streams.fetch.max.bytes", []string{"ksql.streams.fetch.max.bytes", "2097152"}, fetch{100, 1, 2097152, 1048576}, stateless},
		{"ksql.streams.consumer.max.partition.fetch.bytes", []string{"ksql.streams.consumer.max.partition.fetch.bytes", "65536"}, fetch{100, 1, 52428800, 65536}, stateless},
		{"a query that keeps state", nil, fetch{100, 1, 52428800, 524288}, stateful},
		{"a query that keeps state, max.partition.fetch.bytes set", []string{"max.partition.fetch.bytes", "2097152"}, fetch{100, 1, 52428800, 2097152}, stateful},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkafka.Embedded(t) // the observer needs the embedded broker
			in, out := testkafka.Name(t, "fetch_in"), testkafka.Name(t, "fetch_out")
			var mu sync.Mutex
			var inID string // the input's topic id, once known
			var seen []fetch
			observe := b.Cluster().Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Observe: true, Count: -1,
				When: func(req kmsg.Request) bool {
					r := req.(*kmsg.FetchRequest)
					mu.Lock()
					defer mu.Unlock()
					for _, tp := range r.Topics {
						if topic := requestTopic(tp.Topic, tp.TopicID); topic == in || (inID != "" && topic == inID) {
							seen = append(seen, fetch{r.MaxWaitMillis, r.MinBytes, r.MaxBytes, tp.Partitions[0].PartitionMaxBytes})
						}
					}
					return true
				}})
			defer observe.Remove()
			testkafka.CreateTopic(t, b.Addr(), in, 1)
			topics, err := kadm.NewClient(testkafka.Client(t, b.Addr())).ListTopics(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			inID = topicID(topics[in].ID)
			mu.Unlock()
			e := openEngineLog(t, b.Addr(), t.TempDir(), testkafka.Name(t, "svc"), quiet, c.props...)
			defer closeEngine(t, e)
			execute(t, e, fmt.Sprintf("CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON');\n"+c.query, in, out))
			testkafka.Await(t, 30*time.Second, "the query to fetch its input", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(seen) >= 2
			})
			mu.Lock()
			defer mu.Unlock()
			for _, got := range seen {
				if got != c.want {
					t.Fatalf("the query fetched its input with wait %d ms, min %d, max %d and partition max %d bytes; want %+v", got.wait, got.min, got.max, got.part, c.want)
				}
			}
		})
	}
}
