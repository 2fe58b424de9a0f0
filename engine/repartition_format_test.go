package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestRepartitionReadsOldJSONRecords: a query restarted on a newer Sluice
// finds records an older one left in its repartition topic, written as
// JSON; it reads them beside the binary rows it writes itself, skips a
// record in neither format as malformed, and the table adds up both.
func TestRepartitionReadsOldJSONRecords(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc, in, out := testkafka.Name(t, "svc"), testkafka.Name(t, "orders"), testkafka.Name(t, "totals")
	repart := "_sluice-" + svc + "-query-CTAS_TOTALS-Aggregate-GroupBy-repartition"
	testkafka.CreateTopic(t, brokers, in, 1)
	testkafka.CreateTopic(t, brokers, repart, 1)
	old := func(key, value string) *kgo.Record {
		return &kgo.Record{Topic: repart, Key: []byte(key), Value: []byte(value), Timestamp: time.UnixMilli(1000)}
	}
	testkafka.Produce(t, brokers,
		old("apple", `{"PRICE":3}`),
		old("pear", `{"PRICE":5}`),
		&kgo.Record{Topic: repart, Key: []byte("pear"), Value: []byte{0x02, 1, 0}, Timestamp: time.UnixMilli(1000)},
		old("apple", `{"PRICE":null}`))
	order := func(id, item string, price int) *kgo.Record {
		return &kgo.Record{Topic: in, Key: []byte(id), Value: fmt.Appendf(nil, `{"ITEM":%q,"PRICE":%d}`, item, price), Timestamp: time.UnixMilli(2000)}
	}
	testkafka.Produce(t, brokers, order("o1", "apple", 10), order("o2", "pear", 1))

	e := openEngine(t, brokers, t.TempDir(), svc)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, price INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE TABLE totals WITH (KAFKA_TOPIC='%s') AS SELECT item, SUM(price) AS total, COUNT(*) AS n FROM orders GROUP BY item;`, in, out))
	q := res[1].Query
	last := map[string]string{}
	testkafka.Await(t, 30*time.Second, "the totals of old and new records", func() bool {
		for _, r := range testkafka.ReadAll(t, brokers, out) {
			last[string(r.Key)] = string(r.Value)
		}
		return last["apple"] == `{"TOTAL":13,"N":3}` && last["pear"] == `{"TOTAL":6,"N":2}`
	})
	closeEngine(t, e)
	want := map[string]string{"apple": `{"TOTAL":13,"N":3}`, "pear": `{"TOTAL":6,"N":2}`}
	if diff := cmp.Diff(want, last); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"deserialize": 1}, q.Metrics.Errors()); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	// The query's own records are binary rows: the magic byte, the
	// column count, then PRICE as a tagged INT.
	var got []string
	for _, r := range testkafka.ReadAll(t, brokers, repart) {
		got = append(got, fmt.Sprintf("%s %x", r.Key, r.Value))
	}
	wantRecs := []string{
		"apple " + fmt.Sprintf("%x", `{"PRICE":3}`),
		"pear " + fmt.Sprintf("%x", `{"PRICE":5}`),
		"pear 020100",
		"apple " + fmt.Sprintf("%x", `{"PRICE":null}`),
		"apple b501030000000a",
		"pear b5010300000001",
	}
	if diff := cmp.Diff(wantRecs, got); diff != "" {
		t.Errorf("repartition records (-want +got):\n%s", diff)
	}
}
