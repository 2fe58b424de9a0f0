package engine

import (
	"runtime"
	"testing"
	"time"
)

// TestKafkaConfigProperties checks how a query's properties become its
// runner's settings: the commit interval (shorter under exactly-once),
// the guarantee, and how many tasks process at once (one per CPU unless
// set).
func TestKafkaConfigProperties(t *testing.T) {
	cpus := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		name     string
		props    map[string]string
		eos      bool
		interval time.Duration
		threads  int
	}{
		{"defaults", nil, false, time.Second, cpus},
		{"exactly once", map[string]string{"processing.guarantee": "exactly_once_v2"}, true, 100 * time.Millisecond, cpus},
		{"commit interval", map[string]string{"ksql.streams.commit.interval.ms": "250"}, false, 250 * time.Millisecond, cpus},
		{"threads", map[string]string{"num.stream.threads": "1"}, false, time.Second, 1},
		{"threads, ksqlDB's name", map[string]string{"ksql.streams.num.stream.threads": "3"}, false, time.Second, 3},
		{"threads not a number", map[string]string{"num.stream.threads": "many"}, false, time.Second, cpus},
		{"threads not positive", map[string]string{"num.stream.threads": "0"}, false, time.Second, cpus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := (&Engine{instanceID: "i1"}).kafkaConfig("g", false, nil, tc.props)
			if cfg.ExactlyOnce != tc.eos || cfg.CommitInterval != tc.interval || cfg.Threads != tc.threads {
				t.Errorf("exactly once %v, commit interval %v, threads %d; want %v, %v, %d",
					cfg.ExactlyOnce, cfg.CommitInterval, cfg.Threads, tc.eos, tc.interval, tc.threads)
			}
			if cfg.TransactionalID != "g-i1" {
				t.Errorf("transactional id %q, want g-i1", cfg.TransactionalID)
			}
		})
	}
}
