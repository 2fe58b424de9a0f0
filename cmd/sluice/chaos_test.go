package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// chaosConfig shapes one run of the chaos harness: input produced while
// the real binary is SIGKILLed and restarted on the same data directory.
type chaosConfig struct {
	guarantee string
	records   int
	kills     int
	// rate is the producer's records per second.
	rate int
	// gap is how long after a restart the next kill comes. With
	// afterResume it counts from the moment the restarted engine has
	// committed output again (so every kill has a resume time); without,
	// from the restart itself (kills close together, as a user's crash
	// loop would give).
	gap         func(rng *rand.Rand) time.Duration
	afterResume bool
	seed        uint64
	// settle bounds the wait, after the last restart and the last input
	// record, for exact outputs.
	settle time.Duration
}

// TestCrashLoopConverges is the report of issue 18 made a test: a copy
// and a repartitioned GROUP BY under load, the engine SIGKILLed three
// times two seconds apart and restarted at once each time. Both queries
// must finish exactly within 30 s of the last restart.
func TestCrashLoopConverges(t *testing.T) {
	for _, guarantee := range []string{"exactly_once", "at_least_once"} {
		t.Run(guarantee, func(t *testing.T) {
			chaos(t, chaosConfig{
				guarantee: guarantee, records: 40_000, kills: 3, rate: 5_000, seed: 18,
				gap:    func(*rand.Rand) time.Duration { return 2 * time.Second },
				settle: 30 * time.Second,
			})
		})
	}
}

// TestChaos kills the engine ten times at seeded random moments while
// 100,000 records arrive, each kill a random while after the previous
// incarnation resumed committing, and reports each restart's time to
// its next committed output. SLUICE_CHAOS_SEED replays a run.
func TestChaos(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SLUICE_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SLUICE_CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("chaos seed %d (SLUICE_CHAOS_SEED=%d replays it)", seed, seed)
	for _, guarantee := range []string{"exactly_once", "at_least_once"} {
		t.Run(guarantee, func(t *testing.T) {
			res := chaos(t, chaosConfig{
				guarantee: guarantee, records: 100_000, kills: 10, rate: 4_000, seed: seed, afterResume: true,
				gap:    func(rng *rand.Rand) time.Duration { return time.Duration(rng.Int64N(int64(1500 * time.Millisecond))) },
				settle: 60 * time.Second,
			})
			med, worst := res.resumeStats()
			t.Logf("chaos %s seed %d: %d kills, time from restart to next committed output: median %s, max %s (%v)",
				guarantee, seed, len(res.resumes), med, worst, res.resumes)
			if med > 5*time.Second || worst > 15*time.Second {
				t.Errorf("resume after a kill: median %s (want ≤ 5s), max %s (want ≤ 15s)", med, worst)
			}
		})
	}
}

// chaosResult is what a chaos run measured.
type chaosResult struct {
	// resumes holds, per kill, the time from the restart to the first
	// offset commit of every query of the new incarnation.
	resumes []time.Duration
}

func (r chaosResult) resumeStats() (median, worst time.Duration) {
	if len(r.resumes) == 0 {
		return 0, 0
	}
	s := slices.Clone(r.resumes)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)-1]
}

func chaos(t *testing.T, cfg chaosConfig) chaosResult {
	eos := cfg.guarantee == "exactly_once"
	rng := rand.New(rand.NewPCG(cfg.seed, 18))
	brokers := crashBrokers(t)
	in, out, table := testkafka.Name(t, "chaos_in"), testkafka.Name(t, "chaos_out"), testkafka.Name(t, "chaos_totals")
	svc := testkafka.Name(t, "chaos_svc")
	testkafka.CreateTopic(t, brokers, in, crashPartition)
	file := filepath.Join(t.TempDir(), "chaos.sql")
	sql := crashStatements(in, out, table, cfg.guarantee, "")
	if err := os.WriteFile(file, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]pageTotals{}
	value := func(seq int) (id, grp string, amount int64) {
		return fmt.Sprintf("id%03d", seq%crashKeys), fmt.Sprintf("g%02d", (seq*7+seq/crashGroups)%crashGroups), int64(seq%101 + 1)
	}
	for seq := range cfg.records {
		_, grp, amount := value(seq)
		w := want[grp]
		w.N++
		w.Total += amount
		want[grp] = w
	}
	cr := newCrashRuns(t, brokers, file, svc)
	adm, since := cr.adm, cr.since
	run := func() *proc {
		p := cr.run()
		// stdout carries nothing here (no push SELECT); drain it, unless
		// the process is already stopping.
		go func() {
			for range p.lines {
			}
		}()
		return p
	}

	// The producer sends at cfg.rate. With afterResume it never gets more
	// than its share of the input ahead of the kills: phase i (before
	// kill i+1) may release (i+1)/(kills+1) of it, so every incarnation
	// has input to work on.
	var phase atomic.Int64
	var producedN atomic.Int64
	prodCl := testkafka.Client(t, brokers, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	prodDone := make(chan error, 1)
	go func() {
		const batch = 250
		tick := time.Duration(float64(time.Second) * batch / float64(cfg.rate))
		next := time.Now()
		for lo := 0; lo < cfg.records; lo += batch {
			for cfg.afterResume && int64(lo) >= int64(cfg.records)*(phase.Load()+1)/int64(cfg.kills+1) {
				time.Sleep(10 * time.Millisecond)
			}
			var recs []*kgo.Record
			for seq := lo; seq < min(lo+batch, cfg.records); seq++ {
				id, grp, amount := value(seq)
				recs = append(recs, &kgo.Record{Topic: in, Key: []byte(id),
					Value: fmt.Appendf(nil, `{"seq":%d,"grp":%q,"amount":%d}`, seq, grp, amount)})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err := prodCl.ProduceSync(ctx, recs...).FirstErr()
			cancel()
			if err != nil {
				prodDone <- fmt.Errorf("produce batch at seq %d: %w", lo, err)
				return
			}
			producedN.Add(int64(len(recs)))
			next = next.Add(tick)
			time.Sleep(time.Until(next))
		}
		prodDone <- nil
	}()

	// committed sums each query's committed offsets per topic kind
	// ("CSAS input", "CTAS input", "CTAS repartition").
	committed := func() map[string]int64 {
		sums := map[string]int64{}
		for k, v := range groupOffsets(t, adm, svc) {
			sums[k[:strings.LastIndex(k, "/")]] += v
		}
		return sums
	}
	// resumed reports whether every query has committed past what it had
	// at the kill on every topic it reads (all three see new input).
	resumed := func(at map[string]int64) bool {
		now := committed()
		for _, k := range []string{"CSAS input", "CTAS input", "CTAS repartition"} {
			if now[k] <= at[k] {
				return false
			}
		}
		return true
	}

	var res chaosResult
	p := run()
	prodErr := func() {
		select {
		case err := <-prodDone:
			prodDone <- err
			if err != nil {
				t.Fatal(err)
			}
		default:
		}
	}
	// With afterResume the first incarnation commits before the first
	// kill; without, the kills count from its start.
	if cfg.afterResume {
		testkafka.Await(t, 60*time.Second, "first committed output", func() bool { prodErr(); return resumed(map[string]int64{}) })
	}
	for i := range cfg.kills {
		time.Sleep(cfg.gap(rng))
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.stopping = true
		_ = p.cmd.Wait()
		at := committed()
		phase.Add(1)
		restarted := time.Now()
		p = run()
		t.Logf("%s: kill %d with %d of %d records produced; committed %v", since(), i+1, producedN.Load(), cfg.records, at)
		if !cfg.afterResume {
			continue
		}
		deadline := restarted.Add(60 * time.Second)
		for !resumed(at) {
			prodErr()
			if time.Now().After(deadline) {
				t.Fatalf("kill %d: no committed output within 60s of the restart; committed %v (at the kill %v)", i+1, committed(), at)
			}
			time.Sleep(25 * time.Millisecond)
		}
		res.resumes = append(res.resumes, time.Since(restarted).Round(time.Millisecond))
		t.Logf("%s: kill %d resumed %s after the restart", since(), i+1, res.resumes[len(res.resumes)-1])
	}
	lastRestart := time.Now()
	if err := <-prodDone; err != nil {
		t.Fatal(err)
	}
	// Outputs read_committed until exact: every seq in the copy, the
	// totals in the table.
	tl := testkafka.Client(t, brokers, kgo.ConsumeTopics(out, table),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	counts := make([]int, cfg.records)
	nSeen := 0
	latest := map[string]pageTotals{}
	var mu sync.Mutex
	deadline := lastRestart.Add(cfg.settle)
	for nSeen < cfg.records || !cmp.Equal(want, latest) {
		if time.Now().After(deadline) {
			t.Fatalf("%s after the last restart (input complete): %d of %d seqs in %s; committed %v; table (-want +got):\n%s",
				cfg.settle, nSeen, cfg.records, out, committed(), cmp.Diff(want, latest))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		fs := tl.PollFetches(ctx)
		cancel()
		mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic == table {
				latest[string(r.Key)] = decodeTotals(t, r)
				return
			}
			seq := *decodeCrashOut(t, r).SEQ
			if seq < 0 || seq >= int64(cfg.records) {
				t.Fatalf("output seq %d out of range", seq)
			}
			if counts[seq] == 0 {
				nSeen++
			}
			counts[seq]++
		})
		mu.Unlock()
	}
	t.Logf("%s: exact outputs %s after the last restart", since(), time.Since(lastRestart).Round(time.Millisecond))
	p.stop(t, 30*time.Second)
	for k, got := range latest {
		if got != want[k] {
			t.Errorf("table key %q = %+v, want %+v", k, got, want[k])
		}
	}
	dups := 0
	for _, n := range counts {
		if n > 1 {
			dups++
		}
	}
	if eos && dups > 0 {
		t.Errorf("exactly_once: %d seqs more than once in %s (read_committed)", dups, out)
	}
	t.Logf("%s: %d seqs duplicated in the copy", cfg.guarantee, dups)
	return res
}
