package state

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// flushOps applies each interval's ops to s and flushes it with source
// offset src/0 = 10·(i+1); it returns the number of records produced.
func flushOps(t *testing.T, k *testKafka, s *Store, log Changelog, intervals [][]op) int64 {
	t.Helper()
	var produced int64
	for i, ops := range intervals {
		apply(s, ops)
		produced += int64(s.PendingCount())
		if err := s.Flush(testCtx(t), k.prod, log, map[string]int64{"src/0": int64(10 * (i + 1))}); err != nil {
			t.Fatal(err)
		}
	}
	return produced
}

// durableCheckpoint reads the checkpoint straight from Badger: what a
// process restarting now would find.
func durableCheckpoint(t *testing.T, s *Store) (Checkpoint, bool) {
	t.Helper()
	var cp Checkpoint
	found := false
	err := s.db.bdb.View(func(txn *badger.Txn) error {
		item, err := txn.Get(s.ckey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return item.Value(func(v []byte) error {
			cp, err = decodeCheckpoint(v)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return cp, found
}

func collectBetween(t *testing.T, s *Store, start, end string) []kv {
	t.Helper()
	var out []kv
	if err := s.RangeBetween([]byte(start), []byte(end), func(k, v []byte) bool {
		out = append(out, kv{string(k), string(v)})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// readState is everything a task can read of a store partition.
type readState struct {
	All        []kv
	BToE       []kv // RangeBetween("b", "e")
	Get        map[string]string
	Absent     []string
	Checkpoint Checkpoint
	Keys       int64 // CommittedStats(nil)
	Bytes      int64
}

func read(t *testing.T, s *Store, keys []string) readState {
	t.Helper()
	st := readState{All: collect(t, s, nil), BToE: collectBetween(t, s, "b", "e"), Get: map[string]string{}}
	for _, k := range keys {
		if v, ok := mustGet(t, s, k); ok {
			st.Get[k] = v
		} else {
			st.Absent = append(st.Absent, k)
		}
	}
	cp, err := s.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	st.Checkpoint = cp
	if st.Keys, st.Bytes, err = s.CommittedStats(nil); err != nil {
		t.Fatal(err)
	}
	return st
}

// A cold restore returns with its data in memory; reads, commits and
// checkpoints go through the memory layers (overlay > committed after the
// restore > restored) until the build has written Badger, and the durable
// checkpoint appears only with the data.
func TestColdRestoreServesFromMemoryUntilBuilt(t *testing.T) {
	k := startKafka(t)
	log := Changelog{Topic: testkafka.Name(t, "cold-changelog"), Partition: 0}
	if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	owner := openDB(t, t.TempDir()).Store("agg", 0)
	produced := flushOps(t, k, owner, log, [][]op{
		{{k: "a", v: "1"}, {k: "b", v: "1"}, {k: "c", v: "1"}, {k: "d", v: "1"}},
		{{k: "b", v: "2"}, {k: "c", del: true}, {k: "e", v: ""}},
	})
	keys := []string{"a", "b", "c", "d", "e", "f"}

	dir := t.TempDir()
	db := openDB(t, dir)
	gate := make(chan struct{})
	db.buildGate = gate
	dst := db.Store("agg", 0)
	n, err := dst.Restore(testCtx(t), k.conn, log, nil)
	if err != nil || n != produced {
		t.Fatalf("Restore = %d, %v; want %d, nil", n, err, produced)
	}

	steps := []struct {
		name string
		do   func(s *Store) error
		want readState
	}{
		{
			name: "restored, build held",
			do:   func(*Store) error { return nil },
			want: readState{
				All:        []kv{{"a", "1"}, {"b", "2"}, {"d", "1"}, {"e", ""}},
				BToE:       []kv{{"b", "2"}, {"d", "1"}},
				Get:        map[string]string{"a": "1", "b": "2", "d": "1", "e": ""},
				Absent:     []string{"c", "f"},
				Checkpoint: Checkpoint{ChangelogOffset: 7, SourceOffsets: map[string]int64{"src/0": 20}},
				Keys:       4, Bytes: 7,
			},
		},
		{
			name: "committed while the build runs",
			do: func(s *Store) error {
				apply(s, []op{{k: "a", v: "9"}, {k: "d", del: true}, {k: "f", v: "6"}, {k: "c", del: true}})
				return s.Commit(Checkpoint{ChangelogOffset: 11, SourceOffsets: map[string]int64{"src/0": 30}})
			},
			want: readState{
				All:        []kv{{"a", "9"}, {"b", "2"}, {"e", ""}, {"f", "6"}},
				BToE:       []kv{{"b", "2"}},
				Get:        map[string]string{"a": "9", "b": "2", "e": "", "f": "6"},
				Absent:     []string{"c", "d"},
				Checkpoint: Checkpoint{ChangelogOffset: 11, SourceOffsets: map[string]int64{"src/0": 30}},
				Keys:       4, Bytes: 7,
			},
		},
		{
			name: "overlay on top",
			do: func(s *Store) error {
				apply(s, []op{{k: "b", v: "new"}, {k: "e", del: true}, {k: "d", v: "back"}})
				return nil
			},
			want: readState{
				All:        []kv{{"a", "9"}, {"b", "new"}, {"d", "back"}, {"f", "6"}},
				BToE:       []kv{{"b", "new"}, {"d", "back"}},
				Get:        map[string]string{"a": "9", "b": "new", "d": "back", "f": "6"},
				Absent:     []string{"c", "e"},
				Checkpoint: Checkpoint{ChangelogOffset: 11, SourceOffsets: map[string]int64{"src/0": 30}},
				Keys:       4, Bytes: 7, // committed only
			},
		},
	}
	for _, st := range steps {
		if err := st.do(dst); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, read(t, dst, keys)); diff != "" {
			t.Errorf("%s: reads (-want +got):\n%s", st.name, diff)
		}
		if cp, found := durableCheckpoint(t, dst); found {
			t.Errorf("%s: Badger has checkpoint %+v before the build wrote the data", st.name, cp)
		}
	}
	dst.Discard()

	r := dst.restored.Load()
	if r == nil {
		t.Fatal("no restored layer while the build is held")
	}
	close(gate)
	<-r.finished
	if dst.restored.Load() != nil {
		t.Error("restored layer still set after the build: memory not released")
	}
	if held := db.restoreHeld.Load(); held != 0 {
		t.Errorf("DB holds %d bytes of restores after the build, want 0", held)
	}
	built := readState{
		All:        []kv{{"a", "9"}, {"b", "2"}, {"e", ""}, {"f", "6"}},
		BToE:       []kv{{"b", "2"}},
		Get:        map[string]string{"a": "9", "b": "2", "e": "", "f": "6"},
		Absent:     []string{"c", "d"},
		Checkpoint: Checkpoint{ChangelogOffset: 11, SourceOffsets: map[string]int64{"src/0": 30}},
		Keys:       4, Bytes: 7,
	}
	if diff := cmp.Diff(built, read(t, dst, keys)); diff != "" {
		t.Errorf("after the build (-want +got):\n%s", diff)
	}
	if cp, _ := durableCheckpoint(t, dst); cp.ChangelogOffset != 11 {
		t.Errorf("durable checkpoint %+v, want changelog offset 11", cp)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := openDB(t, dir).Store("agg", 0)
	if diff := cmp.Diff(built, read(t, reopened, keys)); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
}

// A build stopped before it wrote the checkpoint, as by a crash, leaves no
// checkpoint: the next Restore starts from scratch and gets it all again.
func TestColdRestoreStoppedMidBuildRestoresAgain(t *testing.T) {
	k := startKafka(t)
	log := Changelog{Topic: testkafka.Name(t, "cold-changelog"), Partition: 0}
	if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	owner := openDB(t, t.TempDir()).Store("agg", 0)
	produced := writeIntervals(t, k, owner, log, 0, 4)

	dir := t.TempDir()
	db := openDB(t, dir)
	gate := make(chan struct{})
	db.buildGate = gate
	dst := db.Store("agg", 0)
	if _, err := dst.Restore(testCtx(t), k.conn, log, nil); err != nil {
		t.Fatal(err)
	}
	r := dst.restored.Load()
	if r == nil {
		t.Fatal("no restored layer while the build is held")
	}
	gate <- struct{}{} // the first chunk is written
	r.cancel.Store(true)
	close(gate)
	<-r.finished
	if cp, found := durableCheckpoint(t, dst); found {
		t.Fatalf("stopped build left checkpoint %+v", cp)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	again := openDB(t, dir).Store("agg", 0)
	if cp, _ := again.Checkpoint(); cp.ChangelogOffset != 0 {
		t.Fatalf("after the stop: checkpoint %+v, want none", cp)
	}
	n, err := again.Restore(testCtx(t), k.conn, log, nil)
	if err != nil || n != produced {
		t.Fatalf("second Restore = %d, %v; want %d (from scratch), nil", n, err, produced)
	}
	again.waitBuild()
	assertSameState(t, owner, again)
}

// Wipe during a build cancels it and drops what it wrote.
func TestWipeDuringBuild(t *testing.T) {
	k := startKafka(t)
	log := Changelog{Topic: testkafka.Name(t, "cold-changelog"), Partition: 0}
	if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	owner := openDB(t, t.TempDir()).Store("agg", 0)
	writeIntervals(t, k, owner, log, 0, 3)
	dir := t.TempDir()
	db := openDB(t, dir)
	dst := db.Store("agg", 0)
	if _, err := dst.Restore(testCtx(t), k.conn, log, nil); err != nil {
		t.Fatal(err)
	}
	if err := dst.Wipe(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, dst, nil); len(got) != 0 {
		t.Errorf("after Wipe: %v, want nothing", got)
	}
	if cp, _ := dst.Checkpoint(); cp.ChangelogOffset != 0 {
		t.Errorf("after Wipe: checkpoint %+v, want none", cp)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, openDB(t, dir).Store("agg", 0), nil); len(got) != 0 {
		t.Errorf("after Wipe and reopen: %v, want nothing", got)
	}
}

// Past Options.RestoreMemory a cold restore writes to Badger directly: from
// the start (negative), or from the poll that would exceed it.
func TestColdRestoreMemoryBudget(t *testing.T) {
	k := startKafka(t)
	log := Changelog{Topic: testkafka.Name(t, "cold-changelog"), Partition: 0}
	if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	// 3 MB of changelog in 6 flushes: more than one fetch (1 MiB each).
	owner := openDB(t, t.TempDir()).Store("agg", 0)
	var intervals [][]op
	for i := range 6 {
		var ops []op
		for j := range 5000 {
			ops = append(ops, op{k: fmt.Sprintf("key-%06d", (j*7+i*1000)%20000), v: fmt.Sprintf("%090d", i*j)})
		}
		ops = append(ops, op{k: fmt.Sprintf("key-%06d", i*13), del: true})
		intervals = append(intervals, ops)
	}
	produced := flushOps(t, k, owner, log, intervals)

	tests := []struct {
		name     string
		budget   int64
		inMemory bool // the restore ends with its data in memory
	}{
		{name: "default", budget: 0, inMemory: true},
		{name: "negative", budget: -1, inMemory: false},
		{name: "exceeded mid-way", budget: 3 << 19, inMemory: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(Options{Dir: t.TempDir(), Logger: quietLogger(), RestoreMemory: tt.budget})
			if err != nil {
				t.Fatal(err)
			}
			gate := make(chan struct{})
			db.buildGate = gate
			t.Cleanup(func() { close(gate); _ = db.Close() })
			dst := db.Store("agg", 0)
			n, err := dst.Restore(testCtx(t), k.conn, log, nil)
			if err != nil || n != produced {
				t.Fatalf("Restore = %d, %v; want %d, nil", n, err, produced)
			}
			if got := dst.restored.Load() != nil; got != tt.inMemory {
				t.Errorf("data in memory after Restore = %v, want %v", got, tt.inMemory)
			}
			if _, found := durableCheckpoint(t, dst); found == tt.inMemory {
				t.Errorf("durable checkpoint present = %v, want %v", found, !tt.inMemory)
			}
			assertSameState(t, owner, dst)
		})
	}
}

// A Restore while a cold restore's build still runs replays the tail into
// memory, like a commit, without waiting for the build; the build then
// writes it with the tail's checkpoint.
func TestRestoreDuringBuildReplaysTailIntoMemory(t *testing.T) {
	k := startKafka(t)
	log := Changelog{Topic: testkafka.Name(t, "cold-changelog"), Partition: 0}
	if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	owner := openDB(t, t.TempDir()).Store("agg", 0)
	head := flushOps(t, k, owner, log, [][]op{
		{{k: "a", v: "1"}, {k: "b", v: "1"}, {k: "c", v: "1"}},
	})
	dir := t.TempDir()
	db := openDB(t, dir)
	gate := make(chan struct{})
	db.buildGate = gate
	dst := db.Store("agg", 0)
	if n, err := dst.Restore(testCtx(t), k.conn, log, nil); err != nil || n != head {
		t.Fatalf("cold Restore = %d, %v; want %d, nil", n, err, head)
	}
	r := dst.restored.Load()

	// The owner goes on: the second interval's source offset is 20.
	apply(owner, []op{{k: "a", v: "2"}, {k: "b", del: true}, {k: "d", v: "4"}})
	tail := int64(owner.PendingCount())
	if err := owner.Flush(testCtx(t), k.prod, log, map[string]int64{"src/0": 20}); err != nil {
		t.Fatal(err)
	}
	n, err := dst.Restore(testCtx(t), k.conn, log, nil)
	if err != nil || n != tail {
		t.Fatalf("Restore during the build = %d, %v; want the tail of %d, nil", n, err, tail)
	}
	if dst.restored.Load() != r {
		t.Fatal("the build's layer was replaced")
	}
	want := []kv{{"a", "2"}, {"c", "1"}, {"d", "4"}}
	wantCP := Checkpoint{ChangelogOffset: head + tail, SourceOffsets: map[string]int64{"src/0": 20}}
	check := func(when string) {
		t.Helper()
		if diff := cmp.Diff(want, collect(t, dst, nil)); diff != "" {
			t.Errorf("%s: data (-want +got):\n%s", when, diff)
		}
		if cp, _ := dst.Checkpoint(); !cmp.Equal(cp, wantCP) {
			t.Errorf("%s: checkpoint %+v, want %+v", when, cp, wantCP)
		}
	}
	check("during the build")
	if cp, found := durableCheckpoint(t, dst); found {
		t.Errorf("Badger has checkpoint %+v before the build wrote the data", cp)
	}
	close(gate)
	<-r.finished
	check("after the build")
	if cp, _ := durableCheckpoint(t, dst); !cmp.Equal(cp, wantCP) {
		t.Errorf("durable checkpoint %+v, want %+v", cp, wantCP)
	}
	assertSameState(t, owner, dst)
}
