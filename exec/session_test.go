package exec

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// sessionInput is a run of records of three keys through a session count
// (gap 10, grace 5, retention 15): merges, a record inside a session, a
// late record, a record that finds its key's session closed, and a last
// record that closes everything before it.
var sessionInput = []struct {
	key string
	ts  int64
}{
	{"a", 0}, {"b", 3}, {"a", 8}, {"a", 30}, // commit after these
	{"a", 14}, // late: stream time 30, its session would end at 14
	{"a", 20}, {"b", 36}, {"a", 22}, {"c", 40}, {"c", 52},
	{"b", 44}, // b [36,36] closed at 51: a new session
	{"a", 100},
}

// sessionCommitAfter is how many records of sessionInput the restarted
// runs commit before they stop.
const sessionCommitAfter = 4

// TestSessionIndexFollowsStore runs sessionInput through the session
// operator straight, and with the task stopped after a commit in three
// ways: closed and reopened on the same store; the writes since the commit
// discarded (an aborted transaction) and the records after it processed
// again; Badger closed without those writes (a crash) and opened again.
// Each new operator builds its index of sessions from what the store
// holds; every run must give the same output, and leave in the store only
// the session retention has not ended. reopen-small reopens with an
// expiry queue of one session refilled one session at a time, so that
// closed sessions overflow it and expire through the scans of its gap.
// abort-same goes on with the same operator after the discard, which
// must build its index again. old-layout rewrites the committed store in
// the layout sessions had before they kept one key as they extend, and
// the new operator must read it (migrateSessions).
func TestSessionIndexFollowsStore(t *testing.T) {
	wantChanges := []string{
		"a [0,0] 1 @0", "b [3,3] 1 @3",
		"a [0,0] tombstone @0", "a [0,8] 2 @8",
		"a [30,30] 1 @30",
		"a [30,30] tombstone @30", "a [20,30] 2 @30",
		"b [36,36] 1 @36",
		"a [20,30] 3 @30",
		"c [40,40] 1 @40", "c [52,52] 1 @52", "b [44,44] 1 @44",
		"a [100,100] 1 @100",
	}
	wantFinal := []string{
		"b [3,3] 1 @3", "a [0,8] 2 @8", // closed at stream time 30
		"a [20,30] 3 @30", "b [36,36] 1 @36", // closed at 52
		"c [40,40] 1 @40", "b [44,44] 1 @44", "c [52,52] 1 @52", // closed at 100
	}
	for _, final := range []bool{false, true} {
		want := wantChanges
		if final {
			want = wantFinal
		}
		for _, stop := range []string{"", "reopen", "abort", "abort-same", "crash", "reopen-small", "old-layout"} {
			for _, retention := range []int64{0, 40} {
				t.Run(fmt.Sprintf("final=%v/%s/retention=%d", final, stop, retention), func(t *testing.T) {
					got, stored := runSessions(t, final, stop, retention)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("output (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff([]string{"a [100,100]"}, stored); diff != "" {
						t.Fatalf("sessions left in the store (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

// runSessions runs sessionInput, stopping after sessionCommitAfter records
// as stop says ("" runs straight), and returns the output and the
// sessions the store holds at the end. A retention of 40 keeps the
// sessions closed at the stop (ending at 3 and 8) in the store past it.
func runSessions(t *testing.T, final bool, stop string, retention int64) (out, stored []string) {
	t.Helper()
	dir := t.TempDir()
	db := openState(t, dir)
	defer func() { _ = db.Close() }()
	count, _ := countAndSum(t, types.BigIntType)
	node := &AggregateNode{
		Store: "sessions", KeyCols: []int{0}, KeyNames: []string{"K"},
		Aggs:      []AggCall{{Agg: count, Text: "COUNT(*)"}},
		Window:    &WindowSpec{Kind: Session, Size: 10, Grace: 5, Retention: retention},
		EmitFinal: final,
	}
	sink := &countingOp{fn: func(r *Row) {
		k, start, end := r.Cols[0], r.Cols[len(r.Cols)-2], r.Cols[len(r.Cols)-1]
		if r.Tombstone {
			out = append(out, fmt.Sprintf("%v [%v,%v] tombstone @%d", k, start, end, r.Ts))
			return
		}
		out = append(out, fmt.Sprintf("%v [%v,%v] %v @%d", k, start, end, r.Cols[1], r.Ts))
	}}
	tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{}}
	var op Operator
	var err error
	open := func() {
		tc.stores["sessions"] = db.Store("sessions", 0)
		if op, err = node.New(sink); err != nil {
			t.Fatal(err)
		}
		if err := op.Open(tc); err != nil {
			t.Fatal(err)
		}
		if stop == "reopen-small" {
			sa := op.(*sessionAggregate)
			sa.expiry.limit, sa.expiry.refill = 1, 1
		}
	}
	process := func(from, to int) {
		for _, in := range sessionInput[from:to] {
			tc.StreamTime = max(tc.StreamTime, in.ts)
			if err := op.Process(tc, &Row{Cols: []any{in.key}, Ts: in.ts}); err != nil {
				t.Fatal(err)
			}
			if err := op.AdvanceTime(tc); err != nil {
				t.Fatal(err)
			}
		}
	}
	tc.StreamTime = -1 << 63
	open()
	if stop == "" {
		process(0, len(sessionInput))
	} else {
		process(0, sessionCommitAfter)
		// As a task does: the changelog takes the store's writes
		// (the operator's write-back first), then the commit.
		tc.stores["sessions"].Pending()
		if err := tc.stores["sessions"].Commit(state.Checkpoint{}); err != nil {
			t.Fatal(err)
		}
		committed, committedTime := len(out), tc.StreamTime
		switch stop {
		case "reopen", "reopen-small":
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		case "abort", "abort-same":
			process(sessionCommitAfter, len(sessionInput)-1)
			tc.stores["sessions"].Discard()
		case "old-layout":
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
			writeOldSessionLayout(t, tc.stores["sessions"])
		case "crash":
			process(sessionCommitAfter, len(sessionInput)-1)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openState(t, dir)
		}
		// What was not committed is gone, output included; stream time
		// comes back from the checkpoint.
		out, tc.StreamTime = out[:committed], committedTime
		if stop != "abort-same" {
			open()
		}
		process(sessionCommitAfter, len(sessionInput))
	}
	err = tc.stores["sessions"].Range([]byte{sessionDataTag}, func(k, v []byte) bool {
		gk, start, _ := splitSessionKey(k)
		end, _, _ := splitSessionState(v)
		group, _, err := types.DecodeValues(gk)
		if err != nil {
			t.Errorf("session key %x: %v", k, err)
			return false
		}
		stored = append(stored, fmt.Sprintf("%v [%d,%d]", group[0], start, end))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing else is left: no index key by end of an expired or open
	// session, no key of the old layout.
	err = tc.stores["sessions"].Range(nil, func(k, _ []byte) bool {
		if k[0] != sessionDataTag {
			t.Errorf("store keeps %x besides its sessions", k)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, stored
}

// writeOldSessionLayout rewrites a session store in the layout the operator
// wrote before sessions kept one key as they extend: 0x00 ‖ group key ‖
// start ‖ end → maxTs ‖ accumulators, and 0x01 ‖ end ‖ group key ‖ start
// for every session, closed or open. It commits the rewrite.
func writeOldSessionLayout(t *testing.T, store *state.Store) {
	t.Helper()
	type session struct {
		key        []byte
		start, end int64
		state      []byte
	}
	var sessions []session
	err := store.Range([]byte{sessionDataTag}, func(k, v []byte) bool {
		gk, start, ok := splitSessionKey(k)
		end, rest, okV := splitSessionState(v)
		if !ok || !okV {
			t.Errorf("malformed session %x → %x", k, v)
			return false
		}
		sessions = append(sessions, session{bytes.Clone(gk), start, end, bytes.Clone(rest)})
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) == 0 {
		t.Fatal("no sessions to rewrite")
	}
	for _, s := range sessions {
		store.Delete(sessionKey(nil, s.key, s.start))
		old := appendTime(appendTime(append([]byte{sessionOldDataTag}, s.key...), s.start), s.end)
		store.Put(old, s.state)
		store.Put(sessionIndexKey(nil, s.end, s.key, s.start), nil)
	}
	store.Pending()
	if err := store.Commit(state.Checkpoint{}); err != nil {
		t.Fatal(err)
	}
}

// TestSessionWritesOncePerCommit extends one session record by record and
// merges two, and checks what the changelog takes at each commit: one write
// per session changed since the last, under a key that stays as the
// session's end moves, the merged-away session's delete, and nothing else.
// Every record used to delete and rewrite the session under its new end,
// and its index key by end with it.
func TestSessionWritesOncePerCommit(t *testing.T) {
	for _, final := range []bool{false, true} {
		t.Run(fmt.Sprintf("final=%v", final), func(t *testing.T) {
			db := openState(t, t.TempDir())
			defer func() { _ = db.Close() }()
			count, _ := countAndSum(t, types.BigIntType)
			node := &AggregateNode{
				Store: "sessions", KeyCols: []int{0}, KeyNames: []string{"K"},
				Aggs:      []AggCall{{Agg: count, Text: "COUNT(*)"}},
				Window:    &WindowSpec{Kind: Session, Size: 10, Grace: 1000},
				EmitFinal: final,
			}
			store := db.Store("sessions", 0)
			tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{"sessions": store}}
			op, err := node.New(&countingOp{fn: func(*Row) {}})
			if err != nil {
				t.Fatal(err)
			}
			if err := op.Open(tc); err != nil {
				t.Fatal(err)
			}
			tc.StreamTime = -1 << 63
			process := func(key string, times ...int64) {
				for _, ts := range times {
					tc.StreamTime = max(tc.StreamTime, ts)
					if err := op.Process(tc, &Row{Cols: []any{key}, Ts: ts}); err != nil {
						t.Fatal(err)
					}
					if err := op.AdvanceTime(tc); err != nil {
						t.Fatal(err)
					}
				}
			}
			gk := func(k string) []byte { return types.AppendValues(nil, []any{k}) }
			put := func(k string, start, end, maxTs, n int64) string {
				return fmt.Sprintf("put %x = %x", sessionKey(nil, gk(k), start), appendSessionState(nil, end, maxTs, []any{n}))
			}
			commit := func() []string {
				var got []string
				for _, c := range store.Pending() {
					if c.Delete {
						got = append(got, fmt.Sprintf("delete %x", c.Key))
					} else {
						got = append(got, fmt.Sprintf("put %x = %x", c.Key, c.Value))
					}
				}
				if err := store.Commit(state.Checkpoint{}); err != nil {
					t.Fatal(err)
				}
				return got
			}
			// a's session [0, 50] grows by a record every 5 ms; b's by one.
			process("a", 0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50)
			process("b", 7)
			if diff := cmp.Diff([]string{put("a", 0, 50, 50, 11), put("b", 7, 7, 7, 1)}, commit()); diff != "" {
				t.Fatalf("first commit (-want +got):\n%s", diff)
			}
			// a [70, 80] starts apart, then a record at 60 joins it to
			// [0, 50]: one session [0, 80], the later one's key deleted.
			process("a", 70, 75, 80)
			if diff := cmp.Diff([]string{put("a", 70, 80, 80, 3)}, commit()); diff != "" {
				t.Fatalf("second commit (-want +got):\n%s", diff)
			}
			process("a", 60)
			want := []string{put("a", 0, 80, 80, 15), fmt.Sprintf("delete %x", sessionKey(nil, gk("a"), 70))}
			if diff := cmp.Diff(want, commit()); diff != "" {
				t.Fatalf("third commit (-want +got):\n%s", diff)
			}
		})
	}
}
