package engine

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
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
	// Command is set when the statement went through the command topic.
	Command *CommandRef
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
// the first error, with the engine's session properties (SET changes
// them for later calls). Results of the statements run so far are
// returned.
func (e *Engine) Execute(ctx context.Context, text string) ([]*Result, error) {
	return e.executeIn(ctx, text, e.sessionFor(ctx))
}

// sessionFor is the engine's session, or, when ctx carries properties of
// a request (WithProperties), a session of its own with them on top.
func (e *Engine) sessionFor(ctx context.Context) *session {
	o := overrides(ctx)
	if len(o) == 0 {
		return e.sess
	}
	sess := &session{props: e.sess.snapshot(), vars: e.sess.variables()}
	for k, v := range o {
		sess.props[k] = v
	}
	return sess
}

// ExecuteWith is Execute with properties of the call's own: the engine's
// session properties overridden by props. A SET in text lasts until the
// end of the call. A server gives each request its properties this way,
// so that clients do not see each other's.
func (e *Engine) ExecuteWith(ctx context.Context, text string, props map[string]string) ([]*Result, error) {
	base := e.sessionFor(ctx)
	sess := &session{props: base.snapshot(), vars: base.variables()}
	for k, v := range props {
		sess.props[strings.ToLower(k)] = v
	}
	return e.executeIn(ctx, text, sess)
}

func (e *Engine) executeIn(ctx context.Context, text string, sess *session) ([]*Result, error) {
	if strings.Contains(text, "${") {
		return e.executeSubstituted(ctx, text, sess)
	}
	stmts, err := parser.ParseScript(text)
	if err != nil {
		return nil, err
	}
	return e.executeAll(ctx, stmts, sess, nil)
}

// executeAll runs parsed statements in order, appending their results to
// out; the first failure stops it.
func (e *Engine) executeAll(ctx context.Context, stmts []parser.Parsed, sess *session, out []*Result) ([]*Result, error) {
	for _, p := range stmts {
		r, err := e.executeStatement(ctx, p, sess)
		if err != nil {
			return out, &StatementError{Statement: p.Text, Err: err}
		}
		out = append(out, r)
	}
	return out, nil
}

// executeSubstituted runs a script that uses variables statement by
// statement: a statement's ${name}s are replaced with the values DEFINEd
// before it, then it is parsed, so a variable may stand anywhere, even for
// a name.
func (e *Engine) executeSubstituted(ctx context.Context, text string, sess *session) ([]*Result, error) {
	texts, rest := parser.SplitStatements(text)
	if strings.TrimSpace(rest) != "" {
		texts = append(texts, rest)
	}
	var out []*Result
	for _, t := range texts {
		stmts, err := parser.ParseScript(sess.substitute(t))
		if err != nil {
			return out, err
		}
		if out, err = e.executeAll(ctx, stmts, sess, out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ExecuteStatement runs one parsed statement with the engine's session
// properties. Catalog statements (see IsCommand) go through the command
// topic when Config.CommandTopic is set: checked here, appended, and
// applied in the topic's order on every instance of the service.
func (e *Engine) ExecuteStatement(ctx context.Context, p parser.Parsed) (*Result, error) {
	return e.executeStatement(ctx, p, e.sessionFor(ctx))
}

func (e *Engine) executeStatement(ctx context.Context, p parser.Parsed, sess *session) (*Result, error) {
	if strings.Contains(p.Text, "${") {
		if sub := sess.substitute(p.Text); sub != p.Text {
			stmts, err := parser.ParseScript(sub)
			if err != nil {
				return nil, err
			}
			if len(stmts) != 1 {
				return nil, fmt.Errorf("%w: variables turned one statement into %d", planner.ErrInvalid, len(stmts))
			}
			p = stmts[0]
		}
	}
	if IsCommand(p.Stmt) {
		props := commandProps(sess.snapshot())
		if e.cmd != nil {
			return e.cmd.submit(ctx, p, props)
		}
		return e.apply(ctx, p, props, false)
	}
	res := &Result{Statement: p.Text}
	stmt, err := planner.ResolveTypes(e.cat, p.Stmt)
	if err != nil {
		return nil, err
	}
	switch st := stmt.(type) {
	case *parser.InsertValues:
		if err := e.insertValues(ctx, st); err != nil {
			return nil, err
		}
		res.Message = "1 row inserted"
	case *parser.SetProperty:
		if err := e.setProperty(sess, st.Name, st.Value); err != nil {
			return nil, err
		}
		res.Message = fmt.Sprintf("Successfully changed local property '%s' to '%s'.", st.Name, st.Value)
	case *parser.UnsetProperty:
		for _, name := range UnsetNames(st.Name) {
			sess.unset(name)
		}
		res.Message = fmt.Sprintf("Successfully unset local property '%s'.", st.Name)
	case *parser.Define:
		sess.define(st.Name, st.Value)
		res.Message = fmt.Sprintf("Defined variable %s.", strings.ToUpper(st.Name))
	case *parser.Undefine:
		sess.undefine(st.Name)
		res.Message = fmt.Sprintf("Undefined variable %s.", strings.ToUpper(st.Name))
	case *parser.Select:
		if err := e.checkPullQuery(st, sess.snapshot()); err != nil {
			return nil, err
		}
		if e.isStreamPull(st) {
			rows, err := e.streamPull(ctx, st, sess.snapshot())
			if err != nil {
				return nil, err
			}
			res.Rows = rows
			break
		}
		q, reader, err := e.pullSource(st)
		if err != nil {
			return nil, err
		}
		if reader != nil {
			rows, err := e.pullQuery(ctx, st, q, reader, sess.snapshot())
			if err != nil {
				return nil, err
			}
			res.Rows = rows
			break
		}
		rows, err := e.pushQuery(ctx, st, sess.snapshot())
		if err != nil {
			return nil, err
		}
		res.Rows = rows
	case *parser.Explain:
		text, ent, err := e.explain(st, sess.snapshot())
		if err != nil {
			return nil, err
		}
		res.Text, res.Entity = text, ent
	case *parser.Describe:
		if st.Function {
			f, ok := expr.LookupFunction(st.Name)
			if !ok {
				return nil, fmt.Errorf("%w: Can't find any functions with the name '%s'", expr.ErrUnknownFunction, strings.ToUpper(st.Name))
			}
			res.Text = fmt.Sprintf("Name        : %s\nType        : %s\nCategory    : %s\nOverview    : %s\n", f.Name, f.Type, f.Category, f.Description)
			res.Entity = &FunctionDescription{f}
			break
		}
		text, ent, err := e.describe(st, sess.snapshot())
		if err != nil {
			return nil, err
		}
		res.Text, res.Entity = text, ent
	case *parser.Show:
		text, ent, err := e.show(ctx, st, sess.snapshot())
		if err != nil {
			return nil, err
		}
		res.Text, res.Entity = text, ent
	case *parser.AssertTopic:
		r, err := e.assertTopic(ctx, st, sess.snapshot())
		if err != nil {
			return nil, err
		}
		res.Message, res.Entity = r.Message, r.Entity
	case *parser.AssertSchema:
		r, err := e.assertSchema(ctx, st, sess.snapshot())
		if err != nil {
			return nil, err
		}
		res.Message, res.Entity = r.Message, r.Entity
	case *parser.RunScript:
		return nil, parser.ClientOnly(p.Stmt, p.Text)
	default:
		return nil, fmt.Errorf("%w: %T statements are not supported yet", planner.ErrUnsupported, p.Stmt)
	}
	return res, nil
}

// IsCommand reports whether a statement changes the service's catalog or
// its persistent queries, and so is a command: CREATE STREAM/TABLE (with
// columns or AS SELECT), INSERT INTO … SELECT, TERMINATE, DROP, ALTER,
// CREATE TYPE and DROP TYPE. SET, INSERT
// … VALUES and SELECT are not: they are session state or data.
func IsCommand(st parser.Statement) bool {
	switch st.(type) {
	case *parser.CreateSource, *parser.InsertSelect, *parser.Terminate, *parser.PauseQuery, *parser.Drop, *parser.AlterSource,
		*parser.CreateType, *parser.DropType:
		return true
	}
	return false
}

// check validates a command against the catalog as it is now, without
// side effects. done is set when the statement would change nothing (IF
// NOT EXISTS on an existing name); res then is its outcome.
func (e *Engine) check(ctx context.Context, p parser.Parsed, props map[string]string) (res *Result, done bool, err error) {
	stmt, err := planner.ResolveTypes(e.cat, p.Stmt)
	if err != nil {
		return nil, false, err
	}
	switch st := stmt.(type) {
	case *parser.CreateType:
		t, exists, err := planner.CreateType(e.cat, st)
		if err == nil && exists {
			return &Result{Statement: p.Text, Message: typeExists(st.Name, t)}, true, nil
		}
		return nil, false, err
	case *parser.DropType:
		exists, err := planner.CheckDropType(e.cat, st)
		if err == nil && !exists {
			return &Result{Statement: p.Text, Message: noSuchType(st.Name)}, true, nil
		}
		return nil, false, err
	case *parser.CreateSource:
		if _, err := e.cat.Lookup(st.Name); err == nil && st.IfNotExists {
			return &Result{Statement: p.Text, Message: alreadyExists(st)}, true, nil
		}
		if st.Query != nil {
			_, err = e.planAsSelect(st, p.Text, props)
		} else {
			_, _, err = e.checkSource(ctx, st, p.Text, props, false)
		}
	case *parser.InsertSelect:
		_, err = e.planInsert(st, p.Text, props, 0)
	case *parser.Terminate:
		if !st.All && e.query(strings.ToUpper(st.QueryID)) == nil {
			err = unknownQuery(st.QueryID)
		}
	case *parser.PauseQuery:
		if !st.All && e.query(strings.ToUpper(st.QueryID)) == nil {
			err = unknownQuery(st.QueryID)
		}
	case *parser.AlterSource:
		_, err = planner.AlterSource(e.cat, st)
	case *parser.Drop:
		var src *planner.Source
		var msg string
		if src, msg, err = e.checkDrop(st); err == nil && src == nil {
			return &Result{Statement: p.Text, Message: msg}, true, nil
		}
	default:
		err = fmt.Errorf("%w: %T is not a command", planner.ErrInvalid, p.Stmt)
	}
	return nil, false, err
}

// apply runs a command with the session properties in force when it was
// issued. Without a command topic it is all of ExecuteStatement's work;
// with one, every instance applies each command of the topic in order,
// accepted: checked before it was appended.
func (e *Engine) apply(ctx context.Context, p parser.Parsed, props map[string]string, accepted bool) (*Result, error) {
	// One at a time, so that each command sees the catalog the one
	// before it left, as every instance sees it.
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	res := &Result{Statement: p.Text}
	// Custom types resolve against the catalog as this command finds
	// it, in the command topic's order, so every replay plans the same.
	stmt, err := planner.ResolveTypes(e.cat, p.Stmt)
	if err != nil {
		return nil, err
	}
	switch st := stmt.(type) {
	case *parser.CreateType:
		t, exists, err := planner.CreateType(e.cat, st)
		if err != nil {
			return nil, err
		}
		if exists {
			res.Message = typeExists(st.Name, t)
			return res, nil
		}
		e.cat.RegisterType(st.Name, t)
		res.Message = fmt.Sprintf("Registered custom type with name '%s' and SQL type %s", st.Name, t)
	case *parser.DropType:
		if _, err := planner.CheckDropType(e.cat, st); err != nil {
			return nil, err
		}
		if e.cat.DropType(st.Name) {
			res.Message = fmt.Sprintf("Dropped type '%s'", st.Name)
		} else {
			res.Message = noSuchType(st.Name)
		}
	case *parser.CreateSource:
		if st.Query != nil {
			q, err := e.createAsSelect(ctx, st, p.Text, props)
			if err != nil {
				return nil, err
			}
			res.Query = q
			if q != nil {
				res.Message = fmt.Sprintf("Created query with ID %s", q.ID)
			} else {
				res.Message = alreadyExists(st)
			}
			return res, nil
		}
		msg, err := e.createSource(ctx, st, p.Text, props, accepted)
		if err != nil {
			return nil, err
		}
		res.Message = msg
	case *parser.InsertSelect:
		q, err := e.insertSelect(ctx, st, p.Text, props)
		if err != nil {
			return nil, err
		}
		res.Query, res.Message = q, fmt.Sprintf("Created query with ID %s", q.ID)
	case *parser.Terminate:
		msg, err := e.terminate(ctx, st)
		if err != nil {
			return nil, err
		}
		res.Message = msg
	case *parser.PauseQuery:
		msg, err := e.pause(st)
		if err != nil {
			return nil, err
		}
		res.Message = msg
	case *parser.Drop:
		msg, err := e.drop(ctx, st)
		if err != nil {
			return nil, err
		}
		res.Message = msg
	case *parser.AlterSource:
		src, err := planner.AlterSource(e.cat, st)
		if err != nil {
			return nil, err
		}
		if err := e.cat.Add(src, true); err != nil {
			return nil, err
		}
		res.Message = st.Kind.String()[:1] + strings.ToLower(st.Kind.String()[1:]) + " altered."
	default:
		return nil, fmt.Errorf("%w: %T is not a command", planner.ErrInvalid, p.Stmt)
	}
	return res, nil
}

// typeExists and noSuchType are ksqlDB's messages for CREATE TYPE IF
// NOT EXISTS and DROP TYPE IF EXISTS that change nothing.
func typeExists(name string, t types.Type) string {
	return fmt.Sprintf("%s is already registered with type %s", name, t)
}

func noSuchType(name string) string { return fmt.Sprintf("Type '%s' does not exist", name) }

func alreadyExists(st *parser.CreateSource) string {
	return fmt.Sprintf("%s %s already exists", strings.ToLower(st.Kind.String()), st.Name)
}

func unknownQuery(id string) error {
	return fmt.Errorf("unknown queryId: %s", id)
}

// session holds the properties statements run with: the engine's own,
// or those of one ExecuteWith call.
type session struct {
	mu    sync.Mutex
	props map[string]string
	// vars are the variables DEFINE set, by lower-cased name.
	vars map[string]string
}

func (s *session) define(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vars == nil {
		s.vars = map[string]string{}
	}
	s.vars[strings.ToLower(name)] = value
}

func (s *session) undefine(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.vars, strings.ToLower(name))
}

// variables returns a copy of the variables.
func (s *session) variables() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.vars))
	for k, v := range s.vars {
		out[k] = v
	}
	return out
}

// variableRef is a variable's use: ${name}.
var variableRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// substitute replaces each ${name} of a defined variable with its value,
// as ksqlDB does before parsing; an undefined one stays as it is.
func (s *session) substitute(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.vars) == 0 {
		return text
	}
	return variableRef.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := s.vars[strings.ToLower(m[2:len(m)-1])]; ok {
			return v
		}
		return m
	})
}

// snapshot returns a copy of the properties.
func (s *session) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.props))
	for k, v := range s.props {
		out[k] = v
	}
	return out
}

func (s *session) set(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.props[strings.ToLower(name)] = value
}

func (s *session) unset(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.props, strings.ToLower(name))
}

// checkSource plans CREATE STREAM/TABLE with columns without side
// effects: the source, and whether its topic has to be created. accepted
// says the statement was checked when it entered the command topic: a
// topic that has since gained partitions must not make a replay forget
// the source, so the topic's count is taken as it is now.
func (e *Engine) checkSource(ctx context.Context, st *parser.CreateSource, text string, props map[string]string, accepted bool) (*planner.Source, bool, error) {
	if existing, err := e.cat.Lookup(st.Name); err == nil && !st.OrReplace {
		return nil, false, fmt.Errorf("cannot add %s '%s': a %s with the same name %w", strings.ToLower(st.Kind.String()), st.Name, strings.ToLower(existing.Kind.String()), planner.ErrExists)
	}
	src, err := planner.CreateSourceWith(e.cat, st, text, e.planOptions(props))
	if err != nil {
		return nil, false, err
	}
	parts, err := e.topicPartitions(ctx, src.Topic)
	if err != nil {
		return nil, false, err
	}
	create := false
	switch {
	case parts == 0 && src.Partitions == 0 && e.mem == nil:
		return nil, false, fmt.Errorf("%w: topic '%s' does not exist. If you want to create a new topic for the %s please re-run the statement providing the required 'PARTITIONS' configuration in the WITH clause (and optionally 'REPLICAS')", planner.ErrInvalid, src.Topic, strings.ToLower(st.Kind.String()))
	case parts == 0:
		create = true
		if src.Partitions == 0 {
			src.Partitions = 1
		}
	case src.Partitions != 0 && src.Partitions != parts && e.mem == nil && accepted:
		e.log.Warn("the topic's partition count changed since the source was created", "source", src.Name, "topic", src.Topic, "partitions", parts, "created with", src.Partitions)
		src.Partitions = parts
	case src.Partitions != 0 && src.Partitions != parts && e.mem == nil:
		return nil, false, fmt.Errorf("%w: a Kafka topic with the name '%s' already exists, with different partition count. Partition count: %d, requested: %d", planner.ErrInvalid, src.Topic, parts, src.Partitions)
	default:
		src.Partitions = parts
	}
	if e.mem != nil {
		src.Partitions = 1
	}
	return src, create, nil
}

func (e *Engine) createSource(ctx context.Context, st *parser.CreateSource, text string, props map[string]string, accepted bool) (string, error) {
	if _, err := e.cat.Lookup(st.Name); err == nil && st.IfNotExists {
		return alreadyExists(st), nil
	}
	src, create, err := e.checkSource(ctx, st, text, props, accepted)
	if err != nil {
		return "", err
	}
	if create {
		if err := e.createTopic(ctx, src.Topic, src.Partitions, src.Replicas, topicConfigs(src)); err != nil {
			return "", err
		}
	}
	if err := e.cat.Add(src, st.OrReplace); err != nil {
		return "", err
	}
	if err := e.materializeSource(ctx, src, text, props); err != nil {
		e.cat.Remove(src.Name)
		return "", err
	}
	return fmt.Sprintf("%s created", strings.Title(strings.ToLower(st.Kind.String()))), nil //nolint:staticcheck // ASCII words only
}

// materializeSource starts the query that keeps a source table in state
// for pull queries, as ksqlDB does (CST_<name>, planner.PlanMaterialize).
// It reads the topic from the start: the table is all of it. A windowed
// source table is not materialized.
func (e *Engine) materializeSource(ctx context.Context, src *planner.Source, text string, props map[string]string) error {
	if src.Kind != parser.KindTable || !src.ReadOnly || src.Window != exec.NotWindowed {
		return nil
	}
	plan, err := planner.PlanMaterialize(src)
	if err != nil {
		return err
	}
	if old := e.query(plan.ID); old != nil {
		if err := e.stopQuery(old); err != nil {
			return err
		}
	}
	p := maps.Clone(props)
	if p == nil {
		p = map[string]string{}
	}
	p[propAutoOffsetReset.Name] = "earliest"
	_, err = e.start(ctx, plan, text, p)
	return err
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

// planAsSelect plans CREATE … AS SELECT without side effects.
func (e *Engine) planAsSelect(st *parser.CreateSource, text string, props map[string]string) (*planner.Query, error) {
	if st.Query.HasLimit {
		return nil, fmt.Errorf("%w: CREATE %s AS SELECT statements don't support LIMIT clause.", planner.ErrUnsupported, st.Kind)
	}
	if existing, err := e.cat.Lookup(st.Name); err == nil && !st.OrReplace {
		return nil, fmt.Errorf("cannot add %s '%s': a %s with the same name %w", strings.ToLower(st.Kind.String()), st.Name, strings.ToLower(existing.Kind.String()), planner.ErrExists)
	}
	if err := planner.CheckReplace(e.cat, st); err != nil {
		return nil, err
	}
	target, err := planner.TargetOf(st, text)
	if err != nil {
		return nil, err
	}
	if st.OrReplace {
		if old, err := e.cat.Lookup(st.Name); err == nil && old.QueryID != "" {
			target.Replaces = old
		}
	}
	plan, err := planner.PlanQuery(e.cat, st.Query, target, queryID(st.Kind, st.Name), e.planOptions(props))
	if err != nil {
		return nil, err
	}
	if old := e.query(plan.ID); old != nil && st.OrReplace {
		// An in-place upgrade: the new plan inherits the old one's
		// offsets and state, so both must fit it.
		if err := planner.CheckUpgrade(old.Plan, plan); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

func (e *Engine) createAsSelect(ctx context.Context, st *parser.CreateSource, text string, props map[string]string) (*Query, error) {
	if _, err := e.cat.Lookup(st.Name); err == nil && st.IfNotExists {
		return nil, nil
	}
	plan, err := e.planAsSelect(st, text, props)
	if err != nil {
		return nil, err
	}
	if old := e.query(plan.ID); old != nil {
		if err := e.stopQuery(old); err != nil {
			return nil, err
		}
	}
	if err := e.createTopic(ctx, plan.Sink.Topic, plan.Sink.Partitions, plan.Sink.Replicas, topicConfigs(plan.Sink)); err != nil {
		return nil, err
	}
	if e.mem != nil {
		plan.Sink.Partitions = 1
	}
	if err := e.cat.Add(plan.Sink, st.OrReplace); err != nil {
		return nil, err
	}
	q, err := e.start(ctx, plan, text, props)
	if err != nil {
		e.cat.Remove(plan.Sink.Name)
		return nil, err
	}
	return q, nil
}

// planInsert plans INSERT INTO … SELECT as query number n of its target
// without side effects.
func (e *Engine) planInsert(st *parser.InsertSelect, text string, props map[string]string, n int) (*planner.Query, error) {
	if st.Query.HasLimit {
		return nil, fmt.Errorf("%w: INSERT INTO statements don't support LIMIT clause.", planner.ErrUnsupported)
	}
	target, err := e.cat.Lookup(st.Target)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("INSERTQUERY_%s_%d", strings.ToUpper(target.Name), n)
	return planner.PlanQuery(e.cat, st.Query, &planner.Target{Name: target.Name, Existing: target, Text: text}, id, e.planOptions(props))
}

// insertSelect numbers the INSERT queries of each target 1, 2, … in the
// order they are applied, never reusing a number (a terminated query's
// id stays its own): so the same statements, run again or replayed from
// the command topic, get the same ids and resume the same consumer
// groups and state.
func (e *Engine) insertSelect(ctx context.Context, st *parser.InsertSelect, text string, props map[string]string) (*Query, error) {
	key := strings.ToUpper(st.Target)
	e.mu.Lock()
	n := e.insertSeq[key] + 1
	e.mu.Unlock()
	plan, err := e.planInsert(st, text, props, n)
	if err != nil {
		return nil, err
	}
	q, err := e.start(ctx, plan, text, props)
	if err != nil {
		return nil, err
	}
	// Counted only once started: a command retried after a broker error
	// must get the same number.
	e.mu.Lock()
	e.insertSeq[key] = n
	e.mu.Unlock()
	return q, nil
}

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
		if err := e.createTopic(ctx, side, 1, 0, nil); err != nil {
			return nil, err
		}
	}
	for _, it := range topo.Internal {
		if err := e.createTopic(ctx, it.Name, it.Partitions, 0, it.Configs); err != nil {
			return nil, err
		}
	}
	for _, st := range topo.Stores {
		if st.FromSource != nil {
			// A table's own topic, read as the changelog.
			e.warnUncompacted(ctx, plan.ID, st.Changelog)
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
		if err := e.createTopic(ctx, st.Changelog, max(st.Partitions, 1), 0, cfg); err != nil {
			return nil, err
		}
	}
	q := &Query{ID: plan.ID, Statement: text, Plan: plan, props: props, push: newPushRegistry(plan.ID, props)}
	if e.mem != nil {
		if err := e.mem.Add(topo); err != nil {
			return nil, err
		}
		q.Metrics = e.mem.Metrics(plan.ID)
		e.log.Info("query started", "query", q.ID, "sources", strings.Join(plan.Sources, ","), "sink", topo.SinkTopic)
	} else {
		q.Metrics = &exec.Metrics{}
		e.mu.Lock()
		deferred := e.deferStarts
		e.mu.Unlock()
		if deferred {
			q.pending = props
		} else if err := e.run(q, props); err != nil {
			return nil, err
		}
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

func (e *Engine) pushQuery(ctx context.Context, sel *parser.Select, props map[string]string) (*RowStream, error) {
	if sel.HasLimit && sel.Limit < 0 {
		return nil, fmt.Errorf("%w: Push queries don't support negative integers in the LIMIT clause.", planner.ErrUnsupported)
	}
	if sel.HasLimit && sel.Limit == 0 {
		// LIMIT 0: planned, for its errors, and ended before it starts.
		plan, err := planner.PlanQuery(e.cat, sel, nil, "transient_limit0", e.planOptions(props))
		if err != nil {
			return nil, err
		}
		ch := make(chan StreamRow)
		close(ch)
		return &RowStream{Columns: plan.Output, C: ch, QueryID: plan.ID, closed: make(chan struct{}), stop: func() {}}, nil
	}
	if rs, ok, err := e.scalablePush(sel, props); ok || err != nil {
		return rs, err
	}
	id := fmt.Sprintf("transient_%s_%d", strings.ToUpper(sel.From.Name), time.Now().UnixNano())
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
	if e.mem != nil {
		if err := e.mem.Add(plan.Topology); err != nil {
			return nil, err
		}
		rs.stop = func() {
			e.mem.Remove(id)
			feed.end(rs, nil)
		}
		close(started)
		return rs, nil
	}
	for _, it := range plan.Topology.Internal {
		if err := e.createTopic(ctx, it.Name, it.Partitions, 0, it.Configs); err != nil {
			return nil, err
		}
	}
	r, err := exec.StartKafka(plan.Topology, e.kafkaConfig(planner.InternalPrefix(e.cfg.ServiceID, id), true, nil, props), &exec.Metrics{})
	if err != nil {
		return nil, err
	}
	rs.stop = func() {
		_ = r.Stop()
		feed.end(rs, nil)
	}
	close(started)
	return rs, nil
}

func (e *Engine) explain(st *parser.Explain, props map[string]string) (string, *QueryDescription, error) {
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
		warnings, err := e.scaleWarnings(q, props)
		if err != nil {
			return "", nil, fmt.Errorf("explain %s: %w", q.ID, err)
		}
		d.Warnings = warnings
		text := q.Statement + "\n\n" + d.Topology + d.Warning
		for _, w := range warnings {
			text += w + "\n"
		}
		return text, d, nil
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
		t, err := planner.TargetOf(s, "")
		if err != nil {
			return "", nil, err
		}
		sel, target, id = s.Query, t, queryID(s.Kind, s.Name)
	case *parser.InsertSelect:
		t, err := e.cat.Lookup(s.Target)
		if err != nil {
			return "", nil, err
		}
		sel, target = s.Query, &planner.Target{Name: t.Name, Existing: t}
	default:
		return "", nil, fmt.Errorf("%w: EXPLAIN takes a query", planner.ErrInvalid)
	}
	plan, err := planner.PlanQuery(e.cat, sel, target, id, e.planOptions(props))
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

// pause applies PAUSE / RESUME to one query or all: the runner stops or
// starts fetching; the query keeps its group membership and state.
func (e *Engine) pause(st *parser.PauseQuery) (string, error) {
	verb := "paused"
	if st.Resume {
		verb = "resumed"
	}
	set := func(q *Query) {
		e.mu.Lock()
		q.paused = !st.Resume
		r := q.runner
		e.mu.Unlock()
		if r != nil {
			r.SetPaused(!st.Resume)
		}
	}
	if st.All {
		for _, q := range e.Queries() {
			set(q)
		}
		return "All queries " + verb + ".", nil
	}
	q := e.query(strings.ToUpper(st.QueryID))
	if q == nil {
		return "", unknownQuery(st.QueryID)
	}
	set(q)
	return fmt.Sprintf("Query %s %s.", q.ID, verb), nil
}

func (e *Engine) terminate(ctx context.Context, st *parser.Terminate) (string, error) {
	if st.All {
		for _, q := range e.Queries() {
			if err := e.terminateQuery(ctx, q); err != nil {
				return "", err
			}
		}
		return "All queries terminated.", nil
	}
	q := e.query(strings.ToUpper(st.QueryID))
	if q == nil {
		return "", unknownQuery(st.QueryID)
	}
	if err := e.terminateQuery(ctx, q); err != nil {
		return "", err
	}
	return fmt.Sprintf("Query %s terminated.", q.ID), nil
}

func (e *Engine) show(ctx context.Context, st *parser.Show, props map[string]string) (string, Entity, error) {
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
			if st.Extended {
				e.writeOwners(&b, q.ID)
			}
		}
		return b.String(), l, nil
	case parser.ShowTopics:
		l, err := e.topicList(ctx)
		if err != nil {
			return "", nil, err
		}
		return e.showTopicsText(l), l, nil
	case parser.ShowProperties:
		l := e.propertyList(props, overrides(ctx))
		return e.showPropertiesText(l), l, nil
	case parser.ShowTypes:
		l := &TypeList{Types: e.cat.Types()}
		for _, t := range l.Types {
			fmt.Fprintf(&b, "%s\t%s\n", t.Name, t.Type)
		}
		return b.String(), l, nil
	case parser.ShowFunctions:
		l := &FunctionList{Functions: expr.Functions()}
		fmt.Fprintf(&b, "%-24s | %-10s | %s\n", "Function Name", "Type", "Category")
		for _, f := range l.Functions {
			fmt.Fprintf(&b, "%-24s | %-10s | %s\n", f.Name, f.Type, f.Category)
		}
		return b.String(), l, nil
	}
	return "", nil, fmt.Errorf("%w: SHOW %s is not supported yet", planner.ErrUnsupported, st.What)
}

// topicConfigs are the configs of a topic Sluice creates for a stream or
// table: a table's topic (not windowed) is compacted, as ksqlDB makes
// it, since only each key's latest record counts; a join restores the
// table from it.
func topicConfigs(src *planner.Source) map[string]string {
	if src.Kind == parser.KindTable && src.Window == exec.NotWindowed {
		return map[string]string{"cleanup.policy": "compact"}
	}
	return nil
}
