package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/alecthomas/kong"
)

type cli struct {
	Quick   bool   `help:"Smaller inputs, for a run of a few minutes."`
	Brokers string `help:"Bootstrap address of an existing cluster (e.g. from scripts/kafka start). Default: an embedded broker (broker.Start) in this process."`
	Results string `default:"results.json" type:"path" help:"JSON file the target ratios are merged into."`

	Restore      restoreCmd      `cmd:"" default:"withargs" help:"Changelog restore (issue 5, T9): Store.Restore against a raw franz-go consume of the same topic."`
	Scale        scaleCmd        `cmd:"" help:"Scale-out (issue 8): a stateless query's throughput on one and two sluice instances against a raw franz-go consume→produce loop."`
	Nexmark      nexmarkCmd      `cmd:"" help:"Nexmark (issue 11, T1–T11, M1, M2): q0, q1, q2 and a windowed aggregation on sluice run processes against hand-written Go, Kafka Streams and goka; restore against a raw consume."`
	NexmarkSuite nexmarkSuiteCmd `cmd:"" name:"nexmark-suite" help:"The Nexmark suite (issue 35): the standard queries on Sluice, Flink SQL (the reference text) and Kafka Streams, each output checked against one computed from the generated events."`
	CostCurve    costCurveCmd    `cmd:"" name:"costcurve" help:"Cost curve (issue 22, C1–C3): the aggregation's rate and peak RSS, and a cold restore, at 100,000, 1,000,000 and 5,000,000 keys, Sluice beside Kafka Streams; a PNG plot in docs/."`
	PGLoad       pgloadCmd       `cmd:"" name:"pgload" help:"The Postgres front door under load (issue 37): concurrent pgx sessions run pull queries by key against sluice server --pg-listen; p50/p99/max latency, queries/s, errors."`
	Worker       workerCmd       `cmd:"" hidden:"" help:"A hand-written nexmark contender (p, h1, ha), run by the harness as its own process."`
}

func main() {
	var c cli
	kctx := kong.Parse(&c,
		kong.Name("bench"),
		kong.Description("Sluice benchmark harness: contenders interleaved, medians and ratios reported."),
		kong.UsageOnError(),
	)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	kctx.BindTo(ctx, (*context.Context)(nil))
	if err := kctx.Run(&c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
