package parser

import (
	"strconv"
	"strings"
	"time"
)

// The printer writes every node back as normalized SQL: keywords
// upper-case, identifiers quoted only when needed, minimal parentheses.
// Parsing the output gives the same tree (ignoring positions); the fuzz
// target checks that.

// quoteAlso are words that are not reserved for the parser but would
// change the meaning of a printed statement if written bare (for example
// a query named ALL in TERMINATE ALL, a stream named CONNECTOR in
// DESCRIBE CONNECTOR EXTENDED).
var quoteAlso = map[string]bool{"ALL": true, "FUNCTION": true, "ARRAY": true, "CONNECTOR": true}

// ctorNames are function names that would print as constructors
// (`MAP()` is an empty map).
var ctorNames = map[string]bool{"ARRAY": true, "MAP": true, "STRUCT": true}

// Ident writes a name as SQL that reads back as that name: as it is when
// an unquoted identifier would (upper case, not reserved), else in
// backquotes.
func Ident(name string) string { return ident(name) }

// ident writes a name, backquoted when it is not a plain upper-case word
// or is a keyword.
func ident(s string) string {
	if plainIdent(s) && !reserved[s] && !quoteAlso[s] {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

func plainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r == '_':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// quote writes a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

var unitNames = []struct {
	d    time.Duration
	name string
	abbr string
}{
	{24 * time.Hour, "DAY", "d"}, {time.Hour, "HOUR", "h"}, {time.Minute, "MINUTE", "m"},
	{time.Second, "SECOND", "s"}, {time.Millisecond, "MILLISECOND", "ms"},
}

// durationUnit picks the largest unit that divides d exactly.
func durationUnit(d time.Duration) (n int64, name, abbr string) {
	if d == 0 {
		return 0, "SECOND", "s"
	}
	for _, u := range unitNames {
		if d%u.d == 0 {
			return int64(d / u.d), u.name, u.abbr
		}
	}
	// Sub-millisecond durations cannot be written; round to milliseconds.
	return int64(d / time.Millisecond), "MILLISECOND", "ms"
}

// spelledDuration writes `5 MINUTES`.
func spelledDuration(d time.Duration) string {
	n, name, _ := durationUnit(d)
	if n != 1 {
		name += "S"
	}
	return strconv.FormatInt(n, 10) + " " + name
}

// compactDuration writes `5m`.
func compactDuration(d time.Duration) string {
	n, _, abbr := durationUnit(d)
	return strconv.FormatInt(n, 10) + abbr
}

func joinStrings[T any](xs []T, f func(T) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = f(x)
	}
	return strings.Join(parts, ", ")
}

func exprString(x Expr) string { return x.String() }

// valueExprString prints x where only a value expression may stand (GROUP
// BY, PARTITION BY): anything looser than + goes in parentheses.
func valueExprString(x Expr) string { return operand(x, precAdd) }

func (p Property) String() string { return ident(p.Name) + "=" + p.Value.String() }

func withClause(ps []Property) string {
	if len(ps) == 0 {
		return ""
	}
	return " WITH (" + joinStrings(ps, Property.String) + ")"
}

// ---- types ----

func (t *TypeName) String() string {
	switch {
	case t.Name == "ARRAY" && t.Elem != nil:
		return "ARRAY<" + t.Elem.String() + ">"
	case t.Name == "MAP" && t.Key != nil && t.Elem != nil:
		return "MAP<" + t.Key.String() + ", " + t.Elem.String() + ">"
	case t.Name == "STRUCT" && (len(t.Fields) > 0 || t.Elem == nil):
		return "STRUCT<" + joinStrings(t.Fields, func(f StructField) string {
			return ident(f.Name) + " " + f.Type.String()
		}) + ">"
	}
	if !plainIdent(t.Name) {
		// A quoted custom type's name.
		return "`" + strings.ReplaceAll(t.Name, "`", "``") + "`"
	}
	s := t.Name
	if len(t.Params) > 0 {
		s += "(" + joinStrings(t.Params, strconv.Itoa) + ")"
	}
	return s
}

func (c ColumnDef) String() string {
	s := ident(c.Name) + " " + c.Type.String()
	switch {
	case c.PrimaryKey:
		s += " PRIMARY KEY"
	case c.Key:
		s += " KEY"
	case c.Headers && c.HeaderKey != "":
		s += " HEADER(" + quote(c.HeaderKey) + ")"
	case c.Headers:
		s += " HEADERS"
	}
	return s
}

// ---- statements ----

func (s *CreateSource) String() string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if s.OrReplace {
		b.WriteString("OR REPLACE ")
	}
	if s.Source {
		b.WriteString("SOURCE ")
	}
	b.WriteString(s.Kind.String())
	if s.IfNotExists {
		b.WriteString(" IF NOT EXISTS")
	}
	b.WriteString(" " + ident(s.Name))
	if len(s.Columns) > 0 {
		b.WriteString(" (" + joinStrings(s.Columns, ColumnDef.String) + ")")
	}
	b.WriteString(withClause(s.With))
	if s.Query != nil {
		b.WriteString(" AS " + s.Query.String())
	}
	return b.String()
}

func (s *InsertValues) String() string {
	out := "INSERT INTO " + ident(s.Target)
	if len(s.Columns) > 0 {
		out += " (" + joinStrings(s.Columns, ident) + ")"
	}
	return out + " VALUES (" + joinStrings(s.Values, exprString) + ")"
}

func (s *InsertSelect) String() string {
	return "INSERT INTO " + ident(s.Target) + withClause(s.With) + " " + s.Query.String()
}

func (s SelectItem) String() string {
	switch {
	case s.Star && s.StarSource != "":
		return ident(s.StarSource) + ".*"
	case s.Star:
		return "*"
	case s.AllFields:
		return operand(s.Expr, precPostfix) + "->*"
	case s.Alias != "":
		return s.Expr.String() + " AS " + ident(s.Alias)
	}
	return s.Expr.String()
}

func (s *Select) String() string {
	var b strings.Builder
	b.WriteString("SELECT " + joinStrings(s.Items, SelectItem.String))
	b.WriteString(" FROM " + s.From.String())
	for _, j := range s.Joins {
		b.WriteString(" " + j.String())
	}
	if s.Window != nil {
		b.WriteString(" " + s.Window.String())
	}
	if s.Where != nil {
		b.WriteString(" WHERE " + s.Where.String())
	}
	if len(s.GroupBy) > 0 {
		b.WriteString(" GROUP BY " + joinStrings(s.GroupBy, valueExprString))
	}
	if len(s.PartitionBy) > 0 {
		b.WriteString(" PARTITION BY " + joinStrings(s.PartitionBy, valueExprString))
	}
	if s.Having != nil {
		b.WriteString(" HAVING " + s.Having.String())
	}
	switch s.Emit {
	case EmitChanges:
		b.WriteString(" EMIT CHANGES")
	case EmitFinal:
		b.WriteString(" EMIT FINAL")
	}
	if s.HasLimit {
		b.WriteString(" LIMIT " + strconv.Itoa(s.Limit))
	}
	return b.String()
}

func (r *Relation) String() string {
	if r.Alias != "" {
		return ident(r.Name) + " AS " + ident(r.Alias)
	}
	return ident(r.Name)
}

func (j *Join) String() string {
	s := j.Type.String() + " JOIN " + j.Right.String()
	if w := j.Within; w != nil {
		if w.Before == w.After {
			s += " WITHIN " + spelledDuration(w.Before)
		} else {
			s += " WITHIN (" + spelledDuration(w.Before) + ", " + spelledDuration(w.After) + ")"
		}
		if w.HasGrace {
			s += " GRACE PERIOD " + spelledDuration(w.Grace)
		}
	}
	return s + " ON " + j.On.String()
}

func (w *WindowSpec) String() string {
	if w.Compact {
		s := "WINDOW " + w.Kind.String() + " " + compactDuration(w.Size)
		if w.Kind == WindowHopping {
			s += " ADVANCE " + compactDuration(w.Advance)
		}
		if w.HasGrace {
			s += " GRACE " + compactDuration(w.Grace)
		}
		if w.HasRetention {
			s += " RETENTION " + compactDuration(w.Retention)
		}
		return s
	}
	var parts []string
	if w.Kind == WindowSession {
		parts = append(parts, spelledDuration(w.Size))
	} else {
		parts = append(parts, "SIZE "+spelledDuration(w.Size))
	}
	if w.Kind == WindowHopping {
		parts = append(parts, "ADVANCE BY "+spelledDuration(w.Advance))
	}
	if w.HasRetention {
		parts = append(parts, "RETENTION "+spelledDuration(w.Retention))
	}
	if w.HasGrace {
		parts = append(parts, "GRACE PERIOD "+spelledDuration(w.Grace))
	}
	return "WINDOW " + w.Kind.String() + " (" + strings.Join(parts, ", ") + ")"
}

func (s *SetProperty) String() string   { return "SET " + quote(s.Name) + "=" + quote(s.Value) }
func (s *UnsetProperty) String() string { return "UNSET " + quote(s.Name) }

func (s *Show) String() string {
	out := "SHOW " + s.What.String()
	if s.Extended {
		out += " EXTENDED"
	}
	return out
}

func (s *Describe) String() string {
	if s.Function {
		return "DESCRIBE FUNCTION " + ident(s.Name)
	}
	out := "DESCRIBE " + ident(s.Name)
	if s.Extended {
		out += " EXTENDED"
	}
	return out
}

func (s *Explain) String() string {
	if s.Statement != nil {
		return "EXPLAIN " + s.Statement.String()
	}
	return "EXPLAIN " + ident(s.QueryID)
}

func (s *Terminate) String() string {
	if s.All {
		return "TERMINATE ALL"
	}
	return "TERMINATE " + ident(s.QueryID)
}

func (s *PauseQuery) String() string {
	verb := "PAUSE "
	if s.Resume {
		verb = "RESUME "
	}
	if s.All {
		return verb + "ALL"
	}
	return verb + ident(s.QueryID)
}

func (s *CreateType) String() string {
	out := "CREATE TYPE "
	if s.IfNotExists {
		out += "IF NOT EXISTS "
	}
	return out + ident(s.Name) + " AS " + s.Type.String()
}

func (s *CreateFunction) String() string {
	out := "CREATE "
	if s.OrReplace {
		out += "OR REPLACE "
	}
	switch s.Kind {
	case AggregateFunction:
		out += "AGGREGATE "
	case TableFunction:
		out += "TABLE "
	}
	params := make([]string, len(s.Params))
	for i, p := range s.Params {
		params[i] = ident(p.Name) + " " + p.Type.String()
		if p.Variadic {
			params[i] = "VARIADIC " + params[i]
		}
	}
	out += "FUNCTION " + ident(s.Name) + "(" + strings.Join(params, ", ") + ") RETURNS " + s.Returns.String()
	if s.Deterministic {
		out += " DETERMINISTIC"
	}
	out += " LANGUAGE " + ident(s.Language)
	if s.HasBody {
		out += " AS $$" + s.Body + "$$"
	}
	return out + withClause(s.With)
}

func (s *DropFunction) String() string {
	out := "DROP FUNCTION "
	if s.IfExists {
		out += "IF EXISTS "
	}
	return out + ident(s.Name)
}

func (s *DropType) String() string {
	out := "DROP TYPE "
	if s.IfExists {
		out += "IF EXISTS "
	}
	return out + ident(s.Name)
}

func (s *AlterSource) String() string {
	adds := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		adds[i] = "ADD COLUMN " + c.String()
	}
	return "ALTER " + s.Kind.String() + " " + ident(s.Name) + " " + strings.Join(adds, ", ")
}

func (s *Drop) String() string {
	out := "DROP " + s.Kind.String()
	if s.IfExists {
		out += " IF EXISTS"
	}
	out += " " + ident(s.Name)
	if s.DeleteTopic {
		out += " DELETE TOPIC"
	}
	return out
}

func (s *CreateConnector) String() string {
	var b strings.Builder
	b.WriteString("CREATE " + s.Type.String() + " CONNECTOR ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(ident(s.Name) + " WITH (")
	for i, p := range s.Config {
		if i > 0 {
			b.WriteString(", ")
		}
		// The key prints quoted: an identifier's key was upper-cased
		// when read, so quoting keeps it as it is.
		b.WriteString(quote(p.Key) + "=" + p.Value.String())
	}
	b.WriteString(")")
	return b.String()
}

// Masked is the statement with every WITH value but connector.class's
// replaced by '[string]', as ksqlDB echoes a CREATE CONNECTOR in its
// answers and logs: connector settings carry passwords.
func (s *CreateConnector) Masked() string {
	cp := *s
	cp.Config = make([]ConnectorProperty, len(s.Config))
	for i, p := range s.Config {
		cp.Config[i] = p
		if !strings.EqualFold(p.Key, "connector.class") {
			cp.Config[i].Value = &Literal{Pos: p.Value.Pos, Kind: LitString, Str: "[string]"}
		}
	}
	return cp.String()
}

func (s *ShowConnectors) String() string {
	if s.Type == 0 {
		return "SHOW CONNECTORS"
	}
	return "SHOW " + s.Type.String() + " CONNECTORS"
}

func (s *ShowConnectorPlugins) String() string { return "SHOW CONNECTOR PLUGINS" }

func (s *DescribeConnector) String() string { return "DESCRIBE CONNECTOR " + ident(s.Name) }

func (s *DropConnector) String() string {
	out := "DROP CONNECTOR "
	if s.IfExists {
		out += "IF EXISTS "
	}
	return out + ident(s.Name)
}

func (s *Print) String() string {
	out := "PRINT " + quote(s.Topic)
	if s.FromBeginning {
		out += " FROM BEGINNING"
	}
	if s.Interval != 0 {
		out += " INTERVAL " + strconv.Itoa(s.Interval)
	}
	if s.HasLimit {
		out += " LIMIT " + strconv.Itoa(s.Limit)
	}
	return out
}

func (s *RunScript) String() string { return "RUN SCRIPT " + quote(s.Path) }
func (s *Define) String() string    { return "DEFINE " + ident(s.Name) + " = " + quote(s.Value) }
func (s *Undefine) String() string  { return "UNDEFINE " + ident(s.Name) }

func (s *AssertTopic) String() string {
	out := "ASSERT "
	if s.NotExists {
		out += "NOT EXISTS "
	}
	out += "TOPIC " + topicName(s.Topic)
	out += withClause(s.With)
	if s.HasTimeout {
		out += " TIMEOUT " + spelledDuration(s.Timeout)
	}
	return out
}

func (s *AssertSchema) String() string {
	out := "ASSERT "
	if s.NotExists {
		out += "NOT EXISTS "
	}
	out += "SCHEMA"
	if s.Subject != "" {
		out += " SUBJECT " + quote(s.Subject)
	}
	if s.HasID {
		out += " ID " + strconv.Itoa(s.ID)
	}
	if s.HasTimeout {
		out += " TIMEOUT " + spelledDuration(s.Timeout)
	}
	return out
}

// topicName writes a topic name that parses back as written: bare when
// it is a word no keyword or case folding would change, else backquoted.
func topicName(s string) string {
	if plainIdent(strings.ToUpper(s)) && !reserved[strings.ToUpper(s)] && !quoteAlso[strings.ToUpper(s)] && !ctorNames[strings.ToUpper(s)] {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// ---- expressions ----

// Precedence levels, loosest first; an operand that binds looser than its
// position allows is parenthesised.
const (
	precOr = 1 + iota
	precAnd
	precNot
	precCmp
	precAdd
	precMul
	precUnary
	precPostfix
	precPrimary
)

func precedence(x Expr) int {
	switch x := x.(type) {
	case *Binary:
		switch x.Op {
		case OpOr:
			return precOr
		case OpAnd:
			return precAnd
		case OpAdd, OpSub, OpConcat:
			return precAdd
		case OpMul, OpDiv, OpMod:
			return precMul
		}
		return precCmp
	case *Unary:
		if x.Op == OpNot {
			return precNot
		}
		return precUnary
	case *IsNull, *In, *Between, *Like:
		return precCmp
	case *Subscript, *Dereference:
		return precPostfix
	}
	return precPrimary
}

// operand prints x, in parentheses if it binds looser than min.
func operand(x Expr, min int) string {
	if precedence(x) < min {
		return "(" + x.String() + ")"
	}
	return x.String()
}

func (l *Literal) String() string {
	switch l.Kind {
	case LitNull:
		return "NULL"
	case LitBool:
		if l.Bool {
			return "TRUE"
		}
		return "FALSE"
	case LitString:
		return quote(l.Str)
	}
	return l.Text
}

func (c *ColumnRef) String() string {
	if c.Source != "" {
		return ident(c.Source) + "." + ident(c.Name)
	}
	return ident(c.Name)
}

func (b *Binary) String() string {
	p := precedence(b)
	left, right := p, p+1
	if p == precCmp {
		left, right = precAdd, precAdd
	}
	return operand(b.Left, left) + " " + b.Op.String() + " " + operand(b.Right, right)
}

func (u *Unary) String() string {
	switch u.Op {
	case OpNot:
		return "NOT " + operand(u.X, precNot)
	case OpNeg:
		return "-" + unaryOperand(u.X)
	}
	return "+" + unaryOperand(u.X)
}

// unaryOperand keeps `- -x` from printing as the comment `--x`, and a
// number from joining the sign: -(5) is an operation, -5 a literal.
func unaryOperand(x Expr) string {
	if _, ok := x.(*Unary); ok {
		return "(" + x.String() + ")"
	}
	if l, ok := x.(*Literal); ok && (l.Kind == LitInteger || l.Kind == LitDecimal || l.Kind == LitDouble) {
		return "(" + x.String() + ")"
	}
	return operand(x, precUnary)
}

func (f *FuncCall) String() string {
	name := ident(f.Name)
	if ctorNames[f.Name] {
		name = "`" + f.Name + "`"
	}
	switch {
	case f.Star:
		return name + "(*)"
	case f.Distinct:
		return name + "(DISTINCT " + joinStrings(f.Args, exprString) + ")"
	}
	return name + "(" + joinStrings(f.Args, exprString) + ")"
}

// String prints x => body, or (x, y) => body for several parameters.
func (l *Lambda) String() string { return lambdaHead(l.Params) + " => " + exprString(l.Body) }

func lambdaHead(params []string) string {
	quoted := make([]string, len(params))
	for i, p := range params {
		quoted[i] = ident(p)
	}
	head := strings.Join(quoted, ", ")
	if len(quoted) != 1 {
		head = "(" + head + ")"
	}
	return head
}

func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if c.Operand != nil {
		b.WriteString(" " + c.Operand.String())
	}
	for _, w := range c.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if c.Else != nil {
		b.WriteString(" ELSE " + c.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

func (c *Cast) String() string { return "CAST(" + c.X.String() + " AS " + c.Type.String() + ")" }

func not(b bool) string {
	if b {
		return "NOT "
	}
	return ""
}

func (n *IsNull) String() string {
	return operand(n.X, precAdd) + " IS " + not(n.Not) + "NULL"
}

func (n *In) String() string {
	return operand(n.X, precAdd) + " " + not(n.Not) + "IN (" + joinStrings(n.List, exprString) + ")"
}

func (n *Between) String() string {
	return operand(n.X, precAdd) + " " + not(n.Not) + "BETWEEN " + operand(n.Lo, precAdd) + " AND " + operand(n.Hi, precAdd)
}

func (n *Like) String() string {
	s := operand(n.X, precAdd) + " " + not(n.Not) + "LIKE " + operand(n.Pattern, precAdd)
	if n.Escape != "" {
		s += " ESCAPE " + quote(n.Escape)
	}
	return s
}

func (s *Subscript) String() string {
	return operand(s.X, precPostfix) + "[" + s.Index.String() + "]"
}

func (d *Dereference) String() string {
	return operand(d.X, precPostfix) + "->" + ident(d.Field)
}

func (a *ArrayCtor) String() string { return "ARRAY[" + joinStrings(a.Elems, exprString) + "]" }

func (m *MapCtor) String() string {
	parts := make([]string, len(m.Keys))
	for i := range m.Keys {
		parts[i] = m.Keys[i].String() + " := " + m.Values[i].String()
	}
	return "MAP(" + strings.Join(parts, ", ") + ")"
}

func (s *StructCtor) String() string {
	parts := make([]string, len(s.Names))
	for i := range s.Names {
		parts[i] = ident(s.Names[i]) + " := " + s.Values[i].String()
	}
	return "STRUCT(" + strings.Join(parts, ", ") + ")"
}

// ---- positions ----

func (t *TypeName) Position() Pos      { return t.Pos }
func (s *CreateSource) Position() Pos  { return s.Pos }
func (s *InsertValues) Position() Pos  { return s.Pos }
func (s *InsertSelect) Position() Pos  { return s.Pos }
func (s *Select) Position() Pos        { return s.Pos }
func (r *Relation) Position() Pos      { return r.Pos }
func (j *Join) Position() Pos          { return j.Pos }
func (w *WindowSpec) Position() Pos    { return w.Pos }
func (s *SetProperty) Position() Pos   { return s.Pos }
func (s *UnsetProperty) Position() Pos { return s.Pos }
func (s *Show) Position() Pos          { return s.Pos }
func (s *Describe) Position() Pos      { return s.Pos }
func (s *Explain) Position() Pos       { return s.Pos }
func (s *Terminate) Position() Pos     { return s.Pos }
func (s *PauseQuery) Position() Pos    { return s.Pos }
func (s *Drop) Position() Pos          { return s.Pos }

func (s *CreateConnector) Position() Pos      { return s.Pos }
func (s *ShowConnectors) Position() Pos       { return s.Pos }
func (s *ShowConnectorPlugins) Position() Pos { return s.Pos }
func (s *DescribeConnector) Position() Pos    { return s.Pos }
func (s *DropConnector) Position() Pos        { return s.Pos }
func (s *AlterSource) Position() Pos          { return s.Pos }
func (s *CreateType) Position() Pos           { return s.Pos }
func (s *DropType) Position() Pos             { return s.Pos }
func (s *CreateFunction) Position() Pos       { return s.Pos }
func (s *DropFunction) Position() Pos         { return s.Pos }
func (s *Print) Position() Pos                { return s.Pos }
func (s *RunScript) Position() Pos            { return s.Pos }
func (s *Define) Position() Pos               { return s.Pos }
func (s *Undefine) Position() Pos             { return s.Pos }
func (s *AssertTopic) Position() Pos          { return s.Pos }
func (s *AssertSchema) Position() Pos         { return s.Pos }
func (l *Literal) Position() Pos              { return l.Pos }
func (c *ColumnRef) Position() Pos            { return c.Pos }
func (b *Binary) Position() Pos               { return b.Pos }
func (u *Unary) Position() Pos                { return u.Pos }
func (f *FuncCall) Position() Pos             { return f.Pos }
func (l *Lambda) Position() Pos               { return l.Pos }
func (c *Case) Position() Pos                 { return c.Pos }
func (c *Cast) Position() Pos                 { return c.Pos }
func (n *IsNull) Position() Pos               { return n.Pos }
func (n *In) Position() Pos                   { return n.Pos }
func (n *Between) Position() Pos              { return n.Pos }
func (n *Like) Position() Pos                 { return n.Pos }
func (s *Subscript) Position() Pos            { return s.Pos }
func (d *Dereference) Position() Pos          { return d.Pos }
func (a *ArrayCtor) Position() Pos            { return a.Pos }
func (m *MapCtor) Position() Pos              { return m.Pos }
func (s *StructCtor) Position() Pos           { return s.Pos }

// KsqlText prints e as ksqlDB's errors quote expressions: every binary
// operation in parentheses, so that users see the same text ksqlDB would
// show them (`(F1 * SUM(F2))`).
func KsqlText(e Expr) string {
	switch x := e.(type) {
	case *Binary:
		return "(" + KsqlText(x.Left) + " " + x.Op.String() + " " + KsqlText(x.Right) + ")"
	case *FuncCall:
		if x.Star {
			return x.Name + "(*)"
		}
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = KsqlText(a)
		}
		prefix := ""
		if x.Distinct {
			prefix = "DISTINCT "
		}
		return x.Name + "(" + prefix + strings.Join(args, ", ") + ")"
	case *Literal:
		switch x.Kind {
		case LitBool:
			return strconv.FormatBool(x.Bool)
		case LitNull:
			return "null"
		}
	case *Lambda:
		return lambdaHead(x.Params) + " => " + KsqlText(x.Body)
	case *ArrayCtor:
		return "ARRAY[" + joinStrings(x.Elems, KsqlText) + "]"
	case *MapCtor:
		parts := make([]string, len(x.Keys))
		for i := range x.Keys {
			parts[i] = KsqlText(x.Keys[i]) + ":=" + KsqlText(x.Values[i])
		}
		return "MAP(" + strings.Join(parts, ", ") + ")"
	case *StructCtor:
		parts := make([]string, len(x.Names))
		for i := range x.Names {
			parts[i] = ident(x.Names[i]) + ":=" + KsqlText(x.Values[i])
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")"
	}
	return e.String()
}
