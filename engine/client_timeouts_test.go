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

// TestClientTimeoutProperties: under exactly-once, a query's producer
// asks its coordinator for the transaction timeout transaction.timeout.ms
// (or one of its other names) sets, 15 s unless set, and its consumer
// joins its group with the session timeout session.timeout.ms sets, 10 s
// unless set. The embedded broker observes the InitProducerID and
// JoinGroup requests that carry them.
func TestClientTimeoutProperties(t *testing.T) {
	for _, c := range []struct {
		name                 string
		props                []string
		wantTxn, wantSession int32
	}{
		{"defaults", nil, 15000, 10000},
		{"transaction.timeout.ms", []string{"transaction.timeout.ms", "7000"}, 7000, 10000},
		{"producer.transaction.timeout.ms", []string{"producer.transaction.timeout.ms", "8000"}, 8000, 10000},
		{"ksql.streams.transaction.timeout.ms", []string{"ksql.streams.transaction.timeout.ms", "9000"}, 9000, 10000},
		{"session.timeout.ms", []string{"session.timeout.ms", "7000"}, 15000, 7000},
		{"consumer.session.timeout.ms", []string{"consumer.session.timeout.ms", "8000"}, 15000, 8000},
		{"ksql.streams.consumer.session.timeout.ms", []string{"ksql.streams.consumer.session.timeout.ms", "9000"}, 15000, 9000},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkafka.Embedded(t) // the observers need the embedded broker
			brokers := b.Addr()
			in, out := testkafka.Name(t, "timeout_in"), testkafka.Name(t, "timeout_out")
			var mu sync.Mutex
			txns := map[string]int32{}     // transactional id => timeout asked
			sessions := map[string]int32{} // group => session timeout asked
			observe := b.Cluster().Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.InitProducerID, kmsg.JoinGroup}, Observe: true, Count: -1,
				When: func(req kmsg.Request) bool {
					mu.Lock()
					defer mu.Unlock()
					switch r := req.(type) {
					case *kmsg.InitProducerIDRequest:
						if r.TransactionalID != nil {
							txns[*r.TransactionalID] = r.TransactionTimeoutMillis
						}
					case *kmsg.JoinGroupRequest:
						sessions[r.Group] = r.SessionTimeoutMillis
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
			testkafka.Await(t, 30*time.Second, "the query's producer to initialise and its consumer to join", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(txns) > 0 && len(sessions) > 0
			})
			mu.Lock()
			defer mu.Unlock()
			for id, ms := range txns {
				if ms != c.wantTxn {
					t.Errorf("producer %s asked for a %d ms transaction timeout, want %d", id, ms, c.wantTxn)
				}
			}
			for group, ms := range sessions {
				if ms != c.wantSession {
					t.Errorf("group %s joined with a %d ms session timeout, want %d", group, ms, c.wantSession)
				}
			}
		})
	}
}
