package exec_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
)

// TestPartitionerWindowedTopics checks where Partitioner sends the
// records of windowed topics against franz-go's own murmur2 partitioner
// given the base key: every window of a key on the base key's partition,
// for both window encodings and several partition counts; a key too short
// to hold a window hashed whole; other topics hashed by their whole key
// and changelogs left to the partition each record names.
func TestPartitionerWindowedTopics(t *testing.T) {
	const timed, sessions, plain, changelog = "hotel_5m", "hotel_sessions", "hotel_copy", "store-changelog"
	p := exec.Partitioner([]string{changelog}, map[string]exec.WindowType{timed: exec.TimeWindowed, sessions: exec.SessionWindowed})
	bases := []string{"savoy", "ritz", "plaza", "a", ""}
	starts := []int64{0, 300_000, 600_000, 1 << 40}
	murmur2 := kgo.StickyKeyPartitioner(nil)
	want := func(topic string, key []byte, n int) int {
		return murmur2.ForTopic(topic).Partition(&kgo.Record{Topic: topic, Key: key}, n)
	}
	partition := func(tp kgo.TopicPartitioner, topic string, key []byte, n int) int {
		t.Helper()
		r := &kgo.Record{Topic: topic, Key: key}
		if !tp.RequiresConsistency(r) {
			t.Errorf("%s: record with key %x may move when its partition is down", topic, key)
		}
		return tp.Partition(r, n)
	}
	for _, n := range []int{1, 4, 7, 32} {
		timedTP, sessionTP := p.ForTopic(timed), p.ForTopic(sessions)
		for _, base := range bases {
			w := want(timed, []byte(base), n)
			for _, start := range starts {
				if got := partition(timedTP, timed, format.EncodeTimeWindowedKey([]byte(base), start), n); got != w {
					t.Errorf("%d partitions: %q's time window at %d on partition %d, want %d (its base key's)", n, base, start, got, w)
				}
				if got := partition(sessionTP, sessions, format.EncodeSessionWindowedKey([]byte(base), start, start+60_000), n); got != w {
					t.Errorf("%d partitions: %q's session at %d on partition %d, want %d (its base key's)", n, base, start, got, w)
				}
			}
		}
		short := []byte("abc")
		if got, w := partition(timedTP, timed, short, n), want(timed, short, n); got != w {
			t.Errorf("%d partitions: malformed windowed key %x on partition %d, want %d (the whole key's)", n, short, got, w)
		}
		whole := format.EncodeTimeWindowedKey([]byte("savoy"), 300_000)
		if got, w := p.ForTopic(plain).Partition(&kgo.Record{Topic: plain, Key: whole}, n), want(plain, whole, n); got != w {
			t.Errorf("%d partitions: key %x of a topic not windowed on partition %d, want %d (the whole key's)", n, whole, got, w)
		}
		named := int32(n - 1)
		if got := p.ForTopic(changelog).Partition(&kgo.Record{Topic: changelog, Key: whole, Partition: named}, n); got != int(named) {
			t.Errorf("%d partitions: changelog record naming partition %d went to %d", n, named, got)
		}
	}
	// Some key's windows must spread over partitions when hashed with
	// their start, or the test could not tell the window being hashed from
	// it being left out.
	spread := false
	for _, base := range bases {
		seen := map[int]bool{}
		for _, start := range starts {
			seen[want(timed, format.EncodeTimeWindowedKey([]byte(base), start), 4)] = true
		}
		spread = spread || len(seen) > 1
	}
	if !spread {
		t.Fatalf("every key's windows hashed with their start share one of 4 partitions: pick other keys or starts")
	}
}
