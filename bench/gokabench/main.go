// Command gokabench runs the goka (github.com/lovoo/goka) peer of Sluice's
// benchmark harness: the same Nexmark queries written as a goka user would
// write them, so the harness can time goka against Sluice on one broker.
//
//	gokabench <q1|agg|restore> --brokers ADDR --in TOPIC --out TOPIC --group ID [--storage DIR]
//
// q1 is a stateless goka processor (Input → Output), agg a stateful one with
// a group table (goka.Persist), restore a processor that only recovers its
// group table and prints `RESTORED <records> <millis>`. See README.md.
//
// goka processes at least once: it commits input offsets after the emits and
// table writes of a message are acknowledged, and has no transactions, so a
// crash replays the input since the last commit (goka has no exactly-once).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/lovoo/goka"
	"github.com/lovoo/goka/storage"
)

const usage = `usage: gokabench <q1|agg|restore> --brokers ADDR --in TOPIC --out TOPIC --group ID [--storage DIR]`

type options struct {
	mode    string
	brokers []string
	in      string
	out     string
	group   string
	storage string
	verbose bool
}

func parseArgs(args []string) (options, error) {
	var o options
	if len(args) < 1 {
		return o, errors.New(usage)
	}
	o.mode = args[0]
	switch o.mode {
	case "q1", "agg", "restore":
	default:
		return o, fmt.Errorf("unknown mode %q\n%s", o.mode, usage)
	}
	fs := flag.NewFlagSet("gokabench "+o.mode, flag.ContinueOnError)
	brokers := fs.String("brokers", "127.0.0.1:9092", "Kafka bootstrap address(es), comma-separated")
	fs.StringVar(&o.in, "in", "", "input topic of Nexmark bids")
	fs.StringVar(&o.out, "out", "", "output topic")
	fs.StringVar(&o.group, "group", "", "goka group (consumer group; the group table is <group>-table)")
	fs.StringVar(&o.storage, "storage", "", "directory of goka's local LevelDB storage (default: a temporary directory, removed on exit)")
	fs.BoolVar(&o.verbose, "verbose", false, "log goka's (and sarama's) messages to stderr")
	if err := fs.Parse(args[1:]); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q\n%s", fs.Args(), usage)
	}
	for _, b := range strings.Split(*brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			o.brokers = append(o.brokers, b)
		}
	}
	if len(o.brokers) == 0 || o.in == "" || o.group == "" {
		return o, fmt.Errorf("--brokers, --in and --group are required\n%s", usage)
	}
	if o.out == "" && o.mode != "restore" {
		return o, fmt.Errorf("--out is required for %s\n%s", o.mode, usage)
	}
	return o, nil
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("gokabench: ")
	log.SetOutput(os.Stderr)
	o, err := parseArgs(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// saramaConfig is goka's default configuration with what the benchmark
// needs changed: a protocol version Kafka 4.x still speaks (4.0 removed the
// request versions of Kafka < 2.1, and goka's default is V2_0_0_0) and
// input streams read from the oldest offset. Everything else (snappy
// compression, acks=1, 100 ms producer linger) stays goka's default.
func saramaConfig() *sarama.Config {
	cfg := goka.DefaultConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	return cfg
}

func run(o options) error {
	start := time.Now()

	logger := log.New(io.Discard, "", 0)
	if o.verbose {
		logger = log.New(os.Stderr, "goka: ", log.LstdFlags|log.Lmicroseconds)
		goka.SetSaramaLogger(log.New(os.Stderr, "sarama: ", log.LstdFlags|log.Lmicroseconds))
	}

	dir := o.storage
	if dir == "" {
		d, err := os.MkdirTemp("", "gokabench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}

	var graph *goka.GroupGraph
	var restored *recoveryCounter
	var opts []goka.ProcessorOption
	group := goka.Group(o.group)
	switch o.mode {
	case "q1":
		graph = q1Graph(group, goka.Stream(o.in), goka.Stream(o.out))
	case "agg":
		graph = aggGraph(group, goka.Stream(o.in), goka.Stream(o.out))
	case "restore":
		graph = restoreGraph(group, goka.Stream(o.in))
		restored = new(recoveryCounter)
		opts = append(opts, goka.WithUpdateCallback(restored.update))
	}

	cfg := saramaConfig()
	tmc := goka.NewTopicManagerConfig()
	// goka creates missing group tables (and loop topics) itself, with a
	// replication factor of 2 by default; the benchmark broker has one node.
	tmc.Table.Replication = 1
	tmc.Stream.Replication = 1
	opts = append(opts,
		goka.WithClientID("gokabench-"+o.mode),
		goka.WithStorageBuilder(storage.DefaultBuilder(dir)),
		goka.WithProducerBuilder(goka.ProducerBuilderWithConfig(cfg)),
		goka.WithConsumerGroupBuilder(goka.ConsumerGroupBuilderWithConfig(cfg)),
		goka.WithConsumerSaramaBuilder(goka.SaramaConsumerBuilderWithConfig(cfg)),
		goka.WithTopicManagerBuilder(goka.TopicManagerBuilderWithConfig(cfg, tmc)),
		goka.WithLogger(logger),
	)

	proc, err := goka.NewProcessor(o.brokers, graph, opts...)
	if err != nil {
		return fmt.Errorf("creating the %s processor: %w", o.mode, err)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- proc.Run(ctx) }()

	if restored != nil {
		ready := make(chan error, 1)
		go func() { ready <- proc.WaitForReadyContext(ctx) }()
		select {
		case err := <-ready:
			if err != nil {
				stopped := ctx.Err() != nil
				cancel()
				<-done
				if stopped {
					// SIGTERM before the table was recovered: a clean stop.
					log.Print("stopped before the group table was recovered")
					return nil
				}
				return err
			}
			if !proc.Recovered() {
				// WaitForReady also returns when the processor stopped.
				cancel()
				return fmt.Errorf("processor stopped before it recovered: %v", <-done)
			}
			fmt.Fprintf(os.Stdout, "RESTORED %d %d\n", restored.n.Load(), time.Since(start).Milliseconds())
			os.Stdout.Sync()
		case err := <-done:
			if ctx.Err() != nil {
				log.Print("stopped before the group table was recovered")
				return nil
			}
			return fmt.Errorf("processor stopped before it recovered: %v", err)
		}
	}

	err = <-done
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	if o.mode == "agg" && lateBids.Load() > 0 {
		log.Printf("agg: dropped %d late bids (window before the auction's current one)", lateBids.Load())
	}
	return err
}
