package server

import (
	"testing"
	"time"
)

// TestRateMeter: a rate is the counter's growth over the samples of the
// last rateSpan, whoever asked for them; a first sample, a counter that
// went back, and a second look within rateEvery behave as documented.
func TestRateMeter(t *testing.T) {
	var m rateMeter
	t0 := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		at    time.Duration
		count int64
		want  float64
	}{
		{0, 100, 0},                              // first sample: nothing to compare with
		{time.Second, 150, 50},                   // 50 records in 1 s
		{1100 * time.Millisecond, 160, 60 / 1.1}, // within rateEvery of the last sample: not kept, rate still from t0
		{2 * time.Second, 300, 100},              // 200 in 2 s since t0
		{7 * time.Second, 800, 100},              // from t0+2 s, the newest sample at least 5 s old: 500 in 5 s
		{8 * time.Second, 50, 0},                 // went back: restarted
		{9 * time.Second, 90, 40},                // 40 in the second since the restart
	}
	for i, st := range steps {
		got := m.rate("Q", at(st.at), st.count)
		if diff := got - st.want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("step %d (at %v, count %d): rate %v, want %v", i, st.at, st.count, got, st.want)
		}
	}
	m.keep(func(k string) bool { return k != "Q" })
	if got := m.rate("Q", at(10*time.Second), 1000); got != 0 {
		t.Errorf("after keep dropped Q: rate %v, want 0", got)
	}
}
