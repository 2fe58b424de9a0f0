package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// nexmarkCmd is `bench nexmark`.
type nexmarkCmd struct {
	Records    int           `help:"Bids per workload input (default 1,000,000; 200,000 with --quick)."`
	Runs       int           `default:"3" help:"Timed runs of each contender; medians are reported."`
	Keys       int           `help:"Keys of the restore changelog (default 1,000,000; 200,000 with --quick)."`
	M1Keys     int           `name:"m1-keys" help:"Keys of the aggregation M1 measures Sluice's peak RSS in: one bid per auction (default 1,000,000, with --quick too; M1 is written only at 1,000,000)."`
	Partitions int32         `default:"2" help:"Partitions of every topic."`
	Seed       uint64        `default:"11" help:"Seed of the event generator."`
	Sluice     string        `type:"path" help:"sluice binary (default: built from ../cmd/sluice into a temp dir)."`
	Only       []string      `sep:"," help:"Run only these contenders (short names: P,S-q0,H1,S-q1,P-avro,S-q1-avro,S-q1-udf,S-q1-js,KS-q1,G-q1,S-q2,KS-q2,HA,S-agg,S-agg-alo,S-agg-final,KS-agg,G-agg,S-agg-late,KS-agg-late,S-session,KS-session,S-join,KS-join,F-q0,F-q1,F-q2,F-agg,F-agg-late,F-session,F-join, and M1, restore), for profiling and iteration; results.json is then left alone."`
	Late       float64       `default:"0.15" help:"Fraction of agg-late's bids that are late (by up to the 2 s grace)."`
	Warmup     time.Duration `default:"2s" help:"Steady-state window: the rate is measured from this long after the first output record (at most from half the output) to the end."`
	Profile    string        `type:"path" help:"Directory for a CPU profile of each sluice process (SLUICE_CPUPROFILE), named <contender>-<round>.prof, and a heap profile at its largest live heap (SLUICE_MEMPROFILE), <contender>-<round>.heap.prof."`
	Set        []string      `help:"A property NAME=VALUE every sluice contender SETs first (its own SETs win; comma-separated or repeated), to measure a setting, e.g. --set statestore.cache.max.bytes=0; results.json is then left alone."`
}

// selected reports whether --only lets the contender with short name run.
func (n *nexmarkCmd) selected(name string) bool {
	return len(n.Only) == 0 || slices.Contains(n.Only, name)
}

// workload is one query of the benchmark.
type workload string

const (
	q0  workload = "q0"
	q1  workload = "q1"
	q2  workload = "q2"
	agg workload = "agg"
)

// contender is one process that runs one workload.
type contender struct {
	name string
	wl   workload
	// avro: the contender reads the Avro copy of the bids (avroBids).
	avro bool
	// topic, when set, is the contender's input instead of the bids
	// (agg-late's and session's copies of them).
	topic string
	// records, when set, is the count of input events the rates count
	// instead of the bids (the suite's queries over other inputs).
	records int64
	// verify, when set, is given every output record once the
	// output is complete: a run whose output it rejects is an error, not a
	// figure (the Nexmark suite's independent check, nexmark_check.go).
	verify func(records []*kgo.Record) error
	// settle, when set, makes the run end when the output holds the
	// expected result rather than a count of records (an updating table's
	// changelog, whose count is each contender's own): it returns a fresh
	// follower of the output, given every record in order, true once the
	// output is complete. The rate is then timed as final's.
	settle func() func(*kgo.Record) bool
	// final: the contender writes final results only (EMIT FINAL, Flink's
	// windows), which come out in bursts as time passes, so the rate is
	// timed from the job's RUNNING line (flinkSteady) or, for a process
	// that prints none, from its start.
	final bool
	// start returns the command to run, given the input, a fresh output
	// topic and a fresh id; nil when the contender is not available.
	start func(in, out, id, dir string) *exec.Cmd
	// unavailable says why the contender cannot run.
	unavailable string
}

// procSample is one timed run of a contender process.
type procSample struct {
	Records int64
	// Wall is from the process's start until the output held every record.
	Wall time.Duration
	// Steady is the steady-state window: from the warm-up point (the
	// counter's warm) to the output holding all its records, in which
	// SteadyFrac of the output arrived. Records counts the input (every
	// workload reads all its bids; q2 outputs fewer, session more), so
	// the steady rate is SteadyFrac × Records over Steady.
	Steady     time.Duration
	SteadyFrac float64
	// Flagged counts the output records the workload's check flagged
	// (join: bids that found no auction).
	Flagged int64
	CPU     time.Duration // the process's whole life
	// SteadyCPU is the process's CPU (utime+stime) over the steady
	// window, for the per-core figure.
	SteadyCPU time.Duration
	RSS       int64 // peak, bytes
}

// Rate is the steady-state rate (input records per second), the one the
// ratios use; WholeRate when there is no steady window.
func (s procSample) Rate() float64 {
	if s.Steady > 0 && s.SteadyFrac > 0 {
		return s.SteadyFrac * float64(s.Records) / s.Steady.Seconds()
	}
	return s.WholeRate()
}

// minCPUWindow is the shortest steady window whose CPU is measured: the
// CPU is sampled every 20 ms from /proc, in clock ticks of 10 ms, so a
// shorter window (q3 and q8 on the persons and auctions of 200,000 bids:
// 17,000 events in a third of a second; the suite now gives them more)
// holds a handful of samples, or none, and its per-core figure says
// nothing. Such a run has no per-core figure (PerCPU 0), and the ratios
// leave it out.
const minCPUWindow = 500 * time.Millisecond

// PerCPU is the per-core figure: input records per CPU-second of the
// process in the steady window (0 without one, or one shorter than
// minCPUWindow). Unlike the rate, it does
// not move with how many cores the process had to itself, so it holds on
// a noisy machine and compares with published per-core figures.
func (s procSample) PerCPU() float64 {
	if s.Steady < minCPUWindow || s.SteadyFrac <= 0 || s.SteadyCPU <= 0 {
		return 0
	}
	return s.SteadyFrac * float64(s.Records) / s.SteadyCPU.Seconds()
}

// WholeRate is the input records over the wall time, start-up included.
func (s procSample) WholeRate() float64 { return float64(s.Records) / s.Wall.Seconds() }

func (n *nexmarkCmd) Run(ctx context.Context, c *cli) error {
	if n.Records == 0 {
		n.Records = 1_000_000
		if c.Quick {
			n.Records = 200_000
		}
	}
	if n.Keys == 0 {
		n.Keys = 1_000_000
		if c.Quick {
			n.Keys = 200_000
		}
	}
	if n.M1Keys == 0 {
		// Even --quick measures M1 at its full size: one run over a
		// million keys takes about ten seconds.
		n.M1Keys = 1_000_000
	}
	if n.Runs < 1 || n.Records < 1000 || n.Partitions < 1 {
		return errors.New("--runs must be positive, --records at least 1000")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env, err := setUp(ctx, "nexmark", &n.Sluice, c.Brokers)
	if err != nil {
		return err
	}
	defer env.Close()
	tmp, cl := env.tmp, env.cl
	brokers := strings.Join(cl.Seeds, ",")
	if c.Quick {
		fmt.Println("nexmark: QUICK run (--quick), for iteration: results.json is left alone")
	}
	fmt.Printf("nexmark: %d bids, %d partitions, broker %s\n", n.Records, n.Partitions, cl.Name)
	fmt.Printf("machine: %s\n", machine())

	tag := fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)
	t0 := time.Now()
	// The Avro copy of the bids, and the registry that holds its schema,
	// only for the contenders that read it.
	var av *avroBids
	if n.selected("S-q1-avro") || n.selected("P-avro") {
		if av, err = newAvroBids(ctx, "nexmark-bids-avro-"+tag); err != nil {
			return fmt.Errorf("avro bids: %w", err)
		}
		defer av.Close()
		fmt.Printf("schema registry: %s (in this process), bid schema id %d\n", av.URL(), av.id)
	}
	// The WebAssembly module of S-q1-udf (issue 38): udf/testdata/gofuncs,
	// whose to_euro is q1's conversion, built only when it runs.
	var udfModule string
	if n.selected("S-q1-udf") {
		udfModule = filepath.Join(tmp, "gofuncs.wasm")
		if err := goBuildWasm(ctx, "..", udfModule, "./udf/testdata/gofuncs"); err != nil {
			return fmt.Errorf("build the UDF module: %w", err)
		}
	}
	x := newExtraInputs(tag, n.Seed, n.Late, n.selected("S-agg-late") || n.selected("KS-agg-late") || n.selected("F-agg-late"), n.selected("S-session") || n.selected("KS-session") || n.selected("F-session"))
	gen, err := generate(ctx, cl.connOpts(), tag, n.Partitions, n.Records, n.Seed, false, av, x, nil)
	for _, t := range gen.topics {
		defer deleteTopic(cl.connOpts(), t)
	}
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	fmt.Printf("setup: %s (%d persons, %d auctions, %d bids; %d pass q2; %d (auction, window) keys) in %s\n\n",
		strings.Join(gen.topics, ", "), gen.persons, gen.auctions, gen.bids, gen.q2, gen.windowKeys, time.Since(t0).Round(time.Millisecond))
	if d := x.describe(); d != "" {
		fmt.Printf("stateful inputs: %s\n\n", d)
	}

	// KS and G are external programs; either may be missing.
	ksRun, ksWhy := findKStreams()
	gokaBin, gokaWhy := filepath.Join(tmp, "gokabench"), ""
	if _, err := os.Stat("gokabench"); err != nil {
		gokaWhy = "bench/gokabench does not exist"
	} else if err := goBuild(ctx, ".", gokaBin, "./gokabench"); err != nil {
		gokaWhy = "go build ./gokabench failed: " + err.Error()
	}
	if n.Profile != "" {
		if err := os.MkdirAll(n.Profile, 0o755); err != nil {
			return err
		}
	}
	profiles := map[string]int{}
	sluice := func(name string, wl workload, guarantee string) func(in, out, id, dir string) *exec.Cmd {
		return func(in, out, id, dir string) *exec.Cmd {
			file := filepath.Join(dir, "q.sql")
			avro := strings.HasSuffix(name, "-avro")
			sql := sluiceSQL(wl, guarantee, in, out, gen.auctionsTopic, avro)
			switch {
			case strings.HasSuffix(name, "-udf"):
				sql = sluiceUDFSQL(guarantee, in, out, udfModule)
			case strings.HasSuffix(name, "-js"):
				sql = sluiceJSSQL(guarantee, in, out)
			}
			for _, kv := range n.Set {
				name, value, _ := strings.Cut(kv, "=")
				sql = fmt.Sprintf("SET '%s'='%s';\n", name, value) + sql
			}
			if err := os.WriteFile(file, []byte(sql), 0o644); err != nil {
				return nil
			}
			p := exec.Command(n.Sluice, "run", file, "--brokers", brokers, "--service-id", id, "--data-dir", filepath.Join(dir, "data"))
			if avro {
				p.Args = append(p.Args, "--schema-registry", av.URL())
			}
			p.Env = append(os.Environ(), "SLUICE_LOG_LEVEL=warn")
			if n.Profile != "" {
				p.Env = append(p.Env, fmt.Sprintf("SLUICE_CPUPROFILE=%s/%s-%d.prof", n.Profile, name, profiles[name]),
					fmt.Sprintf("SLUICE_MEMPROFILE=%s/%s-%d.heap.prof", n.Profile, name, profiles[name]))
				profiles[name]++
			}
			return p
		}
	}
	worker := func(kind string) func(in, out, id, dir string) *exec.Cmd {
		return func(in, out, id, dir string) *exec.Cmd {
			return exec.Command(self, "worker", kind, "--brokers", brokers, "--in", in, "--out", out, "--group", id, "--state", filepath.Join(dir, "state"))
		}
	}
	ks := func(mode string) func(in, out, id, dir string) *exec.Cmd {
		return func(in, out, id, dir string) *exec.Cmd {
			cmd := exec.Command(ksRun, mode, "--brokers", brokers, "--in", in, "--out", out, "--app-id", id, "--state-dir", filepath.Join(dir, "state"))
			if mode == string(join) {
				cmd.Args = append(cmd.Args, "--table", gen.auctionsTopic)
			}
			return cmd
		}
	}
	goka := func(mode string) func(in, out, id, dir string) *exec.Cmd {
		return func(in, out, id, dir string) *exec.Cmd {
			return exec.Command(gokaBin, mode, "--brokers", brokers, "--in", in, "--out", out, "--group", id, "--storage", filepath.Join(dir, "state"))
		}
	}
	cts := []*contender{
		{name: "P raw franz-go passthrough", wl: q0, start: worker("p")},
		{name: "S-q0 sluice SELECT *", wl: q0, start: sluice("S-q0", q0, "")},
		{name: "H1 hand-written Go q1 (encoding/json)", wl: q1, start: worker("h1")},
		{name: "S-q1 sluice q1", wl: q1, start: sluice("S-q1", q1, "")},
		{name: "P-avro raw franz-go passthrough of the Avro bids", wl: q0, avro: true, start: worker("p")},
		{name: "S-q1-avro sluice q1 over Avro bids, Avro out", wl: q1, avro: true, start: sluice("S-q1-avro", q1, "")},
		{name: "S-q1-udf sluice q1, the conversion by a WebAssembly function", wl: q1, start: sluice("S-q1-udf", q1, "")},
		{name: "S-q1-js sluice q1, the conversion by a JavaScript function", wl: q1, start: sluice("S-q1-js", q1, "")},
		{name: "KS-q1 Kafka Streams q1", wl: q1, start: ks("q1"), unavailable: ksWhy},
		{name: "G-q1 goka q1", wl: q1, start: goka("q1"), unavailable: gokaWhy},
		{name: "S-q2 sluice q2", wl: q2, start: sluice("S-q2", q2, "")},
		{name: "KS-q2 Kafka Streams q2", wl: q2, start: ks("q2"), unavailable: ksWhy},
		{name: "HA hand-written Go agg (Badger, EOS)", wl: agg, start: worker("ha")},
		{name: "S-agg sluice agg exactly_once", wl: agg, start: sluice("S-agg", agg, "exactly_once")},
		{name: "S-agg-alo sluice agg at_least_once", wl: agg, start: sluice("S-agg-alo", agg, "at_least_once")},
		// Issue 35: agg with EMIT FINAL, F2's Sluice side (nexmark_final.go).
		{name: "S-agg-final sluice agg EMIT FINAL exactly_once", wl: aggEmitFinal, start: sluice("S-agg-final", aggEmitFinal, "exactly_once")},
		{name: "KS-agg Kafka Streams agg (exactly_once_v2)", wl: agg, start: ks("agg"), unavailable: ksWhy},
		{name: "G-agg goka agg", wl: agg, start: goka("agg"), unavailable: gokaWhy},
		// Issue 22's stateful workloads (nexmark_workloads.go).
		{name: "S-agg-late sluice agg, 15% late bids, exactly_once", wl: aggLate, topic: x.lateTopicOr(), start: sluice("S-agg-late", aggLate, "exactly_once")},
		{name: "KS-agg-late Kafka Streams agg, late bids (exactly_once_v2)", wl: aggLate, topic: x.lateTopicOr(), start: ks("agg-late"), unavailable: ksWhy},
		{name: "S-session sluice session count per bidder, exactly_once", wl: session, topic: x.bidderTopicOr(), start: sluice("S-session", session, "exactly_once")},
		{name: "KS-session Kafka Streams session count (exactly_once_v2)", wl: session, topic: x.bidderTopicOr(), start: ks("session"), unavailable: ksWhy},
		{name: "S-join sluice bids LEFT JOIN auctions table", wl: join, start: sluice("S-join", join, "")},
		{name: "KS-join Kafka Streams bids leftJoin auctions KTable", wl: join, start: ks("join"), unavailable: ksWhy},
	}
	cts = append(cts, flinkContenders(brokers, x, gen.auctionsTopic)...) // F-q0 … F-join (flink.go)
	for _, ct := range cts {
		if ct.unavailable == "" && !n.selected(short(ct.name)) {
			ct.unavailable = "not selected (--only)"
		}
	}
	expect := map[workload]int64{q0: gen.bids, q1: gen.bids, q2: gen.q2, agg: gen.bids, aggLate: gen.bids, join: gen.bids}
	if x != nil {
		expect[session] = x.sessionOut
	}
	flinkExpect(ctx, cl.connOpts(), gen.bidsTopic, gen.auctionsTopic, expect, cts) // final windows, sessions, watermark-passed bids
	for _, ct := range cts {
		if ct.wl != aggEmitFinal || ct.unavailable != "" {
			continue
		}
		windows, err := finalWindows(ctx, cl.connOpts(), gen.bidsTopic, sluiceClosed)
		if err != nil {
			ct.unavailable = "expected output: " + err.Error()
			continue
		}
		expect[aggEmitFinal], ct.verify = int64(len(windows)), verifyFinalWindows(windows, sluiceWindow)
		fmt.Printf("%s: %d windows close by the end of the input; it writes those\n", short(ct.name), len(windows))
	}
	b := &nexBench{conn: cl.connOpts(), partitions: n.Partitions, tmp: tmp, in: gen.bidsTopic, bids: gen.bids, warmup: n.Warmup}
	if av != nil {
		b.avroIn = av.topic
	}
	samples := make([][]procSample, len(cts))
	for round := 0; round <= n.Runs; round++ {
		if round == 0 {
			fmt.Print("warm-up (untimed):")
		} else {
			fmt.Printf("run %d:", round)
		}
		for i, ct := range cts {
			if ct.unavailable != "" {
				continue
			}
			s, err := b.run(ctx, ct, expect[ct.wl])
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				ct.unavailable = fmt.Sprintf("failed in round %d: %v", round, err)
				fmt.Printf("  %s FAILED", short(ct.name))
				continue
			}
			fmt.Printf("  %s %.0f", short(ct.name), s.Rate())
			if s.Flagged > 0 {
				fmt.Printf(" (%d %s)", s.Flagged, flaggedWhat(ct.wl))
			}
			if round > 0 {
				samples[i] = append(samples[i], s)
			}
		}
		fmt.Println()
	}

	// M1: Sluice's peak RSS in an aggregation over M1Keys keys, one run.
	m1 := m1Result{unavailable: "not selected (--only)"}
	if n.selected("M1") {
		m1 = n.m1(ctx, cl, tag+"m1", sluice("M1", agg, "exactly_once"), tmp)
	}

	// Restore: R and S in this process (restore.go), KS and G as processes.
	var rr []*restoreRow
	if n.selected("restore") {
		rr, err = n.restore(ctx, c, cl, tmp, ksRun, ksWhy, gokaBin, gokaWhy)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}

	fmt.Println()
	rep := nexReport{cts: cts, samples: samples, restore: rr, gen: gen, m1: m1}
	entries := rep.print(os.Stdout, cl.Name, n)
	if len(n.Only) > 0 || c.Quick || len(n.Set) > 0 {
		// Only a full run writes results.json: --quick's smaller inputs,
		// --only's partial set and --set's settings are for iteration.
		fmt.Printf("\n%s left alone (--only, --quick or --set)\n", c.Results)
		return nil
	}
	if err := mergeResults(c.Results, entries); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	fmt.Printf("\nwrote %s\n", c.Results)
	return nil
}

func short(name string) string { return name[:strings.IndexByte(name, ' ')] }

func goBuild(ctx context.Context, dir, out, pkg string) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	build.Dir, build.Stdout, build.Stderr = dir, os.Stderr, os.Stderr
	return build.Run()
}

// goBuildWasm builds pkg as a WebAssembly module of the calling
// convention of Sluice's user-defined functions (GOOS=wasip1,
// -buildmode=c-shared).
func goBuildWasm(ctx context.Context, dir, out, pkg string) error {
	build := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", out, pkg)
	build.Dir, build.Stdout, build.Stderr = dir, os.Stderr, os.Stderr
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	return build.Run()
}

// sluiceUDFSQL is q1 with its conversion done by a WebAssembly function
// (TO_EURO, udf/testdata/gofuncs's to_euro, the price * 0.908), with
// the default sluice.udf.timeout and memory.
func sluiceUDFSQL(guarantee, in, out, module string) string {
	sql := sluiceSQL(q1, guarantee, in, out, "", false)
	create := fmt.Sprintf("CREATE FUNCTION TO_EURO(price BIGINT) RETURNS DOUBLE DETERMINISTIC LANGUAGE WASM WITH (PATH='%s', EXPORT='to_euro');\n", module)
	i := strings.Index(sql, "CREATE STREAM OUT")
	return sql[:i] + create + strings.Replace(sql[i:], "CAST(PRICE AS DOUBLE) * 0.908", "TO_EURO(PRICE)", 1)
}

// sluiceJSSQL is q1 with its conversion done by a JavaScript function
// (TO_EURO, the price * 0.908 in the body), with the default
// sluice.udf.timeout and memory.
func sluiceJSSQL(guarantee, in, out string) string {
	sql := sluiceSQL(q1, guarantee, in, out, "", false)
	create := "CREATE FUNCTION TO_EURO(price BIGINT) RETURNS DOUBLE DETERMINISTIC LANGUAGE JAVASCRIPT AS $$ return price * 0.908; $$;\n"
	i := strings.Index(sql, "CREATE STREAM OUT")
	return sql[:i] + create + strings.Replace(sql[i:], "CAST(PRICE AS DOUBLE) * 0.908", "TO_EURO(PRICE)", 1)
}

// findKStreams returns the Kafka Streams contender's run script, or why
// there is none.
func findKStreams() (string, string) {
	p, err := filepath.Abs(filepath.Join("kstreams", "run"))
	if err != nil {
		return "", err.Error()
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return "", "bench/kstreams/run does not exist"
	case fi.Mode()&0o111 == 0:
		return "", "bench/kstreams/run is not executable"
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", "java not found"
	}
	return p, ""
}

// sluiceSQL is the file `sluice run` executes for a workload. With avro
// the bids are read, and the output written, as AVRO (the same columns,
// the output's schema registered by the sink).
func sluiceSQL(wl workload, guarantee, in, out, table string, avro bool) string {
	var b strings.Builder
	b.WriteString("SET 'auto.offset.reset'='earliest';\n")
	if guarantee != "" {
		fmt.Fprintf(&b, "SET 'processing.guarantee'='%s';\n", guarantee)
	}
	format := "JSON"
	if avro {
		format = "AVRO"
	}
	fmt.Fprintf(&b, "CREATE STREAM BIDS (K VARCHAR KEY, AUCTION BIGINT, BIDDER BIGINT, PRICE BIGINT, CHANNEL VARCHAR, URL VARCHAR, `dateTime` BIGINT, EXTRA VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='%s');\n", in, format)
	switch wl {
	case q0:
		fmt.Fprintf(&b, "CREATE STREAM OUT WITH (KAFKA_TOPIC='%s') AS SELECT * FROM BIDS;\n", out)
	case q1:
		fmt.Fprintf(&b, "CREATE STREAM OUT WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='%s') AS SELECT K, AUCTION, BIDDER, CAST(PRICE AS DOUBLE) * 0.908 AS PRICE, `dateTime` FROM BIDS;\n", out, format)
	case q2:
		fmt.Fprintf(&b, "CREATE STREAM OUT WITH (KAFKA_TOPIC='%s') AS SELECT K, AUCTION, PRICE FROM BIDS WHERE AUCTION %% 123 = 0;\n", out)
	case agg, aggEmitFinal:
		emit := "CHANGES"
		if wl == aggEmitFinal {
			emit = "FINAL"
		}
		fmt.Fprintf(&b, "CREATE TABLE OUT WITH (KAFKA_TOPIC='%s') AS SELECT K, COUNT(*) AS N, SUM(PRICE) AS TOTAL FROM BIDS WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY K EMIT %s;\n", out, emit)
	default:
		statefulSQL(&b, wl, out, table)
	}
	return b.String()
}

// generated describes the input written once before the timed runs.
type generated struct {
	topics                  []string
	bidsTopic               string
	auctionsTopic           string // the join's table: one record per auction
	persons, auctions, bids int64
	q2                      int64 // bids with auction % 123 == 0
	windowKeys              int64 // distinct (auction, 10 s window)
}

// generate writes Nexmark's three streams, Person, Auction and Bid events
// in the proportion 1:3:46 per 50 events, until bids bids are written. It
// is deterministic in seed (the values; the record timestamps are relative
// to now, so Kafka's retention keeps them). Event time advances 1 ms per
// event and ends near now, so 10-second windows close every 10,000 events.
//
// With unique every bid goes to an auction of its own (M1's input: as
// many aggregation keys as bids). With av every bid is also written, with
// the same key and timestamp, to av's topic in Avro.
//
// x, when not nil, also gets every bid, to write the stateful workloads'
// copies of the bids (nexmark_workloads.go).
//
// nx, when not nil, makes the events of the Nexmark suite (issue 35,
// nexmark_suite.go): the reference model's value distributions where the
// queries depend on them (persons' names, cities and states; bids' prices,
// channels and URLs), drawn from nx's own random source so that every other
// field, key and timestamp is the same as without it, and every event kept
// in nx for the expected outputs. Without nx the output is unchanged.
// With nx.noBids the bids are counted out (bids of them) but not made: the
// persons and auctions of a larger run, for the queries that read no bids.
func generate(ctx context.Context, conn []kgo.Opt, tag string, partitions int32, bids int, seed uint64, unique bool, av *avroBids, x *extraInputs, nx *nxEvents) (generated, error) {
	g := generated{
		topics:        []string{"nexmark-persons-" + tag, "nexmark-auctions-" + tag, "nexmark-bids-" + tag},
		bidsTopic:     "nexmark-bids-" + tag,
		auctionsTopic: "nexmark-auctions-" + tag,
	}
	if av != nil {
		g.topics = append(g.topics, av.topic)
	}
	g.topics = append(g.topics, x.topics()...)
	cl, err := kgo.NewClient(append(conn, kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(200_000), kgo.ProducerBatchMaxBytes(1<<20))...)
	if err != nil {
		return g, err
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, -1, nil, g.topics...); err != nil {
		return g, err
	}
	events := int64(bids) * 50 / 46
	base := time.Now().Add(-time.Duration(events+1000)*time.Millisecond).UnixMilli() / 10_000 * 10_000
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var perr atomic.Pointer[error]
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			perr.CompareAndSwap(nil, &err)
		}
	}
	keys := map[[2]int64]struct{}{}
	const pad = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz"
	channels := []string{"Google", "Facebook", "Baidu", "Apple"}
	nextAuction := int64(1000)
	skipped := int64(0) // bids not made (nx.noBids)
	for i := int64(0); g.bids+skipped < int64(bids); i++ {
		ts := base + i
		at := time.UnixMilli(ts)
		switch p := i % 50; {
		case p == 0:
			id := 1000 + g.persons
			g.persons++
			v := fmt.Appendf(nil, `{"id":%d,"name":"person %d","emailAddress":"p%d@example.com","creditCard":"%04d %04d %04d %04d","city":"City%d","state":"ST","dateTime":%d,"extra":""}`,
				id, id, id, rng.IntN(1e4), rng.IntN(1e4), rng.IntN(1e4), rng.IntN(1e4), rng.IntN(100), ts)
			if nx != nil {
				v = nx.person(id, ts)
			}
			cl.Produce(ctx, &kgo.Record{Topic: g.topics[0], Key: strconv.AppendInt(nil, id, 10), Value: v, Timestamp: at}, done)
		case p <= 3:
			id := nextAuction
			nextAuction++
			g.auctions++
			a := nxAuction{ID: id, ItemName: fmt.Sprintf("item %d", id), InitialBid: 100 + rng.Int64N(1000), Reserve: 1000 + rng.Int64N(1000), DateTime: ts}
			a.Expires = ts + 10_000 + rng.Int64N(20_000)
			a.Seller = 1000 + rng.Int64N(max(g.persons, 1))
			a.Category = 10 + rng.Int64N(5)
			v := fmt.Appendf(nil, `{"id":%d,"itemName":"item %d","description":"","initialBid":%d,"reserve":%d,"dateTime":%d,"expires":%d,"seller":%d,"category":%d,"extra":""}`,
				id, id, a.InitialBid, a.Reserve, ts, a.Expires, a.Seller, a.Category)
			if nx != nil {
				nx.auctions = append(nx.auctions, a)
			}
			cl.Produce(ctx, &kgo.Record{Topic: g.topics[1], Key: strconv.AppendInt(nil, id, 10), Value: v, Timestamp: at}, done)
		case nx != nil && nx.noBids:
			skipped++
		default:
			// Half the bids go to the 100 newest auctions (hot), half
			// to any auction so far.
			var auction int64
			if unique {
				auction = 1_000_000 + g.bids
			} else if g.bids == int64(bids)-1 && nextAuction > 1122 {
				// The last bid passes q2, so q2's last output, like
				// the others', marks the end of the input.
				auction = (nextAuction - 1) / 123 * 123
			} else if rng.IntN(2) == 0 {
				auction = nextAuction - 1 - rng.Int64N(min(100, nextAuction-1000))
			} else {
				auction = 1000 + rng.Int64N(nextAuction-1000)
			}
			price := 100 + rng.Int64N(10_000)
			extra := pad[:40+rng.IntN(20)]
			bid := bidAvro{Auction: auction, Bidder: 1000 + rng.Int64N(max(g.persons, 1)), Price: price, Channel: channels[rng.IntN(len(channels))],
				URL: fmt.Sprintf("https://www.nexmark.com/item.htm?query=1&channel_id=%d", rng.IntN(1<<20)), DateTime: ts, Extra: extra}
			if nx != nil {
				bid = nx.bid(bid)
			}
			v := bidJSON(bid)
			key := strconv.AppendInt(nil, auction, 10)
			cl.Produce(ctx, &kgo.Record{Topic: g.topics[2], Key: key, Value: v, Timestamp: at}, done)
			x.bid(ctx, cl, bid, key, v, done)
			if av != nil {
				bin, err := av.encode(bid)
				if err != nil {
					return g, err
				}
				cl.Produce(ctx, &kgo.Record{Topic: g.topics[3], Key: key, Value: bin, Timestamp: at}, done)
			}
			g.bids++
			if auction%123 == 0 {
				g.q2++
			}
			keys[[2]int64{auction, ts / 10_000}] = struct{}{}
		}
		if e := perr.Load(); e != nil {
			return g, *e
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return g, err
	}
	if e := perr.Load(); e != nil {
		return g, *e
	}
	g.windowKeys = int64(len(keys))
	return g, nil
}

// nexBench runs contender processes against the generated input.
type nexBench struct {
	conn       []kgo.Opt
	partitions int32
	tmp        string
	in         string
	avroIn     string // the Avro copy of in, for contenders with avro set
	bids       int64  // input records: the rates and CPU per record count these
	warmup     time.Duration
	seq        int
}

// run starts one contender on a fresh output topic, waits until a
// read_committed consumer has counted want records there, stops it and
// returns the figures.
func (b *nexBench) run(ctx context.Context, ct *contender, want int64) (procSample, error) {
	b.seq++
	id := fmt.Sprintf("nx%x%d", time.Now().UnixNano()&0xffffff, b.seq)
	out := "nexmark-out-" + id
	dir := filepath.Join(b.tmp, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return procSample{}, err
	}
	defer os.RemoveAll(dir)
	adm, err := kgo.NewClient(b.conn...)
	if err != nil {
		return procSample{}, err
	}
	defer adm.Close()
	if _, err := kadm.NewClient(adm).CreateTopics(ctx, b.partitions, -1, nil, out); err != nil {
		return procSample{}, err
	}
	if err := waitLeaders(ctx, kadm.NewClient(adm), out); err != nil {
		return procSample{}, err
	}
	defer deleteTopic(b.conn, out)
	defer deleteTopic(b.conn, out+"-changelog")
	// A contender's topics of its own (a chain's intermediate tables and
	// streams: the suite's q4, q5, q7, q8) are named after its output, so
	// no later run reads them.
	defer deleteTopicsPrefixed(b.conn, out+"-")
	// The contenders' own internal topics, named after id: Sluice's
	// (_sluice-<service id>-…), Kafka Streams' and goka's (<app id>-…).
	defer deleteTopicsPrefixed(b.conn, "_sluice-"+id+"-")
	defer deleteTopicsPrefixed(b.conn, id+"-")

	var kept []*kgo.Record
	var keep func(*kgo.Record)
	if ct.verify != nil {
		// The counter's goroutine keeps the records; they are read once it
		// has stopped.
		keep = func(r *kgo.Record) { kept = append(kept, r) }
	}
	// settled is closed, and settledAt set, by the counter's goroutine once
	// ct.settle's follower says the output is complete; the counter itself
	// then never reaches its count.
	settled := make(chan struct{})
	var settledAt time.Time
	counted := want
	if ct.settle != nil {
		follow, keepAll := ct.settle(), keep
		keep = func(r *kgo.Record) {
			keepAll(r)
			if settledAt.IsZero() && follow(r) {
				settledAt = time.Now()
				close(settled)
			}
		}
		counted = math.MaxInt64
	}
	cnt, err := startCounter(b.conn, out, counted, checkOf(ct.wl), keep)
	if err != nil {
		return procSample{}, err
	}
	defer cnt.stop()
	in := b.in
	if ct.avro {
		in = b.avroIn
	}
	if ct.topic != "" {
		in = ct.topic
	}
	cmd := ct.start(in, out, id, dir)
	if cmd == nil {
		return procSample{}, errors.New("could not prepare the command")
	}
	p, err := startProc(cmd)
	if err != nil {
		return procSample{}, err
	}
	// end: when the output was complete.
	var end time.Time
	select {
	case <-cnt.done:
		end = cnt.at100
	case <-settled:
		end = settledAt
	case <-p.exited:
		p.stop()
		return procSample{}, fmt.Errorf("exited early (%v) after %d of %d records; stderr: %s", p.err, cnt.n.Load(), want, p.tail())
	case <-ctx.Done():
		p.stop()
		return procSample{}, ctx.Err()
	case <-time.After(5 * time.Minute):
		p.stop()
		if ct.settle != nil && ct.verify != nil {
			cnt.stop()
			return procSample{}, fmt.Errorf("the output (%d records) is not the expected table after 5 minutes: %v", len(kept), ct.verify(kept))
		}
		return procSample{}, fmt.Errorf("%d of %d records after 5 minutes", cnt.n.Load(), want)
	}
	s := procSample{Records: cmp.Or(ct.records, b.bids), Wall: end.Sub(p.started)}
	if ct.settle == nil {
		// (With settle the counter is still running: its progress is not
		// to be read, nor used.)
		s.Steady, s.SteadyFrac = cnt.steady(b.warmup, want)
	}
	s.Flagged = cnt.flagged.Load()
	if bursty(ct.wl) {
		// Bursty output (a checkpoint's worth at a time): timed from the
		// job's start instead (flink.go), nine tenths of the bids over
		// nine tenths of that time.
		s.Steady, s.SteadyFrac = flinkSteady(p, end), 0.9
	} else if ct.final || ct.settle != nil {
		if st := flinkSteady(p, end); st > 0 {
			s.Steady, s.SteadyFrac = st, 0.9
		} else {
			s.Steady, s.SteadyFrac = s.Wall, 1
		}
	}
	if s.Steady > 0 {
		s.SteadyCPU = p.cpuAt(end) - p.cpuAt(end.Add(-s.Steady))
	}
	if err := p.stop(); err != nil {
		return s, fmt.Errorf("stop: %w; stderr: %s", err, p.tail())
	}
	s.CPU, s.RSS = p.cpu, p.rss
	if got := cnt.n.Load(); got != want && ct.settle == nil {
		err := fmt.Errorf("output holds %d records, want %d", got, want)
		if ct.verify != nil {
			// Which records: what the next person needs to tell an
			// engine's mistake from the check's.
			cnt.stop()
			if verr := ct.verify(kept); verr != nil {
				err = fmt.Errorf("%w: %w", err, verr)
			}
		}
		return s, err
	}
	if ct.verify != nil {
		cnt.stop()
		if err := ct.verify(kept); err != nil {
			return s, fmt.Errorf("output differs from the expected: %w", err)
		}
	}
	return s, nil
}

// deleteTopicsPrefixed deletes every topic whose name starts with prefix.
func deleteTopicsPrefixed(conn []kgo.Opt, prefix string) {
	withAdmin(conn, func(ctx context.Context, adm *kadm.Client) {
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return
		}
		var names []string
		for _, t := range topics.Names() {
			if strings.HasPrefix(t, prefix) {
				names = append(names, t)
			}
		}
		if len(names) > 0 {
			_, _ = adm.DeleteTopics(ctx, names...)
		}
	})
}

// waitLeaders returns once every partition of a new topic has a leader.
// A contender that starts before then finds a partition without one, and
// its producer waits for its next metadata refresh (hundreds of
// milliseconds) before writing there: a delay of the broker's making
// that would land in the timed window of whichever contender met it.
func waitLeaders(ctx context.Context, adm *kadm.Client, topic string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			td, ok := md.Topics[topic]
			ready := ok && td.Err == nil && len(td.Partitions) > 0
			for _, pd := range td.Partitions {
				ready = ready && pd.Err == nil && pd.Leader >= 0
			}
			if ready {
				// The metadata can name a leader before that broker
				// serves the partition (KRaft applies the new topic
				// asynchronously): ask the leader itself for the end
				// offsets, which it answers only once the partition is
				// online there.
				var offs kadm.ListedOffsets
				if offs, err = adm.ListEndOffsets(ctx, topic); err == nil {
					err = offs.Error()
				}
				if err == nil {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s is not served on every partition after 30 s (last error: %v)", topic, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// counter counts the committed records of a topic, and notes when each
// batch of them arrived (progress), for the steady-state window.
type counter struct {
	n        atomic.Int64
	flagged  atomic.Int64 // records the check flagged
	at100    time.Time
	progress []progressPoint // read after done
	done     chan struct{}
	cancel   func()
	wg       sync.WaitGroup
}

// progressPoint: the output held n records at t.
type progressPoint struct {
	t time.Time
	n int64
}

// startCounter counts topic's committed records until want; check, when
// not nil, is applied to every record's value, and the records it is true
// for are counted in flagged. keep, when not nil, is given every record.
func startCounter(conn []kgo.Opt, topic string, want int64, check func([]byte) bool, keep func(*kgo.Record)) (*counter, error) {
	cl, err := kgo.NewClient(append(conn, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &counter{done: make(chan struct{}), cancel: cancel}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cl.Close()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			k := int64(fs.NumRecords())
			if k == 0 {
				continue
			}
			if keep != nil {
				fs.EachRecord(keep)
			}
			if check != nil {
				fs.EachRecord(func(r *kgo.Record) {
					if check(r.Value) {
						c.flagged.Add(1)
					}
				})
			}
			n := c.n.Add(k)
			now := time.Now()
			if c.at100.IsZero() {
				c.progress = append(c.progress, progressPoint{now, n})
			}
			if c.at100.IsZero() && n >= want {
				c.at100 = now
				close(c.done)
			}
		}
	}()
	return c, nil
}

// stop waits a moment for duplicates to show, then ends the consumer.
func (c *counter) stop() {
	c.cancel()
	c.wg.Wait()
}

// proc is a contender process, its CPU and peak RSS sampled from /proc
// until it exits.
type proc struct {
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{}
	err     error
	stderr  *tailBuffer
	lines   chan string // stdout, line by line
	cpu     time.Duration
	rss     int64
	// cpuSeries is the process's CPU as sampled, in time order.
	cpuSeries []cpuPoint
	mu        sync.Mutex
}

// cpuPoint: the process had used cpu by t.
type cpuPoint struct {
	t   time.Time
	cpu time.Duration
}

// cpuAt is the process's CPU at t, interpolated between the samples
// around it (sampled every 20 ms, counted by the kernel in 10 ms ticks).
func (p *proc) cpuAt(t time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.cpuSeries
	i := sort.Search(len(s), func(i int) bool { return !s[i].t.Before(t) })
	switch {
	case len(s) == 0:
		return 0
	case i == 0:
		return s[0].cpu
	case i == len(s):
		return s[len(s)-1].cpu
	}
	a, b := s[i-1], s[i]
	f := float64(t.Sub(a.t)) / float64(b.t.Sub(a.t))
	return a.cpu + time.Duration(f*float64(b.cpu-a.cpu))
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	p := &proc{cmd: cmd, exited: make(chan struct{}), stderr: &tailBuffer{}, lines: make(chan string, 16)}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.started = time.Now()
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	pid := cmd.Process.Pid
	stopSampling := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				cpu, rss := procStat(pid)
				now := time.Now()
				p.mu.Lock()
				p.cpu, p.rss = max(p.cpu, cpu), max(p.rss, rss)
				if cpu > 0 {
					p.cpuSeries = append(p.cpuSeries, cpuPoint{now, cpu})
				}
				p.mu.Unlock()
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		close(stopSampling)
		p.mu.Lock()
		// The rusage's CPU is the process's own; its Maxrss is not used:
		// it includes the harness's RSS the child had between fork and
		// exec, so the peak is VmHWM as sampled.
		if st := cmd.ProcessState; st != nil {
			p.cpu = max(p.cpu, st.UserTime()+st.SystemTime())
		}
		p.mu.Unlock()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM (SIGKILL after 30 s) and waits for the exit.
func (p *proc) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		return errors.New("did not stop within 30 s of SIGTERM")
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) && ee.Exited() && ee.ExitCode() != 0 {
		return p.err
	}
	return nil
}

func (p *proc) tail() string { return p.stderr.String() }

// procStat reads a process's CPU (utime+stime, at 100 ticks/s, with that
// of its children it waited for: a run script's build) and VmHWM.
func procStat(pid int) (time.Duration, int64) {
	var cpu time.Duration
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 14 {
				var ticks int64
				for _, x := range f[11:15] {
					n, _ := strconv.ParseInt(x, 10, 64)
					ticks += n
				}
				cpu = time.Duration(ticks) * 10 * time.Millisecond
			}
		}
	}
	var rss int64
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				rss = kb << 10
			}
		}
	}
	return cpu, rss
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// m1Result is the one run of S-agg over a topic of M1Keys distinct keys.
type m1Result struct {
	keys        int64
	sample      procSample
	unavailable string
}

func (n *nexmarkCmd) m1(ctx context.Context, cl *cluster, tag string, start func(in, out, id, dir string) *exec.Cmd, tmp string) m1Result {
	t0 := time.Now()
	gen, err := generate(ctx, cl.connOpts(), tag, n.Partitions, n.M1Keys, n.Seed, true, nil, nil, nil)
	for _, t := range gen.topics {
		defer deleteTopic(cl.connOpts(), t)
	}
	if err != nil {
		return m1Result{unavailable: "generate: " + err.Error()}
	}
	fmt.Printf("M1 setup: %s, %d bids on %d (auction, window) keys, in %s\n", gen.bidsTopic, gen.bids, gen.windowKeys, time.Since(t0).Round(time.Millisecond))
	b := &nexBench{conn: cl.connOpts(), partitions: n.Partitions, tmp: tmp, in: gen.bidsTopic, bids: gen.bids, warmup: n.Warmup}
	s, err := b.run(ctx, &contender{name: "S-agg", wl: agg, start: start}, gen.bids)
	if err != nil {
		return m1Result{keys: gen.windowKeys, unavailable: err.Error()}
	}
	fmt.Printf("M1 run: S-agg over %d keys, peak RSS %.0f MB, %.0f bids/s\n", gen.windowKeys, rssMB(s), s.Rate())
	return m1Result{keys: gen.windowKeys, sample: s}
}
