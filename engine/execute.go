package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// Result is what one statement produced. Each outcome is said once: a
// one-line Message (DDL, SET, INSERT, TERMINATE, ASSERT), an Entity
// (SHOW, DESCRIBE, EXPLAIN, ASSERT), or Rows (a query); Query and Command
// say what else the statement started or logged. The engine writes no
// text for an Entity: callers lay it out (shell.WriteEntity, or
// WireEntity for ksqlDB's REST shape).
type Result struct {
	Statement string
	// Message is a one-line outcome for DDL, SET, INSERT, TERMINATE and
	// ASSERT.
	Message string
	// Query is set when the statement started a persistent query.
	Query *Query
	// Rows is set for a push or pull query: rows arrive until Close or
	// LIMIT.
	Rows *RowStream
	// Entity is the result of SHOW, DESCRIBE, EXPLAIN and ASSERT (see
	// Entity).
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
		p, err := inlineFunctionModule(p)
		if err != nil {
			return nil, err
		}
		props := commandProps(sess.snapshot())
		// A new command is planned, now and at every replay, as this
		// planner version plans.
		props[planner.PlanVersionProperty] = strconv.Itoa(planner.CurrentPlanVersion)
		if e.cmd != nil {
			return e.cmd.submit(ctx, p, props)
		}
		return e.apply(ctx, p, props, false)
	}
	stmt, err := planner.ResolveTypes(e.cat, p.Stmt)
	if err != nil {
		return nil, err
	}
	k, ok := kindOf(stmt)
	if !ok || k.execute == nil {
		return nil, fmt.Errorf("%w: %T statements are not supported yet", planner.ErrUnsupported, p.Stmt)
	}
	return k.execute(ctx, e, stmt, call{text: p.Text}, sess)
}
