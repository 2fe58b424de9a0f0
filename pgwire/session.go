package pgwire

import (
	"context"
	"errors"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/pgcatalog"
)

// session is one client connection after its startup: it reads the
// client's messages and answers them one statement at a time.
type session struct {
	srv    *Server
	be     *pgproto3.Backend
	in     *pump
	enc    *encoder
	params map[string]string
	user   string
	pid    uint32
	secret []byte

	cat *pgcatalog.Session
	// props are the Sluice query properties SET gives this session.
	props   map[string]string
	stmts   map[string]statement
	portals map[string]*portal
	cursors map[string]*cursor

	// ctx ends when the client goes away or the server shuts down.
	ctx  context.Context
	stop context.CancelCauseFunc

	mu sync.Mutex
	// cancelRun cancels the running statement (CancelRequest).
	cancelRun context.CancelCauseFunc
	// idleMark is what the client had sent (pump.received) when the
	// session last said ReadyForQuery; cancelPending a CancelRequest that
	// came when the client had sent more since, but no statement had
	// started yet: it cancels what runs until the next ReadyForQuery.
	idleMark      int64
	cancelPending bool
	closing       atomic.Bool
}

var (
	errUserCancel = errors.New("canceled by user")
	errShutdown   = errors.New("server shutting down")
)

func newSession(srv *Server, be *pgproto3.Backend, in *pump, params map[string]string) *session {
	ctx, stop := context.WithCancelCause(context.Background())
	ss := &session{srv: srv, be: be, in: in, enc: newEncoder(), params: params, user: params["user"],
		props: map[string]string{}, stmts: map[string]statement{}, portals: map[string]*portal{}, cursors: map[string]*cursor{},
		ctx: ctx, stop: stop}
	db := params["database"]
	if db == "" {
		db = ss.user
	}
	ss.cat = pgcatalog.NewSession(srv.be.Relations, ss.user, db)
	if srv.opts.Version != "" {
		ss.cat.SetSluiceVersion(srv.opts.Version)
	}
	go func() {
		select {
		case <-in.gone:
			stop(errClientGone)
		case <-ctx.Done():
		}
	}()
	return ss
}

// shutdown ends the session: its running statement is canceled and it
// says goodbye at the next message boundary.
func (ss *session) shutdown() {
	ss.closing.Store(true)
	ss.stop(errShutdown)
	ss.in.stop()
}

// cancelStatement cancels the running statement; with none running, the
// one the client sent and the session has not started yet (psql sends its
// CancelRequest right after the query, on a connection of its own, so it
// can come first), if the client sent anything since it was last told
// the session is ready. A CancelRequest to an idle session does nothing,
// as Postgres.
//
// A cancel that finds a statement running also cancels what the session
// starts after it until ReadyForQuery: a push query is started in one
// statement context, which its start does not watch, and drained in the
// next, so a cancel during the start must reach the drain.
func (ss *session) cancelStatement() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.cancelRun != nil:
		ss.cancelRun(errUserCancel)
		ss.cancelPending = true
	case ss.in.received() > ss.idleMark || ss.in.unread() > 0:
		ss.cancelPending = true
	}
}

// statementContext is the context of one statement: canceled by a
// CancelRequest, the client going away, or shutdown.
func (ss *session) statementContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ss.ctx)
	ss.mu.Lock()
	ss.cancelRun = cancel
	if ss.cancelPending {
		// Every statement context until ReadyForQuery: a query is
		// started in one (which a push query's start does not watch)
		// and drained in another.
		cancel(errUserCancel)
	}
	ss.mu.Unlock()
	return ctx, func() {
		ss.mu.Lock()
		ss.cancelRun = nil
		ss.mu.Unlock()
		cancel(nil)
	}
}

// canceled turns the error of a statement whose context ended into
// Postgres's: 57014 for a CancelRequest, FATAL 57P01 at shutdown.
func canceled(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	switch context.Cause(ctx) {
	case errUserCancel:
		return errCanceled
	case errShutdown:
		return fatal(codeAdminShutdown, "terminating connection due to administrator command")
	}
	return err
}

func (ss *session) run() {
	defer ss.closeAll()
	ss.greet()
	if err := ss.be.Flush(); err != nil {
		return
	}
	// failed is set after an error in the extended protocol: messages
	// are skipped until Sync.
	failed := false
	for {
		msg, err := ss.be.Receive()
		if err != nil {
			if ss.closing.Load() {
				ss.sendFatal(fatal(codeAdminShutdown, "terminating connection due to administrator command"))
				return
			}
			var pe *pgError
			if !errors.As(err, &pe) && ss.ctx.Err() == nil && !isEOF(err) {
				ss.srv.log.Info("postgres: invalid message; connection closed", "user", ss.user, "pid", ss.pid, "err", err)
				ss.sendFatal(protocolErrorf("invalid message: %v", err))
			}
			return
		}
		if failed {
			switch msg.(type) {
			case *pgproto3.Sync:
				failed = false
			case *pgproto3.Terminate:
				return
			default:
				continue
			}
		}
		var stepErr error
		switch m := msg.(type) {
		case *pgproto3.Query:
			if stepErr = ss.simpleQuery(m.String); stepErr == nil {
				ss.ready()
			}
		case *pgproto3.Parse:
			stepErr = ss.parse(m)
		case *pgproto3.Bind:
			stepErr = ss.bind(m)
		case *pgproto3.Describe:
			stepErr = ss.describe(m)
		case *pgproto3.Execute:
			stepErr = ss.execute(m)
		case *pgproto3.Close:
			ss.closeObject(m)
		case *pgproto3.Sync:
			ss.sync()
			ss.ready()
		case *pgproto3.Flush:
		case *pgproto3.Terminate:
			return
		default:
			stepErr = protocolErrorf("unexpected message %T", msg)
		}
		if stepErr != nil {
			var pe *pgError
			if errors.As(stepErr, &pe) && pe.severity == "FATAL" {
				ss.sendFatal(pe)
				return
			}
			if _, simple := msg.(*pgproto3.Query); !simple {
				ss.be.Send(toPG(stepErr, "", 0).response())
				failed = true
			}
		}
		switch msg.(type) {
		case *pgproto3.Flush, *pgproto3.Query, *pgproto3.Sync:
			if err := ss.be.Flush(); err != nil {
				return
			}
		}
		if ss.closing.Load() {
			ss.sendFatal(fatal(codeAdminShutdown, "terminating connection due to administrator command"))
			return
		}
	}
}

// isEOF reports a read that ended because the connection did.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, errClientGone)
}

func (ss *session) sendFatal(pe *pgError) {
	r := pe.response()
	r.Severity, r.SeverityUnlocalized = "FATAL", "FATAL"
	ss.be.Send(r)
	_ = ss.be.Flush()
}

// start applies the startup packet's parameters (application_name,
// client_encoding, DateStyle, …) as pgcatalog checks them: one it
// refuses (a client_encoding other than UTF8) ends the connection.
func (ss *session) startup() error {
	names := make([]string, 0, len(ss.params))
	for k := range ss.params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k == "user" || k == "database" {
			continue
		}
		if err := ss.cat.SetStartupParameter(k, ss.params[k]); err != nil {
			pe := toPG(err, "", 0)
			pe.severity = "FATAL"
			return pe
		}
	}
	ss.cat.SetBackendPID(int(ss.pid))
	return nil
}

// greet sends what a client learns after authentication: the reported
// parameters, its cancel key, and that it may send queries.
func (ss *session) greet() {
	ss.be.Send(&pgproto3.AuthenticationOk{})
	ss.sendParameters(ss.cat.Reported())
	ss.be.Send(&pgproto3.BackendKeyData{ProcessID: ss.pid, SecretKey: ss.secret})
	ss.ready()
}

// sendParameters sends ParameterStatus for each parameter, by name.
func (ss *session) sendParameters(m map[string]string) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ss.be.Send(&pgproto3.ParameterStatus{Name: k, Value: m[k]})
	}
}

// ready ends a query cycle: the parameters its statements changed
// (SET application_name, …), then ReadyForQuery with the transaction
// status pgcatalog keeps (BEGIN, COMMIT, ROLLBACK).
func (ss *session) ready() {
	ss.sendParameters(ss.cat.Changed())
	tx := byte('I')
	if ss.cat.InTransaction() {
		tx = 'T'
	}
	ss.be.Send(&pgproto3.ReadyForQuery{TxStatus: tx})
	// Sent before the client can have it: whatever it sends from here on
	// comes after.
	ss.markIdle()
}

// markIdle notes what the client has sent when the session says
// ReadyForQuery, and forgets a cancel: it reached what it canceled.
func (ss *session) markIdle() {
	ss.mu.Lock()
	ss.idleMark, ss.cancelPending = ss.in.received(), false
	ss.mu.Unlock()
}

// closeAll ends what the session still runs: portals and cursors.
func (ss *session) closeAll() {
	for _, p := range ss.portals {
		p.close()
	}
	for _, c := range ss.cursors {
		c.rows.Close()
	}
	ss.stop(errClientGone)
}

// simpleQuery runs each statement of a Query message in turn, stopping
// at the first error.
func (ss *session) simpleQuery(sql string) error {
	var stmts []string
	for _, part := range pgcatalog.Split(sql) {
		stmts = append(stmts, ss.splitSluice(part)...)
	}
	if len(stmts) == 0 || strings.TrimSpace(strings.Join(stmts, "")) == "" {
		ss.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	from := 0
	for _, text := range stmts {
		offset := from
		if i := strings.Index(sql[from:], text); i >= 0 {
			offset = from + i
			from = offset + len(text)
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		if err := ss.simpleStatement(text, sql, offset); err != nil {
			pe := toPG(err, sql, offset)
			if pe.severity == "FATAL" {
				return pe
			}
			ss.be.Send(pe.response())
			return nil
		}
	}
	return nil
}

// splitSluice cuts a part of a simple query that is Sluice SQL at its
// statements by Sluice's lexing rules (backquoted names, which
// Postgres's scanner does not know, leave such parts whole).
func (ss *session) splitSluice(part string) []string {
	if ss.cat.Claims(part) {
		return []string{part}
	}
	texts, rest := parser.SplitStatements(part)
	if strings.TrimSpace(rest) != "" {
		texts = append(texts, rest)
	}
	if len(texts) == 0 {
		return []string{part}
	}
	return texts
}

func (ss *session) simpleStatement(text, sql string, offset int) error {
	st, err := ss.prepare(text, nil)
	if err != nil {
		return err
	}
	if len(st.paramOIDs()) > 0 {
		return &pgError{code: pgcatalog.CodeSyntaxError, message: "there is no parameter $1"}
	}
	p := &portal{stmt: st}
	defer p.close()
	if err := ss.start(p); err != nil {
		return err
	}
	if p.out.cols != nil {
		ss.be.Send(rowDescription(p.cols))
	}
	return ss.drain(p, 0)
}

// parse handles Parse: one statement, named or the unnamed one.
func (ss *session) parse(m *pgproto3.Parse) error {
	stmts := pgcatalog.Split(m.Query)
	var nonEmpty []string
	for _, s := range stmts {
		if strings.TrimSpace(s) != "" {
			nonEmpty = append(nonEmpty, s)
		}
	}
	if len(nonEmpty) > 1 {
		return &pgError{code: pgcatalog.CodeSyntaxError, message: "cannot insert multiple commands into a prepared statement"}
	}
	text := ""
	if len(nonEmpty) == 1 {
		text = nonEmpty[0]
	}
	if _, exists := ss.stmts[m.Name]; exists && m.Name != "" {
		return &pgError{code: "42P05", message: "prepared statement \"" + m.Name + "\" already exists"}
	}
	st, err := ss.prepare(text, m.ParameterOIDs)
	if err != nil {
		offset := strings.Index(m.Query, text)
		return toPG(err, m.Query, max(offset, 0))
	}
	ss.stmts[m.Name] = st
	ss.be.Send(&pgproto3.ParseComplete{})
	return nil
}

// bind handles Bind: the statement's parameters decoded into a portal.
func (ss *session) bind(m *pgproto3.Bind) error {
	st, ok := ss.stmts[m.PreparedStatement]
	if !ok {
		return &pgError{code: codeInvalidStatementName, message: "prepared statement \"" + m.PreparedStatement + "\" does not exist"}
	}
	if old, ok := ss.portals[m.DestinationPortal]; ok {
		if m.DestinationPortal != "" {
			return &pgError{code: "42P03", message: "portal \"" + m.DestinationPortal + "\" already exists"}
		}
		old.close()
	}
	params, err := decodeParams(ss.enc.m, st.paramOIDs(), m.ParameterFormatCodes, m.Parameters)
	if err != nil {
		return err
	}
	ss.portals[m.DestinationPortal] = &portal{stmt: st, params: params, formats: m.ResultFormatCodes}
	ss.be.Send(&pgproto3.BindComplete{})
	return nil
}

// describe handles Describe of a statement (its parameters and rows)
// or a portal (its rows in their formats).
func (ss *session) describe(m *pgproto3.Describe) error {
	if m.ObjectType == 'S' {
		st, ok := ss.stmts[m.Name]
		if !ok {
			return &pgError{code: codeInvalidStatementName, message: "prepared statement \"" + m.Name + "\" does not exist"}
		}
		ctx, done := ss.statementContext()
		defer done()
		cols, err := st.columns(ctx, ss)
		if err != nil {
			return toPG(canceled(ctx, err), statementText(st), 0)
		}
		ss.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: st.paramOIDs()})
		if cols == nil {
			ss.be.Send(&pgproto3.NoData{})
			return nil
		}
		ss.be.Send(rowDescription(cols))
		return nil
	}
	p, ok := ss.portal(m.Name)
	if !ok {
		return &pgError{code: codeInvalidCursorName, message: "portal \"" + m.Name + "\" does not exist"}
	}
	var cols []column
	var err error
	if p.out != nil {
		cols = p.cols
	} else {
		ctx, done := ss.statementContext()
		cols, err = p.stmt.columns(ctx, ss)
		done()
		if err != nil {
			return toPG(canceled(ctx, err), statementText(p.stmt), 0)
		}
		if cols != nil {
			if cols, err = withFormats(cols, p.formats); err != nil {
				return err
			}
		}
	}
	if cols == nil {
		ss.be.Send(&pgproto3.NoData{})
		return nil
	}
	ss.be.Send(rowDescription(cols))
	return nil
}

// execute handles Execute: the portal's statement runs on its first
// Execute; its rows go out up to MaxRows a time (PortalSuspended when
// more remain).
func (ss *session) execute(m *pgproto3.Execute) error {
	p, ok := ss.portal(m.Portal)
	if !ok {
		return &pgError{code: codeInvalidCursorName, message: "portal \"" + m.Portal + "\" does not exist"}
	}
	if p.done {
		// Postgres answers an exhausted portal with an empty result.
		ss.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.out.tag(0))})
		return nil
	}
	if p.out == nil {
		if err := ss.start(p); err != nil {
			return toPG(err, statementText(p.stmt), 0)
		}
	}
	return ss.drain(p, int(m.MaxRows))
}

// portal finds a portal by name: a bound statement, or a cursor
// DECLAREd by that name, which in Postgres is a portal too (psycopg's
// server-side cursors Describe it so).
func (ss *session) portal(name string) (*portal, bool) {
	if p, ok := ss.portals[name]; ok {
		return p, true
	}
	c, ok := ss.cursors[name]
	if !ok {
		return nil, false
	}
	cols, _ := withFormats(c.cols, nil)
	return &portal{out: &outcome{cols: c.cols, rows: cursorRows{c}, push: c.push}, cols: cols}, true
}

// start runs a portal's statement.
func (ss *session) start(p *portal) error {
	if p.stmt.empty() {
		p.out = &outcome{empty: true}
		return nil
	}
	ctx, done := ss.statementContext()
	out, err := p.stmt.run(ctx, ss, p.params)
	done()
	if err != nil {
		return canceled(ctx, err)
	}
	p.out = out
	if out.cols != nil {
		formats := p.formats
		if len(formats) == 0 && out.binary {
			formats = []int16{binaryFormat}
		}
		if p.cols, err = withFormats(out.cols, formats); err != nil {
			out.close()
			p.out = nil
			return err
		}
	}
	for _, n := range out.notices {
		ss.be.Send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: n})
	}
	return nil
}

// flushRows is how many rows of a finite answer are written at a time.
const flushRows = 512

// drain sends a started portal's rows, up to maxRows (0: all), then
// CommandComplete, or PortalSuspended when rows remain. A push query's
// rows are flushed as they come.
func (ss *session) drain(p *portal, maxRows int) error {
	out := p.out
	if out.empty {
		ss.be.Send(&pgproto3.EmptyQueryResponse{})
		p.done = true
		return nil
	}
	if out.rows == nil {
		p.done = true
		ss.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(out.tag(0))})
		return nil
	}
	ctx, done := ss.statementContext()
	defer done()
	if out.push {
		// What came before the rows (BindComplete, RowDescription) goes
		// out now: a push query may wait long for its first row.
		if err := ss.be.Flush(); err != nil {
			p.close()
			return fatal(codeProtocolViolation, "client went away")
		}
	}
	sent := 0
	for maxRows <= 0 || sent < maxRows {
		row, ok, err := out.rows.Next(ctx)
		if err != nil {
			p.close()
			return canceled(ctx, err)
		}
		if !ok {
			p.done = true
			out.close()
			ss.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(out.tag(sent))})
			return nil
		}
		vals, err := ss.enc.row(p.cols, row)
		if err != nil {
			p.close()
			return err
		}
		ss.be.Send(&pgproto3.DataRow{Values: vals})
		sent++
		if out.push || sent%flushRows == 0 {
			// A push query's rows go as they come; a long answer's in
			// batches, so its rows are never all held here.
			if err := ss.be.Flush(); err != nil {
				p.close()
				return fatal(codeProtocolViolation, "client went away")
			}
		}
	}
	ss.be.Send(&pgproto3.PortalSuspended{})
	return nil
}

func (ss *session) closeObject(m *pgproto3.Close) {
	if m.ObjectType == 'S' {
		delete(ss.stmts, m.Name)
	} else if p, ok := ss.portals[m.Name]; ok {
		p.close()
		delete(ss.portals, m.Name)
	}
	ss.be.Send(&pgproto3.CloseComplete{})
}

// sync ends the implicit transaction of the extended protocol: its
// portals go, as in Postgres outside a transaction block.
func (ss *session) sync() {
	if ss.cat.InTransaction() {
		return
	}
	for name, p := range ss.portals {
		p.close()
		delete(ss.portals, name)
	}
}

// statementText is the text a Sluice statement's error positions point
// into; "" for other statements.
func statementText(st statement) string {
	if s, ok := st.(*sluiceStatement); ok {
		return s.text
	}
	return ""
}

func rowDescription(cols []column) *pgproto3.RowDescription {
	fs := make([]pgproto3.FieldDescription, len(cols))
	for i, c := range cols {
		fs[i] = pgproto3.FieldDescription{Name: []byte(c.name), TableOID: c.tableOID, TableAttributeNumber: uint16(c.attnum),
			DataTypeOID: c.pg.OID, DataTypeSize: c.pg.Size, TypeModifier: c.pg.TypeMod, Format: c.format}
	}
	return &pgproto3.RowDescription{Fields: fs}
}

// portal is a bound statement and, once it ran, its outcome.
type portal struct {
	stmt    statement
	params  []any
	formats []int16
	out     *outcome
	cols    []column
	done    bool
}

func (p *portal) close() {
	if p.out != nil {
		p.out.close()
	}
}
