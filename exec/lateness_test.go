package exec_test

import (
	"testing"
	"time"

	"github.com/sluice-sql/sluice/exec"
)

// repeat returns v n times.
func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func concat(parts ...[]int64) []int64 {
	var out []int64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Quantiles are exact below 128 and, above, the largest value of the
// value's bucket (buckets are 1/64 of a power of two wide). The data use
// values that end a bucket (1023 = 8·128−1, 4095, 8191) where exact
// answers are asserted, and 1000 to show the rounding up (to 1007, its
// bucket's end: 0.7% above).
func TestHistogramQuantiles(t *testing.T) {
	// 1000 records: 900 on time, then 50, 40, 9 and 1 late ones.
	skewed := concat(repeat(0, 900), repeat(1023, 50), repeat(4095, 40), repeat(8191, 9), repeat(9000, 1))
	cases := []struct {
		name   string
		values []int64
		q      float64
		want   int64
	}{
		{"empty", nil, 0.99, 0},
		{"one value", []int64{42}, 0.5, 42},
		{"negative counts as 0", []int64{-5}, 1, 0},
		{"exact below 128: median of 1..100", seqValues(1, 100), 0.5, 50},
		{"exact below 128: p90 of 1..100", seqValues(1, 100), 0.9, 90},
		{"exact below 128: p99 of 1..100", seqValues(1, 100), 0.99, 99},
		{"exact below 128: p100 of 1..100", seqValues(1, 100), 1, 100},
		{"skewed p50", skewed, 0.5, 0},
		{"skewed p90: rank 900 is the last on-time record", skewed, 0.9, 0},
		{"skewed p90.1", skewed, 0.901, 1023},
		{"skewed p95", skewed, 0.95, 1023},
		{"skewed p99", skewed, 0.99, 4095},
		{"skewed p99.9", skewed, 0.999, 8191},
		{"skewed p100 is the exact max", skewed, 1, 9000},
		{"above 128 rounds up within its bucket", []int64{1000, 2000}, 0.5, 1007},
		{"never above the max seen", []int64{1000, 1001}, 0.5, 1001},
		{"huge values", []int64{1 << 62, 1<<63 - 1}, 0.5, 1<<62 + 1<<56 - 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h exec.Histogram
			for _, v := range tc.values {
				h.Record(v)
			}
			if got := h.Quantile(tc.q); got != tc.want {
				t.Errorf("Quantile(%v) = %d, want %d", tc.q, got, tc.want)
			}
			if got := h.Count(); got != int64(len(tc.values)) {
				t.Errorf("Count() = %d, want %d", got, len(tc.values))
			}
		})
	}
}

func seqValues(from, to int64) []int64 {
	var out []int64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

func TestHistogramAboveMaxMerge(t *testing.T) {
	var a, b exec.Histogram
	for _, v := range []int64{0, 0, 5, 100, 127} {
		a.Record(v)
	}
	for _, v := range []int64{1023, 4095, 9000} {
		b.Record(v)
	}
	a.Merge(&b)
	cases := []struct {
		v    int64
		want int64
	}{
		{-1, 8},
		{0, 6},
		{4, 6},
		{5, 5},
		{127, 3},
		{1000, 3}, // 1023 shares no bucket with 1000 (1000..1007)
		{1016, 2}, // 1023 shares 1016's bucket: counted as not above
		{1023, 2},
		{8999, 0}, // 9000 shares 8960..9087 with 8999
		{9000, 0},
	}
	for _, tc := range cases {
		if got := a.Above(tc.v); got != tc.want {
			t.Errorf("Above(%d) = %d, want %d", tc.v, got, tc.want)
		}
	}
	if a.Count() != 8 || a.Max() != 9000 {
		t.Errorf("merged Count() = %d, Max() = %d, want 8 and 9000", a.Count(), a.Max())
	}
}

// Recent holds the current half of RecentWindow and the one before;
// All keeps everything.
func TestLatenessRecentWindow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	half := exec.RecentWindow / 2
	var l exec.Lateness
	steps := []struct {
		at         time.Duration // since t0
		late       int64         // -1: read only
		all, total int64         // counts of All and Recent after the step
	}{
		{0, 10, 1, 1},
		{half - time.Second, 20, 2, 2},
		{half, 30, 3, 3},                 // second half begins; first still recent
		{2*half - time.Second, -1, 3, 3}, // reading rotates nothing yet
		{2 * half, 40, 4, 2},             // third half: the first is dropped
		{2*half + 3*half, -1, 4, 0},      // quiet for longer than the window
		{2*half + 3*half + time.Second, 50, 5, 1},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		if s.late >= 0 {
			l.RecordAll([]int64{s.late}, now)
		}
		all, recent := l.Snapshot(now)
		if all.Count() != s.all || recent.Count() != s.total {
			t.Errorf("step %d (at %s): All has %d, Recent %d; want %d and %d", i, s.at, all.Count(), recent.Count(), s.all, s.total)
		}
	}
}
