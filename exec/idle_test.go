package exec_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/exec"
)

// With an idle timeout, a task that gets no records moves its stream
// time on with the wall clock (the runner's, moved by Idle): the stream
// time at its last record plus the time since. The EMIT FINAL windows of
// windowedCountTopology (10s, grace 2s) then close without new data.
func TestIdleTimeoutClosesWindows(t *testing.T) {
	// step sends a booking of hotel at ts when hotel is set, else lets
	// idle pass.
	type step struct {
		hotel string
		ts    int64
		idle  time.Duration
		want  []out
	}
	withTimeout := []step{
		{hotel: "ritz", ts: 1_000},
		{hotel: "savoy", ts: 5_000}, // stream time 5s
		{idle: 999 * time.Millisecond},
		{idle: time.Millisecond},         // idle 1s: stream time 6s, nothing closes
		{idle: 5_998 * time.Millisecond}, // idle 6.998s: 11.998s, still open
		{idle: 2 * time.Millisecond, want: []out{ // idle 7s: 12s = end + grace of window 0
			hotelOut("ritz", 0, 1, "1.0", 1_000),
			hotelOut("savoy", 0, 1, "1.0", 5_000),
		}},
		{hotel: "savoy", ts: 13_000},     // a record restarts the idle clock
		{idle: 8_999 * time.Millisecond}, // 21.999s
		{idle: time.Millisecond, want: []out{hotelOut("savoy", 10_000, 1, "1.0", 13_000)}},
	}
	cases := []struct {
		name    string
		timeout time.Duration
		steps   []step
	}{
		{"idle timeout 1s", time.Second, withTimeout},
		{"no idle timeout", 0, []step{{hotel: "ritz", ts: 1_000}, {idle: time.Hour}, {idle: 24 * time.Hour}}},
		{"idle timeout longer than the silence", time.Hour, []step{{hotel: "ritz", ts: 1_000}, {idle: time.Hour - time.Millisecond}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := exec.NewMemoryRunner(openDB(t), quiet)
			topo := windowedCountTopology(t, true)
			topo.IdleTimeout = tc.timeout
			if err := m.Add(topo); err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				var got []out
				if s.hotel != "" {
					got = send(t, m, "bookings", s.hotel, `{"PRICE":1}`, s.ts)
				} else {
					recs, err := m.Idle(s.idle)
					if err != nil {
						t.Fatalf("step %d: Idle(%s): %v", i, s.idle, err)
					}
					got = outs(recs)
				}
				if len(got) == 0 && len(s.want) == 0 {
					continue
				}
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Errorf("step %d: produced (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}
