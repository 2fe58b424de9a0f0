package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestPullExactlyOnceSeesHeldCommits: under exactly-once, committed
// transactions' state is held in memory between Badger writes
// (state.Store.Hold); a pull query must still answer with what the last
// committed transaction left, however long the input then stays silent.
func TestPullExactlyOnceSeesHeldCommits(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc, topic := testkafka.Name(t, "svc"), testkafka.Name(t, "clicks")
	e := openEngine(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e)
	execute(t, e, `SET 'processing.guarantee'='exactly_once_v2'; SET 'auto.offset.reset'='earliest';
		CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='`+topic+`', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE TABLE per_page AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page;`)
	// Clicks in small batches over about two seconds, so that several
	// transactions commit between two Badger writes of the held state.
	const batches, per = 40, 5
	for b := range batches {
		var recs []*kgo.Record
		for i := range per {
			recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "u%d", b*per+i), Value: []byte(`{"PAGE":"home"}`)})
		}
		testkafka.Produce(t, brokers, recs...)
		time.Sleep(50 * time.Millisecond)
	}
	want := fmt.Sprintf("PAGE N\nhome %d", batches*per)
	var got string
	testkafka.Await(t, 30*time.Second, "the count of every click", func() bool {
		res, err := e.Execute(t.Context(), "SELECT * FROM per_page WHERE page = 'home';")
		if err != nil {
			return false
		}
		got = rowsText(res[0].Rows)
		return got == want
	})
}
