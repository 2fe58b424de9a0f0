package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// Shape of the crash test's input.
const (
	crashRecords   = 40_000
	crashBatch     = 500
	crashGroups    = 20
	crashKeys      = 997 // distinct record keys, spread over the 4 input partitions
	crashPartition = 4
)

// crashInput is what the test knows about one produced record.
type crashInput struct {
	id        string
	grp       string
	amount    int64
	partition int32
	offset    int64
}

// crashOut is the value of one record of the copying stream.
type crashOut struct {
	SEQ     *int64  `json:"SEQ"`
	GRP     *string `json:"GRP"`
	DOUBLED *int64  `json:"DOUBLED"`
}

// killPoint records what the test saw when it sent SIGKILL.
type killPoint struct {
	at          time.Duration    // since the first start
	produced    int64            // sum of the input's end offsets
	outHW       int64            // sum of the output stream's end offsets just before the kill
	outHWBefore int64            // the same, one poll earlier
	pollGap     time.Duration    // time between those two polls
	outHWAfter  int64            // the output's end offsets once the process is dead
	committed   map[string]int64 // all committed group offsets once the process is dead
	// The aggregate's committed input offsets (sum) at the poll that
	// decided the kill, and when the run started.
	committedBefore, committedAtStart int64
}

// TestCrashRecovery runs the real binary against a broker in its own
// process (`sluice broker`, or the cluster named by SLUICE_TEST_BROKERS),
// produces 40,000 records while a stateless copying query and a GROUP BY
// on a value column (so: a repartition topic and a changelog) run,
// SIGKILLs the engine twice while it is writing output, restarts it on
// the same data directory each time, and then checks the outputs exactly.
func TestCrashRecovery(t *testing.T) {
	for _, guarantee := range []string{"exactly_once", "at_least_once"} {
		t.Run(guarantee, func(t *testing.T) { crashRecovery(t, guarantee) })
	}
}

func crashRecovery(t *testing.T, guarantee string) {
	eos := guarantee == "exactly_once"
	brokers := crashBrokers(t)
	in, out, table := testkafka.Name(t, "crash_in"), testkafka.Name(t, "crash_out"), testkafka.Name(t, "crash_totals")
	svc := testkafka.Name(t, "crash_svc")
	testkafka.CreateTopic(t, brokers, in, crashPartition)

	// At-least-once commits every second by default; a shorter interval
	// gives each run several state checkpoints (with their applied
	// source offsets) before it is killed. Exactly-once keeps its 100 ms
	// default.
	interval := ""
	if !eos {
		interval = "\nSET 'commit.interval.ms'='250';"
	}
	file := filepath.Join(t.TempDir(), "crash.sql")
	sql := crashStatements(in, out, table, guarantee, interval)
	if err := os.WriteFile(file, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}

	// What the test produces, decided up front so that the expected
	// totals are known exactly.
	inputs := make([]crashInput, crashRecords)
	want := map[string]pageTotals{}
	for seq := range inputs {
		grp := fmt.Sprintf("g%02d", (seq*7+seq/crashGroups)%crashGroups)
		amount := int64(seq%101 + 1)
		inputs[seq] = crashInput{id: fmt.Sprintf("id%03d", seq%crashKeys), grp: grp, amount: amount, partition: -1, offset: -1}
		w := want[grp]
		w.N++
		w.Total += amount
		want[grp] = w
	}
	if len(want) != crashGroups {
		t.Fatalf("%d groups, want %d", len(want), crashGroups)
	}

	cr := newCrashRuns(t, brokers, file, svc)
	adm, since, run := cr.adm, cr.since, cr.run
	p := run()

	// The producer runs in the background in batches while the engine
	// works; the records' partitions and offsets come back for diagnosis.
	prodCl := testkafka.Client(t, brokers, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	prodDone := make(chan error, 1)
	var prodMu sync.Mutex
	// The second half of the input waits until the restarted engine is
	// working again: otherwise it could all be produced while the new
	// process waits for the crashed member's session to expire, and be
	// processed in one burst with no moment to kill it mid-work.
	secondHalf := make(chan struct{})
	go func() {
		for lo := 0; lo < crashRecords; lo += crashBatch {
			if lo == crashRecords/2 {
				<-secondHalf
			}
			var recs []*kgo.Record
			for seq := lo; seq < lo+crashBatch; seq++ {
				in0 := inputs[seq]
				recs = append(recs, &kgo.Record{
					Topic: in,
					Key:   []byte(in0.id),
					Value: fmt.Appendf(nil, `{"seq":%d,"grp":%q,"amount":%d}`, seq, in0.grp, in0.amount),
					// No timestamp: the client's clock. Old timestamps would
					// let time-based retention delete the input mid-test.
				})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			res := prodCl.ProduceSync(ctx, recs...)
			cancel()
			if err := res.FirstErr(); err != nil {
				prodDone <- fmt.Errorf("produce batch at seq %d: %w", lo, err)
				return
			}
			prodMu.Lock()
			for i, r := range res {
				inputs[lo+i].partition, inputs[lo+i].offset = r.Record.Partition, r.Record.Offset
			}
			prodMu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
		prodDone <- nil
	}()
	var prodErr error
	produced := false
	checkProducer := func() {
		if produced {
			return
		}
		select {
		case prodErr = <-prodDone:
			produced = true
			if prodErr != nil {
				t.Fatal(prodErr)
			}
			t.Logf("%s: all %d records produced", since(), crashRecords)
		default:
		}
	}

	endSum := func(topic string) int64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Before the engine creates the output topic, it has no offsets:
		// count that as 0.
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return 0
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				n += o.Offset
			}
		})
		return n
	}

	// killAt SIGKILLs the engine once the outputs' end offsets
	// (which include records of open or aborted transactions, transaction
	// markers and at-least-once duplicates) pass threshold. The kill lands
	// mid-work because both hold at the last poll before it: (a) the
	// output grew since the poll before, a few milliseconds earlier, so
	// the engine was writing output at that moment; and (b) the
	// aggregate's committed input offsets are short of the input's end,
	// so input was still unfinished. Whether this run had committed
	// (checkpointed state with its applied offsets) before the kill is
	// logged too: a restart after a backlog often processes it all in its
	// first commit interval, so that is not required.
	ctasInput := func(offs map[string]int64) int64 {
		var n int64
		for k, v := range offs {
			if strings.HasPrefix(k, "CTAS input/") {
				n += v
			}
		}
		return n
	}
	// written is what both queries have written: the stream's output and
	// the table's. After a kill the stateless query may resume long
	// before the aggregate (whose group waits for the dead member's
	// session to expire), so only the two together show the engine at
	// work.
	written := func() int64 { return endSum(out) + endSum(table) }
	killAt := func(p *proc, threshold int64) killPoint {
		t.Helper()
		deadline := time.Now().Add(150 * time.Second)
		committedAtStart := ctasInput(groupOffsets(t, adm, svc))
		prev, prevAt := written(), time.Now()
		for {
			checkProducer()
			select {
			case line, ok := <-p.lines:
				if !ok {
					p.stopping = true
					err := p.cmd.Wait()
					t.Fatalf("sluice exited before the kill: %v\nstderr:\n%s", err, p.stderr.String())
				}
				p.all = append(p.all, line)
			default:
			}
			cur, curAt := written(), time.Now()
			inEnd := endSum(in)
			committed := int64(crashRecords)
			if cur >= threshold && cur > prev {
				committed = ctasInput(groupOffsets(t, adm, svc))
			}
			if cur >= threshold && cur > prev && committed < crashRecords {
				if err := p.cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				kp := killPoint{at: since(), produced: inEnd, outHW: cur, outHWBefore: prev, pollGap: time.Since(prevAt).Round(time.Millisecond),
					committedBefore: committed, committedAtStart: committedAtStart}
				p.stopping = true
				for line := range p.lines {
					p.all = append(p.all, line)
				}
				_ = p.cmd.Wait()
				if st := p.cmd.ProcessState; st == nil || st.ExitCode() != -1 {
					t.Fatalf("engine was not killed by the signal: %v", st)
				}
				kp.outHWAfter = written()
				kp.committed = groupOffsets(t, adm, svc)
				return kp
			}
			if time.Now().After(deadline) {
				t.Fatalf("no kill point: output end offsets %d (threshold %d), input end %d, committed input offsets %d (at this run's start %d): %v", cur, threshold, inEnd, committed, committedAtStart, groupOffsets(t, adm, svc))
			}
			prev, prevAt = cur, curAt
			time.Sleep(10 * time.Millisecond)
		}
	}

	var kills []killPoint
	for i := range 2 {
		// The first kill lands once a quarter of the records are out. The
		// second lands at the restarted engine's next write after the
		// second half of the input was released: it works through that
		// backlog in one burst, now often faster than this loop polls, so
		// a threshold further on could be passed with the burst already
		// committed.
		threshold := int64(crashRecords / 4)
		if i == 1 {
			threshold = written() + 1
		}
		kp := killAt(p, threshold)
		kills = append(kills, kp)
		t.Logf("kill %d at %s: output end offsets %d (%d one poll, %s, before the kill; %d once dead), input end offsets %d; aggregate's committed input offsets %d (%d at this run's start), so killed while writing with %d input records not committed; committed group offsets once dead: %v",
			i+1, kp.at, kp.outHW, kp.outHWBefore, kp.pollGap, kp.outHWAfter, kp.produced, kp.committedBefore, kp.committedAtStart, crashRecords-kp.committedBefore, kp.committed)
		p = run()
		if i == 0 {
			deadline := time.Now().Add(60 * time.Second)
			for written() <= kp.outHWAfter {
				if time.Now().After(deadline) {
					t.Fatalf("the restarted engine wrote nothing within 60s")
				}
				time.Sleep(10 * time.Millisecond)
			}
			close(secondHalf)
		}
	}

	// Wait for the producer, then for the results: every seq in the
	// output stream and the exact totals in the table, read_committed.
	for !produced {
		checkProducer()
		time.Sleep(10 * time.Millisecond)
	}
	recovered := time.Now()
	tl := testkafka.Client(t, brokers, kgo.ConsumeTopics(out, table),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	seen := make([]bool, crashRecords)
	nSeen := 0
	latest := map[string]pageTotals{}
	deadline := time.Now().Add(120 * time.Second)
	for nSeen < crashRecords || !cmp.Equal(want, latest) {
		for k, got := range latest {
			if w, ok := want[k]; !ok || got.N > w.N || got.Total > w.Total {
				t.Fatalf("table key %q = %+v, want %+v: input counted twice", k, got, w)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the last restart, no complete output within 120s: %d of %d seqs in %s; table (-want +got):\n%s",
				nSeen, crashRecords, out, cmp.Diff(want, latest))
		}
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.stopping = true
				err := p.cmd.Wait()
				t.Fatalf("sluice exited before the results were complete: %v\nstderr:\n%s", err, p.stderr.String())
			}
			p.all = append(p.all, line)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		fs := tl.PollFetches(ctx)
		cancel()
		fs.EachError(func(topic string, part int32, err error) {
			if ctx.Err() == nil {
				t.Fatalf("read %s/%d: %v", topic, part, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic == table {
				latest[string(r.Key)] = decodeTotals(t, r)
				return
			}
			if v := decodeCrashOut(t, r); *v.SEQ >= 0 && *v.SEQ < crashRecords && !seen[*v.SEQ] {
				seen[*v.SEQ] = true
				nSeen++
			}
		})
	}
	t.Logf("%s: complete output and exact totals %s after the last producer batch", since(), time.Since(recovered).Round(time.Millisecond))
	stopAt := time.Now()
	p.stop(t, 30*time.Second)
	t.Logf("stopped with SIGTERM in %s, exit 0", time.Since(stopAt).Round(time.Millisecond))
	if len(p.all) != 0 {
		t.Errorf("stdout, want none:\n%s", strings.Join(p.all, "\n"))
	}

	// The output stream, read_committed.
	prodMu.Lock()
	defer prodMu.Unlock()
	counts := make([]int, crashRecords)
	outRecs := testkafka.ReadAll(t, brokers, out)
	for _, r := range outRecs {
		v := decodeCrashOut(t, r)
		seq := *v.SEQ
		if seq < 0 || seq >= crashRecords {
			t.Errorf("output %s/%d@%d: seq %d out of range", r.Topic, r.Partition, r.Offset, seq)
			continue
		}
		counts[seq]++
		in0 := inputs[seq]
		if string(r.Key) != in0.id || *v.GRP != in0.grp || *v.DOUBLED != 2*in0.amount {
			t.Errorf("output %s/%d@%d: key %q value %s; want key %q grp %q doubled %d", r.Topic, r.Partition, r.Offset, r.Key, r.Value, in0.id, in0.grp, 2*in0.amount)
		}
	}
	var missing, dups []int
	extra := 0
	for seq, n := range counts {
		switch {
		case n == 0:
			missing = append(missing, seq)
		case n > 1:
			dups = append(dups, seq)
			extra += n - 1
		}
	}
	uncommitted := countUncommitted(t, brokers, out)
	if rt := repartitionTopic(t, adm, svc); rt != "" {
		t.Logf("repartition topic: %d records (end offsets) for %d input records: replays the aggregate had to skip", endSum(rt), crashRecords)
	}
	t.Logf("output stream: %d records read_committed (%d distinct seqs, %d seqs duplicated, %d extra records); %d data records read_uncommitted (so %d in aborted transactions)",
		len(outRecs), crashRecords-len(missing), len(dups), extra, uncommitted, uncommitted-int64(len(outRecs)))
	if len(missing) > 0 {
		t.Errorf("%d seqs missing from %s: %s", len(missing), out, describeSeqs(inputs, missing, kills))
	}
	if eos && len(dups) > 0 {
		t.Errorf("exactly_once: %d seqs more than once in %s (read_committed): %s", len(dups), out, describeSeqs(inputs, dups, kills))
	}
	if !eos {
		t.Logf("at_least_once: duplicated seqs: %s", describeSeqs(inputs, dups, kills))
	}

	// The table topic, read_committed: exact latest values; under
	// exactly-once no value ever goes down, which it would if a double
	// count had been visible and then corrected, or if state had been
	// lost.
	latest = map[string]pageTotals{}
	decreases := 0
	for _, r := range testkafka.ReadAll(t, brokers, table) {
		v := decodeTotals(t, r)
		if w := want[string(r.Key)]; v.N > w.N || v.Total > w.Total {
			t.Errorf("table %s/%d@%d: key %q = %+v exceeds the final %+v: counted twice", r.Topic, r.Partition, r.Offset, r.Key, v, w)
		}
		if prev, ok := latest[string(r.Key)]; ok && (v.N < prev.N || v.Total < prev.Total) {
			decreases++
			if eos {
				t.Errorf("exactly_once: table key %q went down from %+v to %+v at %s/%d@%d", r.Key, prev, v, r.Topic, r.Partition, r.Offset)
			}
		}
		latest[string(r.Key)] = v
	}
	if diff := cmp.Diff(want, latest); diff != "" {
		t.Errorf("latest values in %s (-want +got):\n%s", table, diff)
	}
	if !eos {
		t.Logf("at_least_once: table values went down %d times (replayed updates re-emitted after a crash; never past the final totals)", decreases)
	}
}

// crashStatements is the crash tests' SQL: a stateless copy of in to out
// (doubling amount) and a GROUP BY on a value column into table (so a
// repartition topic and a changelog), under guarantee; extra statements
// go after the SETs.
func crashStatements(in, out, table, guarantee, extra string) string {
	return fmt.Sprintf(`SET 'auto.offset.reset'='earliest';
SET 'processing.guarantee'='%[4]s';%[5]s

CREATE STREAM %[1]s (id VARCHAR KEY, seq BIGINT, grp VARCHAR, amount BIGINT)
  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=4);

CREATE STREAM %[2]s AS
  SELECT id, seq, grp, amount * 2 AS doubled FROM %[1]s;

CREATE TABLE %[3]s AS
  SELECT grp, COUNT(*) AS n, SUM(amount) AS total
  FROM %[1]s GROUP BY grp;
`, in, out, table, guarantee, extra)
}

// crashBrokers is SLUICE_TEST_BROKERS, or a `sluice broker` process
// started for this test.
func crashBrokers(t *testing.T) string {
	t.Helper()
	if testkafka.External() {
		return os.Getenv(testkafka.EnvBrokers)
	}
	_, addr := startBroker(t)
	return addr
}

func decodeCrashOut(t *testing.T, r *kgo.Record) crashOut {
	t.Helper()
	var v crashOut
	dec := json.NewDecoder(strings.NewReader(string(r.Value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.SEQ == nil || v.GRP == nil || v.DOUBLED == nil {
		t.Fatalf("output value %q of key %q at %s/%d@%d: %v; want SEQ, GRP and DOUBLED", r.Value, r.Key, r.Topic, r.Partition, r.Offset, err)
	}
	return v
}

// groupOffsets returns the committed offsets of the service's consumer
// groups as "group-suffix topic/partition" → offset.
func groupOffsets(t *testing.T, adm *kadm.Client, svc string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		t.Logf("list groups: %v", err)
		return nil
	}
	prefix := "_sluice-" + svc + "-query-"
	out := map[string]int64{}
	for _, g := range groups.Groups() {
		if !strings.HasPrefix(g, prefix) {
			continue
		}
		offs, err := adm.FetchOffsets(ctx, g)
		if err != nil {
			t.Logf("fetch offsets of %s: %v", g, err)
			continue
		}
		q := strings.TrimPrefix(g, prefix)
		q = q[:min(len(q), 4)]
		offs.Each(func(o kadm.OffsetResponse) {
			topic := o.Topic
			if strings.HasSuffix(topic, "-repartition") {
				topic = "repartition"
			} else {
				topic = "input"
			}
			out[fmt.Sprintf("%s %s/%d", q, topic, o.Partition)] = o.At
		})
	}
	return out
}

// repartitionTopic names the aggregate's repartition topic.
func repartitionTopic(t *testing.T, adm *kadm.Client, svc string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Logf("list topics: %v", err)
		return ""
	}
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, "_sluice-"+svc+"-query-") && strings.HasSuffix(name, "-repartition") {
			return name
		}
	}
	return ""
}

// countUncommitted counts the data records (not transaction markers) of
// topic read with read_uncommitted: with read_committed's count, it tells
// how many records the crashes left in aborted transactions.
func countUncommitted(t *testing.T, brokers, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(testkafka.Client(t, brokers)).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	cl := testkafka.Client(t, brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords())
	last := map[int32]int64{}
	var n int64
	for !crashReached(last, want) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s uncommitted: timed out at %v, want ends %v", topic, last, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			last[r.Partition] = r.Offset
			if r.Offset < want[r.Partition] && !r.Attrs.IsControl() {
				n++
			}
		})
	}
	return n
}

func crashReached(last, want map[int32]int64) bool {
	for p, end := range want {
		if off, ok := last[p]; !ok || off < end-1 {
			return false
		}
	}
	return true
}

// describeSeqs summarizes seqs by input partition: how many, their input
// offset range, and the first few, with the group offsets committed at
// each kill, to relate duplicates or losses to the kills.
func describeSeqs(inputs []crashInput, seqs []int, kills []killPoint) string {
	if len(seqs) == 0 {
		return "none"
	}
	type span struct {
		n      int
		lo, hi int64
	}
	byPart := map[int32]*span{}
	for _, s := range seqs {
		in := inputs[s]
		sp := byPart[in.partition]
		if sp == nil {
			sp = &span{lo: in.offset, hi: in.offset}
			byPart[in.partition] = sp
		}
		sp.n++
		sp.lo, sp.hi = min(sp.lo, in.offset), max(sp.hi, in.offset)
	}
	parts := make([]int32, 0, len(byPart))
	for p := range byPart {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	var b strings.Builder
	for _, p := range parts {
		sp := byPart[p]
		fmt.Fprintf(&b, "\n  input partition %d: %d seqs, input offsets %d..%d", p, sp.n, sp.lo, sp.hi)
	}
	first := seqs[:min(len(seqs), 10)]
	fmt.Fprintf(&b, "\n  first seqs:")
	for _, s := range first {
		fmt.Fprintf(&b, " %d(%d@%d)", s, inputs[s].partition, inputs[s].offset)
	}
	for i, k := range kills {
		keys := make([]string, 0, len(k.committed))
		for key := range k.committed {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "\n  committed at kill %d:", i+1)
		for _, key := range keys {
			fmt.Fprintf(&b, " [%s]=%d", key, k.committed[key])
		}
	}
	return b.String()
}

// crashRuns starts the engine on one data directory again and again, as
// the crash tests kill it, and shows each run's stderr when a test fails.
type crashRuns struct {
	adm   *kadm.Client
	start time.Time
	runs  []*proc
	run   func() *proc
}

func newCrashRuns(t *testing.T, brokers, file, svc string) *crashRuns {
	// Info logs (state restored, transactions aborted, stalls) go to
	// stderr, shown when the test fails.
	if os.Getenv("SLUICE_LOG_LEVEL") == "" {
		t.Setenv("SLUICE_LOG_LEVEL", "info")
	}
	dataDir := t.TempDir()
	cr := &crashRuns{
		// Metadata is not cached for long: the output topic appears while
		// the test polls its end offsets.
		adm:   kadm.NewClient(testkafka.Client(t, brokers, kgo.MetadataMinAge(50*time.Millisecond))),
		start: time.Now(),
	}
	cr.run = func() *proc {
		p := startSluice(t, "run", file, "--brokers", brokers, "--data-dir", dataDir, "--service-id", svc)
		cr.runs = append(cr.runs, p)
		return p
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for i, p := range cr.runs {
			if !p.stopping {
				_ = p.cmd.Process.Kill()
				p.stopping = true
				for range p.lines {
				}
				_ = p.cmd.Wait()
			}
			t.Logf("run %d stderr (tail):\n%s", i+1, tail(p.stderr.String(), 60))
		}
	})
	return cr
}

// since is the time since the first run started.
func (cr *crashRuns) since() time.Duration { return time.Since(cr.start).Round(time.Millisecond) }

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
