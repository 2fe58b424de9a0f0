package exec

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Records whose schema the Schema Registry cannot give now (it is down,
// or unreachable) are neither bad records nor a reason to fail the query:
// the runner rewinds their partitions to them, pauses fetching those
// partitions for a backoff that doubles up to registryBackoffMax, and
// reads them again. Nothing is skipped and nothing is committed past
// them; DESCRIBE EXTENDED shows the wait (RegistryWait) and, past the
// stall timeout, the partitions as stalled waiting on "schema registry".

const (
	registryBackoffMin = 250 * time.Millisecond
	registryBackoffMax = 10 * time.Second
)

// RegistryWaitState describes a wait for the Schema Registry.
type RegistryWaitState struct {
	// Since is when the first record found the registry unavailable.
	Since time.Time
	// Attempts counts the tries so far; Next is when the next one is.
	Attempts int
	Next     time.Time
	// Topic, Partition and Offset name the record waiting.
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

// registryWait is the runner's retry of records waiting for their schema.
type registryWait struct {
	mu      sync.Mutex
	state   RegistryWaitState // Since zero: not waiting
	waiting map[topicPartition]bool
	paused  map[string][]int32 // paused until state.Next
}

// afterBatch rewinds and pauses the partitions in retries (record offset
// to read again), or, when the partitions that waited have processed
// records again (ran), ends the wait.
func (w *registryWait) afterBatch(r *KafkaRunner, retries map[topicPartition]int64, cause *RegistryRetry, ran []topicPartition, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(retries) == 0 {
		if w.state.Since.IsZero() || len(w.paused) > 0 {
			return
		}
		for _, tp := range ran {
			if w.waiting[tp] {
				r.cfg.Log.Info("schema registry answers again; records read", "query", r.topo.QueryID,
					"waited", now.Sub(w.state.Since).Round(time.Millisecond), "attempts", w.state.Attempts)
				for tp := range w.waiting {
					r.watch.waitRegistry(tp, false)
				}
				w.state, w.waiting = RegistryWaitState{}, nil
				return
			}
		}
		return
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	if w.paused == nil {
		w.paused = map[string][]int32{}
	}
	if w.waiting == nil {
		w.waiting = map[topicPartition]bool{}
	}
	for tp, off := range retries {
		if set[tp.topic] == nil {
			set[tp.topic] = map[int32]kgo.EpochOffset{}
		}
		set[tp.topic][tp.partition] = kgo.EpochOffset{Epoch: -1, Offset: off}
		w.paused[tp.topic] = append(w.paused[tp.topic], tp.partition)
		w.waiting[tp] = true
		r.watch.waitRegistry(tp, true)
	}
	// From the polling goroutine, before AllowRebalance: no revoke runs.
	r.cl.SetOffsets(set)
	r.cl.PauseFetchPartitions(w.paused)
	if w.state.Since.IsZero() {
		w.state.Since = now
		r.cfg.Log.Warn("schema registry unavailable; the record waits and is read again", "query", r.topo.QueryID,
			"topic", cause.Topic, "partition", cause.Partition, "offset", cause.Offset, "err", cause.Err)
	}
	backoff := registryBackoffMin << min(w.state.Attempts, 6)
	w.state.Attempts++
	w.state.Next = now.Add(min(backoff, registryBackoffMax))
	w.state.Topic, w.state.Partition, w.state.Offset, w.state.Err = cause.Topic, cause.Partition, cause.Offset, cause.Err
}

// resume resumes the paused partitions once their backoff is over, and
// says how long until then otherwise (0: nothing paused).
func (w *registryWait) resume(r *KafkaRunner, now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.paused) == 0 {
		return 0
	}
	if wait := w.state.Next.Sub(now); wait > 0 {
		return wait
	}
	r.cl.ResumeFetchPartitions(w.paused)
	w.paused = nil
	return 0
}

// current is the wait under way, if any.
func (w *registryWait) current() (RegistryWaitState, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state, !w.state.Since.IsZero()
}
