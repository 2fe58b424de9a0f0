package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// selectStatement is SELECT: a pull query (a table's state now, or a scan
// of a stream's topic) or a push query.
type selectStatement struct{}

func (selectStatement) execute(ctx context.Context, e *Engine, st *parser.Select, c call, sess *session) (*Result, error) {
	props := sess.snapshot()
	var rows *RowStream
	var err error
	if e.answersNow(st) {
		rows, err = e.pull(ctx, st, props)
	} else {
		rows, err = e.pushQuery(ctx, st, props)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Rows: rows}, nil
}

// answersNow reports whether a SELECT is a pull query: without EMIT, on
// a table, or on a stream whose topic this engine can scan (an offline
// engine runs a SELECT on a stream as a push query). A SELECT on an
// unknown source goes the push way, whose planning reports it.
func (e *Engine) answersNow(sel *parser.Select) bool {
	if sel.Emit != parser.EmitNone || sel.From == nil {
		return false
	}
	src, err := e.cat.Lookup(sel.From.Name)
	if err != nil {
		return false
	}
	return src.Kind == parser.KindTable || e.clu.scansTopics()
}

// pull answers a pull query. Its planning validates it (ksqlDB's
// refusals, then a table no query keeps: ErrNotQueryable) before the
// plan says how it is answered: from a table's state store (the plan's
// store read) or by a scan of a stream's topic.
func (e *Engine) pull(ctx context.Context, sel *parser.Select, props map[string]string) (*RowStream, error) {
	id := fmt.Sprintf("pull_%s_%d", strings.ToUpper(sel.From.Name), time.Now().UnixNano())
	plan, err := planner.PlanQuery(e.cat, sel, nil, id, e.planOptions(props))
	if err != nil {
		return nil, err
	}
	if plan.StoreRead() == nil {
		return e.streamPull(ctx, sel, plan)
	}
	q, reader, err := e.pullSource(sel)
	if err != nil {
		return nil, err
	}
	return e.pullQuery(ctx, sel, plan, q, reader, props)
}

// RowStream delivers the rows of a query: a push query's until Close or
// LIMIT, a pull query's all at once (C is closed after them).
type RowStream struct {
	Columns types.Schema
	C       <-chan StreamRow
	QueryID string
	// Pull is set for a pull query: the rows are the table's now.
	Pull bool
	// Scan is set for a pull query on a stream (a scan of its topic):
	// ksqlDB ends its answer with a final message, where a pull query on
	// a table has none.
	Scan bool
	// LimitReached is set for a pull query whose LIMIT cut its rows
	// short (a stream scan's answer then says "Limit Reached").
	LimitReached bool
	// KeysRead is, for a pull query on a table, how many store entries
	// its lookup, key range or scan visited on this instance.
	KeysRead int64
	// PartitionRows, for a pull query on a table, groups its rows, in
	// order, by the store partition each came from.
	PartitionRows []PartitionRows

	once   sync.Once
	stop   func()
	closed chan struct{}
	// err is why a push query ended by itself before its LIMIT (a
	// scalable push query dropped for falling behind); set before C is
	// closed.
	err error
}

// StreamRow is one row of a RowStream. Tombstone marks a push query's
// row for a key a table deleted: its key columns (and window bounds) are
// set, its other columns NULL, as ksqlDB sends it.
type StreamRow struct {
	Cols      []any
	Tombstone bool
}

// Err reports, once C is closed, why the query ended by itself without
// reaching its LIMIT (nil after LIMIT or Close): for a scalable push
// query exec.ErrPushSubscriberBehind or exec.ErrPushSourceStopped.
func (r *RowStream) Err() error { return r.err }

// Close stops the query; C is closed after the last row.
func (r *RowStream) Close() {
	r.once.Do(func() {
		close(r.closed)
		r.stop()
	})
}

// transientID names a push query that runs with a consumer group of its
// own: transient_<SOURCE>_<n>, as ksqlDB names them.
func transientID(sel *parser.Select) string {
	return fmt.Sprintf("transient_%s_%d", strings.ToUpper(sel.From.Name), time.Now().UnixNano())
}

func (e *Engine) pushQuery(ctx context.Context, sel *parser.Select, props map[string]string) (*RowStream, error) {
	if sel.HasLimit && sel.Limit < 0 {
		return nil, fmt.Errorf("%w: Push queries don't support negative integers in the LIMIT clause.", planner.ErrUnsupported)
	}
	if sel.HasLimit && sel.Limit == 0 {
		// LIMIT 0: planned, for its errors and its id (a scalable push
		// query's where it qualifies, as in ksqlDB), and ended before it
		// starts.
		plan, _ := e.scalablePlan(sel, props)
		if plan == nil {
			var err error
			if plan, err = planner.PlanQuery(e.cat, sel, nil, transientID(sel), e.planOptions(props)); err != nil {
				return nil, err
			}
		}
		ch := make(chan StreamRow)
		close(ch)
		return &RowStream{Columns: plan.Output, C: ch, QueryID: plan.ID, closed: make(chan struct{}), stop: func() {}}, nil
	}
	if rs, ok, err := e.scalablePush(sel, props); ok || err != nil {
		return rs, err
	}
	id := transientID(sel)
	plan, err := planner.PlanQuery(e.cat, sel, nil, id, e.planOptions(props))
	if err != nil {
		return nil, err
	}
	feed := newRowFeed(plan.Limit)
	rs := feed.stream(plan.Output, id)
	// started is closed once rs.stop is set: a LIMIT reached by the first
	// records may not close the stream before then.
	started := make(chan struct{})
	plan.Collect.Fn = feed.collect(rs, func() {
		<-started
		rs.Close()
	})
	stop, err := e.clu.startTransient(ctx, plan, props)
	if err != nil {
		return nil, err
	}
	rs.stop = func() {
		stop()
		feed.end(rs, nil)
	}
	close(started)
	return rs, nil
}
