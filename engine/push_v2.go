package engine

import (
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// Scalable push queries (ksqlDB's KLIP-52, ksql.query.push.v2.enabled):
// a push query over a stream or table that a running persistent query
// writes is served from that query's output as it is produced
// (exec.PushRegistry), with no consumer group, consumer or topology of its
// own on the broker. ksqlDB's rules decide which push queries qualify, and
// every other one runs as before (a transient query with its own group),
// without an error:
//
//   - the property is true (SET, or the request's properties);
//   - auto.offset.reset is latest (the default): a scalable push query sees
//     only rows written after it subscribed;
//   - one source, no JOIN, WINDOW, GROUP BY, HAVING or PARTITION BY, one
//     stateless chain (the planner's scalable-push rule, Query.ScalablePush);
//   - exactly one running persistent query on this engine writes the
//     source's topic (a CSAS or CTAS, not also an INSERT INTO).
//
// docs/push_v2.md states the semantics.

// Properties of scalable push queries.
const (
	// PushV2EnabledProperty turns scalable push queries on for a session
	// or request. Default false.
	PushV2EnabledProperty = "ksql.query.push.v2.enabled"
	// PushV2RegistryProperty, set to false when a persistent query is
	// created, keeps scalable push queries off that query (ksqlDB's
	// registry.installed). Sluice's default is true: a registry nobody
	// subscribes to costs one atomic load per output record.
	PushV2RegistryProperty = "ksql.query.push.v2.registry.installed"
	// PushV2BufferProperty is how many records a scalable push query may
	// fall behind its persistent query before it is dropped. Default
	// exec.PushBufferSize (1000, ksqlDB's).
	PushV2BufferProperty = "sluice.query.push.v2.buffer.records"
)

// scalablePushPrefix starts the id of every scalable push query, as in
// ksqlDB.
const scalablePushPrefix = "SCALABLE_PUSH_QUERY_"

// newPushRegistry is the registry a persistent query created with props
// gets: none when they turn it off.
func newPushRegistry(id string, props map[string]string) *exec.PushRegistry {
	if !propBool(props, propPushV2Registry) {
		return nil
	}
	return exec.NewPushRegistry(id)
}

// scalablePush runs sel as a scalable push query when it qualifies; ok
// false says it does not and the caller runs it as before.
func (e *Engine) scalablePush(sel *parser.Select, props map[string]string) (rs *RowStream, ok bool, err error) {
	plan, writer := e.scalablePlan(sel, props)
	if plan == nil {
		return nil, false, nil
	}
	rs, err = e.subscribePush(writer, plan, plan.ID, props)
	return rs, err == nil, err
}

// scalablePlan plans sel as a scalable push query, with the persistent
// query whose output it would read, or returns nil when it does not
// qualify. Whether its shape qualifies is the planner's decision
// (Query.ScalablePush); the engine adds what only it knows: its
// properties and which running query writes the source.
func (e *Engine) scalablePlan(sel *parser.Select, props map[string]string) (*planner.Query, *Query) {
	if !propBool(props, propPushV2Enabled) {
		return nil, nil
	}
	notScalable := func(reason string) (*planner.Query, *Query) {
		e.log.Info("push query is not scalable; it runs with a consumer group of its own", "from", sel.From.Name, "reason", reason)
		return nil, nil
	}
	if !e.clu.scansTopics() {
		return notScalable("no Kafka runner (offline engine)")
	}
	if reset := autoOffsetReset(props); reset != "latest" {
		return notScalable("auto.offset.reset is " + reset + ", not latest")
	}
	plan, err := planner.PlanQuery(e.cat, sel, nil, scalablePushPrefix+newPushID(), e.planOptions(props))
	if err != nil {
		// Planned as a push query of its own, it gives its error there.
		return nil, nil
	}
	if !plan.ScalablePush {
		return notScalable("the planner's scalable-push rule did not mark it: it needs one source and one stateless chain, without JOIN, WINDOW, GROUP BY, HAVING or PARTITION BY")
	}
	writer, reason := e.pushV2Writer(plan)
	if writer == nil {
		return notScalable(reason)
	}
	return plan, writer
}

// pushV2Writer returns the persistent query whose output the scalable
// plan would read (the one running query writing its source's topic), or
// why there is none.
func (e *Engine) pushV2Writer(plan *planner.Query) (*Query, string) {
	topic, name := plan.Topology.Subs[0].Source.Topic, plan.Sources[0]
	e.mu.Lock()
	defer e.mu.Unlock()
	var writers []*Query
	for _, q := range e.queries {
		if q.Plan.Topology.SinkTopic == topic {
			writers = append(writers, q)
		}
	}
	switch {
	case len(writers) == 0:
		return nil, "no persistent query writes " + name
	case len(writers) > 1:
		return nil, fmt.Sprintf("%d persistent queries write %s", len(writers), name)
	case writers[0].push == nil:
		return nil, writers[0].ID + " was created with " + PushV2RegistryProperty + "=false"
	case writers[0].runner == nil:
		return nil, writers[0].ID + " is not running on this instance"
	}
	return writers[0], ""
}

func newPushID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// subscribePush registers the query with its writer's registry and runs
// the records published to it through the query's plan, one task per
// partition of the writer's sink, in a goroutine of its own.
func (e *Engine) subscribePush(writer *Query, plan *planner.Query, id string, props map[string]string) (*RowStream, error) {
	size, err := pushBufferSize(props)
	if err != nil {
		return nil, err
	}
	sub, err := writer.push.Subscribe(size)
	if err != nil {
		return nil, err
	}
	feed := newRowFeed(plan.Limit)
	rs := feed.stream(plan.Output, id)
	// rs.stop is set before the first record can arrive (the worker
	// starts below).
	plan.Collect.Fn = feed.collect(rs, rs.Close)
	worker := make(chan struct{})
	rs.stop = func() {
		sub.Unsubscribe()
		<-worker
	}
	e.log.Info("scalable push query started", "query", id, "persistent_query", writer.ID)
	go func() {
		defer close(worker)
		err := e.runPush(sub, writer.runner, plan, id)
		feed.end(rs, err)
		e.log.Info("scalable push query ended", "query", id, "persistent_query", writer.ID, "err", err)
	}()
	return rs, nil
}

// runPush feeds the subscription's records to the plan until the
// subscription or the writer's runner ends, and returns why it ended
// (nil: unsubscribed).
func (e *Engine) runPush(sub *exec.PushSubscription, writer *exec.KafkaRunner, plan *planner.Query, id string) error {
	topo := plan.Topology
	src := topo.Subs[0]
	m := &exec.Metrics{}
	tasks := map[int32]*exec.Task{}
	defer func() {
		for _, t := range tasks {
			_ = t.Close()
		}
	}()
	// stopped is set once the writer's runner ends: a failed or stopped
	// query writes nothing more, and the records already buffered are
	// delivered before the end.
	var stopped error
	writerDone := writer.Done()
	for {
		var pr exec.PushRecord
		select {
		case rec, ok := <-sub.C:
			if !ok {
				if stopped != nil {
					return stopped
				}
				return sub.Err()
			}
			pr = rec
		case <-writerDone:
			writerDone = nil
			stopped = exec.ErrPushSourceStopped
			if err := writer.Err(); err != nil {
				stopped = fmt.Errorf("%w: %v", exec.ErrPushSourceStopped, err)
			}
			sub.Unsubscribe()
			continue
		}
		t := tasks[pr.Partition]
		if t == nil {
			var err error
			if t, err = exec.NewTask(topo, src, pr.Partition, e.db, noOutput{}, m, e.log); err != nil {
				sub.Unsubscribe()
				return fmt.Errorf("query %s: %w", id, err)
			}
			if err := t.Open(); err != nil {
				sub.Unsubscribe()
				return fmt.Errorf("query %s: %w", id, err)
			}
			tasks[pr.Partition] = t
		}
		rec := exec.Record{Topic: src.Source.Topic, Partition: pr.Partition, Offset: pr.Offset,
			Key: pr.Key, Value: pr.Value, Timestamp: pr.Timestamp, Headers: pr.Headers}
		if err := t.Process(&rec); err != nil {
			var retry *exec.RegistryRetry
			if !errors.As(err, &retry) {
				sub.Unsubscribe()
				return fmt.Errorf("query %s: %w", id, err)
			}
			// The sink's schema was registered when its query started:
			// a registry outage loses this row for this subscriber only.
			e.log.Warn("scalable push query skipped a row: schema registry unavailable", "query", id, "err", err)
		}
		t.FlushBatch()
	}
}

// PushSubscribers reports how many scalable push queries read a
// persistent query's output on this instance now.
func (q *Query) PushSubscribers() int { return q.push.Subscribers() }
