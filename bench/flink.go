package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The Flink SQL contenders (issue 22): bench/flink/run <mode>, a local
// MiniCluster running the workload as Flink SQL over the Kafka connector
// (bench/flink/README.md).
//
//	F-q0        SELECT * (at-least-once sink);
//	F-q1        q1, the price * 0.908 (at-least-once sink);
//	F-q2        q2, WHERE MOD(auction, 123) = 0 (at-least-once sink);
//	F-agg       the 10 s tumbling COUNT/SUM per auction as a window TVF,
//	            exactly-once (transactional sink, checkpoints every second);
//	F-agg-late  the same over agg-late's bids (15% late within the grace);
//	F-session   COUNT(*) per bidder over the SESSION window TVF (2 s gap),
//	            exactly-once;
//	F-join      each bid LEFT JOINed FOR SYSTEM_TIME AS OF its time with
//	            the auctions as an upsert-kafka versioned table.
//
// Flink's window aggregations are EMIT FINAL: each window (or session) is
// written once, when the watermark passes its end, where Sluice and Kafka
// Streams write an update per bid. The temporal join writes a bid once
// both inputs' watermarks have passed its time. So each Flink workload has
// its own expected count, which flinkExpect computes from the input topics
// before the runs: the newest windows, sessions and bids are never written,
// as no later record moves the watermark past them.
const (
	aggFinal      workload = "agg-final"      // one record per closed (auction, window)
	aggLateFinal  workload = "agg-late-final" // the same over agg-late's bids
	sessionFinal  workload = "session-final"  // one record per closed (bidder, session)
	joinTemporal  workload = "join-temporal"  // one record per bid the watermarks passed
	flinkDelay             = 2000             // the window aggregations' watermark delay (Main.java's WATERMARK_DELAY)
	flinkWindowMs          = 10_000
)

// bursty says whether a workload's output arrives a checkpoint at a time
// (the exactly-once window aggregations), so that its rate is timed from
// the job's start (flinkSteady) instead of over the output's progress.
func bursty(wl workload) bool {
	return wl == aggFinal || wl == aggLateFinal || wl == sessionFinal
}

// flinkContenders returns the Flink SQL contenders against brokers, each
// unavailable with the reason when bench/flink/run, java or mvn is
// missing. x holds the stateful workloads' inputs, table the auctions.
func flinkContenders(brokers string, x *extraInputs, table string) []*contender {
	run, why := findFlink()
	f := func(mode string) func(in, out, id, dir string) *exec.Cmd {
		return func(in, out, id, dir string) *exec.Cmd {
			cmd := exec.Command(run, mode, "--brokers", brokers, "--in", in, "--out", out, "--app-id", id)
			if mode == "join" {
				cmd.Args = append(cmd.Args, "--table", table)
			}
			return cmd
		}
	}
	return []*contender{
		{name: "F-q0 Flink SQL SELECT *", wl: q0, start: f("q0"), unavailable: why},
		{name: "F-q1 Flink SQL q1", wl: q1, start: f("q1"), unavailable: why},
		{name: "F-q2 Flink SQL q2", wl: q2, start: f("q2"), unavailable: why},
		{name: "F-agg Flink SQL agg (exactly-once, final windows only)", wl: aggFinal, start: f("agg"), unavailable: why},
		{name: "F-agg-late Flink SQL agg, late bids (exactly-once, final windows only)", wl: aggLateFinal, topic: x.lateTopicOr(), start: f("agg-late"), unavailable: why},
		{name: "F-session Flink SQL session count (exactly-once, final sessions only)", wl: sessionFinal, topic: x.bidderTopicOr(), start: f("session"), unavailable: why},
		{name: "F-join Flink SQL bids temporal LEFT JOIN auctions", wl: joinTemporal, start: f("join"), unavailable: why},
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

// flinkExpect sets the expected output count of each Flink workload that
// is to run, from its input topics (bids is the bids topic, table the
// auctions). A workload whose count cannot be made makes its contender
// unavailable.
func flinkExpect(ctx context.Context, conn []kgo.Opt, bids, table string, expect map[workload]int64, cts []*contender) {
	for _, ct := range cts {
		if ct.unavailable != "" {
			continue
		}
		if _, done := expect[ct.wl]; done {
			continue
		}
		var count func() (int64, error)
		in := cmp.Or(ct.topic, bids)
		switch ct.wl {
		case aggFinal, aggLateFinal:
			// The windows are checked one by one, with their results
			// (nexmark_final.go), as S-agg-final's are.
			count = func() (int64, error) {
				windows, err := finalWindows(ctx, conn, in, flinkClosed)
				ct.verify = verifyFinalWindows(windows, flinkWindow)
				return int64(len(windows)), err
			}
		case sessionFinal:
			count = func() (int64, error) { return countFinalSessions(ctx, conn, in) }
		case joinTemporal:
			count = func() (int64, error) { return countTemporalJoin(ctx, conn, in, table) }
		default:
			continue
		}
		n, err := count()
		if err == nil && n == 0 {
			err = fmt.Errorf("the final watermark passes no output of %s", in)
		}
		if err != nil {
			ct.unavailable = "expected output count: " + err.Error()
			continue
		}
		expect[ct.wl] = n
		fmt.Printf("%s: the final watermark passes %d outputs; it writes those\n", short(ct.name), n)
	}
}

// topicRecords reads every record of topic, giving each to f, and returns
// each partition's greatest timestamp. An empty partition is an error:
// Flink's watermark, the least over the partitions, would never advance.
func topicRecords(ctx context.Context, conn []kgo.Opt, topic string, f func(*kgo.Record)) (map[int32]int64, error) {
	cl, err := kgo.NewClient(append(conn, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	var total int64
	var empty []int32
	ends.Each(func(o kadm.ListedOffset) {
		total += o.Offset
		if o.Offset == 0 {
			empty = append(empty, o.Partition)
		}
	})
	if len(empty) > 0 {
		return nil, fmt.Errorf("partitions %v of %s are empty, so Flink's watermark never advances", empty, topic)
	}
	maxTS := map[int32]int64{}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for read := int64(0); read < total; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %d of %d records of %s: %w", read, total, topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read++
			ts := r.Timestamp.UnixMilli()
			if cur, ok := maxTS[r.Partition]; !ok || ts > cur {
				maxTS[r.Partition] = ts
			}
			f(r)
		})
	}
	return maxTS, nil
}

// finalWatermark is a source's last watermark: the least over its
// partitions of the greatest timestamp, less the delay.
func finalWatermark(maxTS map[int32]int64, delay int64) int64 {
	wm := int64(1) << 62
	for _, ts := range maxTS {
		wm = min(wm, ts-delay)
	}
	return wm
}

// countFinalSessions counts the sessions (2 s gap) of topic's keys that
// the final watermark closes. Two records of a key share a session when
// their times are at most the gap apart (Flink merges windows [t, t+gap)
// that touch); a session ending at its last record's time + gap fires once
// the watermark reaches its end - 1 ms. Per key the records are in time
// order (the generator writes them so), so a session never reopens.
func countFinalSessions(ctx context.Context, conn []kgo.Opt, topic string) (int64, error) {
	times := map[string][]int64{}
	maxTS, err := topicRecords(ctx, conn, topic, func(r *kgo.Record) {
		times[string(r.Key)] = append(times[string(r.Key)], r.Timestamp.UnixMilli())
	})
	if err != nil {
		return 0, err
	}
	wm := finalWatermark(maxTS, flinkDelay)
	var n int64
	for _, ts := range times {
		slices.Sort(ts)
		last := ts[0]
		for _, t := range ts[1:] {
			if t-last > sessionGapMs {
				if last+sessionGapMs-1 <= wm {
					n++
				}
			}
			last = t
		}
		if last+sessionGapMs-1 <= wm {
			n++
		}
	}
	return n, nil
}

// countTemporalJoin counts the bids the temporal join writes: those at or
// before the join's final watermark, the least of the bids' and the
// auctions' (both watermarks are the records' own time, no delay).
func countTemporalJoin(ctx context.Context, conn []kgo.Opt, bids, table string) (int64, error) {
	var times []int64
	bidMax, err := topicRecords(ctx, conn, bids, func(r *kgo.Record) { times = append(times, r.Timestamp.UnixMilli()) })
	if err != nil {
		return 0, err
	}
	tableMax, err := topicRecords(ctx, conn, table, func(*kgo.Record) {})
	if err != nil {
		return 0, err
	}
	wm := min(finalWatermark(bidMax, 0), finalWatermark(tableMax, 0))
	var n int64
	for _, t := range times {
		if t <= wm {
			n++
		}
	}
	return n, nil
}

// flinkSteady is the Steady of a bursty Flink workload (F-agg, F-agg-late,
// F-session): its output comes in bursts (each window once it closes,
// committed only with a checkpoint), so that the output's
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
