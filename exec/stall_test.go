package exec

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestStallWatchWaitingOn checks what a stalled partition is said to wait
// on, from what the loop reported: its phase, the partition's position,
// end and last stable offset, its commits and restores.
func TestStallWatchWaitingOn(t *testing.T) {
	tp := topicPartition{"in", 2}
	timeout := time.Second
	for _, tc := range []struct {
		name string
		// set reports to w what the loop saw; the check runs 2 s later.
		set  func(w *stallWatch)
		want string // "" for not stalled
	}{
		{"caught up", func(w *stallWatch) {
			w.fetched(tp, 0, 10, 10, 10)
			w.committed(map[topicPartition]int64{tp: 10})
		}, ""},
		{"nothing fetched yet", func(w *stallWatch) {}, ""},
		{"records to read, none arrive", func(w *stallWatch) {
			w.fetched(tp, 0, 10, 50, 50)
			w.committed(map[topicPartition]int64{tp: 10})
		}, WaitFetch},
		{"an open transaction holds the last stable offset", func(w *stallWatch) {
			w.fetched(tp, 0, 10, 50, 10)
			w.committed(map[topicPartition]int64{tp: 10})
		}, WaitTransaction},
		{"read but never committed", func(w *stallWatch) {
			w.fetched(tp, 0, 40, 50, 50)
		}, WaitTransaction},
		{"restoring", func(w *stallWatch) {
			w.fetched(tp, 0, 10, 50, 50)
			w.restore(tp, true)
		}, WaitRestore},
		{"loop blocked producing", func(w *stallWatch) {
			w.fetched(tp, 0, 10, 50, 50)
			w.enter(phaseProcess)
		}, WaitProduce},
		{"loop blocked committing", func(w *stallWatch) {
			w.fetched(tp, 0, 10, 50, 50)
			w.enter(phaseCommit)
		}, WaitTransaction},
		{"position from the group's commit, records behind it", func(w *stallWatch) {
			w.position(tp, 7)
			w.fetched(tp, -1, -1, 9, 9)
		}, WaitFetch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			w := newStallWatch("Q1", timeout, slog.New(slog.NewTextHandler(&logs, nil)), func(string) int { return 1 })
			start := time.Now()
			w.assigned([]topicPartition{tp})
			tc.set(w)
			// Within the timeout nothing is stalled, whatever it waits on.
			w.check(start.Add(timeout / 2))
			if s := w.stalls(); len(s) != 0 {
				t.Fatalf("within the timeout: %+v", s)
			}
			w.check(start.Add(2 * timeout))
			w.check(start.Add(3 * timeout))
			stalls := w.stalls()
			if tc.want == "" {
				if len(stalls) != 0 {
					t.Fatalf("stalls %+v, want none", stalls)
				}
				return
			}
			if len(stalls) != 1 || stalls[0].WaitingOn != tc.want || stalls[0].Topic != "in" || stalls[0].Partition != 2 || stalls[0].SubTopology != 1 {
				t.Fatalf("stalls %+v, want in/2 of sub-topology 1 waiting on %s", stalls, tc.want)
			}
			if n := strings.Count(logs.String(), "query stalled"); n != 1 {
				t.Errorf("%d WARN lines over two checks, want 1:\n%s", n, logs.String())
			}
			// Committed progress clears it.
			w.enter(phasePoll)
			w.restore(tp, false)
			w.fetched(tp, 10, 60, 60, 60)
			w.committed(map[topicPartition]int64{tp: 60})
			w.check(start.Add(4 * timeout))
			if s := w.stalls(); len(s) != 0 {
				t.Fatalf("after progress: %+v", s)
			}
			if !strings.Contains(logs.String(), "query progressing again") {
				t.Errorf("no INFO line when the stall cleared:\n%s", logs.String())
			}
		})
	}
}

// TestStallWatchUnowned checks the broker's view while this instance
// owns no partition: lag that no member takes for the timeout waits on a
// rebalance; lag that moves does not.
func TestStallWatchUnowned(t *testing.T) {
	tp := topicPartition{"in", 0}
	lag := int64(100)
	w := newStallWatch("Q1", time.Second, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)), func(string) int { return 0 })
	w.groupLag = func() (map[topicPartition]int64, error) { return map[topicPartition]int64{tp: lag}, nil }
	w.spawn = func(f func()) { f() }
	start := w.started
	w.check(start.Add(1100 * time.Millisecond)) // first sight of the lag
	w.check(start.Add(1500 * time.Millisecond))
	if s := w.stalls(); len(s) != 0 {
		t.Fatalf("within the timeout of first seeing it: %+v", s)
	}
	w.check(start.Add(2200 * time.Millisecond))
	if s := w.stalls(); len(s) != 1 || s[0].WaitingOn != WaitRebalance || s[0].Lag != 100 {
		t.Fatalf("stalls %+v, want in/0 waiting on rebalance with lag 100", s)
	}
	lag = 40 // someone commits
	w.check(start.Add(2500 * time.Millisecond))
	if s := w.stalls(); len(s) != 0 {
		t.Fatalf("after the lag moved: %+v", s)
	}
}

// TestStallWatchIdleThenBurst checks that input arriving after a quiet
// spell longer than the timeout waits from its arrival, not from the last
// commit: the burst is not stalled while its commit is on the way, and
// input that then waits past the timeout is. Time is synctest's, so the
// quiet spells take none.
func TestStallWatchIdleThenBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tp := topicPartition{"in", 0}
		timeout := 2 * time.Second
		var logs bytes.Buffer
		w := newStallWatch("Q1", timeout, slog.New(slog.NewTextHandler(&logs, nil)), func(string) int { return 0 })
		w.spawn = func(f func()) { f() }
		end := int64(10)
		w.ends = func(tps []topicPartition) (map[topicPartition]partitionEnds, error) {
			return map[topicPartition]partitionEnds{tp: {end: end, stable: end}}, nil
		}
		expect := func(when string, want []Stall) {
			t.Helper()
			w.check(time.Now())
			if got := w.stalls(); !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
				t.Fatalf("%s: stalls %+v, want %+v", when, got, want)
			}
		}
		w.assigned([]topicPartition{tp})
		w.fetched(tp, 0, 10, 10, 10)
		w.committed(map[topicPartition]int64{tp: 10})
		time.Sleep(3 * timeout)
		expect("caught up, idle for 3 timeouts", nil)

		// One record arrives; its commit comes a second later.
		end = 11
		w.fetched(tp, 10, 11, 11, 11)
		expect("the record just fetched", nil)
		time.Sleep(time.Second)
		expect("a second after it arrived", nil)
		w.committed(map[topicPartition]int64{tp: 11})
		expect("committed", nil)

		// Quiet again; the broker then reports records the fetches have
		// not returned (the silent partition's end is asked of it).
		time.Sleep(3 * timeout)
		end = 15
		expect("input first seen", nil)
		seen := time.Now()
		time.Sleep(timeout - time.Second)
		expect("within the timeout of seeing it", nil)
		time.Sleep(2 * time.Second)
		expect("past the timeout of seeing it, nothing read",
			[]Stall{{Query: "Q1", Topic: "in", Partition: 0, WaitingOn: WaitFetch, Lag: 4, Since: seen}})
		if n := strings.Count(logs.String(), "query stalled"); n != 1 {
			t.Errorf("%d WARN lines, want 1:\n%s", n, logs.String())
		}
		w.fetched(tp, 11, 15, 15, 15)
		w.committed(map[topicPartition]int64{tp: 15})
		expect("caught up again", nil)

		// A record read after a quiet spell whose commit never comes is
		// a stall, counted from its arrival.
		time.Sleep(3 * timeout)
		end = 16
		w.fetched(tp, 15, 16, 16, 16)
		arrived := time.Now()
		time.Sleep(timeout - time.Second)
		expect("uncommitted, within the timeout", nil)
		time.Sleep(2 * time.Second)
		expect("uncommitted past the timeout",
			[]Stall{{Query: "Q1", Topic: "in", Partition: 0, WaitingOn: WaitTransaction, Lag: 1, Since: arrived}})
	})
}
