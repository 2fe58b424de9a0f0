package pgwire

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/pgcatalog"
	"github.com/sluice-sql/sluice/shell"
	"github.com/sluice-sql/sluice/types"
)

// statement is one prepared statement: Sluice SQL, a statement
// pgcatalog answers, a cursor statement, or the empty one.
type statement interface {
	paramOIDs() []uint32
	// columns describes the rows without running the statement (or by
	// running it when it only reads the catalog); nil when it has none.
	columns(ctx context.Context, ss *session) ([]column, error)
	run(ctx context.Context, ss *session, params []any) (*outcome, error)
	empty() bool
}

// outcome is what a statement gave: rows (when cols is not nil), and
// the command tag.
type outcome struct {
	empty bool
	cols  []column
	rows  Rows
	push  bool
	// fixedTag is the tag of a statement without rows, or of one whose
	// tag carries no count (SHOW, EXPLAIN); a statement with rows is
	// otherwise tagged by tagPrefix and the count sent.
	fixedTag  string
	tagPrefix string
	notices   []string
	// binary sends the rows in binary when the client named no formats
	// (FETCH from a BINARY cursor).
	binary bool
}

func (o *outcome) tag(n int) string {
	if o.rows == nil || o.fixedTag != "" {
		return o.fixedTag
	}
	if o.tagPrefix == "" {
		return "SELECT " + strconv.Itoa(n)
	}
	return o.tagPrefix + " " + strconv.Itoa(n)
}

func (o *outcome) close() {
	if o.rows != nil {
		o.rows.Close()
	}
}

// prepare parses one statement's text and routes it: the empty
// statement, a cursor statement, one pgcatalog claims, else Sluice SQL.
func (ss *session) prepare(text string, declared []uint32) (statement, error) {
	if strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), ";")) == "" {
		return emptyStatement{}, nil
	}
	if st, ok, err := ss.prepareCursor(text, declared); ok || err != nil {
		return st, err
	}
	if ss.cat.Claims(text) {
		st, err := ss.cat.Prepare(text, declared)
		if err != nil {
			return nil, err
		}
		return &catalogStatement{st: st}, nil
	}
	return ss.prepareSluice(text, declared)
}

type emptyStatement struct{}

func (emptyStatement) paramOIDs() []uint32                                 { return nil }
func (emptyStatement) columns(context.Context, *session) ([]column, error) { return nil, nil }
func (emptyStatement) empty() bool                                         { return true }
func (emptyStatement) run(context.Context, *session, []any) (*outcome, error) {
	return &outcome{empty: true}, nil
}

// catalogStatement is a statement pgcatalog answers.
type catalogStatement struct{ st *pgcatalog.Statement }

func (c *catalogStatement) paramOIDs() []uint32 { return c.st.Params() }
func (c *catalogStatement) empty() bool         { return false }

func (c *catalogStatement) columns(context.Context, *session) ([]column, error) {
	if c.st.Fields() == nil {
		return nil, nil
	}
	return catalogColumns(c.st.Fields()), nil
}

func (c *catalogStatement) run(ctx context.Context, ss *session, params []any) (*outcome, error) {
	typed, err := catalogParams(ss, c.st.Params(), params)
	if err != nil {
		return nil, err
	}
	res, err := c.st.Execute(ctx, typed)
	if err != nil {
		return nil, err
	}
	if res.Fields == nil {
		return &outcome{fixedTag: res.Tag}, nil
	}
	out := &outcome{cols: catalogColumns(res.Fields), rows: &anyRows{rows: res.Rows}, fixedTag: res.Tag}
	// A counted tag ("SELECT 3") counts the rows sent, which a portal's
	// row limit may make fewer; others ("SHOW") stay as they are.
	if i := strings.LastIndexByte(res.Tag, ' '); i > 0 {
		if _, err := strconv.Atoi(res.Tag[i+1:]); err == nil {
			out.fixedTag, out.tagPrefix = "", res.Tag[:i]
		}
	}
	return out, nil
}

// catalogParams decodes text parameters for pgcatalog by their types
// (binary ones pgtype decoded already).
func catalogParams(ss *session, oids []uint32, params []any) ([]any, error) {
	out := make([]any, len(params))
	for i, v := range params {
		s, isText := v.(string)
		if !isText || i >= len(oids) || oids[i] == pgcatalog.OIDText || oids[i] == pgcatalog.OIDVarchar || oids[i] == pgcatalog.OIDName || oids[i] == pgcatalog.OIDUnknown {
			out[i] = v
			continue
		}
		dt, ok := ss.enc.m.TypeForOID(oids[i])
		if !ok {
			out[i] = v
			continue
		}
		x, err := dt.Codec.DecodeValue(ss.enc.m, oids[i], textFormat, []byte(s))
		if err != nil {
			return nil, &pgError{code: codeInvalidTextRep, message: fmt.Sprintf("parameter $%d: %v", i+1, err)}
		}
		out[i] = x
	}
	return out, nil
}

// anyRows are pgcatalog's rows.
type anyRows struct{ rows [][]any }

func (r *anyRows) Columns() types.Schema { return types.Schema{} }
func (r *anyRows) Push() bool            { return false }
func (r *anyRows) Close()                { r.rows = nil }
func (r *anyRows) Next(context.Context) ([]any, bool, error) {
	if len(r.rows) == 0 {
		return nil, false, nil
	}
	row := r.rows[0]
	r.rows = r.rows[1:]
	return row, true, nil
}

// sluiceStatement is a statement of Sluice's dialect, its $n parameters
// typed.
type sluiceStatement struct {
	text   string
	refs   []paramRef
	types  []*types.Type
	oids   []uint32
	parsed parser.Parsed
	// source gives a source's schema, for reading quoted literals as the
	// type they are compared with (resolveLiterals).
	source func(string) (types.Schema, bool)
}

func (ss *session) prepareSluice(text string, declared []uint32) (*sluiceStatement, error) {
	refs := scanParams(text)
	count := len(declared)
	for _, r := range refs {
		count = max(count, r.n)
	}
	stmts, numeric, err := parseWithParams(text, refs)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, &pgError{code: pgcatalog.CodeSyntaxError, message: "cannot insert multiple commands into a prepared statement"}
	}
	st := &sluiceStatement{text: text, refs: refs, parsed: stmts[0], source: ss.srv.be.Source}
	if len(refs) == 0 {
		if st.parsed, err = resolveLiterals(text, st.parsed, st.source); err != nil {
			return nil, err
		}
	}
	st.types = inferParams(stmts[0].Stmt, count, ss.srv.be.Source)
	for n := range numeric {
		if n <= len(st.types) {
			st.types[n-1] = &types.BigIntType
		}
	}
	// A declared type says how the client sends the value; the column's
	// type still says which literal it becomes.
	st.oids = paramOIDs(declared, st.types)
	return st, nil
}

func (st *sluiceStatement) paramOIDs() []uint32 { return st.oids }
func (st *sluiceStatement) empty() bool         { return false }

// originate marks the columns a query on one source reads as they are
// from that source's columns (pgcatalog's oid and attnum), so a client
// that asks the catalog about a result's columns (the JDBC driver's
// ResultSetMetaData) finds them; a name the source lacks stays 0.
func (ss *session) originate(cols []column, sel *parser.Select) []column {
	if sel.From == nil || len(sel.Joins) > 0 {
		return cols
	}
	for i := range cols {
		cols[i].tableOID, cols[i].attnum = ss.cat.ColumnOrigin(sel.From.Name, cols[i].name)
	}
	return cols
}

// readOnly reports statements that only read the catalog, which
// Describe may run to learn their columns.
func readOnly(s parser.Statement) bool {
	switch s.(type) {
	case *parser.Show, *parser.Describe, *parser.Explain, *parser.ShowConnectors, *parser.ShowConnectorPlugins, *parser.DescribeConnector:
		return true
	}
	return false
}

func (st *sluiceStatement) columns(ctx context.Context, ss *session) ([]column, error) {
	switch s := st.parsed.Stmt.(type) {
	case *parser.Select:
		// Planned with a literal of each parameter's type in its place,
		// so the plan sees what it will run.
		p, err := st.bound(nil)
		if err != nil {
			return nil, err
		}
		sel, ok := p.Stmt.(*parser.Select)
		if !ok {
			sel = s
		}
		schema, err := ss.srv.be.Schema(ctx, sel, ss.props)
		if err != nil {
			return nil, err
		}
		return ss.originate(sluiceColumns(schema), sel), nil
	}
	if readOnly(st.parsed.Stmt) {
		out, err := st.run(ctx, ss, make([]any, len(st.oids)))
		if err != nil {
			return nil, err
		}
		out.close()
		return out.cols, nil
	}
	return nil, nil
}

// bound is the statement with its parameters replaced by literals; nil
// params stand for a sample value of each parameter's type, for
// planning.
func (st *sluiceStatement) bound(params []any) (parser.Parsed, error) {
	if len(st.refs) == 0 {
		return st.parsed, nil
	}
	var failed error
	text := substitute(st.text, st.refs, func(n int) string {
		var t *types.Type
		if n-1 < len(st.types) {
			t = st.types[n-1]
		}
		if params == nil {
			return sampleLiteral(t)
		}
		var v any
		if n-1 < len(params) {
			v = params[n-1]
		}
		lit, err := literal(v, t)
		if err != nil && failed == nil {
			failed = fmt.Errorf("parameter $%d: %w", n, err)
		}
		return lit
	})
	if failed != nil {
		return parser.Parsed{}, failed
	}
	stmts, err := parser.ParseScript(text)
	if err != nil {
		return parser.Parsed{}, err
	}
	if len(stmts) != 1 {
		return parser.Parsed{}, &pgError{code: pgcatalog.CodeSyntaxError, message: "cannot insert multiple commands into a prepared statement"}
	}
	return resolveLiterals(text, stmts[0], st.source)
}

// sampleLiteral is a literal of type t for planning.
func sampleLiteral(t *types.Type) string {
	if t == nil {
		return "''"
	}
	var v any
	switch t.Kind {
	case types.Boolean:
		v = false
	case types.Integer, types.BigInt, types.Double, types.Decimal:
		v = int64(0)
	case types.String, types.Bytes:
		v = ""
	case types.Timestamp, types.Date:
		v = time.Unix(0, 0).UTC()
	case types.Time:
		v = "00:00:00"
	default:
		return "NULL"
	}
	lit, err := literal(v, t)
	if err != nil {
		return "NULL"
	}
	return lit
}

func (st *sluiceStatement) run(ctx context.Context, ss *session, params []any) (*outcome, error) {
	p, err := st.bound(params)
	if err != nil {
		return nil, err
	}
	switch s := p.Stmt.(type) {
	case *parser.Select:
		// The query lives as long as the session may read it (a portal
		// suspended between Executes); drain's context cancels reading.
		rows, err := ss.srv.be.Query(ss.ctx, p, ss.props)
		if err != nil {
			return nil, err
		}
		return &outcome{cols: ss.originate(sluiceColumns(rows.Columns()), s), rows: rows, push: rows.Push()}, nil
	case *parser.SetProperty, *parser.UnsetProperty:
		if err := engine.SetRequestProperty(s, ss.props); err != nil {
			return nil, err
		}
		if _, unset := s.(*parser.UnsetProperty); unset {
			return &outcome{fixedTag: "UNSET"}, nil
		}
		return &outcome{fixedTag: "SET"}, nil
	case *parser.Print:
		return nil, &pgError{code: pgcatalog.CodeFeatureUnsupported, message: "PRINT is not supported over the Postgres protocol: use the REST API's /query or the shell"}
	}
	res, err := ss.srv.be.Execute(ctx, p, ss.props)
	if err != nil {
		return nil, err
	}
	if res.Rows != nil {
		return &outcome{cols: sluiceColumns(res.Rows.Columns), rows: StreamRows(res.Rows), push: !res.Rows.Pull}, nil
	}
	if res.Entity != nil {
		return entityOutcome(p, res.Entity), nil
	}
	out := &outcome{fixedTag: tagOf(p.Stmt)}
	if res.Message != "" {
		out.notices = append(out.notices, res.Message)
	}
	return out, nil
}

// entityOutcome sends a SHOW, DESCRIBE or EXPLAIN result as the shell
// lays it out: its table as rows of text, the text around it as
// notices; an entity without a table sends its lines as rows.
func entityOutcome(p parser.Parsed, ent engine.Entity) *outcome {
	before, t, after, ok := shell.EntityLayout(p, ent)
	out := &outcome{}
	if !ok {
		out.fixedTag = tagOf(p.Stmt)
		return out
	}
	if t == nil {
		name := "result"
		if _, explain := p.Stmt.(*parser.Explain); explain {
			name = "QUERY PLAN"
		}
		t = &shell.Table{Columns: []string{name}}
		for _, l := range strings.Split(strings.TrimRight(before+after, "\n"), "\n") {
			t.Rows = append(t.Rows, []string{l})
		}
		before, after = "", ""
	}
	for _, n := range []string{before, after} {
		if n = strings.TrimRight(n, "\n"); n != "" {
			out.notices = append(out.notices, n)
		}
	}
	rows := make([][]any, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = make([]any, len(t.Columns))
		for j := range t.Columns {
			if j < len(r) {
				rows[i][j] = r[j]
			}
		}
	}
	out.cols = textColumns(t.Columns)
	out.rows = &anyRows{rows: rows}
	// As Postgres tags SHOW and EXPLAIN: the verb, no count.
	out.fixedTag = strings.ToUpper(strings.Fields(p.Text)[0])
	return out
}

// tagOf is the command tag of a statement without rows, as Postgres
// names its own: the statement's leading keywords ("CREATE TABLE",
// "DROP STREAM", "TERMINATE"), INSERT with its row count.
func tagOf(s parser.Statement) string {
	switch s := s.(type) {
	case *parser.InsertValues:
		return "INSERT 0 1"
	case *parser.InsertSelect:
		return "INSERT 0 0"
	case *parser.CreateSource:
		return "CREATE " + s.Kind.String()
	case *parser.Drop:
		return "DROP " + s.Kind.String()
	}
	words := strings.Fields(strings.ToUpper(s.String()))
	if len(words) == 0 {
		return ""
	}
	switch words[0] {
	case "CREATE", "DROP", "ALTER":
		for _, w := range words[1:] {
			if w == "OR" || w == "REPLACE" || w == "SOURCE" || w == "IF" || w == "NOT" || w == "EXISTS" {
				continue
			}
			return words[0] + " " + w
		}
	}
	return words[0]
}
