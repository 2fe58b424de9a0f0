package exec

import (
	"math"
	"math/bits"
	"sync"
	"time"
)

// Histogram counts non-negative values (milliseconds of lateness) in
// log-linear buckets: values below 128 have a bucket each, larger ones
// share a bucket with values within 1/64 (1.6%) of them, so quantiles
// are exact below 128 ms and within 1.6% above. A fixed bucket layout
// makes merging two histograms an addition. The zero value is empty and
// ready to use; it is not safe for concurrent use (Lateness guards it).
type Histogram struct {
	counts [numBuckets]int64
	n      int64
	max    int64
}

const (
	subBits    = 6
	subBuckets = 1 << subBits
	// exactBelow is the first value sharing its bucket with others.
	exactBelow = 2 * subBuckets
	// numBuckets covers every int64: the largest value has
	// bits.Len64 = 63, so a shift of 56 and an index below 58*64.
	numBuckets = (64 - subBits) * subBuckets
)

// bucketOf maps v ≥ 0 to its bucket: below exactBelow the value itself;
// above, the top subBits+1 bits of v select one of subBuckets buckets
// per power of two.
func bucketOf(v int64) int {
	if v < exactBelow {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 1 - subBits
	return shift*subBuckets + int(v>>shift)
}

// bucketRange is the smallest and largest value of bucket i.
func bucketRange(i int) (lo, hi int64) {
	if i < exactBelow {
		return int64(i), int64(i)
	}
	shift := i/subBuckets - 1
	lo = int64(i-shift*subBuckets) << shift
	return lo, lo + 1<<shift - 1
}

// Record counts one value; negative values count as 0.
func (h *Histogram) Record(v int64) {
	v = max(v, 0)
	h.counts[bucketOf(v)]++
	h.n++
	h.max = max(h.max, v)
}

// Count is the number of values recorded.
func (h *Histogram) Count() int64 { return h.n }

// Max is the largest value recorded, exactly (0 when empty).
func (h *Histogram) Max() int64 { return h.max }

// Quantile is the smallest value v such that at least q (0 < q ≤ 1) of
// the values are ≤ v, to the histogram's precision: the largest value of
// the bucket holding that rank, never above Max. As a grace period it
// therefore keeps at least q of the records. 0 when empty.
func (h *Histogram) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	// Rounding before Ceil keeps 0.99*1000 at rank 990, not 991.
	rank := int64(math.Ceil(math.Round(q*float64(h.n)*1e6) / 1e6))
	rank = min(max(rank, 1), h.n)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			_, hi := bucketRange(i)
			return min(hi, h.max)
		}
	}
	return h.max
}

// Above counts the values greater than v, to the histogram's precision:
// values sharing v's bucket count as not above it, so below 128 the count
// is exact and above it may miss values within 1.6% of v.
func (h *Histogram) Above(v int64) int64 {
	if v < 0 {
		return h.n
	}
	var n int64
	for i := bucketOf(v) + 1; i < numBuckets; i++ {
		n += h.counts[i]
	}
	return n
}

// Merge adds the values of o.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// RecentWindow is how far back Lateness.Recent reaches: it holds the
// records of the last half of this window and of the half before, so
// between 5 and 10 minutes of them.
const RecentWindow = 10 * time.Minute

// Lateness measures how late the records of one source arrive: for each
// record, how far its event time lies behind the stream time of the task
// reading it (0 when it is not behind). It keeps every record since the
// query started, and separately the recent ones, so a warning about a
// grace period reflects the data as it is now and not as it was at
// startup. Safe for concurrent use: tasks record while DESCRIBE reads.
type Lateness struct {
	mu  sync.Mutex
	all Histogram
	// halves[cur] fills from started on; the other holds the half
	// before, until the next rotation clears it.
	halves  [2]Histogram
	cur     int
	started int64 // unix nanoseconds; 0 before the first record
}

// RecordAll counts records lateMs milliseconds late each, seen at now.
func (l *Lateness) RecordAll(lateMs []int64, now time.Time) {
	l.mu.Lock()
	l.rotate(now.UnixNano())
	for _, v := range lateMs {
		l.all.Record(v)
		l.halves[l.cur].Record(v)
	}
	l.mu.Unlock()
}

// rotate moves to a fresh half once the current one is RecentWindow/2
// old. Halves start at multiples of the half's length after the first
// record, so a quiet spell longer than a whole window empties both.
func (l *Lateness) rotate(now int64) {
	half := int64(RecentWindow / 2)
	if l.started == 0 {
		l.started = now
		return
	}
	switch elapsed := now - l.started; {
	case elapsed < half:
	case elapsed < 2*half:
		l.cur ^= 1
		l.halves[l.cur] = Histogram{}
		l.started += half
	default:
		l.halves = [2]Histogram{}
		l.started = now
	}
}

// Snapshot copies what was measured: All since the start, Recent over
// the last RecentWindow (at least its second half) as of now.
func (l *Lateness) Snapshot(now time.Time) (all, recent Histogram) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started != 0 {
		l.rotate(now.UnixNano())
	}
	recent = l.halves[0]
	recent.Merge(&l.halves[1])
	return l.all, recent
}
