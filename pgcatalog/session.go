package pgcatalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Session answers one connection's Postgres-side statements and keeps
// its client parameters (SET). A Session is used by one goroutine at a
// time, as a connection runs one statement at a time.
type Session struct {
	src      Source
	user     string
	database string
	pid      int
	settings map[string]string
	changed  map[string]string
	inTx     bool
	xid      atomic.Uint64
	// sluiceVersion goes into version()'s text.
	sluiceVersion string
}

// SetSluiceVersion names the Sluice version in version()'s text:
// "PostgreSQL 15.0 (Sluice VERSION) on ...". Clients parse the leading
// "PostgreSQL 15.0"; the rest is for people.
func (s *Session) SetSluiceVersion(v string) { s.sluiceVersion = v }

// NewSession starts a session for user on database over src.
func NewSession(src Source, user, database string) *Session {
	if database == "" {
		database = user
	}
	return &Session{src: src, user: user, database: database, pid: defaultPID}
}

// SetBackendPID makes pg_backend_pid() return the process id the server
// gave this session in BackendKeyData.
func (s *Session) SetBackendPID(pid int) { s.pid = pid }

// InTransaction reports whether a BEGIN is open (no COMMIT or ROLLBACK
// since), for ReadyForQuery's status byte.
func (s *Session) InTransaction() bool { return s.inTx }

// RelationOID is the oid pg_class gives the Sluice source name (0 when
// there is none): what a RowDescription's table OID should carry for a
// column read from that source, so that a client (the JDBC driver) that
// asks the catalog about the columns of a result finds them.
func (s *Session) RelationOID(name string) uint32 {
	if r := newCatalog(s).lookup("public", name); r != nil {
		return r.oid
	}
	return 0
}

// ColumnOrigin is where a result column comes from as RowDescription
// says it: the source's oid and the column's attnum (1-based), or 0, 0
// when the source has no such column. The JDBC driver's
// ResultSetMetaData (isNullable, getTableName) asks pg_attribute by them.
func (s *Session) ColumnOrigin(relation, column string) (uint32, int16) {
	r := newCatalog(s).lookup("public", relation)
	if r == nil {
		return 0, 0
	}
	for i, c := range r.cols {
		if c.name == column {
			return r.oid, int16(i + 1)
		}
	}
	return 0, 0
}

func (s *Session) nextXid() uint64 { return 1000 + s.xid.Add(1) }

func (s *Session) hasSetting(name string) bool {
	if gucByName[strings.ToLower(name)] != nil {
		return true
	}
	_, ok := s.settings[name]
	return ok
}

func (s *Session) checkSettable(name string) error {
	if g := gucByName[strings.ToLower(name)]; g != nil && g.readOnly {
		return &Error{Code: "55P02", Message: fmt.Sprintf("parameter %q cannot be changed", g.name)}
	}
	return nil
}

// Split cuts a simple-query text into its statements with Postgres's own
// scanner, so semicolons inside quotes, dollar quotes and comments stay
// where they are. A text the scanner cannot read is one statement.
// It cuts at the scanner's ';' tokens itself: pg_query's
// SplitWithScanner drops a statement whose first word is no Postgres
// keyword, which most of Sluice's (DESCRIBE, LIST, TERMINATE) are.
func Split(sql string) []string {
	res, err := pg.Scan(sql)
	if err != nil {
		return []string{sql}
	}
	var out []string
	start := 0
	cut := func(end int) {
		if p := strings.TrimSpace(sql[start:end]); !onlyComments(p) {
			out = append(out, p)
		}
	}
	for _, tok := range res.Tokens {
		if tok.Token == pg.Token_ASCII_59 {
			cut(int(tok.Start))
			start = int(tok.End)
		}
	}
	cut(len(sql))
	return out
}

// onlyComments reports whether a statement text holds nothing but
// comments and space (Postgres answers it with EmptyQueryResponse).
func onlyComments(sql string) bool {
	if strings.TrimSpace(sql) == "" {
		return true
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return false
	}
	for _, tok := range res.Tokens {
		if tok.Token != pg.Token_SQL_COMMENT && tok.Token != pg.Token_C_COMMENT {
			return false
		}
	}
	return true
}

// parseOne parses sql as exactly one Postgres statement.
func parseOne(sql string) (*pg.Node, error) {
	tree, err := pg.Parse(sql)
	if err != nil {
		return nil, syntaxError(err)
	}
	if len(tree.Stmts) != 1 {
		return nil, &Error{Code: CodeSyntaxError, Message: fmt.Sprintf("expected one statement, got %d", len(tree.Stmts))}
	}
	return tree.Stmts[0].Stmt, nil
}

func syntaxError(err error) *Error {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return &Error{Code: CodeSyntaxError, Message: pe.Message, Position: pe.Cursorpos}
	}
	return &Error{Code: CodeSyntaxError, Message: err.Error()}
}

// Claims reports whether sql (one statement) is for this package rather
// than Sluice's dialect: Postgres's client statements (SET, SHOW of a
// Postgres parameter, RESET, BEGIN/COMMIT/ROLLBACK, DISCARD, DEALLOCATE)
// and SELECTs that read only catalog relations or nothing at all. Texts
// Postgres's parser cannot read (most of Sluice's dialect) and SELECTs
// of Sluice's streams and tables are not claimed.
func (s *Session) Claims(sql string) bool {
	tree, err := pg.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return false
	}
	n := tree.Stmts[0].Stmt
	switch {
	case n.GetVariableSetStmt() != nil:
		vs := n.GetVariableSetStmt()
		if vs.Kind == pg.VariableSetKind_VAR_SET_MULTI || vs.Kind == pg.VariableSetKind_VAR_RESET_ALL {
			return true
		}
		_, known := canonicalSetting(vs.Name)
		return known
	case n.GetVariableShowStmt() != nil:
		name := n.GetVariableShowStmt().Name
		if name == "all" {
			return true
		}
		canon, known := canonicalSetting(name)
		return known && s.hasSetting(canon)
	case n.GetTransactionStmt() != nil, n.GetDiscardStmt() != nil, n.GetDeallocateStmt() != nil:
		return true
	case n.GetSelectStmt() != nil:
		return catalogOnly(n)
	}
	return false
}

// catalogOnly reports whether every relation a query reads is a catalog
// relation or one of its own WITH queries.
func catalogOnly(n *pg.Node) bool {
	ok := true
	var walk func(n *pg.Node, ctes map[string]bool)
	walk = func(n *pg.Node, ctes map[string]bool) {
		if n == nil || !ok {
			return
		}
		if sel := n.GetSelectStmt(); sel != nil {
			if sel.WithClause != nil {
				inner := map[string]bool{}
				for k := range ctes {
					inner[k] = true
				}
				for _, c := range sel.WithClause.Ctes {
					cte := c.GetCommonTableExpr()
					if sel.WithClause.Recursive {
						// A recursive query reads itself.
						inner[cte.Ctename] = true
					}
					walk(cte.Ctequery, inner)
					inner[cte.Ctename] = true
				}
				ctes = inner
			}
			if sel.Larg != nil {
				walk(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel.Larg}}, ctes)
				walk(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel.Rarg}}, ctes)
			}
			if sel.IntoClause != nil || len(sel.LockingClause) > 0 {
				ok = false
				return
			}
		}
		if rv := n.GetRangeVar(); rv != nil {
			if rv.Schemaname == "" && ctes[rv.Relname] {
				return
			}
			switch rv.Schemaname {
			case "pg_catalog", "information_schema":
				ok = systemByName[rv.Schemaname+"."+rv.Relname] != nil
			case "":
				ok = systemByName["pg_catalog."+rv.Relname] != nil
			default:
				ok = false
			}
			return
		}
		visitChildren(n, func(c *pg.Node) { walk(c, ctes) })
	}
	walk(n, nil)
	return ok
}

// Statement is one parsed statement, ready to describe and execute.
type Statement struct {
	sess   *Session
	params []uint32
	fields []Field
	run    func(x *execCtx) (*Result, error)
}

// Prepare parses one statement. paramOIDs are the types the client
// declared for $1…$n (0: infer).
func (s *Session) Prepare(sql string, paramOIDs []uint32) (st *Statement, err error) {
	defer recoverInternal(&err)
	return s.prepare(sql, paramOIDs)
}

// recoverInternal turns a panic of this package (a bug) into an XX000
// error for the one statement, so that the session and server go on.
func recoverInternal(err *error) {
	if r := recover(); r != nil {
		*err = &Error{Code: CodeInternal, Message: fmt.Sprintf("internal error in Sluice's Postgres catalog: %v", r)}
	}
}

func (s *Session) prepare(sql string, paramOIDs []uint32) (*Statement, error) {
	n, err := parseOne(sql)
	if err != nil {
		return nil, err
	}
	cp := &compiler{sql: sql, sess: s, params: append([]uint32(nil), paramOIDs...)}
	st := &Statement{sess: s}
	switch {
	case n.GetSelectStmt() != nil:
		p, err := cp.compileQuery(n, nil)
		if err != nil {
			return nil, err
		}
		st.fields = make([]Field, len(p.cols))
		outTypes := make([]uint32, len(p.cols))
		for i, c := range p.cols {
			st.fields[i] = Field{Name: c.name, Type: fieldType(c.typ, c.typmod)}
			outTypes[i] = c.typ
		}
		st.run = func(x *execCtx) (*Result, error) {
			rows, err := p.run(&evalCtx{x: x})
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				for i := range r {
					r[i] = x.output(r[i], outTypes[i])
				}
			}
			return &Result{Fields: st.fields, Rows: rows, Tag: fmt.Sprintf("SELECT %d", len(rows))}, nil
		}
	case n.GetVariableSetStmt() != nil:
		st.run, err = s.prepareSet(n.GetVariableSetStmt())
	case n.GetVariableShowStmt() != nil:
		st.run, st.fields, err = s.prepareShow(n.GetVariableShowStmt().Name)
	case n.GetTransactionStmt() != nil:
		st.run, err = s.prepareTransaction(n.GetTransactionStmt())
	case n.GetDiscardStmt() != nil:
		st.run = func(*execCtx) (*Result, error) {
			if n.GetDiscardStmt().Target == pg.DiscardMode_DISCARD_ALL {
				for name := range s.settings {
					s.reset(name)
				}
				s.inTx = false
				return &Result{Tag: "DISCARD ALL"}, nil
			}
			return &Result{Tag: "DISCARD"}, nil
		}
	case n.GetDeallocateStmt() != nil:
		tag := "DEALLOCATE"
		if n.GetDeallocateStmt().Isall {
			tag = "DEALLOCATE ALL"
		}
		st.run = func(*execCtx) (*Result, error) { return &Result{Tag: tag}, nil }
	default:
		return nil, &Error{Code: CodeFeatureUnsupported, Message: fmt.Sprintf("%s is not supported by Sluice's Postgres catalog", nodeKind(n))}
	}
	if err != nil {
		return nil, err
	}
	for i, p := range cp.params {
		if p == 0 || p == OIDUnknown {
			cp.params[i] = OIDText
		}
	}
	st.params = cp.params
	return st, nil
}

// Params are the parameters' type OIDs, inferred where the client gave 0.
func (st *Statement) Params() []uint32 { return st.params }

// Fields describe the statement's rows; nil when it returns none.
func (st *Statement) Fields() []Field { return st.fields }

// Execute runs the statement with params (decoded by the caller to Go
// values as Result's rows are typed). Each execution reads a fresh
// snapshot of the catalog.
func (st *Statement) Execute(ctx context.Context, params []any) (res *Result, err error) {
	defer recoverInternal(&err)
	return st.execute(ctx, params)
}

func (st *Statement) execute(ctx context.Context, params []any) (*Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	x := &execCtx{ctx: ctx, sess: st.sess, cat: newCatalog(st.sess), params: params, now: time.Now().UTC()}
	return st.run(x)
}

// output turns an internal value into the Go value Result documents for
// a field of type typ.
func (x *execCtx) output(v any, typ uint32) any {
	if v == nil {
		return nil
	}
	switch typ {
	case OIDInt2:
		if n, err := toInt(v, typ); err == nil {
			return int16(n)
		}
	case OIDInt4:
		if n, err := toInt(v, typ); err == nil {
			return int32(n)
		}
	case OIDInt8:
		if n, err := toInt(v, typ); err == nil {
			return n
		}
	case OIDOid, OIDXid, OIDRegproc:
		if n, err := toInt(v, typ); err == nil {
			return uint32(n)
		}
	case OIDFloat4, OIDFloat8, OIDNumeric:
		if f, err := toFloat(v); err == nil {
			return f
		}
	case OIDBool:
		if b, known := truth(v); known {
			return b
		}
	case OIDTimestamptz, OIDTimestamp, OIDDate:
		if t, ok := v.(time.Time); ok {
			return t
		}
	case OIDInt2Vector, OIDOidVector:
		return x.textOf(v, typ)
	}
	if isArrayType(typ) {
		if a, ok := v.([]any); ok {
			out := make([]any, len(a))
			for i, e := range a {
				out[i] = x.output(e, elemType(typ))
			}
			return out
		}
	}
	return x.textOf(v, typ)
}

func (s *Session) prepareSet(vs *pg.VariableSetStmt) (func(*execCtx) (*Result, error), error) {
	switch vs.Kind {
	case pg.VariableSetKind_VAR_SET_MULTI:
		// SET SESSION CHARACTERISTICS / SET TRANSACTION: nothing to keep.
		return func(*execCtx) (*Result, error) { return &Result{Tag: "SET"}, nil }, nil
	case pg.VariableSetKind_VAR_RESET_ALL:
		return func(*execCtx) (*Result, error) {
			for name := range s.settings {
				s.reset(name)
			}
			return &Result{Tag: "RESET"}, nil
		}, nil
	}
	name, ok := canonicalSetting(vs.Name)
	if !ok {
		return nil, &Error{Code: "42704", Message: fmt.Sprintf("unrecognized configuration parameter %q", vs.Name)}
	}
	if err := s.checkSettable(name); err != nil {
		return nil, err
	}
	switch vs.Kind {
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		tag := "SET"
		if vs.Kind == pg.VariableSetKind_VAR_RESET {
			tag = "RESET"
		}
		return func(*execCtx) (*Result, error) { s.reset(name); return &Result{Tag: tag}, nil }, nil
	case pg.VariableSetKind_VAR_SET_CURRENT:
		return func(*execCtx) (*Result, error) { return &Result{Tag: "SET"}, nil }, nil
	}
	var parts []string
	for _, a := range vs.Args {
		c := a.GetAConst()
		if c == nil {
			if tc := a.GetTypeCast(); tc != nil && tc.Arg.GetAConst() != nil {
				c = tc.Arg.GetAConst()
			} else {
				return nil, &Error{Code: CodeSyntaxError, Message: fmt.Sprintf("SET %s takes constants", name)}
			}
		}
		switch v := c.Val.(type) {
		case *pg.A_Const_Sval:
			parts = append(parts, v.Sval.Sval)
		case *pg.A_Const_Ival:
			parts = append(parts, fmt.Sprint(v.Ival.Ival))
		case *pg.A_Const_Fval:
			parts = append(parts, v.Fval.Fval)
		case *pg.A_Const_Boolval:
			parts = append(parts, map[bool]string{true: "on", false: "off"}[v.Boolval.Boolval])
		}
	}
	value := strings.Join(parts, ", ")
	if name == "TimeZone" && strings.EqualFold(value, "local") {
		value = "UTC"
	}
	return func(*execCtx) (*Result, error) {
		v, err := s.normalizeSetting(name, value)
		if err != nil {
			return nil, err
		}
		s.set(name, v)
		return &Result{Tag: "SET"}, nil
	}, nil
}

func (s *Session) prepareShow(name string) (func(*execCtx) (*Result, error), []Field, error) {
	if name == "all" {
		fields := []Field{{"name", fieldType(OIDText, -1)}, {"setting", fieldType(OIDText, -1)}, {"description", fieldType(OIDText, -1)}}
		return func(*execCtx) (*Result, error) {
			var rows [][]any
			for _, n := range sortedSettingNames(s) {
				desc := ""
				if g := gucByName[strings.ToLower(n)]; g != nil {
					desc = g.desc
				}
				rows = append(rows, []any{n, s.setting(n), desc})
			}
			return &Result{Fields: fields, Rows: rows, Tag: "SHOW"}, nil
		}, fields, nil
	}
	canon, ok := canonicalSetting(name)
	if !ok || !s.hasSetting(canon) {
		return nil, nil, &Error{Code: "42704", Message: fmt.Sprintf("unrecognized configuration parameter %q", name)}
	}
	fields := []Field{{canon, fieldType(OIDText, -1)}}
	return func(*execCtx) (*Result, error) {
		return &Result{Fields: fields, Rows: [][]any{{s.setting(canon)}}, Tag: "SHOW"}, nil
	}, fields, nil
}

func (s *Session) prepareTransaction(ts *pg.TransactionStmt) (func(*execCtx) (*Result, error), error) {
	var tag string
	open := s.inTx
	switch ts.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN:
		tag, open = "BEGIN", true
	case pg.TransactionStmtKind_TRANS_STMT_START:
		tag, open = "START TRANSACTION", true
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		tag, open = "COMMIT", false
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		tag, open = "ROLLBACK", false
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		tag = "SAVEPOINT"
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		tag = "RELEASE"
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		tag = "ROLLBACK"
	default:
		return nil, &Error{Code: CodeFeatureUnsupported, Message: "two-phase commit is not supported by Sluice"}
	}
	return func(*execCtx) (*Result, error) {
		s.inTx = open
		return &Result{Tag: tag}, nil
	}, nil
}

// visitChildren calls f on each node directly or indirectly inside n
// that is a Node of its own (not the nodes inside those).
func visitChildren(n *pg.Node, f func(*pg.Node)) {
	visitMessage(n.ProtoReflect(), f)
}

func visitMessage(m protoreflect.Message, f func(*pg.Node)) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				visitValue(l.Get(i).Message(), f)
			}
			return true
		}
		visitValue(v.Message(), f)
		return true
	})
}

func visitValue(m protoreflect.Message, f func(*pg.Node)) {
	if node, ok := m.Interface().(*pg.Node); ok {
		f(node)
		return
	}
	visitMessage(m, f)
}
