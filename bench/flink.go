package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The Flink SQL contenders (issue 22): bench/flink/run <q0|q1|q2|agg>, a
// local MiniCluster running the workload as Flink SQL over the Kafka
// connector (bench/flink/README.md).
//
//	F-q0   SELECT * (at-least-once sink);
//	F-q1   q1, the price * 0.908 (at-least-once sink);
//	F-q2   q2, WHERE MOD(auction, 123) = 0 (at-least-once sink);
//	F-agg  the 10 s tumbling COUNT/SUM per auction as a window TVF, exactly-once
//	       (transactional sink, checkpoints every second).
//
// F-agg emits each window once, when the watermark passes its end (Flink's
// window aggregation is EMIT FINAL), where Sluice and Kafka Streams emit an
// update per bid. Its workload is aggFinal, whose expected output count
// flinkExpect computes from the bids topic.

// aggFinal is agg with one output per closed (auction, window).
const aggFinal workload = "agg-final"

// flinkWatermarkDelay is the delay of F-agg's watermark (WATERMARK FOR ts AS
// ts - INTERVAL '2' SECOND in bench/flink's Main.java).
const flinkWatermarkDelay = 2000

// flinkContenders returns F-q0, F-q1, F-q2 and F-agg against brokers, each
// unavailable with the reason when bench/flink/run, java or mvn is missing.
func flinkContenders(brokers string) []*contender {
	run, why := findFlink()
	f := func(mode string) func(in, out, id, dir string) *exec.Cmd {
		return func(in, out, id, dir string) *exec.Cmd {
			return exec.Command(run, mode, "--brokers", brokers, "--in", in, "--out", out, "--app-id", id)
		}
	}
	return []*contender{
		{name: "F-q0 Flink SQL SELECT *", wl: q0, start: f("q0"), unavailable: why},
		{name: "F-q1 Flink SQL q1", wl: q1, start: f("q1"), unavailable: why},
		{name: "F-q2 Flink SQL q2", wl: q2, start: f("q2"), unavailable: why},
		{name: "F-agg Flink SQL agg (exactly-once, final windows only)", wl: aggFinal, start: f("agg"), unavailable: why},
	}
}

// findFlink returns the Flink contender's run script, or why there is none.
func findFlink() (string, string) {
	p, err := filepath.Abs(filepath.Join("flink", "run"))
	if err != nil {
		return "", err.Error()
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return "", "bench/flink/run does not exist"
	case fi.Mode()&0o111 == 0:
		return "", "bench/flink/run is not executable"
	}
	for _, c := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(c); err != nil {
			return "", c + " not found (bench/flink/run builds with Maven and runs on Java 17+)"
		}
	}
	return p, ""
}

// flinkExpect sets expect[aggFinal], the number of records F-agg writes
// for the bids in topic: the (auction, 10 s window) pairs whose window the
// final watermark closes. Flink's watermark at the window operator is the
// least over the partitions of (the partition's greatest timestamp - the
// delay), and a window [s, s+10 s) fires once it reaches s+10 s-1 ms; the
// newest windows stay open, as no later bid comes. When no F-agg is to run
// it does nothing; when the count cannot be made, F-agg is unavailable.
func flinkExpect(ctx context.Context, conn []kgo.Opt, topic string, expect map[workload]int64, cts []*contender) {
	var fa []*contender
	for _, ct := range cts {
		if ct.wl == aggFinal && ct.unavailable == "" {
			fa = append(fa, ct)
		}
	}
	if len(fa) == 0 {
		return
	}
	n, err := countFinalWindows(ctx, conn, topic)
	if err == nil && n == 0 {
		err = fmt.Errorf("no window of %s closes", topic)
	}
	if err != nil {
		for _, ct := range fa {
			ct.unavailable = "expected output count: " + err.Error()
		}
		return
	}
	expect[aggFinal] = n
	fmt.Printf("F-agg: %d of the (auction, window) keys are in windows the final watermark closes; F-agg writes those\n", n)
}

func countFinalWindows(ctx context.Context, conn []kgo.Opt, topic string) (int64, error) {
	cl, err := kgo.NewClient(append(conn, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	left := map[int32]int64{}
	var total int64
	ends.Each(func(o kadm.ListedOffset) {
		left[o.Partition] = o.Offset
		total += o.Offset
	})
	type win struct {
		key string
		w   int64
	}
	seen := map[win]struct{}{}
	maxTS := map[int32]int64{}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for read := int64(0); read < total; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("read %d of %d bids: %w", read, total, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read++
			ts := r.Timestamp.UnixMilli()
			maxTS[r.Partition] = max(maxTS[r.Partition], ts)
			seen[win{string(r.Key), ts / 10_000}] = struct{}{}
		})
	}
	wm := int64(-1 << 62)
	for p, end := range left {
		if end == 0 {
			return 0, fmt.Errorf("partition %d of %s is empty, so Flink's watermark never advances", p, topic)
		}
		if first := wm == -1<<62; first || maxTS[p]-flinkWatermarkDelay < wm {
			wm = maxTS[p] - flinkWatermarkDelay
		}
	}
	var n int64
	for k := range seen {
		if (k.w+1)*10_000-1 <= wm {
			n++
		}
	}
	return n, nil
}

// flinkSteady is F-agg's Steady: its output comes in bursts (each window
// once it closes, committed only with a checkpoint), so that the output's
// 10% and 100% can land in one transaction and the usual measure says
// nothing. Instead it times the input from the moment the job runs (the
// "RUNNING <epoch ms>" line bench/flink/run prints; JVM and MiniCluster
// start-up are left out as for the others) until the output held every
// record, and returns 0.9 of that span, as Rate counts 90% of the input
// over Steady. Without the line it returns 0 (Rate then uses Wall).
func flinkSteady(p *proc, at100 time.Time) time.Duration {
	for {
		select {
		case line := <-p.lines:
			if v, ok := strings.CutPrefix(line, "RUNNING "); ok {
				ms, err := strconv.ParseInt(v, 10, 64)
				if err != nil || !at100.After(time.UnixMilli(ms)) {
					return 0
				}
				return at100.Sub(time.UnixMilli(ms)) * 9 / 10
			}
		default:
			return 0
		}
	}
}
