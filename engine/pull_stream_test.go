package engine_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestPullQueryOnStream scans a stream: a SELECT without EMIT CHANGES
// reads every record up to the topic's end as the query starts, through
// WHERE and the projection, and ends; LIMIT stops it early.
func TestPullQueryOnStream(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in := testkafka.Name(t, "scan_in")
	testkafka.CreateTopic(t, brokers, in, 2)
	var recs []*kgo.Record
	for i := 1; i <= 6; i++ {
		recs = append(recs, &kgo.Record{Topic: in, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"v":%d}`, i))})
	}
	testkafka.Produce(t, brokers, recs...)
	e := openConfig(t, testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet))
	execute(t, e, fmt.Sprintf(`CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');`, in))
	rows := func(sql string) []string {
		t.Helper()
		return pullRows(t, e, sql)
	}
	// Rows come partition by partition, so only their set is fixed.
	got := rows("SELECT k, v * 10 AS v10 FROM s WHERE v > 1;")
	want := []string{"k220", "k330", "k440", "k550", "k660"}
	if diff := cmp.Diff(sortedCopy(want), sortedCopy(got)); diff != "" {
		t.Errorf("scan (-want +got):\n%s", diff)
	}
	if got := rows("SELECT k FROM s LIMIT 2;"); len(got) != 2 {
		t.Errorf("LIMIT 2 gave %d rows: %v", len(got), got)
	}
	closeEngine(t, e)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
