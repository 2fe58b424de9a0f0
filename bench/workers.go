package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// workerCmd is the hidden `bench worker p|h1|ha`: the hand-written
// contenders of the nexmark benchmark, each run by the harness as its own
// process so its CPU and RSS are its own.
type workerCmd struct {
	Kind  string `arg:"" enum:"p,h1,ha" help:"p: raw consume→produce passthrough; h1: q1 with encoding/json; ha: count/sum per (auction, 10 s window) with Badger state, exactly-once."`
	In    string `required:"" help:"Input topic."`
	Out   string `required:"" help:"Output topic."`
	Group string `required:"" help:"Consumer group (and transactional id prefix for ha)."`
	State string `type:"path" help:"Badger directory (ha)."`
}

func (w *workerCmd) Run(ctx context.Context, c *cli) error {
	if c.Brokers == "" {
		return errors.New("worker needs --brokers")
	}
	ctx, stop := signalContext(ctx)
	defer stop()
	opts := []kgo.Opt{
		kgo.SeedBrokers(splitComma(c.Brokers)...),
		kgo.ConsumeTopics(w.In),
		kgo.ConsumerGroup(w.Group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DefaultProduceTopic(w.Out),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5 * time.Millisecond),
		// As Sluice's queries produce (compression.type none, Kafka's
		// producer default), so a copy costs what a copy costs.
		kgo.ProducerBatchCompression(kgo.NoCompression()),
	}
	switch w.Kind {
	case "ha":
		return w.aggregate(ctx, opts)
	default:
		return w.stateless(ctx, opts)
	}
}

// stateless is P (copy each record unchanged) and H1 (q1: decode into a
// map, convert the price, encode), at least once.
func (w *workerCmd) stateless(ctx context.Context, opts []kgo.Opt) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	var perr error
	for ctx.Err() == nil && perr == nil {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachError(func(t string, p int32, err error) { perr = fmt.Errorf("fetch %s/%d: %w", t, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			v := r.Value
			if w.Kind == "h1" {
				var m map[string]any
				if err := json.Unmarshal(r.Value, &m); err != nil {
					perr = err
					return
				}
				price, _ := m["price"].(float64)
				out := map[string]any{"auction": m["auction"], "bidder": m["bidder"], "price": price * 0.908, "dateTime": m["dateTime"]}
				if v, err = json.Marshal(out); err != nil {
					perr = err
					return
				}
			}
			cl.Produce(ctx, &kgo.Record{Key: r.Key, Value: v, Partition: r.Partition, Timestamp: r.Timestamp}, func(_ *kgo.Record, err error) {
				if err != nil && ctx.Err() == nil {
					perr = err
				}
			})
		})
	}
	if perr != nil {
		return perr
	}
	fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.Flush(fctx); err != nil {
		return err
	}
	return cl.CommitUncommittedOffsets(fctx)
}

// aggregate is HA: COUNT(*) and SUM(price) per (key, 10 s tumbling window)
// kept in Badger, one output and one changelog record per bid, each poll's
// batch one Kafka transaction with the input offsets (exactly once); the
// Badger transaction commits after the Kafka one.
func (w *workerCmd) aggregate(ctx context.Context, opts []kgo.Opt) error {
	changelog := w.Out + "-changelog"
	dir := w.State
	if dir == "" {
		d, err := os.MkdirTemp("", "bench-ha-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		return err
	}
	defer db.Close()
	s, err := kgo.NewGroupTransactSession(append(opts,
		kgo.TransactionalID(w.Group+"-tx"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
	)...)
	if err != nil {
		return err
	}
	defer s.Close()
	cl := s.Client()
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopics(ctx, w.In)
	if err != nil || td[w.In].Err != nil {
		return fmt.Errorf("describe %s: %v %v", w.In, err, td[w.In].Err)
	}
	if _, err := adm.CreateTopics(ctx, int32(len(td[w.In].Partitions)), -1, map[string]*string{"cleanup.policy": new("compact")}, changelog); err != nil {
		return fmt.Errorf("create %s: %w", changelog, err)
	}
	type agg struct{ n, sum int64 }
	// A batch once begun is finished even when SIGTERM arrives: only the
	// poll watches ctx.
	bg := context.Background()
	for ctx.Err() == nil {
		fs := s.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetch %s/%d: %w", t, p, err) })
		if ferr != nil {
			return ferr
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := s.Begin(); err != nil {
			return err
		}
		txn := db.NewTransaction(true)
		var perr error
		fs.EachRecord(func(r *kgo.Record) {
			if perr != nil {
				return
			}
			var bid struct {
				Price    int64 `json:"price"`
				DateTime int64 `json:"dateTime"`
			}
			if perr = json.Unmarshal(r.Value, &bid); perr != nil {
				return
			}
			start := bid.DateTime - bid.DateTime%10_000
			sk := binary.BigEndian.AppendUint64(append([]byte(nil), r.Key...), uint64(start))
			var a agg
			if it, err := txn.Get(sk); err == nil {
				_ = it.Value(func(v []byte) error {
					a.n, a.sum = int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:]))
					return nil
				})
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				perr = err
				return
			}
			a.n++
			a.sum += bid.Price
			sv := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(a.n)), uint64(a.sum))
			if perr = txn.Set(sk, sv); errors.Is(perr, badger.ErrTxnTooBig) {
				if perr = txn.Commit(); perr == nil {
					txn = db.NewTransaction(true)
					perr = txn.Set(sk, sv)
				}
			}
			if perr != nil {
				return
			}
			out := fmt.Appendf(nil, `{"auction":%s,"windowStart":%d,"count":%d,"sum":%d}`, strconv.Quote(string(r.Key)), start, a.n, a.sum)
			fail := func(_ *kgo.Record, err error) {
				if err != nil {
					perr = err
				}
			}
			cl.Produce(bg, &kgo.Record{Key: r.Key, Value: out, Partition: r.Partition, Timestamp: r.Timestamp}, fail)
			cl.Produce(bg, &kgo.Record{Topic: changelog, Key: sk, Value: sv, Partition: r.Partition}, fail)
		})
		if err := cl.Flush(bg); err != nil && perr == nil {
			perr = err
		}
		committed, err := s.End(bg, kgo.TransactionEndTry(perr == nil))
		if perr != nil {
			txn.Discard()
			return perr
		}
		if err != nil {
			txn.Discard()
			return err
		}
		if !committed {
			txn.Discard()
			continue
		}
		if err := txn.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// signalContext ends on SIGTERM or SIGINT: the harness stops workers with
// SIGTERM and they flush and commit on the way out.
func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
}

func splitComma(s string) []string { return strings.Split(s, ",") }
