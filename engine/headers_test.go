package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestHeaderColumns reads record headers through a broker: a HEADERS
// column and a HEADER('k') column come from the records' headers, and
// each result carries its input record's headers.
func TestHeaderColumns(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "hdr_in"), testkafka.Name(t, "hdr_out")
	testkafka.CreateTopic(t, brokers, in, 1)
	testkafka.Produce(t, brokers,
		&kgo.Record{Topic: in, Key: []byte("a"), Value: []byte(`{"v":1}`)},
		&kgo.Record{Topic: in, Key: []byte("b"), Value: []byte(`{"v":2}`), Headers: []kgo.RecordHeader{
			{Key: "trace", Value: []byte{1}}, {Key: "src", Value: []byte("web")}, {Key: "trace", Value: []byte{2}}}},
	)
	e := openConfig(t, testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet))
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM s (k VARCHAR KEY, v INT, hs ARRAY<STRUCT<key STRING, value BYTES>> HEADERS, trace BYTES HEADER('trace'))
		  WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM o WITH (KAFKA_TOPIC='%s') AS SELECT k, v, ARRAY_LENGTH(hs) AS n, trace FROM s;`, in, out))
	q := res[1].Query
	testkafka.Await(t, 30*time.Second, "2 results", func() bool { return q.Metrics.RecordsOut.Load() >= 2 })
	closeEngine(t, e)
	var got []string
	for _, r := range testkafka.ReadAll(t, brokers, out) {
		line := string(r.Key) + " " + string(r.Value)
		for _, h := range r.Headers {
			line += fmt.Sprintf(" %s=%x", h.Key, h.Value)
		}
		got = append(got, line)
	}
	want := []string{
		`a {"V":1,"N":0,"TRACE":null}`,
		`b {"V":2,"N":3,"TRACE":"Ag=="} trace=01 src=776562 trace=02`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}
