package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// Result is what one statement produced.
type Result struct {
	Statement string
	// Message is a one-line outcome for DDL, SET, INSERT and TERMINATE.
	Message string
	// Query is set when the statement started a persistent query.
	Query *Query
	// Rows is set for a push query: rows arrive until Close or LIMIT.
	Rows *RowStream
	// Text is set for EXPLAIN and other informational statements.
	Text string
	// Entity is the structured form of Text for SHOW, DESCRIBE and
	// EXPLAIN (see Entity).
	Entity Entity
}

// StatementError is an error of one statement of a script, with the
// statement's text so callers can point at it.
type StatementError struct {
	Statement string
	Err       error
}

func (e *StatementError) Error() string { return e.Err.Error() }
func (e *StatementError) Unwrap() error { return e.Err }

// Execute parses and runs every statement of text in order, stopping at
// the first error. Results of the statements run so far are returned.
func (e *Engine) Execute(ctx context.Context, text string) ([]*Result, error) {
	stmts, err := parser.ParseScript(text)
	if err != nil {
		return nil, err
	}
	var out []*Result
	for _, p := range stmts {
		r, err := e.ExecuteStatement(ctx, p)
		if err != nil {
			return out, &StatementError{Statement: p.Text, Err: err}
		}
		out = append(out, r)
	}
	return out, nil
}

// ExecuteStatement runs one parsed statement.
func (e *Engine) ExecuteStatement(ctx context.Context, p parser.Parsed) (*Result, error) {
	res := &Result{Statement: p.Text}
	switch st := p.Stmt.(type) {
	case *parser.CreateSource:
		if st.Query != nil {
			q, err := e.createAsSelect(ctx, st, p.Text)
			if err != nil {
				return nil, err
			}
			res.Query = q
			if q != nil {
				res.Message = fmt.Sprintf("Created query with ID %s", q.ID)
			} else {
				res.Message = fmt.Sprintf("%s %s already exists", strings.ToLower(st.Kind.String()), st.Name)
			}
			return res, nil
		}
		msg, err := e.createSource(ctx, st, p.Text)
		if err != nil {
			return nil, err
		}
		res.Message = msg
	case *parser.InsertSelect:
		q, err := e.insertSelect(ctx, st, p.Text)
		if err != nil {
			return nil, err
		}
		res.Query, res.Message = q, fmt.Sprintf("Created query with ID %s", q.ID)
	case *parser.InsertValues:
		if err := e.insertValues(ctx, st); err != nil {
			return nil, err
		}
		res.Message = "1 row inserted"
	case *parser.SetProperty:
		if strings.EqualFold(st.Name, MinFreeBytesProperty) {
			n, err := parseMinFree(st.Value)
			if err != nil {
				return nil, err
			}
			e.db.SetMinFreeBytes(n)
		}
		e.mu.Lock()
		e.props[strings.ToLower(st.Name)] = st.Value
		e.mu.Unlock()
		res.Message = fmt.Sprintf("Successfully changed local property '%s' to '%s'.", st.Name, st.Value)
	case *parser.UnsetProperty:
		e.mu.Lock()
		delete(e.props, strings.ToLower(st.Name))
		e.mu.Unlock()
		res.Message = fmt.Sprintf("Successfully unset local property '%s'.", st.Name)
	case *parser.Select:
		if q, reader := e.pullSource(st); reader != nil {
			rows, err := e.pullQuery(ctx, st, q, reader)
			if err != nil {
				return nil, err
			}
			res.Rows = rows
			break
		}
		rows, err := e.pushQuery(ctx, st)
		if err != nil {
			return nil, err
		}
		res.Rows = rows
	case *parser.Explain:
		text, ent, err := e.explain(ctx, st)
		if err != nil {
			return nil, err
		}
		res.Text, res.Entity = text, ent
	case *parser.Terminate:
		msg, err := e.terminate(st)
		if err != nil {
			return nil, err
		}
		res.Message = msg
	case *parser.Describe:
		text, ent, err := e.describe(st)
		if err != nil {
			return nil, err
		}
		res.Text, res.Entity = text, ent
	case *parser.Show:
		text, ent, err := e.show(ctx, st)
		if err != nil {
			return nil, err
		}
		res.Text, res.Entity = text, ent
	case *parser.Drop:
		msg, err := e.drop(ctx, st)
		if err != nil {
			return nil, err
		}
		res.Message = msg
	default:
		return nil, fmt.Errorf("%w: %T statements are not supported yet", planner.ErrUnsupported, p.Stmt)
	}
	return res, nil
}

func (e *Engine) planOptions(ctx context.Context) planner.Options {
	return planner.Options{
		ServiceID:               e.cfg.ServiceID,
		TableRetention:          e.property(ctx, planner.TableRetentionProperty, ""),
		TimestampThrowOnInvalid: strings.EqualFold(e.property(ctx, planner.TimestampThrowOnInvalidProperty, "false"), "true"),
		Compat:                  strings.ToLower(e.property(ctx, planner.CompatProperty, "")),
		IdleTimeout:             e.property(ctx, planner.IdleTimeoutProperty, ""),
	}
}

func (e *Engine) createSource(ctx context.Context, st *parser.CreateSource, text string) (string, error) {
	if _, err := e.cat.Lookup(st.Name); err == nil && st.IfNotExists {
		return fmt.Sprintf("%s %s already exists", strings.ToLower(st.Kind.String()), st.Name), nil
	}
	src, err := planner.CreateSource(e.cat, st, text)
	if err != nil {
		return "", err
	}
	parts, err := e.topicPartitions(ctx, src.Topic)
	if err != nil {
		return "", err
	}
	switch {
	case parts == 0 && src.Partitions == 0 && e.mem == nil:
		return "", fmt.Errorf("%w: topic '%s' does not exist. If you want to create a new topic for the %s please re-run the statement providing the required 'PARTITIONS' configuration in the WITH clause (and optionally 'REPLICAS')", planner.ErrInvalid, src.Topic, strings.ToLower(st.Kind.String()))
	case parts == 0:
		if err := e.createTopic(ctx, src.Topic, max(src.Partitions, 1), nil); err != nil {
			return "", err
		}
		if src.Partitions == 0 {
			src.Partitions = 1
		}
	case src.Partitions != 0 && src.Partitions != parts && e.mem == nil:
		return "", fmt.Errorf("%w: a Kafka topic with the name '%s' already exists, with different partition count. Partition count: %d, requested: %d", planner.ErrInvalid, src.Topic, parts, src.Partitions)
	default:
		src.Partitions = parts
	}
	if e.mem != nil {
		src.Partitions = 1
	}
	if err := e.cat.Add(src, st.OrReplace); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s created", strings.Title(strings.ToLower(st.Kind.String()))), nil //nolint:staticcheck // ASCII words only
}

// queryID is deterministic, so running the same statements again resumes
// the same queries: the same consumer group, state and changelogs.
func queryID(kind parser.SourceKind, name string) string {
	prefix := "CSAS_"
	if kind == parser.KindTable {
		prefix = "CTAS_"
	}
	return prefix + strings.ToUpper(name)
}

func (e *Engine) createAsSelect(ctx context.Context, st *parser.CreateSource, text string) (*Query, error) {
	if existing, err := e.cat.Lookup(st.Name); err == nil {
		if st.IfNotExists {
			return nil, nil
		}
		if !st.OrReplace {
			return nil, fmt.Errorf("cannot add %s '%s': a %s with the same name %w", strings.ToLower(st.Kind.String()), st.Name, strings.ToLower(existing.Kind.String()), planner.ErrExists)
		}
	}
	props, err := planner.PropsOf(st.With)
	if err != nil {
		return nil, err
	}
	target := &planner.Target{Name: st.Name, Kind: st.Kind, With: props, Text: text}
	id := queryID(st.Kind, st.Name)
	plan, err := planner.PlanQuery(e.cat, st.Query, target, id, e.planOptions(ctx))
	if err != nil {
		return nil, err
	}
	if old := e.query(id); old != nil {
		if err := e.stopQuery(old); err != nil {
			return nil, err
		}
	}
	if err := e.createTopic(ctx, plan.Sink.Topic, plan.Sink.Partitions, nil); err != nil {
		return nil, err
	}
	if e.mem != nil {
		plan.Sink.Partitions = 1
	}
	if err := e.cat.Add(plan.Sink, st.OrReplace); err != nil {
		return nil, err
	}
	q, err := e.start(ctx, plan, text)
	if err != nil {
		e.cat.Remove(plan.Sink.Name)
		return nil, err
	}
	return q, nil
}

func (e *Engine) insertSelect(ctx context.Context, st *parser.InsertSelect, text string) (*Query, error) {
	target, err := e.cat.Lookup(st.Target)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, q := range e.Queries() {
		if strings.HasPrefix(q.ID, "INSERTQUERY_"+strings.ToUpper(target.Name)+"_") {
			n++
		}
	}
	id := fmt.Sprintf("INSERTQUERY_%s_%d", strings.ToUpper(target.Name), n)
	plan, err := planner.PlanQuery(e.cat, st.Query, &planner.Target{Name: target.Name, Existing: target, Text: text}, id, e.planOptions(ctx))
	if err != nil {
		return nil, err
	}
	return e.start(ctx, plan, text)
}

func (e *Engine) query(id string) *Query {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.queries[id]
}

// start creates the internal topics of a plan and runs it.
func (e *Engine) start(ctx context.Context, plan *planner.Query, text string) (*Query, error) {
	topo := plan.Topology
	for _, side := range []string{topo.ErrorTopic, topo.LateTopic} {
		if side == "" {
			continue
		}
		if err := e.createTopic(ctx, side, 1, nil); err != nil {
			return nil, err
		}
	}
	for _, it := range topo.Internal {
		if err := e.createTopic(ctx, it.Name, it.Partitions, it.Configs); err != nil {
			return nil, err
		}
	}
	for _, st := range topo.Stores {
		cfg := map[string]string{"cleanup.policy": "compact"}
		if st.Windowed {
			cfg["cleanup.policy"] = "compact,delete"
			ret := st.RetentionMs
			if ret <= 0 {
				ret = int64(7 * 24 * time.Hour / time.Millisecond)
			}
			cfg["retention.ms"] = strconv.FormatInt(ret+int64(24*time.Hour/time.Millisecond), 10)
		}
		if err := e.createTopic(ctx, st.Changelog, max(st.Partitions, 1), cfg); err != nil {
			return nil, err
		}
	}
	q := &Query{ID: plan.ID, Statement: text, Plan: plan}
	if e.mem != nil {
		if err := e.mem.Add(topo); err != nil {
			return nil, err
		}
		q.Metrics = e.mem.Metrics(plan.ID)
	} else {
		q.Metrics = &exec.Metrics{}
		r, err := exec.StartKafka(topo, e.kafkaConfig(ctx, planner.InternalPrefix(e.cfg.ServiceID, plan.ID), false, nil), q.Metrics)
		if err != nil {
			return nil, err
		}
		q.runner = r
	}
	e.mu.Lock()
	e.queries[q.ID] = q
	e.mu.Unlock()
	e.log.Info("query started", "query", q.ID, "sources", strings.Join(plan.Sources, ","), "sink", topo.SinkTopic)
	return q, nil
}

// ExactlyOnce reports whether the session's processing.guarantee asks
// for exactly-once (ksqlDB's exactly_once and exactly_once_v2 alike).
func (e *Engine) ExactlyOnce() bool { return e.exactlyOnce(context.Background()) }

func (e *Engine) exactlyOnce(ctx context.Context) bool {
	g := strings.ToLower(e.property(ctx, "processing.guarantee", e.property(ctx, "ksql.streams.processing.guarantee", "at_least_once")))
	return strings.HasPrefix(g, "exactly_once")
}

func (e *Engine) kafkaConfig(ctx context.Context, group string, transient bool, out exec.Output) exec.KafkaConfig {
	eos := !transient && e.exactlyOnce(ctx)
	// Exactly-once commits often: results become visible to
	// read_committed consumers only when their transaction commits.
	interval := time.Second
	if eos {
		interval = 100 * time.Millisecond
	}
	if ms, err := strconv.Atoi(e.property(ctx, "commit.interval.ms", e.property(ctx, "ksql.streams.commit.interval.ms", ""))); err == nil && ms > 0 {
		interval = time.Duration(ms) * time.Millisecond
	}
	return exec.KafkaConfig{
		ExactlyOnce:       eos,
		TransactionalID:   group + "-" + e.instanceID,
		ConnOpts:          e.cfg.ConnOpts,
		GroupID:           group,
		ResetOffset:       e.property(ctx, "auto.offset.reset", e.property(ctx, "ksql.streams.auto.offset.reset", "latest")),
		CommitInterval:    interval,
		DB:                e.db,
		Log:               e.log,
		Transient:         transient,
		Output:            out,
		OnRestoreProgress: e.cfg.OnRestoreProgress,
		ClientOpts:        e.clientOpts(group + "-" + e.instanceID),
	}
}

// RowStream delivers the rows of a query: a push query's until Close or
// LIMIT, a pull query's all at once (C is closed after them).
type RowStream struct {
	Columns types.Schema
	C       <-chan []any
	QueryID string
	// Pull is set for a pull query: the rows are the table's now.
	Pull bool

	once   sync.Once
	stop   func()
	closed chan struct{}
}

// Close stops the query; C is closed after the last row.
func (r *RowStream) Close() {
	r.once.Do(func() {
		close(r.closed)
		r.stop()
	})
}

func (e *Engine) pushQuery(ctx context.Context, sel *parser.Select) (*RowStream, error) {
	id := fmt.Sprintf("transient_%s_%d", strings.ToUpper(sel.From.Name), time.Now().UnixNano())
	plan, err := planner.PlanQuery(e.cat, sel, nil, id, e.planOptions(ctx))
	if err != nil {
		return nil, err
	}
	ch := make(chan []any, 256)
	rs := &RowStream{Columns: plan.Output, C: ch, QueryID: id, closed: make(chan struct{})}
	var mu sync.Mutex
	count, done := 0, false
	finish := func() {
		if !done {
			done = true
			close(ch)
		}
	}
	plan.Collect.Fn = func(row *exec.Row) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		select {
		case ch <- append([]any(nil), row.Cols...):
		case <-rs.closed:
			finish()
			return
		}
		count++
		if plan.Limit > 0 && count >= plan.Limit {
			finish()
			go rs.Close()
		}
	}
	if e.mem != nil {
		if err := e.mem.Add(plan.Topology); err != nil {
			return nil, err
		}
		rs.stop = func() {
			e.mem.Remove(id)
			mu.Lock()
			finish()
			mu.Unlock()
		}
		return rs, nil
	}
	for _, it := range plan.Topology.Internal {
		if err := e.createTopic(ctx, it.Name, it.Partitions, it.Configs); err != nil {
			return nil, err
		}
	}
	r, err := exec.StartKafka(plan.Topology, e.kafkaConfig(ctx, planner.InternalPrefix(e.cfg.ServiceID, id), true, nil), &exec.Metrics{})
	if err != nil {
		return nil, err
	}
	rs.stop = func() {
		_ = r.Stop()
		mu.Lock()
		finish()
		mu.Unlock()
	}
	return rs, nil
}

func (e *Engine) explain(ctx context.Context, st *parser.Explain) (string, *QueryDescription, error) {
	if st.Statement == nil {
		q := e.query(strings.ToUpper(st.QueryID))
		if q == nil {
			return "", nil, fmt.Errorf("query %s %w", st.QueryID, planner.ErrNotFound)
		}
		d := &QueryDescription{QuerySummary: e.querySummary(q), Topology: q.Plan.Topology.Explain()}
		if q.Plan.Sink != nil {
			d.Fields = fieldsOf(q.Plan.Sink.Schema)
		}
		if parsed, err := parser.ParseOne(q.Statement); err == nil {
			if sel := selectOf(parsed); sel != nil {
				d.Warning = e.graceWarning(sel)
			}
		}
		return q.Statement + "\n\n" + d.Topology + d.Warning, d, nil
	}
	var sel *parser.Select
	var target *planner.Target
	id := "EXPLAIN"
	switch s := st.Statement.(type) {
	case *parser.Select:
		sel = s
	case *parser.CreateSource:
		if s.Query == nil {
			return "", nil, fmt.Errorf("%w: EXPLAIN takes a query", planner.ErrInvalid)
		}
		props, err := planner.PropsOf(s.With)
		if err != nil {
			return "", nil, err
		}
		sel, target, id = s.Query, &planner.Target{Name: s.Name, Kind: s.Kind, With: props}, queryID(s.Kind, s.Name)
	case *parser.InsertSelect:
		t, err := e.cat.Lookup(s.Target)
		if err != nil {
			return "", nil, err
		}
		sel, target = s.Query, &planner.Target{Name: t.Name, Existing: t}
	default:
		return "", nil, fmt.Errorf("%w: EXPLAIN takes a query", planner.ErrInvalid)
	}
	plan, err := planner.PlanQuery(e.cat, sel, target, id, e.planOptions(ctx))
	if err != nil {
		return "", nil, err
	}
	d := &QueryDescription{QuerySummary: QuerySummary{ID: id, Statement: fmt.Sprint(st.Statement), State: "NOT_RUNNING", Sources: plan.Sources},
		Topology: plan.Topology.Explain(), Warning: e.graceWarning(sel), Fields: fieldsOf(plan.Output)}
	if plan.Sink != nil {
		d.Sinks, d.SinkTopics, d.Fields = []string{plan.Sink.Name}, []string{plan.Sink.Topic}, fieldsOf(plan.Sink.Schema)
	}
	return d.Topology + d.Warning, d, nil
}

func (e *Engine) terminate(st *parser.Terminate) (string, error) {
	if st.All {
		for _, q := range e.Queries() {
			if err := e.stopQuery(q); err != nil {
				return "", err
			}
		}
		return "All queries terminated.", nil
	}
	q := e.query(strings.ToUpper(st.QueryID))
	if q == nil {
		return "", fmt.Errorf("unknown queryId: %s", st.QueryID)
	}
	if err := e.stopQuery(q); err != nil {
		return "", err
	}
	return fmt.Sprintf("Query %s terminated.", q.ID), nil
}

func (e *Engine) show(ctx context.Context, st *parser.Show) (string, Entity, error) {
	var b strings.Builder
	switch st.What {
	case parser.ShowStreams, parser.ShowTables:
		kind := parser.KindStream
		if st.What == parser.ShowTables {
			kind = parser.KindTable
		}
		l := e.sourceList(kind)
		for _, s := range l.Sources {
			fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", s.Name, s.Topic, s.KeyFormat, s.ValueFormat)
		}
		return b.String(), l, nil
	case parser.ShowQueries:
		l := e.queryList()
		for _, q := range l.Queries {
			state := q.State
			if q.Error != "" {
				state += ": " + q.Error
			}
			topic := ""
			if len(q.SinkTopics) > 0 {
				topic = q.SinkTopics[0]
			}
			fmt.Fprintf(&b, "%s\t%s\t%s\n", q.ID, topic, state)
		}
		return b.String(), l, nil
	case parser.ShowTopics:
		l, err := e.topicList(ctx)
		if err != nil {
			return "", nil, err
		}
		return e.showTopicsText(l), l, nil
	case parser.ShowProperties:
		l := e.propertyList(ctx)
		return e.showPropertiesText(l), l, nil
	}
	return "", nil, fmt.Errorf("%w: SHOW %s is not supported yet", planner.ErrUnsupported, st.What)
}
