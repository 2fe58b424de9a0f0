package parser

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/participle/v2/lexer"
)

// converter turns grammar structs into AST nodes. It stops at the first
// semantic error (a bad duration, a window without SIZE, …) and reports
// it with the position of the offending text.
type converter struct {
	src string
	err *Error
	// allFields are the positions of x->* met and not yet taken by a
	// SELECT item: any left over is misplaced.
	allFields []lexer.Position
}

func (c *converter) fail(p lexer.Position, token, format string, args ...any) {
	if c.err == nil {
		c.err = newError(c.src, pos(p), token, fmt.Sprintf(format, args...), nil)
	}
}

// failPrepared is fail for what ksqlDB's parser accepts but its AST
// builder then refuses (a number no type holds): ksqlDB words those
// "Failed to prepare statement: line L:C: …" with the column one past
// the token's (its builder counts columns from 1 and the error adds 1
// again). The message carries that text; the error's own position stays
// the token's.
func (c *converter) failPrepared(p lexer.Position, token, format string, args ...any) {
	c.fail(p, token, "Failed to prepare statement: line %d:%d: %s", p.Line, p.Column+1, fmt.Sprintf(format, args...))
}

func pos(p lexer.Position) Pos { return Pos{Line: p.Line, Column: p.Column, Offset: p.Offset} }

func (c *converter) statement(g *gStatement) Statement {
	switch {
	case g.CreateFn != nil:
		return c.createFunction(g.CreateFn)
	case g.DropFn != nil:
		return &DropFunction{Pos: pos(g.DropFn.Pos), Name: g.DropFn.Name.Value, IfExists: g.DropFn.IfExists}
	case g.CreateTyp != nil:
		return &CreateType{Pos: pos(g.CreateTyp.Pos), Name: g.CreateTyp.Name.Value,
			IfNotExists: g.CreateTyp.IfNotExists, Type: c.typeName(g.CreateTyp.Type)}
	case g.DropType != nil:
		return &DropType{Pos: pos(g.DropType.Pos), Name: g.DropType.Name.Value, IfExists: g.DropType.IfExists}
	case g.CreateCon != nil:
		return c.createConnector(g.CreateCon)
	case g.DropConn != nil:
		return &DropConnector{Pos: pos(g.DropConn.Pos), Name: g.DropConn.Name.Value, IfExists: g.DropConn.IfExists}
	case g.ShowConn != nil:
		if g.ShowConn.Plugins {
			return &ShowConnectorPlugins{Pos: pos(g.ShowConn.Pos)}
		}
		return &ShowConnectors{Pos: pos(g.ShowConn.Pos), Type: connectorType(g.ShowConn.Scope)}
	case g.DescConn != nil:
		return &DescribeConnector{Pos: pos(g.DescConn.Pos), Name: g.DescConn.Name.Value}
	case g.Create != nil:
		return c.create(g.Create)
	case g.Insert != nil:
		return c.insert(g.Insert)
	case g.Select != nil:
		return c.selectStmt(g.Select)
	case g.Set != nil:
		return &SetProperty{Pos: pos(g.Set.Pos), Name: unquoteString(g.Set.Name), Value: unquoteString(g.Set.Value)}
	case g.Unset != nil:
		return &UnsetProperty{Pos: pos(g.Unset.Pos), Name: unquoteString(g.Unset.Name)}
	case g.Show != nil:
		return &Show{Pos: pos(g.Show.Pos), What: showKinds[strings.ToUpper(g.Show.What)], Extended: g.Show.Extended}
	case g.Describe != nil:
		d := &Describe{Pos: pos(g.Describe.Pos), Extended: g.Describe.Extended}
		if g.Describe.Function != nil {
			d.Function, d.Name = true, g.Describe.Function.Value
		} else {
			d.Name = g.Describe.Name.Value
		}
		return d
	case g.Explain != nil:
		e := &Explain{Pos: pos(g.Explain.Pos)}
		if g.Explain.Stmt != nil {
			e.Statement = c.statement(g.Explain.Stmt)
		} else {
			e.QueryID = g.Explain.QueryID.Value
		}
		return e
	case g.Terminate != nil:
		t := &Terminate{Pos: pos(g.Terminate.Pos), All: g.Terminate.All}
		if g.Terminate.QueryID != nil {
			t.QueryID = g.Terminate.QueryID.Value
		}
		return t
	case g.Pause != nil:
		p := &PauseQuery{Pos: pos(g.Pause.Pos), Resume: strings.EqualFold(g.Pause.Verb, "RESUME"), All: g.Pause.All}
		if g.Pause.QueryID != nil {
			p.QueryID = g.Pause.QueryID.Value
		}
		return p
	case g.Alter != nil:
		a := &AlterSource{Pos: pos(g.Alter.Pos), Kind: sourceKind(g.Alter.Kind), Name: g.Alter.Name.Value}
		for _, add := range g.Alter.Adds {
			a.Columns = append(a.Columns, ColumnDef{Pos: pos(add.Pos), Name: add.Name.Value, Type: c.typeName(add.Type)})
		}
		return a
	case g.Drop != nil:
		return &Drop{Pos: pos(g.Drop.Pos), Kind: sourceKind(g.Drop.Kind), Name: g.Drop.Name.Value,
			IfExists: g.Drop.IfExists, DeleteTopic: g.Drop.DeleteTopic}
	case g.Print != nil:
		return c.print(g.Print)
	case g.Run != nil:
		return &RunScript{Pos: pos(g.Run.Pos), Path: unquoteString(g.Run.Path)}
	case g.Define != nil:
		return &Define{Pos: pos(g.Define.Pos), Name: g.Define.Name.Value, Value: unquoteString(g.Define.Value)}
	case g.Undefine != nil:
		return &Undefine{Pos: pos(g.Undefine.Pos), Name: g.Undefine.Name.Value}
	case g.Assert != nil:
		return c.assert(g.Assert)
	}
	c.fail(g.Pos, "", "empty statement")
	return nil
}

var showKinds = map[string]ShowKind{
	"STREAMS": ShowStreams, "TABLES": ShowTables, "QUERIES": ShowQueries,
	"TOPICS": ShowTopics, "PROPERTIES": ShowProperties, "FUNCTIONS": ShowFunctions,
	"TYPES": ShowTypes,
}

func sourceKind(s string) SourceKind {
	if strings.EqualFold(s, "TABLE") {
		return KindTable
	}
	return KindStream
}

func (c *converter) create(g *gCreate) *CreateSource {
	s := &CreateSource{
		Pos: pos(g.Pos), Kind: sourceKind(g.Kind), OrReplace: g.OrReplace, IfNotExists: g.IfNotExists,
		Source: g.Source, Name: g.Name.Value, With: c.props(g.With),
	}
	for _, col := range g.Columns {
		def := ColumnDef{
			Pos: pos(col.Pos), Name: col.Name.Value, Type: c.typeName(col.Type),
			Key: col.Key || col.PrimaryKey, PrimaryKey: col.PrimaryKey, Headers: col.Headers,
		}
		if col.Header != nil {
			def.Headers, def.HeaderKey = true, unquoteString(*col.Header)
		}
		s.Columns = append(s.Columns, def)
	}
	if g.Query != nil {
		s.Query = c.selectStmt(g.Query)
	}
	return s
}

func (c *converter) props(gs []*gProp) []Property {
	var out []Property
	for _, g := range gs {
		out = append(out, Property{Pos: pos(g.Pos), Name: strings.ToUpper(g.Name.Value), Value: propLiteral(g.Value)})
	}
	return out
}

func propLiteral(v *gPropValue) *Literal {
	lit := &Literal{Pos: pos(v.Pos)}
	switch {
	case v.String != nil:
		lit.Kind, lit.Str = LitString, unquoteString(*v.String)
	case v.Bool != nil:
		lit.Kind, lit.Bool = LitBool, strings.EqualFold(*v.Bool, "TRUE")
	case v.Neg != nil:
		lit.Kind, lit.Text = numberKind(*v.Neg), "-"+*v.Neg
	default:
		lit.Kind, lit.Text = numberKind(*v.Number), *v.Number
	}
	return lit
}

func connectorType(s string) ConnectorType {
	switch strings.ToUpper(s) {
	case "SOURCE":
		return ConnectorSource
	case "SINK":
		return ConnectorSink
	}
	return 0
}

func (c *converter) createConnector(g *gCreateConn) *CreateConnector {
	s := &CreateConnector{Pos: pos(g.Pos), Type: connectorType(g.Type), IfNotExists: g.IfNotExists, Name: g.Name.Value}
	seen := map[string]bool{}
	for _, p := range g.With {
		key := ""
		if p.Key != nil {
			key = unquoteString(*p.Key)
		} else {
			key = p.Name.Value
		}
		if seen[key] {
			// Connect takes a JSON object: a second value would silently
			// win, so say which key is doubled.
			c.fail(p.Pos, key, "duplicate connector property '%s'", key)
		}
		seen[key] = true
		s.Config = append(s.Config, ConnectorProperty{Pos: pos(p.Pos), Key: key, Value: propLiteral(p.Value)})
	}
	return s
}

func (c *converter) insert(g *gInsert) Statement {
	if g.Values != nil {
		s := &InsertValues{Pos: pos(g.Pos), Target: g.Target.Value, Values: c.exprs(g.Values.Exprs)}
		for _, col := range g.Columns {
			s.Columns = append(s.Columns, col.Value)
		}
		return s
	}
	if len(g.Columns) > 0 {
		c.fail(g.Columns[0].Pos, g.Columns[0].Raw, "a column list is only allowed with INSERT INTO … VALUES")
	}
	return &InsertSelect{Pos: pos(g.Pos), Target: g.Target.Value, TargetPos: pos(g.Target.Pos), With: c.props(g.With), Query: c.selectStmt(g.Query)}
}

func (c *converter) print(g *gPrint) *Print {
	p := &Print{Pos: pos(g.Pos), FromBeginning: g.FromBeginning}
	if g.String != nil {
		p.Topic = unquoteString(*g.String)
	} else {
		// Topic names are case-sensitive in Kafka: keep them as written.
		p.Topic = g.Ident.Raw
	}
	if g.Interval != nil {
		p.Interval = c.smallInt(g.Interval)
	}
	if g.Limit != nil {
		p.Limit, p.HasLimit = c.smallInt(g.Limit), true
	}
	return p
}

func (c *converter) assert(g *gAssert) Statement {
	var timeout time.Duration
	if g.Timeout != nil {
		timeout = c.duration(g.Timeout)
	}
	if g.Topic != nil {
		// Topic names are case-sensitive in Kafka: keep them as written.
		return &AssertTopic{Pos: pos(g.Pos), NotExists: g.NotExists, Topic: g.Topic.Name.Raw,
			With: c.props(g.Topic.With), Timeout: timeout, HasTimeout: g.Timeout != nil}
	}
	s := &AssertSchema{Pos: pos(g.Pos), NotExists: g.NotExists, Timeout: timeout, HasTimeout: g.Timeout != nil}
	switch {
	case g.Schema.SubjectStr != nil:
		s.Subject = unquoteString(*g.Schema.SubjectStr)
	case g.Schema.SubjectIdent != nil:
		s.Subject = g.Schema.SubjectIdent.Raw
	}
	if g.Schema.ID != nil {
		id, err := strconv.ParseInt(g.Schema.ID.Text, 10, 32)
		if err != nil || id < 0 {
			c.fail(g.Schema.ID.Pos, g.Schema.ID.Text, "a schema id is a whole number, got %s", g.Schema.ID.Text)
		}
		s.ID, s.HasID = int(id), true
	}
	if s.Subject == "" && !s.HasID {
		c.fail(g.Pos, "ASSERT", "ASSERT SCHEMA needs a SUBJECT name or an ID")
	}
	return s
}

// limit reads a SELECT's LIMIT: a whole number, which a pull query
// refuses when negative (Select.Limit < 0).
func (c *converter) limit(n *gLimit) int {
	if strings.ContainsAny(n.Text, ".eE") {
		c.fail(n.Pos, n.Text, "Failed to prepare statement: Value must be integer for command: LIMIT")
	}
	v, err := strconv.ParseInt(n.Text, 10, 32)
	if err != nil {
		c.fail(n.Pos, n.Text, "expected an integer, got %s", n.Text)
	}
	if n.Neg {
		v = -v
	}
	return int(v)
}

func (c *converter) smallInt(n *gNumber) int {
	v, err := strconv.ParseInt(n.Text, 10, 32)
	if err != nil || v < 0 {
		c.fail(n.Pos, n.Text, "expected a non-negative integer, got %s", n.Text)
	}
	return int(v)
}

func (c *converter) selectStmt(g *gSelect) *Select {
	s := &Select{Pos: pos(g.Pos)}
	for _, it := range g.Items {
		item := SelectItem{Pos: pos(it.Pos)}
		switch {
		case it.Star:
			item.Star = true
		case it.StarSource != nil:
			item.Star, item.StarSource = true, it.StarSource.Value
		default:
			n := len(c.allFields)
			item.Expr = c.expr(it.Expr.Expr)
			if it.Expr.Alias != nil {
				item.Alias = it.Expr.Alias.Value
			}
			if d, ok := item.Expr.(*Dereference); ok && d.Field == "*" && item.Alias == "" {
				item.Expr, item.AllFields = d.X, true
				c.allFields = c.allFields[:len(c.allFields)-1]
			}
			if len(c.allFields) > n {
				c.fail(c.allFields[n], "*", "->* selects every field of a struct: it must be a whole SELECT item, without an alias")
			}
		}
		s.Items = append(s.Items, item)
	}
	s.From = relation(g.From)
	for _, j := range g.Joins {
		s.Joins = append(s.Joins, c.join(j))
	}
	if g.Window != nil {
		s.Window = c.window(g.Window)
	}
	if g.Where != nil {
		s.Where = c.expr(g.Where)
	}
	if g.GroupBy != nil {
		s.GroupBy = c.adds(append(g.GroupBy.Set, g.GroupBy.Exprs...))
	}
	if pb := g.PartitionBy; pb != nil {
		if pb.Empty {
			c.fail(pb.Pos, "(", "PARTITION BY requires at least one expression")
		}
		s.PartitionBy = c.adds(pb.Exprs)
	}
	if g.Having != nil {
		s.Having = c.expr(g.Having)
	}
	switch strings.ToUpper(g.Emit) {
	case "CHANGES":
		s.Emit = EmitChanges
	case "FINAL":
		s.Emit = EmitFinal
	}
	if g.Limit != nil {
		s.Limit, s.HasLimit = c.limit(g.Limit), true
	}
	return s
}

func relation(g *gRelation) *Relation {
	r := &Relation{Pos: pos(g.Pos), Name: g.Name.Value}
	if g.Alias != nil {
		r.Alias = g.Alias.Value
	}
	return r
}

func (c *converter) join(g *gJoin) *Join {
	j := &Join{Pos: pos(g.Pos), Right: relation(g.Right), On: c.expr(g.On)}
	switch strings.ToUpper(g.Type) {
	case "LEFT":
		j.Type = JoinLeft
	case "RIGHT":
		j.Type = JoinRight
	case "FULL":
		j.Type = JoinFull
	}
	if w := g.Within; w != nil {
		jw := &JoinWindow{}
		if w.Single != nil {
			jw.Before = c.duration(w.Single)
			jw.After = jw.Before
		} else {
			jw.Before, jw.After = c.duration(w.Before), c.duration(w.After)
		}
		if w.Grace != nil {
			jw.Grace, jw.HasGrace = c.duration(w.Grace), true
		}
		j.Within = jw
	}
	return j
}

var durationUnits = map[string]time.Duration{
	"MS": time.Millisecond, "S": time.Second, "M": time.Minute, "H": time.Hour, "D": 24 * time.Hour,
	"MILLISECOND": time.Millisecond, "SECOND": time.Second, "MINUTE": time.Minute, "HOUR": time.Hour, "DAY": 24 * time.Hour,
}

func (c *converter) duration(g *gDur) time.Duration {
	num, unit := g.N, strings.ToUpper(g.Unit)
	if g.Compact != "" {
		i := strings.IndexFunc(g.Compact, func(r rune) bool { return r < '0' || r > '9' })
		num, unit = g.Compact[:i], strings.ToUpper(g.Compact[i:])
	}
	mult := durationUnits[unit]
	if g.Compact == "" {
		mult = durationUnits[strings.TrimSuffix(unit, "S")]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		c.fail(g.Pos, num, "a duration needs a whole number, got %s", num)
		return 0
	}
	if n > math.MaxInt64/int64(mult) {
		c.fail(g.Pos, num, "duration %s %s is too large", num, unit)
		return 0
	}
	return time.Duration(n) * mult
}

var windowKinds = map[string]WindowKind{
	"TUMBLING": WindowTumbling, "HOPPING": WindowHopping, "SESSION": WindowSession, "SLIDING": WindowSliding,
}

func (c *converter) window(g *gWindow) *WindowSpec {
	w := &WindowSpec{Pos: pos(g.Pos), Kind: windowKinds[strings.ToUpper(g.Kind)]}
	var hasSize, hasAdvance bool
	seen := map[string]bool{}
	once := func(p lexer.Position, clause string) {
		if seen[clause] {
			c.fail(p, clause, "%s is given twice", clause)
		}
		seen[clause] = true
	}
	if g.Compact != nil {
		w.Compact, hasSize = true, true
		w.Size = c.duration(g.Compact)
		for _, o := range g.Options {
			switch {
			case o.Advance != nil:
				once(o.Pos, "ADVANCE")
				w.Advance, hasAdvance = c.duration(o.Advance), true
			case o.Grace != nil:
				once(o.Pos, "GRACE")
				w.Grace, w.HasGrace = c.duration(o.Grace), true
			case o.Retention != nil:
				once(o.Pos, "RETENTION")
				w.Retention, w.HasRetention = c.duration(o.Retention), true
			}
		}
	} else {
		for _, p := range g.Params {
			switch {
			case p.Size != nil:
				once(p.Pos, "SIZE")
				if w.Kind == WindowSession {
					c.fail(p.Pos, "SIZE", "a SESSION window takes a gap, e.g. SESSION (30 MINUTES), not SIZE")
				}
				w.Size, hasSize = c.duration(p.Size), true
			case p.Gap != nil:
				once(p.Pos, "SIZE")
				if w.Kind != WindowSession {
					c.fail(p.Pos, "", "expected SIZE before the duration of a %s window", w.Kind)
				}
				w.Size, hasSize = c.duration(p.Gap), true
			case p.Advance != nil:
				once(p.Pos, "ADVANCE BY")
				w.Advance, hasAdvance = c.duration(p.Advance), true
			case p.Grace != nil:
				once(p.Pos, "GRACE PERIOD")
				w.Grace, w.HasGrace = c.duration(p.Grace), true
			case p.Retention != nil:
				once(p.Pos, "RETENTION")
				w.Retention, w.HasRetention = c.duration(p.Retention), true
			}
		}
	}
	switch {
	case !hasSize:
		c.fail(g.Pos, g.Kind, "a %s window needs a size", w.Kind)
	case w.Kind == WindowHopping && !hasAdvance:
		c.fail(g.Pos, g.Kind, "a HOPPING window needs ADVANCE BY")
	case w.Kind != WindowHopping && hasAdvance:
		c.fail(g.Pos, g.Kind, "only a HOPPING window takes ADVANCE")
	}
	return w
}

func (c *converter) typeName(g *gType) *TypeName {
	t := &TypeName{Pos: pos(g.Pos)}
	switch {
	case g.Array != nil:
		t.Name, t.Elem = "ARRAY", c.typeName(g.Array)
	case g.Map != nil:
		t.Name, t.Key, t.Elem = "MAP", c.typeName(g.Map.Key), c.typeName(g.Map.Elem)
	case g.Struct != nil:
		t.Name = "STRUCT"
		for _, f := range g.Struct.Fields {
			t.Fields = append(t.Fields, StructField{Name: f.Name.Value, Type: c.typeName(f.Type)})
		}
	case g.Quoted != "":
		q := g.Quoted[:1]
		t.Name = strings.ReplaceAll(g.Quoted[1:len(g.Quoted)-1], q+q, q)
	default:
		t.Name = strings.ToUpper(g.Name.Value)
		for _, p := range g.Params {
			if p.Number != nil {
				t.Params = append(t.Params, c.smallInt(p.Number))
			}
		}
	}
	return t
}

// ---- expressions ----

func (c *converter) exprs(gs []*gExpr) []Expr {
	var out []Expr
	for _, g := range gs {
		out = append(out, c.expr(g))
	}
	return out
}

func (c *converter) adds(gs []*gAdd) []Expr {
	var out []Expr
	for _, g := range gs {
		out = append(out, c.add(g))
	}
	return out
}

func (c *converter) expr(g *gExpr) Expr {
	x := c.and(g.Left)
	for _, r := range g.Right {
		x = &Binary{Pos: pos(g.Pos), Op: OpOr, Left: x, Right: c.and(r)}
	}
	return x
}

func (c *converter) and(g *gAnd) Expr {
	x := c.not(g.Left)
	for _, r := range g.Right {
		x = &Binary{Pos: pos(g.Pos), Op: OpAnd, Left: x, Right: c.not(r)}
	}
	return x
}

func (c *converter) not(g *gNot) Expr {
	if g.Not != nil {
		return &Unary{Pos: pos(g.Pos), Op: OpNot, X: c.not(g.Not)}
	}
	return c.cmp(g.Cmp)
}

var cmpOps = map[string]BinaryOp{"=": OpEq, "<>": OpNe, "!=": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe}

func (c *converter) cmp(g *gCmp) Expr {
	x := c.add(g.Left)
	t := g.Tail
	if t == nil {
		return x
	}
	p := pos(g.Pos)
	switch {
	case t.Op != "":
		return &Binary{Pos: p, Op: cmpOps[t.Op], Left: x, Right: c.add(t.Right)}
	case t.Is != nil:
		if t.Is.Null {
			return &IsNull{Pos: p, X: x, Not: t.Is.Not}
		}
		op := OpIsDistinct
		if t.Is.Not {
			op = OpIsNotDistinct
		}
		return &Binary{Pos: p, Op: op, Left: x, Right: c.add(t.Is.Distinct)}
	case t.Between != nil:
		return &Between{Pos: p, X: x, Lo: c.add(t.Between.Lo), Hi: c.add(t.Between.Hi), Not: t.Not}
	case t.Like != nil:
		l := &Like{Pos: p, X: x, Pattern: c.add(t.Like.Pattern), Not: t.Not}
		if t.Like.Escape != nil {
			l.Escape = unquoteString(*t.Like.Escape)
		}
		return l
	default:
		return &In{Pos: p, X: x, List: c.exprs(t.In), Not: t.Not}
	}
}

var arithOps = map[string]BinaryOp{"+": OpAdd, "-": OpSub, "||": OpConcat, "*": OpMul, "/": OpDiv, "%": OpMod}

func (c *converter) add(g *gAdd) Expr {
	x := c.mul(g.Left)
	for _, r := range g.Rest {
		x = &Binary{Pos: pos(g.Pos), Op: arithOps[r.Op], Left: x, Right: c.mul(r.Right)}
	}
	return x
}

func (c *converter) mul(g *gMul) Expr {
	x := c.unary(g.Left)
	for _, r := range g.Rest {
		x = &Binary{Pos: pos(g.Pos), Op: arithOps[r.Op], Left: x, Right: c.unary(r.Right)}
	}
	return x
}

func (c *converter) unary(g *gUnary) Expr {
	switch g.Op {
	case "-":
		// As in ksqlDB's grammar, a minus before a bare number is part of
		// the literal: -2147483648 is an INT, -9223372036854775808 a
		// BIGINT. -(5) stays an operation.
		if px := g.X.Postfix; px != nil && len(px.Ops) == 0 && px.X.Number != "" {
			return c.number(g.Pos, "-"+px.X.Number)
		}
		return &Unary{Pos: pos(g.Pos), Op: OpNeg, X: c.unary(g.X)}
	case "+":
		return &Unary{Pos: pos(g.Pos), Op: OpPlus, X: c.unary(g.X)}
	}
	x := c.primary(g.Postfix.X)
	for _, op := range g.Postfix.Ops {
		switch {
		case op.Index != nil:
			x = &Subscript{Pos: pos(g.Pos), X: x, Index: c.expr(op.Index)}
		case op.AllFields:
			c.allFields = append(c.allFields, op.Pos)
			x = &Dereference{Pos: pos(g.Pos), X: x, Field: "*"}
		default:
			x = &Dereference{Pos: pos(g.Pos), X: x, Field: op.Field.Value}
		}
	}
	return x
}

// number is a numeric literal. ksqlDB refuses, while parsing, an integer
// that no BIGINT holds and a number beyond DOUBLE's range.
func (c *converter) number(p lexer.Position, text string) Expr {
	kind := numberKind(text)
	switch kind {
	case LitInteger:
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			c.failPrepared(p, text, "Invalid numeric literal: %s", text)
		}
	case LitDouble:
		if f, err := strconv.ParseFloat(text, 64); err != nil && math.IsInf(f, 0) {
			c.failPrepared(p, text, "Number overflows DOUBLE: %s", text)
		}
	}
	return &Literal{Pos: pos(p), Kind: kind, Text: text}
}

func numberKind(text string) LiteralKind {
	switch {
	case strings.ContainsAny(text, "eE"):
		return LitDouble
	case strings.Contains(text, "."):
		return LitDecimal
	}
	return LitInteger
}

func (c *converter) primary(g *gPrimary) Expr {
	p := pos(g.Pos)
	switch {
	case g.Paren != nil:
		return c.expr(g.Paren)
	case g.Null:
		return &Literal{Pos: p, Kind: LitNull}
	case g.Bool != "":
		return &Literal{Pos: p, Kind: LitBool, Bool: strings.EqualFold(g.Bool, "TRUE")}
	case g.Number != "":
		return c.number(g.Pos, g.Number)
	case g.String != nil:
		return &Literal{Pos: p, Kind: LitString, Str: unquoteString(*g.String)}
	case g.Case != nil:
		cs := &Case{Pos: p}
		if g.Case.Operand != nil {
			cs.Operand = c.expr(g.Case.Operand)
		}
		for _, w := range g.Case.Whens {
			cs.Whens = append(cs.Whens, When{Cond: c.expr(w.Cond), Result: c.expr(w.Result)})
		}
		if g.Case.Else != nil {
			cs.Else = c.expr(g.Case.Else)
		}
		return cs
	case g.Cast != nil:
		return &Cast{Pos: p, X: c.expr(g.Cast.X), Type: c.typeName(g.Cast.Type)}
	case g.Array != nil:
		return &ArrayCtor{Pos: p, Elems: c.exprs(g.Array.Elems)}
	case g.Map != nil:
		m := &MapCtor{Pos: p}
		for _, e := range g.Map.Entries {
			m.Keys = append(m.Keys, c.expr(e.Key))
			m.Values = append(m.Values, c.expr(e.Value))
		}
		return m
	case g.Struct != nil:
		s := &StructCtor{Pos: p}
		for _, e := range g.Struct.Entries {
			s.Names = append(s.Names, e.Name.Value)
			s.Values = append(s.Values, c.expr(e.Value))
		}
		return s
	case g.Call != nil:
		args := c.exprs(g.Call.DistinctArgs)
		for _, a := range g.Call.Args {
			args = append(args, c.arg(a))
		}
		return &FuncCall{Pos: p, Name: strings.ToUpper(g.Call.Name.Value), Args: args,
			Star: g.Call.Star, Distinct: g.Call.Distinct}
	default:
		col := &ColumnRef{Pos: p, Name: g.Column.First.Value}
		if g.Column.Next != nil {
			col.Source, col.Name = g.Column.First.Value, g.Column.Next.Value
		}
		return col
	}
}

func (c *converter) arg(g *gArg) Expr {
	if g.Lambda == nil {
		return c.expr(g.Expr)
	}
	l := &Lambda{Pos: pos(g.Lambda.Pos), Body: c.expr(g.Lambda.Body)}
	for _, p := range g.Lambda.Params {
		l.Params = append(l.Params, p.Value)
	}
	return l
}

// unquoteString removes the quotes of a SQL string literal and undoes ”
// escapes.
func unquoteString(s string) string {
	return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
}

func (c *converter) createFunction(g *gCreateFunc) Statement {
	st := &CreateFunction{Pos: pos(g.Pos), OrReplace: g.OrReplace, Name: g.Name.Value, Returns: c.typeName(g.Returns),
		Deterministic: g.Det && !g.Not, Language: strings.ToUpper(g.Language.Value), With: c.props(g.With)}
	switch strings.ToUpper(g.Kind) {
	case "AGGREGATE":
		st.Kind = AggregateFunction
	case "TABLE":
		st.Kind = TableFunction
	}
	if g.Not && !g.Det {
		c.fail(g.Language.Pos, "LANGUAGE", "expected DETERMINISTIC after NOT")
	}
	for _, p := range g.Params {
		st.Params = append(st.Params, FunctionParam{Pos: pos(p.Pos), Name: p.Name.Value, Type: c.typeName(p.Type), Variadic: p.Variadic})
	}
	if g.Body != nil {
		st.Body, st.HasBody = g.Body.Text[2:len(g.Body.Text)-2], true
		// The body starts after the two characters of the opening $$.
		st.BodyPos = pos(g.Body.Pos)
		st.BodyPos.Column += 2
		st.BodyPos.Offset += 2
	}
	return st
}
