package engine_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestTransactionTimeoutProperty: under exactly-once, a query's producer
// asks its coordinator for the transaction timeout transaction.timeout.ms
// (or one of its other names) sets, 15 s unless set. The embedded broker
// observes the InitProducerID request that carries it.
func TestTransactionTimeoutProperty(t *testing.T) {
	for _, c := range []struct {
		name  string
		props []string
		want  int32
	}{
		{"default", nil, 15000},
		{"transaction.timeout.ms", []string{"transaction.timeout.ms", "7000"}, 7000},
		{"producer. name", []string{"producer.transaction.timeout.ms", "8000"}, 8000},
		{"ksql.streams. name", []string{"ksql.streams.transaction.timeout.ms", "9000"}, 9000},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkafka.Embedded(t) // the observer needs the embedded broker
			brokers := b.Addr()
			in, out := testkafka.Name(t, "txn_in"), testkafka.Name(t, "txn_out")
			var mu sync.Mutex
			seen := map[string]int32{} // transactional id => timeout asked
			observe := b.Cluster().Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.InitProducerID}, Observe: true, Count: -1,
				When: func(req kmsg.Request) bool {
					r := req.(*kmsg.InitProducerIDRequest)
					if r.TransactionalID != nil {
						mu.Lock()
						seen[*r.TransactionalID] = r.TransactionTimeoutMillis
						mu.Unlock()
					}
					return true
				}})
			defer observe.Remove()
			e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet,
				append([]string{"processing.guarantee", "exactly_once_v2"}, c.props...)...)
			defer closeEngine(t, e)
			execute(t, e, fmt.Sprintf(`
				CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
				CREATE TABLE %[2]s AS SELECT id, COUNT(*) AS n FROM %[1]s GROUP BY id;`, in, out))
			testkafka.Await(t, 30*time.Second, "the query's producer to initialise", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(seen) > 0
			})
			mu.Lock()
			defer mu.Unlock()
			for id, ms := range seen {
				if ms != c.want {
					t.Errorf("producer %s asked for a %d ms transaction timeout, want %d", id, ms, c.want)
				}
			}
		})
	}
}

// TestSessionTimeoutProperty: a query's consumer joins its group with the
// session timeout session.timeout.ms (or one of its other names) sets,
// 10 s unless set. The embedded broker observes the JoinGroup requests.
func TestSessionTimeoutProperty(t *testing.T) {
	for _, c := range []struct {
		name  string
		props []string
		want  int32
	}{
		{"default", nil, 10000},
		{"session.timeout.ms", []string{"session.timeout.ms", "7000"}, 7000},
		{"consumer. name", []string{"consumer.session.timeout.ms", "8000"}, 8000},
		{"ksql.streams.consumer. name", []string{"ksql.streams.consumer.session.timeout.ms", "9000"}, 9000},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkafka.Embedded(t) // the observer needs the embedded broker
			brokers := b.Addr()
			in, out := testkafka.Name(t, "session_in"), testkafka.Name(t, "session_out")
			var mu sync.Mutex
			seen := map[string]int32{} // group => session timeout asked
			observe := b.Cluster().Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.JoinGroup}, Observe: true, Count: -1,
				When: func(req kmsg.Request) bool {
					r := req.(*kmsg.JoinGroupRequest)
					mu.Lock()
					seen[r.Group] = r.SessionTimeoutMillis
					mu.Unlock()
					return true
				}})
			defer observe.Remove()
			e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet, c.props...)
			defer closeEngine(t, e)
			execute(t, e, fmt.Sprintf(`
				CREATE STREAM %[1]s (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
				CREATE TABLE %[2]s AS SELECT id, COUNT(*) AS n FROM %[1]s GROUP BY id;`, in, out))
			testkafka.Await(t, 30*time.Second, "the query's consumer to join its group", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(seen) > 0
			})
			mu.Lock()
			defer mu.Unlock()
			for group, ms := range seen {
				if ms != c.want {
					t.Errorf("group %s joined with a %d ms session timeout, want %d", group, ms, c.want)
				}
			}
		})
	}
}
