package exec

import (
	"sort"
	"sync"
)

// HotKeyCounters is how many keys a HotKeys sketch keeps. With k
// counters a key's count is overestimated by at most records/k, and every
// key carrying more than records/k of the records is kept: 32 is enough
// to name a key carrying a fifth of a task's records with a few percent
// of error, at a fixed few kilobytes per task.
const HotKeyCounters = 32

// HotKeys finds the busiest keys of a stream of records with the
// Space-Saving algorithm (Metwally, Agrawal, El Abbadi 2005): a fixed set
// of counters; a key without one takes over the smallest, inheriting its
// count as possible error. A task feeds it the key of every record it
// processes; DESCRIBE EXTENDED and EXPLAIN read it to warn about a key so
// busy that its partition's task bounds the query's throughput. It is
// safe for one writer and concurrent readers.
type HotKeys struct {
	mu      sync.Mutex
	records int64
	n       int // counters in use
	// The counters, as parallel arrays: the search for the smallest
	// count, done on every record whose key has no counter, reads only
	// counts (256 contiguous bytes).
	counts [HotKeyCounters]int64
	// errs[i] is how much counts[i] may overestimate its key's records:
	// the count of the key it took the counter from.
	errs  [HotKeyCounters]int64
	keys  [HotKeyCounters]string
	index map[string]int // key → counter
}

// KeyCount is a key's share of the records a sketch saw.
type KeyCount struct {
	Key []byte
	// Count is the key's records at least: what the sketch saw of it
	// since it last took a counter.
	Count int64
	// Max is the most records the key can have had.
	Max int64
}

// NewHotKeys returns an empty sketch.
func NewHotKeys() *HotKeys {
	return &HotKeys{index: make(map[string]int, HotKeyCounters)}
}

// Add counts one record with key.
func (h *HotKeys) Add(key []byte) { h.AddN(key, 1) }

// AddN counts n records with key (one sampled record standing for n).
func (h *HotKeys) AddN(key []byte, n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records += n
	if i, ok := h.index[string(key)]; ok {
		h.counts[i] += n
		return
	}
	k := string(key) // one copy, shared by the index and the counter
	if h.n < HotKeyCounters {
		h.index[k] = h.n
		h.keys[h.n], h.counts[h.n] = k, n
		h.n++
		return
	}
	low := 0
	for i, c := range h.counts {
		if c < h.counts[low] {
			low = i
		}
	}
	delete(h.index, h.keys[low])
	h.index[k] = low
	h.keys[low], h.errs[low] = k, h.counts[low]
	h.counts[low] += n
}

// Top returns the keys the sketch keeps, busiest first (by Count, then
// key), and the records it saw.
func (h *HotKeys) Top() ([]KeyCount, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]KeyCount, h.n)
	for i := range h.n {
		out[i] = KeyCount{Key: []byte(h.keys[i]), Count: h.counts[i] - h.errs[i], Max: h.counts[i]}
	}
	sortKeyCounts(out)
	return out, h.records
}

func sortKeyCounts(kc []KeyCount) {
	sort.Slice(kc, func(i, j int) bool {
		if kc[i].Count != kc[j].Count {
			return kc[i].Count > kc[j].Count
		}
		return string(kc[i].Key) < string(kc[j].Key)
	})
}

// MergeHotKeys adds up the sketches of several tasks reading partitions
// of one topic. A key lives in one partition, so the counts of different
// tasks are of different keys, save after a repartitioning by hand; a key
// two sketches both keep gets the sum of its counts.
func MergeHotKeys(sketches []*HotKeys) ([]KeyCount, int64) {
	var records int64
	byKey := map[string]KeyCount{}
	for _, h := range sketches {
		top, n := h.Top()
		records += n
		for _, kc := range top {
			sum := byKey[string(kc.Key)]
			sum.Key, sum.Count, sum.Max = kc.Key, sum.Count+kc.Count, sum.Max+kc.Max
			byKey[string(kc.Key)] = sum
		}
	}
	out := make([]KeyCount, 0, len(byKey))
	for _, kc := range byKey {
		out = append(out, kc)
	}
	sortKeyCounts(out)
	return out, records
}
