package engine_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestCompressionTypeProperty: a query's producer compresses the batches
// it writes (output and changelog) as compression.type, or one of its
// other names, says, and not at all unless set (Kafka's producer
// default); INSERT … VALUES compresses alike. The embedded broker reads
// the codec from each produced batch's attributes.
func TestCompressionTypeProperty(t *testing.T) {
	const (
		none   = 0
		gzip   = 1
		snappy = 2
		lz4    = 3
		zstd   = 4
	)
	for _, c := range []struct {
		name  string
		props []string
		want  int16
	}{
		{"default", nil, none},
		{"compression.type", []string{"compression.type", "lz4"}, lz4},
		{"producer.compression.type", []string{"producer.compression.type", "zstd"}, zstd},
		{"ksql.streams.compression.type", []string{"ksql.streams.compression.type", "GZIP"}, gzip},
		{"ksql.streams.producer.compression.type", []string{"ksql.streams.producer.compression.type", "snappy"}, snappy},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkafka.Embedded(t) // the observer needs the embedded broker
			in, out := testkafka.Name(t, "compress_in"), testkafka.Name(t, "compress_out")
			var mu sync.Mutex
			codecs := map[string]map[int16]bool{} // topic name or id => codecs of its batches
			observe := b.Cluster().Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Observe: true, Count: -1,
				When: func(req kmsg.Request) bool {
					mu.Lock()
					defer mu.Unlock()
					for _, tp := range req.(*kmsg.ProduceRequest).Topics {
						for _, p := range tp.Partitions {
							var batch kmsg.RecordBatch
							if err := batch.ReadFrom(p.Records); err != nil {
								t.Errorf("produce to %s: %v", tp.Topic, err)
								continue
							}
							topic := requestTopic(tp.Topic, tp.TopicID)
							if codecs[topic] == nil {
								codecs[topic] = map[int16]bool{}
							}
							codecs[topic][batch.Attributes&0x07] = true
						}
					}
					return true
				}})
			defer observe.Remove()
			e := openEngineLog(t, b.Addr(), t.TempDir(), testkafka.Name(t, "svc"), quiet, c.props...)
			defer closeEngine(t, e)
			// A value long enough that every codec makes it smaller: a
			// producer sends a batch that compression does not shrink as it is.
			long := strings.Repeat("sluice ", 300)
			execute(t, e, fmt.Sprintf(`
				CREATE STREAM %[1]s (id VARCHAR KEY, s VARCHAR) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
				CREATE TABLE %[2]s AS SELECT id, LATEST_BY_OFFSET(s) AS s FROM %[1]s GROUP BY id;
				INSERT INTO %[1]s (id, s) VALUES ('a', '%[3]s');`, in, out, long))
			adm := kadm.NewClient(testkafka.Client(t, b.Addr()))
			var topics kadm.TopicDetails
			produced := func(name string) map[int16]bool {
				if c := codecs[name]; c != nil {
					return c
				}
				return codecs[topicID(topics[name].ID)]
			}
			changelog := func() string {
				for name := range topics {
					if strings.Contains(name, "changelog") && produced(name) != nil {
						return name
					}
				}
				return ""
			}
			defer func() {
				if t.Failed() {
					t.Logf("codecs by topic: %v", codecs)
				}
			}()
			testkafka.Await(t, 30*time.Second, "the input, the output and the changelog to be produced", func() bool {
				listed, err := adm.ListTopics(context.Background())
				if err != nil {
					return false
				}
				mu.Lock()
				defer mu.Unlock()
				topics = listed
				return produced(in) != nil && produced(out) != nil && changelog() != ""
			})
			mu.Lock()
			defer mu.Unlock()
			for _, topic := range []string{in, out, changelog()} {
				if got := produced(topic); len(got) != 1 || !got[c.want] {
					t.Errorf("batches to %s compressed with codecs %v, want only %d", topic, got, c.want)
				}
			}
		})
	}
	t.Run("unknown codec refused", func(t *testing.T) {
		e := openEngine(t, testkafka.Embedded(t).Addr(), t.TempDir(), testkafka.Name(t, "svc"))
		defer closeEngine(t, e)
		_, err := e.Execute(context.Background(), `SET 'compression.type'='brotli';`)
		const want = "Invalid value brotli for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd"
		if err == nil || err.Error() != want {
			t.Fatalf("SET 'compression.type'='brotli': %v, want %q", err, want)
		}
	})
}

// requestTopic is how a request names a topic: by name, or (Produce v13,
// Fetch v13 and later) by id only, as topicID spells it.
func requestTopic(name string, id [16]byte) string { return cmp.Or(name, topicID(id)) }

// topicID spells a topic id as requestTopic does.
func topicID(id [16]byte) string { return fmt.Sprintf("%x", id) }
