package server

import (
	"sync"
	"time"
)

// rateSpan is how far back a console rate looks: the records/s shown are
// the average over the samples of about the last five seconds.
const rateSpan = 5 * time.Second

// rateEvery is the least time between two samples a meter keeps, so many
// pages polling at once do not grow its samples without bound.
const rateEvery = 250 * time.Millisecond

// rateMeter turns counters read at each console snapshot (records into a
// query, rows into an operator) into records/s. The server measures them,
// not the page: a page's clock is not wall time when headless chromium
// runs it on virtual time, and every page then shows the same rate.
type rateMeter struct {
	mu      sync.Mutex
	samples map[string][]rateSample
}

type rateSample struct {
	at    time.Time
	count int64
}

// rate records count for key at now and returns the counter's records/s
// since the oldest sample within rateSpan (or, if none is that recent, the
// newest older one); 0 for a key seen for the first time, or whose counter
// went back (its query restarted).
func (m *rateMeter) rate(key string, now time.Time, count int64) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.samples == nil {
		m.samples = map[string][]rateSample{}
	}
	s := m.samples[key]
	if n := len(s); n > 0 && count < s[n-1].count {
		s = nil
	}
	if n := len(s); n == 0 || now.Sub(s[n-1].at) >= rateEvery {
		s = append(s, rateSample{now, count})
	}
	for len(s) > 2 && now.Sub(s[1].at) >= rateSpan {
		s = s[1:]
	}
	m.samples[key] = s
	first := s[0]
	secs := now.Sub(first.at).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(count-first.count) / secs
}

// keep forgets the keys keep says no to (terminated queries).
func (m *rateMeter) keep(keep func(key string) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.samples {
		if !keep(k) {
			delete(m.samples, k)
		}
	}
}
