package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/internal/testudf"
)

// Shape of the UDAF crash test's input: event times 100 ms apart, so the
// records fill udafCrashRecords/600 one-minute windows per group.
const (
	udafCrashRecords = 6000
	udafCrashBatch   = 200
	udafCrashGroups  = 10
)

// udafWindow is one group's window in the UDAF crash test's output.
type udafWindow struct {
	Key   string
	Start int64
}

// udafTotals is one output row: COUNT, the WebAssembly MEAN (a STRUCT
// state) and SUMSQ (a BIGINT state).
type udafTotals struct {
	N    int64   `json:"N"`
	MEAN float64 `json:"MEAN"`
	SQ   int64   `json:"SQ"`
}

// TestUDAFCrashRecovery runs the real binary with a windowed aggregation
// of two WebAssembly aggregate functions (built from source by the test)
// beside COUNT under exactly-once, SIGKILLs it twice while it writes
// output, restarts it on the same data directory each time, and checks
// the committed output exactly: every window's final values, and for
// each window the counts 1, 2, …, n in order, once each (EMIT CHANGES
// writes one row per record: a duplicate or a lost record would show).
func TestUDAFCrashRecovery(t *testing.T) {
	brokers := crashBrokers(t)
	in, table := testkafka.Name(t, "udaf_crash_in"), testkafka.Name(t, "udaf_crash_out")
	svc := testkafka.Name(t, "udaf_crash_svc")
	testkafka.CreateTopic(t, brokers, in, 2)
	dir := t.TempDir()
	module := filepath.Join(dir, "gofuncs.wasm")
	if err := os.WriteFile(module, testudf.GoModule(t), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "udaf.sql")
	sql := fmt.Sprintf(`SET 'auto.offset.reset'='earliest';
SET 'processing.guarantee'='exactly_once';
SET 'sluice.udf.timeout'='10s';

CREATE AGGREGATE FUNCTION mean(x BIGINT) RETURNS DOUBLE DETERMINISTIC LANGUAGE WASM
  WITH (PATH='%[3]s', INTERMEDIATE='STRUCT<SUM BIGINT, N BIGINT>', EXPORT='mean');
CREATE AGGREGATE FUNCTION sumsq(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM
  WITH (PATH='%[3]s', INTERMEDIATE='BIGINT', EXPORT='sumsq');

CREATE STREAM %[1]s (grp VARCHAR KEY, amount BIGINT, at BIGINT)
  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='at', PARTITIONS=2);

CREATE TABLE %[2]s AS
  SELECT grp, COUNT(*) AS n, MEAN(amount) AS mean, SUMSQ(amount) AS sq
  FROM %[1]s WINDOW TUMBLING (SIZE 1 MINUTE, GRACE PERIOD 1 HOUR) GROUP BY grp EMIT CHANGES;
`, in, table, module)
	// The time limit is raised far above the default: on a loaded machine
	// a call may wait for a CPU longer than 100 ms, and a timeout would
	// make its record a bad record.
	if err := os.WriteFile(file, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}

	// The input and the exact result of every window, decided up front.
	// Amounts stay below 13, which SUMSQ traps on.
	type agg struct{ n, sum, sq int64 }
	base := time.Now().Add(-time.Hour).Truncate(time.Minute).UnixMilli()
	sums := map[udafWindow]agg{}
	recs := make([]*kgo.Record, udafCrashRecords)
	for seq := range recs {
		grp := fmt.Sprintf("g%d", (seq*3+seq/udafCrashGroups)%udafCrashGroups)
		amount := int64(seq%12 + 1)
		at := base + int64(seq)*100
		recs[seq] = &kgo.Record{Topic: in, Key: []byte(grp), Value: fmt.Appendf(nil, `{"amount":%d,"at":%d}`, amount, at)}
		w := udafWindow{grp, at - at%60_000}
		a := sums[w]
		sums[w] = agg{a.n + 1, a.sum + amount, a.sq + amount*amount}
	}
	want := map[udafWindow]udafTotals{}
	for w, a := range sums {
		want[w] = udafTotals{N: a.n, MEAN: float64(a.sum) / float64(a.n), SQ: a.sq}
	}

	cr := newCrashRuns(t, brokers, file, svc)
	p := cr.run()
	prodCl := testkafka.Client(t, brokers, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	prodDone := make(chan error, 1)
	secondHalf := make(chan struct{})
	go func() {
		for lo := 0; lo < udafCrashRecords; lo += udafCrashBatch {
			if lo == udafCrashRecords/2 {
				<-secondHalf
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err := prodCl.ProduceSync(ctx, recs[lo:lo+udafCrashBatch]...).FirstErr()
			cancel()
			if err != nil {
				prodDone <- fmt.Errorf("produce batch at seq %d: %w", lo, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		prodDone <- nil
	}()

	written := func() int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ends, err := cr.adm.ListEndOffsets(ctx, table)
		if err != nil {
			return 0 // not created yet
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				n += o.Offset
			}
		})
		return n
	}
	// kill SIGKILLs the engine once the output's end offsets pass
	// threshold and grew since the poll before: it is writing output.
	kill := func(p *proc, threshold int64) {
		t.Helper()
		deadline := time.Now().Add(120 * time.Second)
		prev := written()
		for {
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
			cur := written()
			if cur >= threshold && cur > prev {
				if err := p.cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				p.stopping = true
				for line := range p.lines {
					p.all = append(p.all, line)
				}
				_ = p.cmd.Wait()
				if st := p.cmd.ProcessState; st == nil || st.ExitCode() != -1 {
					t.Fatalf("engine was not killed by the signal: %v", st)
				}
				t.Logf("%s: killed at output end offsets %d", cr.since(), cur)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no kill point: output end offsets %d (threshold %d)", cur, threshold)
			}
			prev = cur
			time.Sleep(10 * time.Millisecond)
		}
	}
	kill(p, udafCrashRecords/5)
	// The first run may have written all of the first half before the
	// kill, leaving the restarted engine nothing to write until the second
	// half comes; so the second half is released at the restart and the
	// second kill lands at the restarted engine's first write, whether it
	// redoes an aborted transaction or works through the new records.
	p = cr.run()
	close(secondHalf)
	kill(p, written()+1)
	p = cr.run()
	select {
	case err := <-prodDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(120 * time.Second):
		t.Fatal("the producer did not finish within 120s")
	}

	// The committed output: per window, counts 1…n in order, once each,
	// and the final values exact.
	read := func() (map[udafWindow]udafTotals, map[udafWindow][]int64) {
		latest, counts := map[udafWindow]udafTotals{}, map[udafWindow][]int64{}
		for _, r := range testkafka.ReadAll(t, brokers, table) {
			k, start, err := format.DecodeTimeWindowedKey(r.Key)
			if err != nil {
				t.Fatalf("windowed key %x: %v", r.Key, err)
			}
			var v udafTotals
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("output %s/%d@%d: %q: %v", r.Topic, r.Partition, r.Offset, r.Value, err)
			}
			w := udafWindow{string(k), start}
			latest[w] = v
			counts[w] = append(counts[w], v.N)
		}
		return latest, counts
	}
	var latest map[udafWindow]udafTotals
	var counts map[udafWindow][]int64
	deadline := time.Now().Add(120 * time.Second)
	for {
		latest, counts = read()
		if cmp.Equal(want, latest) || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	p.stop(t, 30*time.Second)
	if diff := cmp.Diff(want, latest); diff != "" {
		t.Fatalf("final window values (-want +got):\n%s", diff)
	}
	for w, ns := range counts {
		for i, n := range ns {
			if n != int64(i+1) {
				t.Errorf("window %+v: counts %v, want 1…%d once each in order", w, ns, want[w].N)
				break
			}
		}
	}
	t.Logf("%s: %d windows exact, %d output rows", cr.since(), len(want), udafCrashRecords)
}
