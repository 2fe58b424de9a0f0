package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// scaleCmd is `bench scale`.
type scaleCmd struct {
	Records    int    `help:"Records produced per timed run (default 200,000; 50,000 with --quick)."`
	Runs       int    `default:"3" help:"Timed runs of each contender; medians are reported."`
	Partitions int32  `default:"6" help:"Partitions of the input and output topics."`
	Sluice     string `type:"path" help:"sluice binary to run (default: built from ../cmd/sluice into a temp dir)."`
}

// scaleContender is one way of running the copying query on k instances.
type scaleContender struct {
	name      string
	instances int
	sluice    bool
}

func (s *scaleCmd) Run(ctx context.Context, c *cli) error {
	if s.Records == 0 {
		s.Records = 200_000
		if c.Quick {
			s.Records = 50_000
		}
	}
	if s.Runs < 1 || s.Records < 1 || s.Partitions < 2 {
		return errors.New("--records and --runs must be positive, --partitions at least 2")
	}
	env, err := setUp(ctx, "scale", &s.Sluice, c.Brokers)
	if err != nil {
		return err
	}
	defer env.Close()
	tmp, cl := env.tmp, env.cl
	fmt.Printf("scale: %d records into %d partitions, broker %s\n", s.Records, s.Partitions, cl.Name)
	fmt.Printf("machine: %s\n\n", machine())

	b := &scaleBench{cmd: s, conn: cl.connOpts(), brokers: cl.Seeds[0], tmp: tmp}
	contenders := []scaleContender{
		{"R1 raw franz-go loop, 1 consumer", 1, false},
		{"R2 raw franz-go loop, 2 consumers", 2, false},
		{"S1 sluice run, 1 instance", 1, true},
		{"S2 sluice run, 2 instances", 2, true},
	}
	// Warm-up round, untimed: the broker's buffers, the page cache and
	// the binary settle.
	for _, ct := range contenders {
		if _, err := b.run(ctx, ct, min(s.Records, 20_000)); err != nil {
			return fmt.Errorf("warm-up %s: %w", ct.name, err)
		}
	}
	samples := make([][]scaleSample, len(contenders))
	for i := range s.Runs {
		fmt.Printf("run %d:", i+1)
		for j, ct := range contenders {
			sm, err := b.run(ctx, ct, s.Records)
			if err != nil {
				return fmt.Errorf("run %d %s: %w", i+1, ct.name, err)
			}
			samples[j] = append(samples[j], sm)
			fmt.Printf("  %s %.0f rec/s", ct.name[:2], sm.Rate())
		}
		fmt.Println()
	}
	fmt.Println()
	rep := scaleReport{contenders: contenders, samples: samples}
	rep.print(os.Stdout, cl.Name, s.Records, s.Runs)
	// Issue 8 sets no target for these ratios: target 0 says so.
	if err := mergeResults(c.Results, map[string]result{
		"scale_sluice_2_over_1": {Value: round3(rep.ratio(3, 2))},
		"scale_raw_2_over_1":    {Value: round3(rep.ratio(1, 0))},
	}); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	fmt.Printf("\nwrote %s\n", c.Results)
	return nil
}

// scaleSample is one timed run: records from the first produce until the
// output held them all.
type scaleSample struct {
	Records  int64
	Elapsed  time.Duration
	Produced time.Duration // until the producer had every ack
	// HarnessCPU is this process's CPU time over the timed window: the
	// embedded broker, the producer and, for R, the copying loops.
	HarnessCPU time.Duration
	// InstanceCPU is the sluice processes' CPU time over their whole
	// lives (start, settling, the timed window, stop); 0 for R.
	InstanceCPU time.Duration
}

func (s scaleSample) Rate() float64 { return float64(s.Records) / s.Elapsed.Seconds() }

type scaleBench struct {
	cmd     *scaleCmd
	conn    []kgo.Opt
	brokers string
	tmp     string
	seq     int
}

// run measures one contender: fresh input and output topics, k
// instances started and settled in their group (every partition
// assigned, every instance holding some), then n records produced as
// fast as the producer goes; timed from the first produce until the
// output's end offsets add up to n.
func (b *scaleBench) run(ctx context.Context, ct scaleContender, n int) (scaleSample, error) {
	b.seq++
	tag := fmt.Sprintf("%X_%d", time.Now().UnixNano()&0xffffff, b.seq)
	in, out, svc := "BENCH_SCALE_IN_"+tag, "BENCH_SCALE_OUT_"+tag, "bench_scale_"+tag
	cl, err := kgo.NewClient(append(slices.Clone(b.conn), kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(100_000))...)
	if err != nil {
		return scaleSample{}, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, b.cmd.Partitions, -1, nil, in, out); err != nil {
		return scaleSample{}, fmt.Errorf("create topics: %w", err)
	}
	defer deleteTopic(b.conn, in)
	defer deleteTopic(b.conn, out)

	var group string
	var stop func() error
	var instanceCPU time.Duration
	if ct.sluice {
		group = "_sluice-" + svc + "-query-CSAS_" + out
		stop, err = b.startSluice(ctx, ct.instances, in, out, svc, &instanceCPU)
	} else {
		group = "bench-raw-" + tag
		stop, err = b.startRaw(ct.instances, in, out, group)
	}
	if err != nil {
		return scaleSample{}, err
	}
	defer func() { _ = stop() }()
	if err := settled(ctx, adm, group, ct.instances, int(b.cmd.Partitions)); err != nil {
		return scaleSample{}, err
	}

	cpu0 := cpuTime()
	t0 := time.Now()
	var produced time.Duration
	var prodErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var pw sync.WaitGroup
		var once sync.Once
		for i := range n {
			pw.Add(1)
			cl.Produce(ctx, &kgo.Record{Topic: in, Key: fmt.Appendf(nil, "k%06d", i%9973), Value: fmt.Appendf(nil, `{"seq":%d,"amount":%d}`, i, i%101)},
				func(_ *kgo.Record, err error) {
					if err != nil {
						once.Do(func() { prodErr = err })
					}
					pw.Done()
				})
		}
		pw.Wait()
		produced = time.Since(t0)
	}()
	for {
		ends, err := adm.ListEndOffsets(ctx, out)
		if err != nil {
			return scaleSample{}, fmt.Errorf("end offsets of %s: %w", out, err)
		}
		var sum int64
		ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		if sum >= int64(n) {
			break
		}
		if ctx.Err() != nil {
			return scaleSample{}, ctx.Err()
		}
		if time.Since(t0) > 10*time.Minute {
			return scaleSample{}, fmt.Errorf("%s holds %d of %d records after 10 minutes", out, sum, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	el := time.Since(t0)
	harness := cpuTime() - cpu0
	wg.Wait()
	if prodErr != nil {
		return scaleSample{}, fmt.Errorf("produce: %w", prodErr)
	}
	err = stop()
	return scaleSample{Records: int64(n), Elapsed: el, Produced: produced, HarnessCPU: harness, InstanceCPU: instanceCPU}, err
}

// settled waits until group is Stable with k members, each holding some
// of the partitions and all of them held.
func settled(ctx context.Context, adm *kadm.Client, group string, k, partitions int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		gs, err := adm.DescribeGroups(ctx, group)
		if err == nil {
			g := gs[group]
			ok := g.Err == nil && g.State == "Stable" && len(g.Members) == k
			total := 0
			for _, m := range g.Members {
				a, isConsumer := m.Assigned.AsConsumer()
				held := 0
				if isConsumer {
					for _, t := range a.Topics {
						held += len(t.Partitions)
					}
				}
				ok = ok && held > 0
				total += held
			}
			if ok && total == partitions {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("group %s did not settle with %d members holding %d partitions within 2 minutes", group, k, partitions)
}

// startSluice starts k `sluice run` processes of one service, each with
// its own data directory, running a copying query with a WHERE every
// record passes (so each record is decoded, filtered and encoded).
func (b *scaleBench) startSluice(ctx context.Context, k int, in, out, svc string, cpu *time.Duration) (func() error, error) {
	file := filepath.Join(b.tmp, svc+".sql")
	sql := fmt.Sprintf(`SET 'auto.offset.reset'='earliest';
CREATE STREAM %[1]s (k VARCHAR KEY, seq BIGINT, amount BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON');
CREATE STREAM %[2]s WITH (KAFKA_TOPIC='%[2]s') AS SELECT k, seq, amount FROM %[1]s WHERE amount >= 0;
`, in, out)
	if err := os.WriteFile(file, []byte(sql), 0o644); err != nil {
		return nil, err
	}
	var procs []*exec.Cmd
	var stderrs []*bytes.Buffer
	stop := func() error {
		var first error
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		for i, p := range procs {
			if err := p.Wait(); err != nil && first == nil {
				first = fmt.Errorf("sluice run: %w; stderr:\n%s", err, stderrs[i])
			}
			*cpu += p.ProcessState.UserTime() + p.ProcessState.SystemTime()
		}
		procs = nil
		return first
	}
	for i := range k {
		p := exec.Command(b.cmd.Sluice, "run", file, "--brokers", b.brokers, "--service-id", svc, "--data-dir", filepath.Join(b.tmp, fmt.Sprintf("%s-%d", svc, i)))
		stderr := &bytes.Buffer{}
		p.Stdout, p.Stderr = io.Discard, stderr
		p.Env = append(os.Environ(), "SLUICE_LOG_LEVEL=warn")
		if err := p.Start(); err != nil {
			_ = stop()
			return nil, fmt.Errorf("start sluice: %w", err)
		}
		procs, stderrs = append(procs, p), append(stderrs, stderr)
	}
	return stop, nil
}

// startRaw starts k franz-go group consumers in this process, each
// producing every record it reads, unchanged, to out: the limit of a
// consume→produce loop on this broker.
func (b *scaleBench) startRaw(k int, in, out, group string) (func() error, error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil && ctx.Err() == nil {
			firstErr = err
		}
	}
	var clients []*kgo.Client
	for range k {
		cl, err := kgo.NewClient(append(slices.Clone(b.conn), kgo.ConsumeTopics(in), kgo.ConsumerGroup(group),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ProducerLinger(2*time.Millisecond), kgo.DefaultProduceTopic(out),
			kgo.ProducerBatchCompression(kgo.NoCompression()))...) // as Sluice produces
		if err != nil {
			cancel()
			return nil, err
		}
		clients = append(clients, cl)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				fs.EachError(func(t string, p int32, err error) {
					if !errors.Is(err, context.Canceled) {
						fail(fmt.Errorf("fetch %s/%d: %w", t, p, err))
					}
				})
				fs.EachRecord(func(r *kgo.Record) {
					cl.Produce(ctx, &kgo.Record{Key: r.Key, Value: r.Value, Partition: r.Partition}, func(_ *kgo.Record, err error) {
						if err != nil {
							fail(fmt.Errorf("produce: %w", err))
						}
					})
				})
			}
		}()
	}
	return func() error {
		cancel()
		wg.Wait()
		for _, cl := range clients {
			cl.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		return firstErr
	}, nil
}

// scaleReport is the summary of the scale benchmark's timed runs.
type scaleReport struct {
	contenders []scaleContender
	samples    [][]scaleSample
}

// ratio is the median over runs of contender a's rate over b's within
// one run.
func (r scaleReport) ratio(a, b int) float64 {
	var rs []float64
	for i := range r.samples[a] {
		rs = append(rs, r.samples[a][i].Rate()/r.samples[b][i].Rate())
	}
	return median(rs)
}

func (r scaleReport) print(out io.Writer, brokerName string, records, runs int) {
	fmt.Fprintf(out, "copy of %d records, broker: %s, median of %d interleaved runs\n\n", records, brokerName, runs)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "contender\trecords/s\t(min – max)\tseconds\tproducer done s\tharness CPU s\tsluice CPU s\t")
	for i, ct := range r.contenders {
		rates := make([]float64, len(r.samples[i]))
		secs := make([]float64, len(r.samples[i]))
		prods := make([]float64, len(r.samples[i]))
		hcpu := make([]float64, len(r.samples[i]))
		icpu := make([]float64, len(r.samples[i]))
		for j, s := range r.samples[i] {
			rates[j], secs[j], prods[j] = s.Rate(), s.Elapsed.Seconds(), s.Produced.Seconds()
			hcpu[j], icpu[j] = s.HarnessCPU.Seconds(), s.InstanceCPU.Seconds()
		}
		lo, hi := minMax(rates)
		fmt.Fprintf(tw, "%s\t%.0f\t(%.0f – %.0f)\t%.3f\t%.3f\t%.2f\t%.2f\t\n", ct.name, median(rates), lo, hi, median(secs), median(prods), median(hcpu), median(icpu))
	}
	tw.Flush()
	fmt.Fprintf(out, "\nS2/S1 = %.2f, R2/R1 = %.2f, S1/R1 = %.2f, S2/R2 = %.2f (medians of per-run ratios)\n",
		r.ratio(3, 2), r.ratio(1, 0), r.ratio(2, 0), r.ratio(3, 1))
	fmt.Fprintln(out, "Timed from the first produce to the output's end offsets reaching the count: the producer, the broker and every instance share the machine's cores.")
	fmt.Fprintln(out, "harness CPU: this process (embedded broker, producer, R's loops) over the timed window; sluice CPU: the instances over their whole lives.")
}
