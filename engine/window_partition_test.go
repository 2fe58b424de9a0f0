package engine_test

import (
	"bytes"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestWindowedKeysPartitionedByBaseKey runs windowed aggregations over a
// 4-partition topic and checks where their results land: every record of
// a windowed sink sits on the partition its key without the window (the
// base key) has in the aggregation's input, so all windows of a key share
// one partition, the input's, as Kafka Streams places them. Four sinks:
// a TUMBLING and a SESSION aggregation grouped by the input's key (the
// input partition is the source's), a TUMBLING one grouped by a value
// column (the input partition is the repartition topic's), and a stream
// declared over the TUMBLING result with WINDOW_TYPE and copied on (its
// windowed keys written again). The partitions expected are read back
// from the input topics, not computed by Sluice's partitioner.
func TestWindowedKeysPartitionedByBaseKey(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, svc := testkafka.Name(t, "bookings"), testkafka.Name(t, "svc")
	tumbling, session, byCity, copied := testkafka.Name(t, "hotel_5m"), testkafka.Name(t, "hotel_sessions"),
		testkafka.Name(t, "city_5m"), testkafka.Name(t, "hotel_5m_copy")
	changes := testkafka.Name(t, "hotel_5m_changes")
	e := openEngine(t, brokers, t.TempDir(), svc)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (hotel VARCHAR KEY, city VARCHAR)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=4);
		CREATE TABLE %[2]s AS SELECT hotel, COUNT(*) AS n FROM %[1]s WINDOW TUMBLING (SIZE 5 MINUTES) GROUP BY hotel;
		CREATE TABLE %[3]s AS SELECT hotel, COUNT(*) AS n FROM %[1]s WINDOW SESSION (2 MINUTES) GROUP BY hotel;
		CREATE TABLE %[4]s AS SELECT city, COUNT(*) AS n FROM %[1]s WINDOW TUMBLING (SIZE 5 MINUTES) GROUP BY city;
		CREATE STREAM %[5]s (hotel VARCHAR KEY, n BIGINT)
		  WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', WINDOW_TYPE='TUMBLING', WINDOW_SIZE='5 MINUTES');
		CREATE STREAM %[6]s AS SELECT * FROM %[5]s;`, in, tumbling, session, byCity, changes, copied))
	qTumbling, qSession, qCity, qCopy := res[1].Query, res[2].Query, res[3].Query, res[5].Query

	const m = 60_000
	hotels := []struct{ name, city string }{
		{"savoy", "london"}, {"ritz", "paris"}, {"plaza", "london"},
		{"bristol", "paris"}, {"hassler", "rome"}, {"danieli", "rome"},
	}
	// Every hotel is booked at 0, 1, 6 and 12 minutes: windows [0,5m)
	// (two bookings), [5m,10m) and [10m,15m); sessions {0,1m} (which
	// merges the session {0}), {6m} and {12m}. Event time only grows, so
	// nothing is late.
	var recs []*kgo.Record
	for _, at := range []int64{0, 1 * m, 6 * m, 12 * m} {
		for _, h := range hotels {
			recs = append(recs, rec(in, h.name, fmt.Sprintf(`{"city":%q}`, h.city), at))
		}
	}
	testkafka.Produce(t, brokers, recs...)

	n := int64(len(hotels))
	testkafka.Await(t, 60*time.Second, "tumbling results", func() bool { return qTumbling.Metrics.RecordsOut.Load() >= 4*n })
	// Per hotel: {0}, its tombstone when {0,1m} replaces it, {0,1m}, {6m}, {12m}.
	testkafka.Await(t, 60*time.Second, "session results", func() bool { return qSession.Metrics.RecordsOut.Load() >= 5*n })
	testkafka.Await(t, 60*time.Second, "per-city results", func() bool { return qCity.Metrics.RecordsOut.Load() >= 4*n })
	testkafka.Await(t, 60*time.Second, "copied results", func() bool { return qCopy.Metrics.RecordsOut.Load() >= 4*n })
	closeEngine(t, e) // flushes outputs
	for _, q := range res[1:] {
		if q.Query != nil && q.Query.Err() != nil {
			t.Errorf("query %s failed: %v", q.Query.ID, q.Query.Err())
		}
	}

	// The partition of each key in an input topic, as its records sit there.
	partitionsOf := func(topic string) map[string]int32 {
		t.Helper()
		out := map[string]int32{}
		for _, r := range testkafka.ReadAll(t, brokers, topic) {
			if p, ok := out[string(r.Key)]; ok && p != r.Partition {
				t.Fatalf("input %s: key %q on partitions %d and %d", topic, r.Key, p, r.Partition)
			}
			out[string(r.Key)] = r.Partition
		}
		return out
	}
	hotelPartition := partitionsOf(in)
	cityPartition := partitionsOf(qCity.Plan.Topology.Internal[0].Name)

	// placed is a windowed result reduced to what the test compares; the
	// record timestamp is left out because the order in which a city's
	// updates arrive from several input partitions decides it.
	type placed struct {
		Key        string
		Start, End int64
		Value      string
	}
	byStart := func(ps []placed) {
		sort.Slice(ps, func(i, j int) bool {
			a, b := ps[i], ps[j]
			if a.Key != b.Key {
				return a.Key < b.Key
			}
			if a.Start != b.Start {
				return a.Start < b.Start
			}
			if a.End != b.End {
				return a.End < b.End
			}
			return a.Value < b.Value
		})
	}
	// read reads a windowed sink and checks every record's partition
	// against the base key's input partition and against the partition of
	// the key's other windows.
	read := func(topic string, sessionKeys bool, inputPartition map[string]int32) []placed {
		t.Helper()
		var out []placed
		seen := map[string]int32{}
		for _, r := range testkafka.ReadAll(t, brokers, topic) {
			var p placed
			if sessionKeys {
				k, start, end, err := format.DecodeSessionWindowedKey(r.Key)
				if err != nil {
					t.Fatalf("%s: session-windowed key %x: %v", topic, r.Key, err)
				}
				p = placed{Key: string(k), Start: start, End: end}
			} else {
				k, start, err := format.DecodeTimeWindowedKey(r.Key)
				if err != nil {
					t.Fatalf("%s: time-windowed key %x: %v", topic, r.Key, err)
				}
				p = placed{Key: string(k), Start: start}
			}
			if r.Value != nil {
				p.Value = string(r.Value)
			}
			want, ok := inputPartition[p.Key]
			if !ok {
				t.Errorf("%s: key %q is in no input partition", topic, p.Key)
			} else if r.Partition != want {
				t.Errorf("%s: %q's window at %d on partition %d, want its input partition %d", topic, p.Key, p.Start, r.Partition, want)
			}
			if q, ok := seen[p.Key]; ok && q != r.Partition {
				t.Errorf("%s: %q's windows on partitions %d and %d", topic, p.Key, q, r.Partition)
			}
			seen[p.Key] = r.Partition
			out = append(out, p)
		}
		byStart(out)
		return out
	}

	// A windowed store's changelog is written to the store partition,
	// which is the task's input partition: each record, whatever the
	// store's key layout, holds one group key and sits on its partition.
	for _, c := range []struct {
		q     *engine.Query
		input map[string]int32
	}{{qTumbling, hotelPartition}, {qSession, hotelPartition}, {qCity, cityPartition}} {
		for _, st := range c.q.Plan.Topology.Stores {
			recs := testkafka.ReadAll(t, brokers, st.Changelog)
			if len(recs) == 0 {
				t.Errorf("changelog %s is empty", st.Changelog)
			}
			for _, r := range recs {
				var keys []string
				for k := range c.input {
					if bytes.Contains(r.Key, []byte(k)) {
						keys = append(keys, k)
					}
				}
				if len(keys) != 1 {
					t.Errorf("changelog %s: key %x holds group keys %q, want one", st.Changelog, r.Key, keys)
				} else if want := c.input[keys[0]]; r.Partition != want {
					t.Errorf("changelog %s: %q's entry on partition %d, want its input partition %d", st.Changelog, keys[0], r.Partition, want)
				}
			}
		}
	}

	count := func(n int) string { return fmt.Sprintf(`{"N":%d}`, n) }
	var wantTumbling, wantSession, wantCity []placed
	perCity := map[string]int{}
	for _, h := range hotels {
		perCity[h.city]++
		wantTumbling = append(wantTumbling,
			placed{h.name, 0, 0, count(1)}, placed{h.name, 0, 0, count(2)},
			placed{h.name, 5 * m, 0, count(1)}, placed{h.name, 10 * m, 0, count(1)})
		wantSession = append(wantSession,
			placed{h.name, 0, 0, count(1)}, placed{h.name, 0, 0, ""}, placed{h.name, 0, 1 * m, count(2)},
			placed{h.name, 6 * m, 6 * m, count(1)}, placed{h.name, 12 * m, 12 * m, count(1)})
	}
	for city, k := range perCity {
		for i := 1; i <= 2*k; i++ {
			wantCity = append(wantCity, placed{city, 0, 0, count(i)})
		}
		for _, start := range []int64{5 * m, 10 * m} {
			for i := 1; i <= k; i++ {
				wantCity = append(wantCity, placed{city, start, 0, count(i)})
			}
		}
	}
	for _, w := range [][]placed{wantTumbling, wantSession, wantCity} {
		byStart(w)
	}
	for _, c := range []struct {
		topic   string
		session bool
		input   map[string]int32
		want    []placed
	}{
		{tumbling, false, hotelPartition, wantTumbling},
		{session, true, hotelPartition, wantSession},
		{byCity, false, cityPartition, wantCity},
		{copied, false, hotelPartition, wantTumbling},
	} {
		if diff := cmp.Diff(c.want, read(c.topic, c.session, c.input)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.topic, diff)
		}
	}
}
