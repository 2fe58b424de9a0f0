package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// testKafka is the test's Kafka cluster, reached over loopback TCP: the
// embedded broker, or the cluster in SLUICE_TEST_BROKERS. That cluster is
// shared and outlives the run, so every topic and transactional ID a test
// uses comes from testkafka.Name.
type testKafka struct {
	cluster *kfake.Cluster // set only by startEmbeddedKafka
	conn    []kgo.Opt      // connection options, as Restore takes them
	prod    *kgo.Client    // manual-partitioner producer, as Flush needs
	adm     *kadm.Client
}

// startKafka returns the test's cluster (testkafka.Brokers).
func startKafka(t testing.TB) *testKafka {
	t.Helper()
	return newTestKafka(t, testkafka.Brokers(t), nil)
}

// startEmbeddedKafka starts an embedded broker even when SLUICE_TEST_BROKERS
// is set, for tests that need kfake's Cluster.Compact.
func startEmbeddedKafka(t testing.TB) *testKafka {
	t.Helper()
	b := testkafka.Embedded(t)
	return newTestKafka(t, b.Addr(), b.Cluster())
}

func newTestKafka(t testing.TB, brokers string, c *kfake.Cluster) *testKafka {
	t.Helper()
	conn := []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)}
	prod := testkafka.Client(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	return &testKafka{cluster: c, conn: conn, prod: prod, adm: kadm.NewClient(prod)}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// readPartition consumes topic/partition from the start until n records
// have arrived.
func readPartition(t *testing.T, k *testKafka, topic string, partition int32, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(append(k.conn, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {partition: kgo.NewOffset().AtStart()},
	}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testCtx(t)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := fetchErr(fs); err != nil {
			t.Fatalf("after %d of %d records: %v", len(out), n, err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

func TestEnsureTopic(t *testing.T) {
	k := startKafka(t)
	ctx := testCtx(t)
	tests := []struct {
		name       string
		configs    map[string]*string
		wantPolicy string
		wantRet    string
	}{
		{name: "app-agg-changelog", wantPolicy: "compact"},
		{name: "app-win-changelog", configs: map[string]*string{"cleanup.policy": ptr("compact,delete"), "retention.ms": ptr("600000")},
			wantPolicy: "compact,delete", wantRet: "600000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := testkafka.Name(t, tt.name)
			for range 2 { // the second call finds the topic and succeeds
				if err := EnsureTopic(ctx, k.adm, topic, 4, -1, tt.configs); err != nil {
					t.Fatal(err)
				}
			}
			rcs, err := k.adm.DescribeTopicConfigs(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := rcs.On(topic, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, c := range rc.Configs {
				if c.Value != nil {
					got[c.Key] = *c.Value
				}
			}
			if got["cleanup.policy"] != tt.wantPolicy {
				t.Errorf("cleanup.policy = %q, want %q", got["cleanup.policy"], tt.wantPolicy)
			}
			if tt.wantRet != "" && got["retention.ms"] != tt.wantRet {
				t.Errorf("retention.ms = %q, want %q", got["retention.ms"], tt.wantRet)
			}
			err = EnsureTopic(ctx, k.adm, topic, 8, -1, tt.configs)
			if !errors.Is(err, ErrTopicMismatch) {
				t.Errorf("EnsureTopic with 8 partitions: err = %v, want ErrTopicMismatch", err)
			}
		})
	}
}

func TestFlushWritesChangelog(t *testing.T) {
	k := startKafka(t)
	ctx := testCtx(t)
	topic := testkafka.Name(t, "q1-agg-changelog")
	if err := EnsureTopic(ctx, k.adm, topic, 3, -1, nil); err != nil {
		t.Fatal(err)
	}
	s := openDB(t, t.TempDir()).Store("agg", 1)
	apply(s, []op{{k: "b", v: "1"}, {k: "a", v: "1"}, {k: "b", v: "2"}, {k: "c", del: true}, {k: "e", v: ""}})
	log := Changelog{Topic: topic, Partition: 1}
	src := map[string]int64{"bookings/1": 57}
	if err := s.Flush(ctx, k.prod, log, src); err != nil {
		t.Fatal(err)
	}
	if s.PendingCount() != 0 {
		t.Errorf("PendingCount after Flush = %d", s.PendingCount())
	}

	type rec struct {
		Offset     int64
		Key, Value string
		Nil        bool
		Headers    int
	}
	var got []rec
	for _, r := range readPartition(t, k, topic, 1, 4) {
		got = append(got, rec{r.Offset, string(r.Key), string(r.Value), r.Value == nil, len(r.Headers)})
	}
	want := []rec{
		{Offset: 0, Key: "a", Value: "1"},
		{Offset: 1, Key: "b", Value: "2"},
		{Offset: 2, Key: "c", Nil: true},
		{Offset: 3, Key: "e", Headers: 1}, // the last record carries the source offsets
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changelog records (-want +got):\n%s", diff)
	}
	cp, err := s.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Checkpoint{ChangelogOffset: 4, SourceOffsets: src}, cp); diff != "" {
		t.Errorf("checkpoint (-want +got):\n%s", diff)
	}

	// A flush with nothing pending moves only the source offsets.
	if err := s.Flush(ctx, k.prod, log, map[string]int64{"bookings/1": 60}); err != nil {
		t.Fatal(err)
	}
	cp, _ = s.Checkpoint()
	if diff := cmp.Diff(Checkpoint{ChangelogOffset: 4, SourceOffsets: map[string]int64{"bookings/1": 60}}, cp); diff != "" {
		t.Errorf("checkpoint after empty flush (-want +got):\n%s", diff)
	}
}

func TestFlushRejectsKeyPartitioner(t *testing.T) {
	k := startKafka(t)
	ctx := testCtx(t)
	cl, err := kgo.NewClient(k.conn...) // default partitioner hashes keys
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s := openDB(t, "").Store("agg", 1)
	s.Put([]byte("k"), []byte("v"))
	err = s.Flush(ctx, cl, Changelog{Topic: testkafka.Name(t, "t"), Partition: 1}, nil)
	if !errors.Is(err, ErrPartitioner) {
		t.Fatalf("Flush with hashing partitioner: err = %v, want ErrPartitioner", err)
	}
	if s.PendingCount() != 1 {
		t.Errorf("a failed Flush must keep the overlay; PendingCount = %d", s.PendingCount())
	}
}

func TestFlushWithoutChangelogCommits(t *testing.T) {
	s := openDB(t, "").Store("agg", 0)
	s.Put([]byte("k"), []byte("v"))
	if err := s.Flush(context.Background(), nil, Changelog{}, map[string]int64{"in/0": 3}); err != nil {
		t.Fatal(err)
	}
	cp, _ := s.Checkpoint()
	if diff := cmp.Diff(Checkpoint{SourceOffsets: map[string]int64{"in/0": 3}}, cp); diff != "" {
		t.Errorf("checkpoint (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]kv{{"k", "v"}}, collect(t, s, nil)); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

// writeIntervals flushes n commit intervals of churn to the changelog: every
// interval updates a few keys, deletes one and adds an empty value. It
// returns the number of records produced.
func writeIntervals(t *testing.T, k *testKafka, s *Store, log Changelog, from, n int) int64 {
	t.Helper()
	var produced int64
	for i := from; i < from+n; i++ {
		for j := range 5 {
			s.Put(fmt.Appendf(nil, "key-%02d", (i+j)%12), fmt.Appendf(nil, "v%d.%d", i, j))
		}
		s.Delete(fmt.Appendf(nil, "key-%02d", (i*7)%12))
		s.Put(fmt.Appendf(nil, "empty-%d", i%3), []byte{})
		produced += int64(s.PendingCount())
		if err := s.Flush(testCtx(t), k.prod, log, map[string]int64{"src/0": int64(100 * (i + 1))}); err != nil {
			t.Fatal(err)
		}
	}
	return produced
}

func assertSameState(t *testing.T, want, got *Store) {
	t.Helper()
	if diff := cmp.Diff(collect(t, want, nil), collect(t, got, nil)); diff != "" {
		t.Errorf("restored data differs (-want +got):\n%s", diff)
	}
	wcp, _ := want.Checkpoint()
	gcp, _ := got.Checkpoint()
	if diff := cmp.Diff(wcp, gcp); diff != "" {
		t.Errorf("restored checkpoint differs (-want +got):\n%s", diff)
	}
}

func TestRestoreFromScratch(t *testing.T) {
	t.Run("compacted=false", func(t *testing.T) {
		k := startKafka(t)
		log := Changelog{Topic: testkafka.Name(t, "q-agg-changelog"), Partition: 2}
		if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 4, -1, nil); err != nil {
			t.Fatal(err)
		}
		src := openDB(t, t.TempDir()).Store("agg", 2)
		produced := writeIntervals(t, k, src, log, 0, 8)
		checkRestoreFromScratch(t, k, log, src, produced, false)
	})
	// Compaction leaves gaps in the offsets; restore must not wait for the
	// missing ones.
	t.Run("compacted=true", func(t *testing.T) {
		// Always the embedded broker, even with SLUICE_TEST_BROKERS set:
		// only kfake's Cluster.Compact compacts on demand (it cleans all
		// but the last batch), so this case is deterministic and fast on
		// every run. The log_cleaner case below shows the same on Kafka.
		k := startEmbeddedKafka(t)
		log := Changelog{Topic: testkafka.Name(t, "q-agg-changelog"), Partition: 2}
		if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 4, -1, nil); err != nil {
			t.Fatal(err)
		}
		src := openDB(t, t.TempDir()).Store("agg", 2)
		produced := writeIntervals(t, k, src, log, 0, 8)
		k.cluster.Compact()
		if n, end := countRecords(t, k, log); n >= end {
			t.Fatalf("after Compact: %d records in offsets [0, %d), want gaps", n, end)
		}
		checkRestoreFromScratch(t, k, log, src, produced, true)
	})
	if testkafka.External() {
		// Kafka's own log cleaner, which cannot be forced: it cleans only
		// closed segments, so the topic rolls a segment every 100 ms and
		// the test waits until the cleaner (log.cleaner.backoff.ms, 1 s
		// with scripts/kafka) has removed superseded records.
		t.Run("compacted=true,log_cleaner", func(t *testing.T) {
			k := startKafka(t)
			log := Changelog{Topic: testkafka.Name(t, "q-agg-changelog"), Partition: 2}
			if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 4, -1, map[string]*string{
				"segment.ms":                ptr("100"),
				"min.cleanable.dirty.ratio": ptr("0.01"),
				"min.compaction.lag.ms":     ptr("0"),
				// Long enough that no tombstone disappears while
				// Restore reads.
				"delete.retention.ms": ptr("60000"),
			}); err != nil {
				t.Fatal(err)
			}
			src := openDB(t, t.TempDir()).Store("agg", 2)
			produced := writeIntervals(t, k, src, log, 0, 8)
			// The active segment is never cleaned: the next append after
			// segment.ms rolls the first eight intervals out of it.
			time.Sleep(200 * time.Millisecond)
			produced += writeIntervals(t, k, src, log, 8, 1)
			start := time.Now()
			for {
				n, end := countRecords(t, k, log)
				if end != produced {
					t.Fatalf("end offset %d, want %d", end, produced)
				}
				if n < end {
					t.Logf("compacted after %s: %d records in offsets [0, %d)", time.Since(start).Round(time.Millisecond), n, end)
					break
				}
				if time.Since(start) > 30*time.Second {
					t.Fatalf("no compaction within 30s: %d records in offsets [0, %d)", n, end)
				}
				time.Sleep(250 * time.Millisecond)
			}
			checkRestoreFromScratch(t, k, log, src, produced, true)
		})
	}
}

// countRecords reads log from its start to its end offset and returns the
// number of records there (control records included) and the end offset.
// Fewer records than the end offset means compaction left gaps.
func countRecords(t *testing.T, k *testKafka, log Changelog) (n, end int64) {
	t.Helper()
	ctx := testCtx(t)
	ends, err := k.adm.ListEndOffsets(ctx, log.Topic)
	if err != nil {
		t.Fatal(err)
	}
	lo, ok := ends.Lookup(log.Topic, log.Partition)
	if !ok || lo.Err != nil {
		t.Fatalf("end offset of %s/%d: %v", log.Topic, log.Partition, lo.Err)
	}
	end = lo.Offset
	cl, err := kgo.NewClient(append(k.conn, kgo.KeepControlRecords(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		log.Topic: {log.Partition: kgo.NewOffset().AtStart()},
	}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for next := int64(0); next < end; {
		fs := cl.PollFetches(ctx)
		if err := fetchErr(fs); err != nil {
			t.Fatalf("after %d records: %v", n, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < end {
				n++
			}
			next = r.Offset + 1
		})
	}
	return n, end
}

// checkRestoreFromScratch restores log into a new store and compares it with
// src, whose flushes produced the whole log.
func checkRestoreFromScratch(t *testing.T, k *testKafka, log Changelog, src *Store, produced int64, compacted bool) {
	t.Helper()
	dst := openDB(t, t.TempDir()).Store("agg", 2)
	// Stale local data without a checkpoint is wiped first.
	dst.Put([]byte("stale"), []byte("x"))
	if err := dst.Commit(Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	var last [2]int64
	calls := 0
	n, err := dst.Restore(testCtx(t), k.conn, log, func(done, total int64) {
		calls++
		last = [2]int64{done, total}
	})
	if err != nil {
		t.Fatal(err)
	}
	if compacted && n >= produced {
		t.Errorf("Restore after compaction applied %d records, want fewer than %d", n, produced)
	}
	if !compacted && n != produced {
		t.Errorf("Restore applied %d records, want %d", n, produced)
	}
	// Progress counts offsets, compacted away or not.
	if calls == 0 || last != [2]int64{produced, produced} {
		t.Errorf("progress: %d calls, last %v; want last [%d %d]", calls, last, produced, produced)
	}
	assertSameState(t, src, dst)
}

func TestRestoreWarmReplaysOnlyTheTail(t *testing.T) {
	k := startKafka(t)
	ctx := testCtx(t)
	log := Changelog{Topic: testkafka.Name(t, "q-agg-changelog"), Partition: 0}
	if err := EnsureTopic(ctx, k.adm, log.Topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	owner := openDB(t, t.TempDir()).Store("agg", 0)
	head := writeIntervals(t, k, owner, log, 0, 3)

	dir := t.TempDir()
	standby := openDB(t, dir).Store("agg", 0)
	if n, err := standby.Restore(ctx, k.conn, log, nil); err != nil || n != head {
		t.Fatalf("first Restore = %d, %v; want %d, nil", n, err, head)
	}
	before, _ := standby.Checkpoint()

	tail := writeIntervals(t, k, owner, log, 3, 2)
	n, err := standby.Restore(ctx, k.conn, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != tail {
		t.Errorf("warm Restore applied %d records, want the tail of %d", n, tail)
	}
	assertSameState(t, owner, standby)
	after, _ := standby.Checkpoint()
	if after.ChangelogOffset != before.ChangelogOffset+tail {
		t.Errorf("ChangelogOffset %d → %d, want +%d", before.ChangelogOffset, after.ChangelogOffset, tail)
	}

	// Up to date: nothing to replay.
	if n, err := standby.Restore(ctx, k.conn, log, nil); err != nil || n != 0 {
		t.Errorf("Restore when current = %d, %v; want 0, nil", n, err)
	}
}

// TestStoreLag: a standby's lag is the changelog offsets written since its
// last restore, and nothing once it restored again.
func TestStoreLag(t *testing.T) {
	k := startKafka(t)
	ctx := testCtx(t)
	log := Changelog{Topic: testkafka.Name(t, "q-agg-changelog"), Partition: 0}
	if err := EnsureTopic(ctx, k.adm, log.Topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	owner := openDB(t, t.TempDir()).Store("agg", 0)
	writeIntervals(t, k, owner, log, 0, 3)
	standby := openDB(t, t.TempDir()).Store("agg", 0)
	if _, err := standby.Restore(ctx, k.conn, log, nil); err != nil {
		t.Fatal(err)
	}
	if lag, err := standby.Lag(ctx, k.adm, log); err != nil || lag != 0 {
		t.Fatalf("Lag after Restore = %d, %v; want 0, nil", lag, err)
	}
	before, _ := standby.Checkpoint()
	writeIntervals(t, k, owner, log, 3, 2)
	ends, err := k.adm.ListEndOffsets(ctx, log.Topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(log.Topic, 0)
	if want := end.Offset - before.ChangelogOffset; want <= 0 {
		t.Fatalf("the tail wrote nothing: end %d, checkpoint %d", end.Offset, before.ChangelogOffset)
	} else if lag, err := standby.Lag(ctx, k.adm, log); err != nil || lag != want {
		t.Errorf("Lag behind a tail = %d, %v; want %d, nil", lag, err, want)
	}
	if _, err := standby.Restore(ctx, k.conn, log, nil); err != nil {
		t.Fatal(err)
	}
	if lag, err := standby.Lag(ctx, k.adm, log); err != nil || lag != 0 {
		t.Errorf("Lag after catching up = %d, %v; want 0, nil", lag, err)
	}
}

func TestRestoreUnknownTopic(t *testing.T) {
	k := startKafka(t)
	s := openDB(t, "").Store("agg", 0)
	_, err := s.Restore(testCtx(t), k.conn, Changelog{Topic: testkafka.Name(t, "nope"), Partition: 0}, nil)
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("Restore of a missing topic: err = %v, want UnknownTopicOrPartition", err)
	}
}

func BenchmarkRestore(b *testing.B) {
	k := startKafka(b)
	ctx := testCtx(b)
	log := Changelog{Topic: testkafka.Name(b, "bench-changelog"), Partition: 0}
	if err := EnsureTopic(ctx, k.adm, log.Topic, 1, -1, nil); err != nil {
		b.Fatal(err)
	}
	const records = 5000
	src := openDB(b, "").Store("agg", 0)
	for i := range records {
		src.Put(fmt.Appendf(nil, "key-%06d", i), []byte("value-value-value-value"))
	}
	if err := src.Flush(ctx, k.prod, log, nil); err != nil {
		b.Fatal(err)
	}
	// One DB for all iterations (opening Badger dominates otherwise); each
	// iteration restores into a fresh store name.
	db := openDB(b, "")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dst := db.Store(fmt.Sprintf("agg-%d", i), 0)
		n, err := dst.Restore(ctx, k.conn, log, nil)
		if err != nil || n != records {
			b.Fatalf("Restore = %d, %v", n, err)
		}
	}
	b.ReportMetric(records, "records/op")
}

// transactionalChangelog creates log's topic and returns a transactional
// producer (transactional id named after txnID) that writes to it as Flush
// needs; the test closes it.
func transactionalChangelog(t *testing.T, k *testKafka, log Changelog, txnID string) *kgo.Client {
	t.Helper()
	if err := EnsureTopic(testCtx(t), k.adm, log.Topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	txn, err := kgo.NewClient(append(k.conn,
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID(testkafka.Name(t, txnID)))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(txn.Close)
	return txn
}

// With exactly_once the changelog ends in transaction markers, and aborted
// intervals sit in it; restore must stop at the marker and skip the aborted
// records.
func TestRestoreTransactionalChangelog(t *testing.T) {
	k := startKafka(t)
	ctx := testCtx(t)
	log := Changelog{Topic: testkafka.Name(t, "eos-changelog"), Partition: 0}
	txn := transactionalChangelog(t, k, log, "sluice-test-task-0")
	owner := openDB(t, t.TempDir()).Store("agg", 0)
	interval := func(commit bool, ops []op) {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		apply(owner, ops)
		if commit {
			if err := owner.Flush(ctx, txn, log, nil); err != nil {
				t.Fatal(err)
			}
		} else {
			// Produce as Flush would, then abort: the exec layer drops
			// the overlay with Discard.
			for _, c := range owner.Pending() {
				if err := txn.ProduceSync(ctx, &kgo.Record{Topic: log.Topic, Key: c.Key, Value: c.Value}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			owner.Discard()
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	interval(true, []op{{k: "a", v: "1"}, {k: "b", v: "1"}})
	interval(false, []op{{k: "a", v: "aborted"}, {k: "z", v: "aborted"}})
	interval(true, []op{{k: "b", del: true}, {k: "c", v: "3"}})

	dst := openDB(t, t.TempDir()).Store("agg", 0)
	n, err := dst.Restore(ctx, k.conn, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("Restore applied %d records, want 4 (aborted ones skipped)", n)
	}
	if diff := cmp.Diff([]kv{{"a", "1"}, {"c", "3"}}, collect(t, dst, nil)); diff != "" {
		t.Errorf("restored data (-want +got):\n%s", diff)
	}
}

// A partition's new owner restores while its previous owner's last
// transaction is still ending (franz-go commits it through a rebalance
// once its offsets are sent). With AfterOpenTransactions the restore waits
// for it and keeps what it committed; without, it stops at the open
// transaction and misses state the committed offsets then skip.
func TestRestoreAfterOpenTransactions(t *testing.T) {
	for _, wait := range []bool{true, false} {
		t.Run(fmt.Sprintf("wait=%v", wait), func(t *testing.T) {
			k := startKafka(t)
			ctx := testCtx(t)
			log := Changelog{Topic: testkafka.Name(t, "eos-open-changelog"), Partition: 0, AfterOpenTransactions: wait}
			txn := transactionalChangelog(t, k, log, "sluice-test-owner")
			owner := openDB(t, t.TempDir()).Store("agg", 0)
			interval := func(ops []op) {
				t.Helper()
				if err := txn.BeginTransaction(); err != nil {
					t.Fatal(err)
				}
				apply(owner, ops)
				if err := owner.Flush(ctx, txn, log, nil); err != nil {
					t.Fatal(err)
				}
			}
			interval([]op{{k: "a", v: "1"}, {k: "b", v: "1"}})
			if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
			interval([]op{{k: "a", v: "2"}, {k: "c", v: "1"}}) // left open

			type result struct {
				n   int64
				err error
			}
			dst := openDB(t, t.TempDir()).Store("agg", 0)
			done := make(chan result, 1)
			go func() {
				n, err := dst.Restore(ctx, k.conn, log, nil)
				done <- result{n, err}
			}()
			var res result
			if wait {
				// The restore has read the log's offsets long before;
				// the owner's transaction commits only now.
				time.Sleep(500 * time.Millisecond)
				if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
					t.Fatal(err)
				}
				res = <-done
			} else {
				// A standby's catch-up returns at the open transaction.
				res = <-done
				if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
					t.Fatal(err)
				}
			}
			if res.err != nil {
				t.Fatal(res.err)
			}
			want := []kv{{"a", "2"}, {"b", "1"}, {"c", "1"}}
			if !wait {
				want = []kv{{"a", "1"}, {"b", "1"}}
			}
			if diff := cmp.Diff(want, collect(t, dst, nil)); diff != "" {
				t.Errorf("restored data (-want +got):\n%s", diff)
			}
		})
	}
}

// A windowed store's changelog may have expired entirely; restore must not
// wait for records that retention removed.
func TestRestoreExpiredChangelog(t *testing.T) {
	k := startKafka(t)
	ctx := testCtx(t)
	log := Changelog{Topic: testkafka.Name(t, "win-changelog"), Partition: 0}
	// The configs a windowed store's changelog has. Kafka refuses
	// DeleteRecords on a compact-only topic (POLICY_VIOLATION); kfake allows
	// it.
	if err := EnsureTopic(ctx, k.adm, log.Topic, 1, -1, map[string]*string{
		"cleanup.policy": ptr("compact,delete"), "retention.ms": ptr("600000"),
	}); err != nil {
		t.Fatal(err)
	}
	owner := openDB(t, "").Store("win", 0)
	produced := writeIntervals(t, k, owner, log, 0, 2)
	var upTo kadm.Offsets
	upTo.AddOffset(log.Topic, log.Partition, produced, -1)
	deleted, err := k.adm.DeleteRecords(ctx, upTo)
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	dst := openDB(t, "").Store("win", 0)
	n, err := dst.Restore(ctx, k.conn, log, nil)
	if err != nil || n != 0 {
		t.Fatalf("Restore = %d, %v; want 0, nil", n, err)
	}
	cp, _ := dst.Checkpoint()
	if cp.ChangelogOffset != produced {
		t.Errorf("ChangelogOffset = %d, want %d (the log end)", cp.ChangelogOffset, produced)
	}
}
