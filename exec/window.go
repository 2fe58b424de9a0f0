package exec

import (
	"encoding/binary"
	"fmt"
	"time"
)

// WindowKind is the shape of an aggregation window.
type WindowKind int

const (
	Tumbling WindowKind = iota
	Hopping
	// Session windows group a key's records no more than Size (the
	// inactivity gap) apart; they grow and merge as records arrive.
	Session
	// Sliding windows are [t−Size, t] (both ends inclusive) for every
	// record time t, plus [t+1, t+1+Size] when another record follows t
	// within Size: each distinct set of records within Size of each other
	// gets one window, as in Kafka Streams' SlidingWindows.
	Sliding
)

func (k WindowKind) String() string {
	switch k {
	case Hopping:
		return "HOPPING"
	case Session:
		return "SESSION"
	case Sliding:
		return "SLIDING"
	}
	return "TUMBLING"
}

// WindowSpec is a resolved window: all durations in milliseconds.
type WindowSpec struct {
	Kind WindowKind
	// Size is the window length; for SESSION, the inactivity gap.
	Size      int64
	Advance   int64
	Grace     int64
	Retention int64
}

// String describes the window with the grace and retention in effect.
func (w *WindowSpec) String() string {
	d := func(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }
	s := fmt.Sprintf("%s size %s", w.Kind, d(w.Size))
	if w.Kind == Session {
		s = fmt.Sprintf("%s gap %s", w.Kind, d(w.Size))
	}
	if w.Kind == Hopping {
		s += " advance " + d(w.Advance)
	}
	return s + fmt.Sprintf(" grace %s retention %s", d(w.Grace), d(w.retention()))
}

// retention is how long a window's state is kept after it starts ending:
// never less than size + grace, so a window is never forgotten while it
// can still change.
func (w *WindowSpec) retention() int64 {
	return max(w.Retention, w.Size+w.Grace)
}

// EffectiveRetention is the retention in force: the RETENTION given, but
// never less than size (or gap) + grace.
func (w *WindowSpec) EffectiveRetention() int64 { return w.retention() }

// starts lists the starts of the windows containing ts, ascending. As in
// Kafka Streams, windows start at 0 or later, so a negative time has none
// (sources skip such records before they get here).
func (w *WindowSpec) starts(ts int64, buf []int64) []int64 {
	buf = buf[:0]
	if ts < 0 {
		return buf
	}
	if w.Kind == Tumbling {
		return append(buf, ts-mod(ts, w.Size))
	}
	last := ts - mod(ts, w.Advance)
	first := last
	for s := last - w.Advance; s > ts-w.Size && s >= 0; s -= w.Advance {
		first = s
	}
	for s := first; s <= last; s += w.Advance {
		buf = append(buf, s)
	}
	return buf
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// windowKey lays a window's start before the group key, so that state
// scans in key order visit windows in time order and expiring old
// windows is a prefix range.
func windowKey(buf []byte, start int64, groupKey []byte) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(start)^(1<<63))
	return append(buf, groupKey...)
}

func splitWindowKey(k []byte) (start int64, groupKey []byte, ok bool) {
	if len(k) < 8 {
		return 0, nil, false
	}
	return int64(binary.BigEndian.Uint64(k) ^ (1 << 63)), k[8:], true
}

func windowBound(start int64) []byte { return windowKey(nil, start, nil) }
