package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

func (e *Engine) query(id string) *Query {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.queries[id]
}

// start creates the internal topics of a plan and runs it.
func (e *Engine) start(ctx context.Context, plan *planner.Query, text string, props map[string]string) (*Query, error) {
	topo := plan.Topology
	for _, side := range []string{topo.ErrorTopic, topo.LateTopic} {
		if side == "" {
			continue
		}
		if err := e.clu.createTopic(ctx, side, 1, 0, nil); err != nil {
			return nil, err
		}
	}
	for _, it := range topo.Internal {
		if err := e.clu.createTopic(ctx, it.Name, it.Partitions, 0, it.Configs); err != nil {
			return nil, err
		}
	}
	for _, st := range topo.Stores {
		if st.FromSource != nil {
			// A table's own topic, read as the changelog.
			e.clu.warnUncompacted(ctx, plan.ID, st.Changelog)
			continue
		}
		cfg := map[string]string{"cleanup.policy": "compact"}
		if st.Windowed {
			cfg["cleanup.policy"] = "compact,delete"
			ret := st.RetentionMs
			if ret <= 0 {
				ret = int64(7 * 24 * time.Hour / time.Millisecond)
			}
			cfg["retention.ms"] = strconv.FormatInt(ret+int64(24*time.Hour/time.Millisecond), 10)
		}
		if err := e.clu.createTopic(ctx, st.Changelog, max(st.Partitions, 1), 0, cfg); err != nil {
			return nil, err
		}
	}
	q := &Query{ID: plan.ID, Statement: text, Plan: plan, props: props, push: newPushRegistry(plan.ID, props)}
	if err := e.clu.startQuery(q, props); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.queries[q.ID] = q
	e.mu.Unlock()
	return q, nil
}

// run starts a query's Kafka runner.
func (e *Engine) run(q *Query, props map[string]string) error {
	topo := q.Plan.Topology
	if _, err := stallTimeout(props); err != nil {
		return err
	}
	cfg := e.kafkaConfig(e.groupOf(q.ID), false, nil, props)
	cfg.Paused = q.paused
	cfg.Push = q.push
	r, err := exec.StartKafka(topo, cfg, q.Metrics)
	if err != nil {
		return err
	}
	q.runner = r
	e.log.Info("query started", "query", q.ID, "sources", strings.Join(q.Plan.Sources, ","), "sink", topo.SinkTopic)
	return nil
}

// startPending starts the queries whose start was deferred while the
// command topic was replayed: only those still there at its end run, so a
// query terminated long ago does not process a single record on the way.
func (e *Engine) startPending(ctx context.Context) {
	e.mu.Lock()
	deferred := e.deferStarts
	e.deferStarts = false
	e.mu.Unlock()
	if !deferred {
		return
	}
	for _, q := range e.Queries() {
		if q.pending == nil {
			continue
		}
		props := q.pending
		q.pending = nil
		if err := e.run(q, props); err != nil {
			e.log.Error("query not resumed", "query", q.ID, "error", err)
			e.mu.Lock()
			delete(e.queries, q.ID)
			e.mu.Unlock()
		}
	}
	e.deleteReplayedLeftovers(ctx)
}

// ExactlyOnce reports whether the session's processing.guarantee asks
// for exactly-once (ksqlDB's exactly_once and exactly_once_v2 alike).
func (e *Engine) ExactlyOnce() bool { return exactlyOnce(e.sess.snapshot()) }

func (e *Engine) kafkaConfig(group string, transient bool, out exec.Output, props map[string]string) exec.KafkaConfig {
	if transient {
		// A transient query commits no transactions whatever the
		// session's guarantee, and so runs at at-least-once's interval.
		props = atLeastOnce(props)
	}
	eos := exactlyOnce(props)
	// Transient queries are this instance's alone: nobody asks where
	// their partitions are.
	var onChange func()
	// A persistent query's runner is a static group member named by this
	// instance's id, so a restart takes over its partitions at once.
	instance := ""
	if !transient {
		onChange = e.cfg.OnPartitionsChange
		instance = e.instanceID
	}
	stall, err := stallTimeout(props)
	if err != nil {
		stall = exec.DefaultStallTimeout // refused before the query starts (run)
	}
	return exec.KafkaConfig{
		ExactlyOnce:        eos,
		TransactionalID:    group + "-" + e.instanceID,
		ConnOpts:           e.cfg.ConnOpts,
		GroupID:            group,
		ResetOffset:        autoOffsetReset(props),
		CommitInterval:     commitInterval(props),
		TransactionTimeout: transactionTimeout(props),
		SessionTimeout:     sessionTimeout(props),
		Compression:        compressionType(props),
		Fetch:              fetchConfig(props),
		DB:                 e.db,
		Log:                e.log,
		Transient:          transient,
		Output:             out,
		OnRestoreProgress:  e.cfg.OnRestoreProgress,
		ClientOpts:         e.clientOpts(group + "-" + e.instanceID),
		OnPartitionsChange: onChange,
		Threads:            streamThreads(props),
		InstanceID:         instance,
		StallTimeout:       stall,
	}
}
