package engine_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestPartitionByThroughKafka re-keys a stream keyed by user by page into
// a topic with another partition count: every output record must carry
// its page as the key and sit in the partition murmur2 gives that key,
// whatever partition its input came from, so all of a page's records are
// in one partition.
func TestPartitionByThroughKafka(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "clicks"), testkafka.Name(t, "by_page")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (uid VARCHAR KEY, page VARCHAR, ms INT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE STREAM %[2]s WITH (PARTITIONS=5) AS SELECT * FROM %[1]s PARTITION BY page;`, in, out))
	q := res[1].Query
	testkafka.Produce(t, brokers,
		rec(in, "u1", `{"page":"home","ms":1}`, 1000),
		rec(in, "u2", `{"page":"cart","ms":2}`, 2000),
		rec(in, "u3", `{"page":"home","ms":3}`, 3000),
		rec(in, "u4", `{"page":"about","ms":4}`, 4000),
		rec(in, "u5", `{"page":"cart","ms":5}`, 5000),
	)
	testkafka.Await(t, 30*time.Second, "5 results", func() bool { return q.Metrics.RecordsOut.Load() >= 5 })
	closeEngine(t, e) // flushes outputs
	type placed struct {
		Key, Value string
		Ts         int64
	}
	var got []placed
	for _, r := range testkafka.ReadAll(t, brokers, out) {
		if want := exec.KeyPartition(out, r.Key, 5); r.Partition != want {
			t.Errorf("record with key %q in partition %d, want %d", r.Key, r.Partition, want)
		}
		got = append(got, placed{string(r.Key), string(r.Value), r.Timestamp.UnixMilli()})
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Ts < got[j].Ts })
	want := []placed{
		{"home", `{"MS":1,"UID":"u1"}`, 1000},
		{"cart", `{"MS":2,"UID":"u2"}`, 2000},
		{"home", `{"MS":3,"UID":"u3"}`, 3000},
		{"about", `{"MS":4,"UID":"u4"}`, 4000},
		{"cart", `{"MS":5,"UID":"u5"}`, 5000},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if q.Err() != nil {
		t.Errorf("query failed: %v", q.Err())
	}
}
