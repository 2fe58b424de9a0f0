package exec_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// windowKeys counts the windows a windowed count's store holds.
func windowKeys(t testing.TB, m *exec.MemoryRunner) int {
	t.Helper()
	n := 0
	if err := m.DB.Store("CTAS_W-Aggregate-Materialize", 0).Range(nil, func(_, _ []byte) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}

// Windows past retention leave the store without changelog tombstones
// (the windowed changelog is compact,delete and ages them out). A restore
// from the changelog brings them back; the task drops them again as it
// opens, and a record for one of them is late, as before the restart.
func TestExpiredWindowsWriteNoTombstones(t *testing.T) {
	for _, wipe := range []bool{false, true} {
		t.Run(fmt.Sprintf("wipe=%v", wipe), func(t *testing.T) {
			m := exec.NewMemoryRunner(openDB(t), quiet)
			topo := windowedCountTopology(t, false)
			if err := m.Add(topo); err != nil {
				t.Fatal(err)
			}
			// Size 10s, grace 2s: a window is kept until stream time
			// reaches its end + 12s.
			runScript(t, m, []booking{
				{"ritz", 10, 1_000, []out{hotelOut("ritz", 0, 1, "10.0", 1_000)}},
				{"savoy", 7, 5_000, []out{hotelOut("savoy", 0, 1, "7.0", 5_000)}},
				{"ritz", 5, 11_000, []out{hotelOut("ritz", 10_000, 1, "5.0", 11_000)}},
				// Cutoff 13000: both windows at 0 expire.
				{"ritz", 1, 25_000, []out{hotelOut("ritz", 20_000, 1, "1.0", 25_000)}},
			}, -1, false)
			expiredWithoutTombstones(t, m, 2)
			if got := windowKeys(t, m); got != 2 {
				t.Errorf("store holds %d windows after expiry, want 2", got)
			}
			checkStandby(t, m, topo, 2)
			if err := m.Restart(wipe); err != nil {
				t.Fatal(err)
			}
			// From the changelog the two expired windows come back, and
			// the task drops them as it opens (stream time is in the
			// checkpoint): counted as expired again.
			if got := windowKeys(t, m); got != 2 {
				t.Errorf("store holds %d windows after the restart, want 2", got)
			}
			expiredAgain(t, m, wipe, 2)
			runScript(t, m, []booking{
				{"savoy", 2, 25_001, []out{hotelOut("savoy", 20_000, 1, "2.0", 25_001)}},
				{"ritz", 50, 9_000, nil}, // window 0: too late, not revived
			}, -1, false)
			if got := windowKeys(t, m); got != 3 {
				t.Errorf("store holds %d windows after the first record, want 3", got)
			}
			if got := m.Metrics("CTAS_W").LateDropped.Load(); got != 1 {
				t.Errorf("LateDropped = %d, want 1", got)
			}
		})
	}
}

// sessionCountTopology is windowedCountTopology over session windows of
// gap 10s and grace 2s, with retention (0: gap + grace).
func sessionCountTopology(t testing.TB, retention int64) *exec.Topology {
	topo := windowedCountTopology(t, false)
	agg := topo.Subs[0].Nodes[0].(*exec.AggregateNode)
	agg.Window = &exec.WindowSpec{Kind: exec.Session, Size: 10_000, Grace: 2_000, Retention: retention}
	// A retraction carries the key and the session's bounds.
	topo.Subs[0].Nodes[1].(*exec.ProjectNode).KeyInputs = map[int]int{0: 0, 3: 3, 4: 4}
	topo.Subs[0].Nodes[2].(*exec.SinkNode).Window = exec.SessionWindowed
	return topo
}

// sessOut is a session count's output record for hotel's session [start, end].
func sessOut(hotel string, start, end int64, n int, revenue string, ts int64) out {
	key := string(format.AppendSessionWindow([]byte(hotel), start, end))
	if n == 0 {
		return out{"hotel_10s", key, "<tombstone>", ts}
	}
	return out{"hotel_10s", key, fmt.Sprintf(`{"N":%d,"REVENUE":%s}`, n, revenue), ts}
}

// Sessions past retention leave the store without changelog tombstones,
// whether they expire as they close (the default retention, gap + grace)
// or later from the index by end (a longer RETENTION). A restore from the
// changelog brings them back; the task drops them as it opens, and a
// record for one of them is late.
func TestExpiredSessionsWriteNoTombstones(t *testing.T) {
	for _, retention := range []int64{0, 30_000} {
		for _, wipe := range []bool{false, true} {
			t.Run(fmt.Sprintf("retention=%d/wipe=%v", retention, wipe), func(t *testing.T) {
				m := exec.NewMemoryRunner(openDB(t), quiet)
				topo := sessionCountTopology(t, retention)
				if err := m.Add(topo); err != nil {
					t.Fatal(err)
				}
				runScript(t, m, []booking{
					{"ritz", 10, 1_000, []out{sessOut("ritz", 1_000, 1_000, 1, "10.0", 1_000)}},
					{"savoy", 7, 5_000, []out{sessOut("savoy", 5_000, 5_000, 1, "7.0", 5_000)}},
					// The session grows under the key of its start.
					{"ritz", 5, 8_000, []out{sessOut("ritz", 1_000, 1_000, 0, "", 1_000), sessOut("ritz", 1_000, 8_000, 2, "15.0", 8_000)}},
					// Closed at 28000: both sessions close; with retention
					// 12000 they expire too.
					{"ritz", 1, 40_000, []out{sessOut("ritz", 40_000, 40_000, 1, "1.0", 40_000)}},
					// Cutoff 15000 with retention 30000: they expire now.
					{"savoy", 2, 45_000, []out{sessOut("savoy", 45_000, 45_000, 1, "2.0", 45_000)}},
				}, -1, false)
				expiredWithoutTombstones(t, m, 2)
				if got := windowKeys(t, m); got != 2 {
					t.Errorf("store holds %d keys after expiry, want 2 (the two live sessions)", got)
				}
				checkStandby(t, m, topo, 2)
				if err := m.Restart(wipe); err != nil {
					t.Fatal(err)
				}
				if got := windowKeys(t, m); got != 2 {
					t.Errorf("store holds %d keys after the restart, want 2", got)
				}
				expiredAgain(t, m, wipe, 2)
				runScript(t, m, []booking{
					{"ritz", 50, 3_000, nil}, // the expired session's: too late, not revived
					{"ritz", 3, 45_001, []out{sessOut("ritz", 40_000, 40_000, 0, "", 40_000), sessOut("ritz", 40_000, 45_001, 2, "4.0", 45_001)}},
				}, -1, false)
				if got := windowKeys(t, m); got != 2 {
					t.Errorf("store holds %d keys at the end, want 2", got)
				}
				if got := m.Metrics("CTAS_W").LateDropped.Load(); got != 1 {
					t.Errorf("LateDropped = %d, want 1", got)
				}
			})
		}
	}
}

// Sliding windows past retention and the records no new window can cover
// leave the store without changelog tombstones; a restore brings them
// back and the task drops them again as it opens.
func TestExpiredSlidingWindowsWriteNoTombstones(t *testing.T) {
	for _, wipe := range []bool{false, true} {
		t.Run(fmt.Sprintf("wipe=%v", wipe), func(t *testing.T) {
			topo := windowedCountTopology(t, false)
			topo.Subs[0].Nodes[0].(*exec.AggregateNode).Window = &exec.WindowSpec{Kind: exec.Sliding, Size: 10_000, Grace: 2_000}
			m := exec.NewMemoryRunner(openDB(t), quiet)
			if err := m.Add(topo); err != nil {
				t.Fatal(err)
			}
			in := func(hotel string, ts int64) {
				t.Helper()
				send(t, m, "bookings", hotel, `{"PRICE":1}`, ts)
			}
			in("ritz", 1_000)
			in("savoy", 5_000)
			// Retention and pruning age 12001: the windows ending at 1000
			// and 5000 expire, and their records are pruned.
			in("ritz", 40_000)
			expiredWithoutTombstones(t, m, 2)
			// ritz's window [30000, 40000], its index key by end, its
			// record at 40000 and the record's index key by time.
			if got := windowKeys(t, m); got != 4 {
				t.Errorf("store holds %d keys after expiry, want 4", got)
			}
			checkStandby(t, m, topo, 2)
			if err := m.Restart(wipe); err != nil {
				t.Fatal(err)
			}
			if got := windowKeys(t, m); got != 4 {
				t.Errorf("store holds %d keys after the restart, want 4", got)
			}
			expiredAgain(t, m, wipe, 2)
			if got := send(t, m, "bookings", "ritz", `{"PRICE":1}`, 3_000); len(got) != 0 {
				t.Errorf("a record for an expired window produced %v", got)
			}
			if got := m.Metrics("CTAS_W").LateDropped.Load(); got != 1 {
				t.Errorf("LateDropped = %d, want 1", got)
			}
			if got := windowKeys(t, m); got != 4 {
				t.Errorf("store holds %d keys at the end, want 4", got)
			}
		})
	}
}

// joinTopology is SELECT b.hotel, b.price AS lp, p.price AS rp FROM
// bookings b JOIN payments p WITHIN 10 SECONDS GRACE PERIOD 2 SECONDS ON
// b.hotel = p.hotel: each side keeps its rows 22s of its event time.
func joinTopology() *exec.Topology {
	left, right := bookingsSource(), bookingsSource()
	right.Topic = "payments"
	// A side's row: HOTEL, PRICE, ROWTIME, ROWPARTITION, ROWOFFSET.
	join := &exec.JoinNode{
		Type:   exec.InnerJoin,
		Left:   exec.JoinSide{Name: "B", Width: 5, Store: "CSAS_J-L"},
		Right:  exec.JoinSide{Name: "P", Width: 5, Store: "CSAS_J-R"},
		Before: 10_000, After: 10_000, Grace: 2_000,
	}
	return &exec.Topology{
		QueryID: "CSAS_J", SinkTopic: "joined",
		Stores: []exec.StoreSpec{
			{Name: "CSAS_J-L", Changelog: "CSAS_J-L-changelog", Windowed: true, Partitions: 1},
			{Name: "CSAS_J-R", Changelog: "CSAS_J-R-changelog", Windowed: true, Partitions: 1},
		},
		Subs: []*exec.SubTopology{{ID: 0, Source: left, Sides: []*exec.SideInput{{Source: right, Node: 0, Side: 1}}, Nodes: []exec.Node{
			join,
			&exec.SinkNode{
				Topic: "joined", KeyFormat: "KAFKA", ValueFormat: "JSON",
				KeyCols:   []types.Column{{Name: "HOTEL", Type: types.StringType, Key: true}},
				ValueCols: []types.Column{{Name: "LP", Type: types.DoubleType}, {Name: "RP", Type: types.DoubleType}},
				KeyIdx:    []int{10}, ValueIdx: []int{1, 6},
			},
		}}},
	}
}

// joinKeys counts what a join side's store holds.
func joinKeys(t testing.TB, m *exec.MemoryRunner, store string) int {
	t.Helper()
	n := 0
	if err := m.DB.Store(store, 0).Range(nil, func(_, _ []byte) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}

// A stream-stream join forgets rows past its window without changelog
// tombstones; a restore brings them back and the task forgets them again
// as it opens, and they join nothing.
func TestExpiredJoinRowsWriteNoTombstones(t *testing.T) {
	for _, wipe := range []bool{false, true} {
		t.Run(fmt.Sprintf("wipe=%v", wipe), func(t *testing.T) {
			m := exec.NewMemoryRunner(openDB(t), quiet)
			topo := joinTopology()
			if err := m.Add(topo); err != nil {
				t.Fatal(err)
			}
			joined := func(hotel, value string, ts int64) []out { return []out{{"joined", hotel, value, ts}} }
			for _, step := range []struct {
				topic, hotel string
				price        float64
				ts           int64
				want         []out
			}{
				{"bookings", "ritz", 1, 1_000, nil},
				{"payments", "ritz", 2, 2_000, joined("ritz", `{"LP":1.0,"RP":2.0}`, 2_000)},
				{"bookings", "savoy", 3, 5_000, nil},
				// Bookings' time 40000: its rows before 18001 go.
				{"bookings", "ritz", 4, 40_000, nil},
				// Payments' time 50000: its row at 2000 goes.
				{"payments", "savoy", 5, 50_000, nil},
			} {
				got := send(t, m, step.topic, step.hotel, fmt.Sprintf(`{"PRICE":%v}`, step.price), step.ts)
				if len(got) == 0 && len(step.want) == 0 {
					continue
				}
				if diff := cmp.Diff(step.want, got); diff != "" {
					t.Errorf("%s %s @%d (-want +got):\n%s", step.topic, step.hotel, step.ts, diff)
				}
			}
			for _, topic := range []string{"CSAS_J-L-changelog", "CSAS_J-R-changelog"} {
				changes := exec.ChangelogRecords(m, topic)
				if len(changes) == 0 {
					t.Fatalf("%s took nothing", topic)
				}
				for _, c := range changes {
					if c.Delete {
						t.Errorf("%s holds a tombstone for %x", topic, c.Key)
					}
				}
			}
			// Each side: its newest event time and the rows it keeps.
			check := func(when string, left, right int) {
				t.Helper()
				for store, want := range map[string]int{"CSAS_J-L": left, "CSAS_J-R": right} {
					if got := joinKeys(t, m, store); got != want {
						t.Errorf("%s: %s holds %d keys, want %d", when, store, got, want)
					}
				}
			}
			check("after expiry", 2, 2)
			checkStandby(t, m, topo, 0)
			if err := m.Restart(wipe); err != nil {
				t.Fatal(err)
			}
			check("after the restart", 2, 2)
			// A late booking joins nothing, and the restored payment at
			// 2000 is not matched by a booking inside its window either.
			if got := send(t, m, "bookings", "ritz", `{"PRICE":6}`, 3_000); len(got) != 0 {
				t.Errorf("a late booking produced %v", got)
			}
			if got := m.Metrics("CSAS_J").LateDropped.Load(); got != 1 {
				t.Errorf("LateDropped = %d, want 1", got)
			}
			want := joined("savoy", `{"LP":7.0,"RP":5.0}`, 50_001)
			if got := send(t, m, "bookings", "savoy", `{"PRICE":7}`, 50_001); !cmp.Equal(want, got) {
				t.Errorf("a booking inside the payment's window: %v, want %v", got, want)
			}
			check("at the end", 3, 2)
		})
	}
}

// keysOf lists what a store holds, in key order.
func keysOf(t testing.TB, s *state.Store) []string {
	t.Helper()
	var keys []string
	if err := s.Range(nil, func(k, _ []byte) bool { keys = append(keys, fmt.Sprintf("%x", k)); return true }); err != nil {
		t.Fatal(err)
	}
	return keys
}

// checkStandby restores topo's changelogs into another DB as a standby's
// catch-up does, which then drops the state past retention: the standby
// must hold exactly what the owner's stores hold, its checkpoint where
// the restore left it, having dropped wantExpired windows or sessions.
func checkStandby(t *testing.T, m *exec.MemoryRunner, topo *exec.Topology, wantExpired int64) {
	t.Helper()
	standby := openDB(t)
	n, err := exec.RestoreStandby(m, topo, standby)
	if err != nil {
		t.Fatal(err)
	}
	if n != wantExpired {
		t.Errorf("the standby dropped %d windows or sessions, want %d", n, wantExpired)
	}
	for _, spec := range topo.Stores {
		if diff := cmp.Diff(keysOf(t, m.DB.Store(spec.Name, 0)), keysOf(t, standby.Store(spec.Name, 0))); diff != "" {
			t.Errorf("standby %s (-owner +standby):\n%s", spec.Name, diff)
		}
		cp, err := standby.Store(spec.Name, 0).Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(len(exec.ChangelogRecords(m, spec.Changelog))); cp.ChangelogOffset != want {
			t.Errorf("standby %s checkpoint at changelog offset %d, want %d", spec.Name, cp.ChangelogOffset, want)
		}
	}
}

// expiredWithoutTombstones checks that CTAS_W expired want windows or
// sessions and that its changelog, which took writes, holds no tombstone.
func expiredWithoutTombstones(t *testing.T, m *exec.MemoryRunner, want int64) {
	t.Helper()
	if got := m.Metrics("CTAS_W").Expired.Load(); got != want {
		t.Errorf("Expired = %d, want %d", got, want)
	}
	changes := exec.ChangelogRecords(m, "CTAS_W-changelog")
	if len(changes) == 0 {
		t.Fatal("the changelog took nothing")
	}
	for _, c := range changes {
		if c.Delete {
			t.Errorf("changelog holds a tombstone for %x", c.Key)
		}
	}
}

// expiredAgain checks CTAS_W's Expired after a restart: the want expired
// before it, twice that when the restart wiped the store and the restore
// brought them back for the task to drop again as it opened.
func expiredAgain(t *testing.T, m *exec.MemoryRunner, wipe bool, want int64) {
	t.Helper()
	if wipe {
		want *= 2
	}
	if got := m.Metrics("CTAS_W").Expired.Load(); got != want {
		t.Errorf("Expired after the restart = %d, want %d", got, want)
	}
}
