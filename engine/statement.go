package engine

import (
	"context"
	"fmt"
	"reflect"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// A statement kind is one Go type, registered once in kinds by the
// parser's AST type, so that adding a statement touches its own file and
// one line here rather than every dispatcher (ExecuteStatement, the
// command topic, IsCommand, the server's command ids and its /ksql
// endpoint's handling, KSQLUseOf).
//
// Commands change the catalog or the running queries; every other kind
// runs in a session.

// A command is a statement kind that changes the service's catalog or its
// persistent queries. The command topic stores it as its text with the
// session properties in force (commandRecord); every instance applies it
// in the topic's order.
type command[S parser.Statement] interface {
	// check validates st against the catalog as it is now, without side
	// effects. done is set when st would change nothing (IF NOT EXISTS
	// on an existing name); res then is its outcome.
	check(ctx context.Context, e *Engine, st S, c call) (res *Result, done bool, err error)
	// apply runs st, one command at a time.
	apply(ctx context.Context, e *Engine, st S, c call) (*Result, error)
	// statusID is the command id ksqlDB's REST API gives st's status ("":
	// the generic "statement/execute").
	statusID(st S) string
}

// A sessionStatement runs in a session and is not a command: it changes
// the session (SET, DEFINE), reads (SELECT, SHOW, DESCRIBE, EXPLAIN) or
// writes data (INSERT … VALUES).
type sessionStatement[S parser.Statement] interface {
	execute(ctx context.Context, e *Engine, st S, c call, sess *session) (*Result, error)
}

// A requestProperty statement (SET, UNSET) changes, in a request of
// ksqlDB's /ksql endpoint, the properties of the request's later
// statements instead of a session's.
type requestProperty[S parser.Statement] interface {
	setRequest(st S, props map[string]string) error
}

// KSQLUse is how ksqlDB's REST /ksql endpoint treats a statement.
type KSQLUse int

const (
	// KSQLRun: run it and answer its entity or command status.
	KSQLRun KSQLUse = iota
	// KSQLSilent: run it and answer nothing (INSERT … VALUES).
	KSQLSilent
	// KSQLProperty: it changes the properties of the request's later
	// statements (SET, UNSET; see SetRequestProperty).
	KSQLProperty
	// KSQLQuery: refused, it belongs to /query or /query-stream (SELECT,
	// PRINT).
	KSQLQuery
)

// call is what a statement runs with besides its AST.
type call struct {
	// text is the statement's SQL.
	text string
	// props are the session properties in force (a command's are those
	// it was issued with).
	props map[string]string
	// accepted says a command was checked before it entered the command
	// topic (it is being applied from there).
	accepted bool
}

// kind is a registered statement kind with its AST type erased.
type kind struct {
	command  bool
	check    func(ctx context.Context, e *Engine, st parser.Statement, c call) (*Result, bool, error)
	apply    func(ctx context.Context, e *Engine, st parser.Statement, c call) (*Result, error)
	statusID func(st parser.Statement) string
	execute  func(ctx context.Context, e *Engine, st parser.Statement, c call, sess *session) (*Result, error)
	// setRequest is set for KSQLProperty kinds.
	setRequest func(st parser.Statement, props map[string]string) error
	// ksql is how /ksql treats the kind.
	ksql KSQLUse
}

// kinds holds every statement the engine runs, by AST type. A statement
// of a type not listed is refused as not supported.
var kinds = register(
	asCommand[*parser.CreateSource](createSourceCommand{}),
	asCommand[*parser.InsertSelect](insertSelectCommand{}),
	asCommand[*parser.Terminate](terminateCommand{}),
	asCommand[*parser.PauseQuery](pauseCommand{}),
	asCommand[*parser.Drop](dropCommand{}),
	asCommand[*parser.AlterSource](alterCommand{}),
	asCommand[*parser.CreateType](createTypeCommand{}),
	asCommand[*parser.DropType](dropTypeCommand{}),
	asCommand[*parser.CreateFunction](createFunctionCommand{}),
	asCommand[*parser.DropFunction](dropFunctionCommand{}),

	asSession[*parser.InsertValues](insertValuesStatement{}, KSQLSilent),
	asProperty[*parser.SetProperty](setStatement{}),
	asProperty[*parser.UnsetProperty](unsetStatement{}),
	asSession[*parser.Define](defineStatement{}, KSQLRun),
	asSession[*parser.Undefine](undefineStatement{}, KSQLRun),
	asSession[*parser.Select](selectStatement{}, KSQLQuery),
	asSession[*parser.Explain](explainStatement{}, KSQLRun),
	asSession[*parser.Describe](describeStatement{}, KSQLRun),
	asSession[*parser.Show](showStatement{}, KSQLRun),
	asSession[*parser.AssertTopic](assertTopicStatement{}, KSQLRun),
	asSession[*parser.AssertSchema](assertSchemaStatement{}, KSQLRun),
	asSession[*parser.RunScript](runScriptStatement{}, KSQLRun),
	asSession[*parser.CreateConnector](createConnectorStatement{}, KSQLRun),
	asSession[*parser.DropConnector](dropConnectorStatement{}, KSQLRun),
	asSession[*parser.ShowConnectors](showConnectorsStatement{}, KSQLRun),
	asSession[*parser.DescribeConnector](describeConnectorStatement{}, KSQLRun),
	asSession[*parser.ShowConnectorPlugins](showConnectorPluginsStatement{}, KSQLRun),
)

type registered struct {
	t reflect.Type
	k kind
}

func register(rs ...registered) map[reflect.Type]kind {
	m := make(map[reflect.Type]kind, len(rs))
	for _, r := range rs {
		m[r.t] = r.k
	}
	return m
}

// asCommand registers a command kind for statements of type S.
func asCommand[S parser.Statement](c command[S]) registered {
	return registered{t: reflect.TypeFor[S](), k: kind{
		command: true,
		check: func(ctx context.Context, e *Engine, st parser.Statement, cl call) (*Result, bool, error) {
			return c.check(ctx, e, st.(S), cl)
		},
		apply: func(ctx context.Context, e *Engine, st parser.Statement, cl call) (*Result, error) {
			return c.apply(ctx, e, st.(S), cl)
		},
		statusID: func(st parser.Statement) string { return c.statusID(st.(S)) },
	}}
}

// asSession registers a session statement kind for statements of type S,
// which /ksql treats as use says.
func asSession[S parser.Statement](s sessionStatement[S], use KSQLUse) registered {
	return registered{t: reflect.TypeFor[S](), k: kind{
		execute: func(ctx context.Context, e *Engine, st parser.Statement, c call, sess *session) (*Result, error) {
			return s.execute(ctx, e, st.(S), c, sess)
		},
		ksql: use,
	}}
}

// asProperty registers a session statement kind for statements of type S
// that, in a /ksql request, change the request's properties.
func asProperty[S parser.Statement, P interface {
	sessionStatement[S]
	requestProperty[S]
}](s P) registered {
	r := asSession[S](s, KSQLProperty)
	r.k.setRequest = func(st parser.Statement, props map[string]string) error { return s.setRequest(st.(S), props) }
	return r
}

// kindOf looks a statement's kind up; ok is false for one the engine
// does not run.
func kindOf(st parser.Statement) (kind, bool) {
	if st == nil {
		return kind{}, false
	}
	k, ok := kinds[reflect.TypeOf(st)]
	return k, ok
}

// IsCommand reports whether a statement changes the service's catalog or
// its persistent queries, and so is a command (see kinds): CREATE
// STREAM/TABLE (with columns or AS SELECT), INSERT INTO … SELECT,
// TERMINATE, PAUSE/RESUME, DROP, ALTER, CREATE TYPE and DROP TYPE. SET,
// INSERT … VALUES and SELECT are not: they are session state or data.
func IsCommand(st parser.Statement) bool {
	k, ok := kindOf(st)
	return ok && k.command
}

// KSQLUseOf says how ksqlDB's /ksql endpoint treats a statement. PRINT
// is no engine statement (a client reads the topic) but belongs to
// /query as SELECT does; a statement the engine does not run is KSQLRun,
// and running it says why not.
func KSQLUseOf(st parser.Statement) KSQLUse {
	if _, ok := st.(*parser.Print); ok {
		return KSQLQuery
	}
	k, _ := kindOf(st)
	return k.ksql
}

// SetRequestProperty applies a KSQLProperty statement (SET, UNSET) to the
// properties of a /ksql request, refusing what SET refuses.
func SetRequestProperty(st parser.Statement, props map[string]string) error {
	k, ok := kindOf(st)
	if !ok || k.setRequest == nil {
		return fmt.Errorf("%w: %T does not set a property", planner.ErrInvalid, st)
	}
	return k.setRequest(st, props)
}

// GenericCommandID is the command id of a statement without one of its
// own.
const GenericCommandID = "statement/execute"

// CommandID is the command id ksqlDB's REST API gives the status of a
// statement (GenericCommandID for one without an id of its own), and
// silent for a statement that answers nothing (INSERT … VALUES).
func CommandID(st parser.Statement) (id string, silent bool) {
	k, ok := kindOf(st)
	if ok && k.ksql == KSQLSilent {
		return "", true
	}
	if ok && k.command {
		if id := k.statusID(st); id != "" {
			return id, false
		}
	}
	return GenericCommandID, false
}

// check validates a command against the catalog as it is now, without
// side effects. done is set when the statement would change nothing (IF
// NOT EXISTS on an existing name); res then is its outcome.
func (e *Engine) check(ctx context.Context, p parser.Parsed, props map[string]string) (res *Result, done bool, err error) {
	stmt, err := planner.ResolveTypes(e.cat, p.Stmt)
	if err != nil {
		return nil, false, err
	}
	k, ok := kindOf(stmt)
	if !ok || !k.command {
		return nil, false, fmt.Errorf("%w: %T is not a command", planner.ErrInvalid, p.Stmt)
	}
	return k.check(ctx, e, stmt, call{text: p.Text, props: props})
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
	// Custom types resolve against the catalog as this command finds
	// it, in the command topic's order, so every replay plans the same.
	stmt, err := planner.ResolveTypes(e.cat, p.Stmt)
	if err != nil {
		return nil, err
	}
	k, ok := kindOf(stmt)
	if !ok || !k.command {
		return nil, fmt.Errorf("%w: %T is not a command", planner.ErrInvalid, p.Stmt)
	}
	return k.apply(ctx, e, stmt, call{text: p.Text, props: props, accepted: accepted})
}

// runScriptStatement is RUN SCRIPT, which only a client (the shell) runs.
type runScriptStatement struct{}

func (runScriptStatement) execute(_ context.Context, _ *Engine, st *parser.RunScript, c call, _ *session) (*Result, error) {
	return nil, parser.ClientOnly(st, c.text)
}
