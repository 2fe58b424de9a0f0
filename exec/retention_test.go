package exec_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

const retentionStore = "CTAS_R-Aggregate-Materialize"

// SELECT hotel, COUNT(*) AS n, SUM(price) AS revenue FROM bookings
// GROUP BY hotel, as CREATE TABLE … WITH (RETENTION=…) plans it: a
// non-windowed aggregate whose keys expire retention ms (event time)
// after their last update.
func retentionTopology(t testing.TB, retention int64) *exec.Topology {
	src := bookingsSource()
	agg := countSumByHotel(t, src, retentionStore)
	agg.Retention = retention
	col := func(i int) expr.Eval { return func(row []any) any { return row[i] } }
	return &exec.Topology{
		QueryID: "CTAS_R", SinkTopic: "hotels",
		Stores: []exec.StoreSpec{{Name: agg.Store, Changelog: "CTAS_R-changelog", Partitions: 1}},
		Subs: []*exec.SubTopology{{ID: 0, Source: src, Nodes: []exec.Node{
			agg,
			&exec.ProjectNode{Exprs: []expr.Eval{col(0), col(1), col(2)}, Names: []string{"HOTEL", "N", "REVENUE"}, KeyInputs: map[int]int{0: 0}},
			&exec.SinkNode{
				Topic: "hotels", KeyFormat: "KAFKA", ValueFormat: "JSON",
				KeyCols:   []types.Column{{Name: "HOTEL", Type: types.StringType, Key: true}},
				ValueCols: []types.Column{{Name: "N", Type: types.BigIntType}, {Name: "REVENUE", Type: types.DoubleType}},
				KeyIdx:    []int{0}, ValueIdx: []int{1, 2},
			},
		}}},
	}
}

func hotelRow(hotel string, n int, revenue string, ts int64) out {
	return out{"hotels", hotel, fmt.Sprintf(`{"N":%d,"REVENUE":%s}`, n, revenue), ts}
}

func hotelGone(hotel string, ts int64) out { return out{"hotels", hotel, "<tombstone>", ts} }

// retentionScript: retention 10s. A key expires when stream time minus
// 10s reaches its latest event time; its tombstone carries that stream
// time and follows the output of the record that moved stream time.
var retentionScript = []booking{
	{"ritz", 1, 1_000, []out{hotelRow("ritz", 1, "1.0", 1_000)}},
	{"savoy", 2, 2_000, []out{hotelRow("savoy", 1, "2.0", 2_000)}},
	{"ritz", 3, 5_000, []out{hotelRow("ritz", 2, "4.0", 5_000)}},
	{"hilton", 4, 3_000, []out{hotelRow("hilton", 1, "4.0", 3_000)}},
	// Cutoff 1999: savoy (2000) is one millisecond short of expiring.
	{"ritz", 5, 11_999, []out{hotelRow("ritz", 3, "9.0", 11_999)}},
	// Cutoff 2000: savoy expires.
	{"ritz", 6, 12_000, []out{hotelRow("ritz", 4, "15.0", 12_000), hotelGone("savoy", 12_000)}},
	// An expired key starts from scratch.
	{"savoy", 7, 6_000, []out{hotelRow("savoy", 1, "7.0", 6_000)}},
	// Cutoff 3500 would expire hilton (3000), but its own record refreshes
	// it first.
	{"hilton", 8, 13_500, []out{hotelRow("hilton", 2, "12.0", 13_500)}},
	// A late record updates a live key without making it younger.
	{"ritz", 9, 2_500, []out{hotelRow("ritz", 5, "24.0", 12_000)}},
	// A new key already older than the cutoff lives for one record.
	{"ghost", 10, 1_000, []out{hotelRow("ghost", 1, "10.0", 1_000), hotelGone("ghost", 13_500)}},
	{"savoy", 11, 16_000, []out{hotelRow("savoy", 2, "18.0", 16_000)}},
	// Cutoff 12000: ritz (last at 12000) expires.
	{"grand", 12, 22_000, []out{hotelRow("grand", 1, "12.0", 22_000), hotelGone("ritz", 22_000)}},
	{"ritz", 13, 22_001, []out{hotelRow("ritz", 1, "13.0", 22_001)}},
	// Cutoff 30000: everything else expires, oldest first.
	{"ibis", 14, 40_000, []out{
		hotelRow("ibis", 1, "14.0", 40_000),
		hotelGone("hilton", 40_000), hotelGone("savoy", 40_000), hotelGone("grand", 40_000), hotelGone("ritz", 40_000),
	}},
	{"ibis", 15, 40_001, []out{hotelRow("ibis", 2, "29.0", 40_001)}},
}

func TestRetentionExpiresKeys(t *testing.T) {
	m := exec.NewMemoryRunner(openDB(t), quiet)
	if err := m.Add(retentionTopology(t, 10_000)); err != nil {
		t.Fatal(err)
	}
	runScript(t, m, retentionScript, -1, false)
	met := m.Metrics("CTAS_R")
	if got := met.Expired.Load(); got != 7 {
		t.Errorf("Expired = %d, want 7", got)
	}
	// A scan reads the entries it expires plus the first one it keeps.
	// Scans run only when the oldest key known to the operator is due:
	// once after Open (step 0), five times with tombstones (7 + 5
	// entries), and at steps 4, 7 and 10, where the key that was due had
	// been refreshed in the meantime (one entry each): 15.
	if got := exec.ExpiryVisited(met); got != 15 {
		t.Errorf("expiry scans visited %d index entries, want 15", got)
	}
	// Left: ibis, its data and its index entry.
	if got := liveKeys(t, m); got != 2 {
		t.Errorf("store holds %d keys, want 2", got)
	}
}

// Restarting anywhere, on local state or from the changelog, changes
// nothing: the time index and stream time are state too.
func TestRetentionRestart(t *testing.T) {
	for at := 1; at < len(retentionScript); at++ {
		for _, wipe := range []bool{false, true} {
			t.Run(fmt.Sprintf("restart before step %d/wipe=%v", at, wipe), func(t *testing.T) {
				m := exec.NewMemoryRunner(openDB(t), quiet)
				if err := m.Add(retentionTopology(t, 10_000)); err != nil {
					t.Fatal(err)
				}
				runScript(t, m, retentionScript, at, wipe)
				if got := m.Metrics("CTAS_R").Expired.Load(); got != 7 {
					t.Errorf("Expired = %d, want 7", got)
				}
			})
		}
	}
}

// Without retention nothing expires and no index is kept.
func TestNoRetentionKeepsKeys(t *testing.T) {
	m := exec.NewMemoryRunner(openDB(t), quiet)
	if err := m.Add(retentionTopology(t, 0)); err != nil {
		t.Fatal(err)
	}
	send(t, m, "bookings", "ritz", `{"PRICE":1}`, 1_000)
	got := send(t, m, "bookings", "savoy", `{"PRICE":1}`, 1_000_000_000)
	if want := []out{hotelRow("savoy", 1, "1.0", 1_000_000_000)}; !cmp.Equal(want, got) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := liveKeys(t, m); got != 2 {
		t.Errorf("store holds %d keys, want 2 (no index)", got)
	}
	if v := exec.ExpiryVisited(m.Metrics("CTAS_R")); v != 0 {
		t.Errorf("expiry scans ran without retention: %d visits", v)
	}
}

// State stays bounded: after 10,000 keys each updated once, at 1 ms
// apart, with a retention of 1s, the store holds only the keys inside
// the retention, and every scan read at most one entry it kept.
func TestRetentionBoundsState(t *testing.T) {
	const keys, retention = 10_000, 1_000
	m := exec.NewMemoryRunner(openDB(t), quiet)
	if err := m.Add(retentionTopology(t, retention)); err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		if _, err := m.Send(exec.Record{Topic: "bookings", Key: []byte("h" + strconv.Itoa(i)), Value: []byte(`{"PRICE":1}`), Timestamp: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Stream time 9999, cutoff 8999: keys 9000…9999 are live.
	if got, want := dataKeys(t, m), retention; got != want {
		t.Errorf("after %d keys: %d live keys, want %d", keys, got, want)
	}
	met := m.Metrics("CTAS_R")
	if got, want := met.Expired.Load(), int64(keys-retention); got != want {
		t.Errorf("Expired = %d, want %d", got, want)
	}
	// One scan per record from ts 1000 on (the expired key and the next),
	// plus the first record's.
	if got, want := exec.ExpiryVisited(met), int64(1+2*(keys-retention)); got != want {
		t.Errorf("expiry scans visited %d entries, want %d", got, want)
	}
	// Stream time moves past every key's retention (cutoff 10199): all
	// of them expire at once, and only the new key is left.
	got, err := m.Send(exec.Record{Topic: "bookings", Key: []byte("late"), Value: []byte(`{"PRICE":1}`), Timestamp: 10_199 + retention})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1+retention {
		t.Errorf("moving stream time far produced %d records, want the update and %d tombstones", len(got), retention)
	}
	if got := dataKeys(t, m); got != 1 {
		t.Errorf("after stream time moved past every key: %d live keys, want 1", got)
	}
	if got := liveKeys(t, m); got != 2 {
		t.Errorf("store holds %d entries, want 2 (data and index of the last key)", got)
	}
	t.Logf("approximate state size at the end: %d bytes", m.DB.Store(retentionStore, 0).ApproxBytes())
}

// liveKeys counts every entry of the aggregate's store: data and index.
func liveKeys(t testing.TB, m *exec.MemoryRunner) int {
	t.Helper()
	n := 0
	if err := m.DB.Store(retentionStore, 0).Range(nil, func(_, _ []byte) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}

// dataKeys counts the groups with state (keys with the data tag 0x00).
func dataKeys(t testing.TB, m *exec.MemoryRunner) int {
	t.Helper()
	n := 0
	if err := m.DB.Store(retentionStore, 0).Range([]byte{0}, func(_, _ []byte) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}
