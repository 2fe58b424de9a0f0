package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/failover"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// A pull query on a stream (a SELECT without EMIT CHANGES) scans the
// stream's topic, as ksqlDB does: every record from the start of each
// partition up to its end as the query starts (the last stable offset:
// committed records only), through the WHERE and projection, and then
// the query ends. The records are read by a consumer of its own, with no
// group, partition by partition.

// streamScanTimeout bounds a stream scan that cannot reach its ends (a
// broker that stops answering).
const streamScanTimeout = 60 * time.Second

// noOutput drops what a scan's task would produce: its results go to
// the client through the plan's callback.
type noOutput struct{}

func (noOutput) Produce(*exec.Record) {}

// streamPull answers a pull query on a stream, planned as plan (its
// checks passed: no JOIN, WINDOW or GROUP BY), by scanning its topic.
func (e *Engine) streamPull(ctx context.Context, sel *parser.Select, plan *planner.Query) (*RowStream, error) {
	id := plan.ID
	if len(plan.Topology.Subs) != 1 || plan.Collect == nil {
		return nil, fmt.Errorf("%w: this pull query on a stream needs a repartition; add EMIT CHANGES for a push query", planner.ErrUnsupported)
	}
	sub := plan.Topology.Subs[0]
	topic := sub.Source.Topic
	ctx, cancel := context.WithTimeout(ctx, streamScanTimeout)
	defer cancel()
	ends, err := failover.Offsets(ctx, "list committed offsets", func(ctx context.Context) (kadm.ListedOffsets, error) {
		return e.adm.ListCommittedOffsets(ctx, topic)
	})
	if err != nil {
		return nil, fmt.Errorf("pull query on %s: end offsets of %s: %w", sel.From.Name, topic, err)
	}
	starts, err := failover.Offsets(ctx, "list start offsets", func(ctx context.Context) (kadm.ListedOffsets, error) {
		return e.adm.ListStartOffsets(ctx, topic)
	})
	if err != nil {
		return nil, fmt.Errorf("pull query on %s: start offsets of %s: %w", sel.From.Name, topic, err)
	}
	remaining := map[int32]int64{} // partition → end offset still to reach
	assign := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			return
		}
		start := int64(0)
		if s, ok := starts.Lookup(topic, o.Partition); ok && s.Err == nil {
			start = s.Offset
		}
		if o.Offset > start {
			remaining[o.Partition] = o.Offset
			assign[o.Partition] = kgo.NewOffset().At(start)
		}
	})
	var rows [][]any
	plan.Collect.Fn = func(row *exec.Row) { rows = append(rows, append([]any(nil), row.Cols...)) }
	full := func() bool { return plan.Limit > 0 && len(rows) >= plan.Limit }
	if sel.HasLimit && sel.Limit == 0 {
		remaining = nil // LIMIT 0: nothing to read
	}
	if len(remaining) > 0 {
		if err := e.scanPartitions(ctx, plan, sub, topic, assign, remaining, full); err != nil {
			return nil, fmt.Errorf("pull query on %s: %w", sel.From.Name, err)
		}
	}
	if plan.Limit > 0 && len(rows) > plan.Limit {
		rows = rows[:plan.Limit]
	}
	rs := pulledRows(plan, id, rows)
	rs.Scan = true
	rs.LimitReached = sel.HasLimit && len(rows) >= sel.Limit
	return rs, nil
}

// scanPartitions reads each partition from its start to its end offset
// through a task of the scan's plan.
func (e *Engine) scanPartitions(ctx context.Context, plan *planner.Query, sub *exec.SubTopology, topic string,
	assign map[int32]kgo.Offset, remaining map[int32]int64, full func() bool) error {
	opts := append(append(append([]kgo.Opt{}, e.cfg.ConnOpts...), e.clientOpts("sluice-"+e.cfg.ServiceID+"-scan")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords())
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	tasks := map[int32]*exec.Task{}
	for len(remaining) > 0 && !full() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("scan of %s did not reach its end: %w", topic, err)
		}
		var fetchErr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) {
				fetchErr = err
			}
		})
		if fetchErr != nil {
			return fetchErr
		}
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			end, ok := remaining[fp.Partition]
			if !ok {
				return
			}
			t := tasks[fp.Partition]
			for _, kr := range fp.Records {
				if err != nil || kr.Offset >= end || full() {
					break
				}
				if t == nil {
					if t, err = exec.NewTask(plan.Topology, sub, fp.Partition, e.db, noOutput{}, &exec.Metrics{}, e.log); err != nil {
						return
					}
					if err = t.Open(); err != nil {
						return
					}
					tasks[fp.Partition] = t
				}
				if !kr.Attrs.IsControl() {
					rec := exec.Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value, Timestamp: kr.Timestamp.UnixMilli()}
					for _, h := range kr.Headers {
						rec.Headers = append(rec.Headers, exec.Header{Key: h.Key, Value: h.Value})
					}
					err = t.Process(&rec)
				}
				if kr.Offset+1 >= end {
					delete(remaining, fp.Partition)
				}
			}
			if t != nil {
				t.FlushBatch()
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}
