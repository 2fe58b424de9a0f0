package pgcatalog

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// execCtx is one execution of a statement: the catalog snapshot it reads,
// its parameters and its clock.
type execCtx struct {
	ctx    context.Context
	sess   *Session
	cat    *catalog
	params []any
	now    time.Time
	cache  map[*vrel][][]any
}

// evalCtx is where an expression is evaluated: the current row of its
// query, the enclosing query's row (for correlated references), and the
// aggregate and window values of the current group or row.
type evalCtx struct {
	row   []any
	outer *evalCtx
	aggs  []any
	wins  []any
	srfs  []any
	// out is the current output row, for DISTINCT ON's output columns.
	out []any
	x   *execCtx
}

// expr is a compiled expression: its static type (the RowDescription's)
// and how to evaluate it.
type expr struct {
	typ    uint32
	typmod int32
	eval   func(c *evalCtx) (any, error)
	// lit is an untyped string literal's text: its type comes from where
	// it is used, as Postgres resolves 'unknown'.
	lit *string
	// param is $n when the expression is a bare parameter (0 otherwise).
	param int
	// name is the column name Postgres gives the expression in a select
	// list without an alias; weak marks a name a CASE does not take from
	// its ELSE branch (a literal's type name, "case" itself).
	name string
	weak bool
	// fields are a record's fields (for (rec).field).
	fields []scopeCol
}

// scopeCol is one column a name can resolve to.
type scopeCol struct {
	rel    string
	name   string
	typ    uint32
	typmod int32
	// hidden is a USING join's right-hand copy of a merged column: only
	// a qualified name reaches it.
	hidden bool
	fields []scopeCol
}

// scope is the columns visible to an expression: its query's FROM, then
// each enclosing query's.
type scope struct {
	cols  []scopeCol
	outer *scope
	sel   *selectState
}

// selectState collects one SELECT's aggregate and window calls while its
// expressions compile.
type selectState struct {
	aggs      []*aggSpec
	wins      []*winSpec
	srfs      []*srfSpec
	noAgg     string // the clause aggregates are not allowed in, if any
	inAggArgs bool
}

// compiler turns one statement's tree into plans; params are $n's types.
type compiler struct {
	sql    string
	params []uint32
	sess   *Session
	// ctes are the WITH queries in reach, innermost last.
	ctes []map[string]*plan
}

func (cp *compiler) errAt(code string, loc int32, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Position: cp.position(loc)}
}

// position turns a byte offset of the statement into Postgres's 1-based
// character position.
func (cp *compiler) position(loc int32) int {
	if loc < 0 || int(loc) > len(cp.sql) {
		return 0
	}
	return utf8.RuneCountInString(cp.sql[:loc]) + 1
}

func constExpr(typ uint32, v any) *expr {
	return &expr{typ: typ, typmod: -1, eval: func(*evalCtx) (any, error) { return v, nil }}
}

func strVal(n *pg.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

func nameOf(list []*pg.Node) string {
	if len(list) == 0 {
		return ""
	}
	return strVal(list[len(list)-1])
}

// resolveUnknown gives an untyped literal or parameter the type it is
// used as.
func (cp *compiler) resolveUnknown(e *expr, typ uint32) *expr {
	if typ == OIDUnknown || typ == 0 {
		return e
	}
	if e.param > 0 && cp.params[e.param-1] == 0 {
		cp.params[e.param-1] = typ
		return &expr{typ: typ, typmod: -1, eval: e.eval, param: e.param, name: e.name}
	}
	if e.lit != nil {
		text := *e.lit
		return &expr{typ: typ, typmod: -1, name: e.name, eval: func(c *evalCtx) (any, error) {
			return c.x.cast(text, OIDUnknown, typ)
		}}
	}
	return e
}

// unify resolves untyped operands of a binary operator from each other.
func (cp *compiler) unify(l, r *expr) (*expr, *expr) {
	lu := l.typ == OIDUnknown
	ru := r.typ == OIDUnknown
	switch {
	case lu && !ru:
		l = cp.resolveUnknown(l, r.typ)
	case ru && !lu:
		r = cp.resolveUnknown(r, l.typ)
	case lu && ru:
		l = cp.resolveUnknown(l, OIDText)
		r = cp.resolveUnknown(r, OIDText)
	}
	return l, r
}

func isTextType(t uint32) bool {
	switch t {
	case OIDText, OIDVarchar, OIDName, OIDBpchar, OIDChar, OIDUnknown, OIDJSON, OIDJSONB:
		return true
	}
	return false
}

// numericRank orders the numeric types for arithmetic's result type.
func numericRank(t uint32) int {
	switch t {
	case OIDInt2:
		return 1
	case OIDInt4, OIDOid:
		return 2
	case OIDInt8:
		return 3
	case OIDNumeric:
		return 4
	case OIDFloat4:
		return 5
	case OIDFloat8:
		return 6
	}
	return 0
}

func (cp *compiler) compileExpr(n *pg.Node, sc *scope) (*expr, error) {
	switch {
	case n == nil:
		return constExpr(OIDUnknown, nil), nil
	case n.GetAConst() != nil:
		return cp.compileConst(n.GetAConst())
	case n.GetColumnRef() != nil:
		return cp.compileColumnRef(n.GetColumnRef(), sc)
	case n.GetParamRef() != nil:
		return cp.compileParam(n.GetParamRef())
	case n.GetAExpr() != nil:
		return cp.compileAExpr(n.GetAExpr(), sc)
	case n.GetBoolExpr() != nil:
		return cp.compileBoolExpr(n.GetBoolExpr(), sc)
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		arg, err := cp.compileExpr(nt.Arg, sc)
		if err != nil {
			return nil, err
		}
		want := nt.Nulltesttype == pg.NullTestType_IS_NULL
		return &expr{typ: OIDBool, typmod: -1, name: "?column?", eval: func(c *evalCtx) (any, error) {
			v, err := arg.eval(c)
			return (v == nil) == want, err
		}}, nil
	case n.GetBooleanTest() != nil:
		return cp.compileBooleanTest(n.GetBooleanTest(), sc)
	case n.GetFuncCall() != nil:
		return cp.compileFuncCall(n.GetFuncCall(), sc)
	case n.GetTypeCast() != nil:
		return cp.compileTypeCast(n.GetTypeCast(), sc)
	case n.GetCollateClause() != nil:
		// Collations do not change what these catalogs compare.
		return cp.compileExpr(n.GetCollateClause().Arg, sc)
	case n.GetCaseExpr() != nil:
		return cp.compileCase(n.GetCaseExpr(), sc)
	case n.GetCoalesceExpr() != nil:
		return cp.compileVariadic("coalesce", n.GetCoalesceExpr().Args, sc, func(vals []any) any {
			for _, v := range vals {
				if v != nil {
					return v
				}
			}
			return nil
		})
	case n.GetMinMaxExpr() != nil:
		mm := n.GetMinMaxExpr()
		name, sign := "greatest", 1
		if mm.Op == pg.MinMaxOp_IS_LEAST {
			name, sign = "least", -1
		}
		return cp.compileVariadic(name, mm.Args, sc, func(vals []any) any {
			var best any
			for _, v := range vals {
				if v != nil && (best == nil || compareValues(v, best)*sign > 0) {
					best = v
				}
			}
			return best
		})
	case n.GetSubLink() != nil:
		return cp.compileSubLink(n.GetSubLink(), sc)
	case n.GetAArrayExpr() != nil:
		return cp.compileArray(n.GetAArrayExpr(), sc)
	case n.GetAIndirection() != nil:
		return cp.compileIndirection(n.GetAIndirection(), sc)
	case n.GetSqlvalueFunction() != nil:
		return cp.compileSQLValueFunction(n.GetSqlvalueFunction())
	}
	return nil, &Error{Code: CodeFeatureUnsupported, Message: fmt.Sprintf("expression not supported by Sluice's Postgres catalog: %s", nodeKind(n))}
}

func nodeKind(n *pg.Node) string {
	s := fmt.Sprintf("%T", n.GetNode())
	s = strings.TrimPrefix(s, "*pg_query.Node_")
	return s
}

func (cp *compiler) compileConst(c *pg.A_Const) (*expr, error) {
	if c.Isnull {
		return &expr{typ: OIDUnknown, typmod: -1, name: "?column?", eval: func(*evalCtx) (any, error) { return nil, nil }}, nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		e := constExpr(OIDInt4, int64(v.Ival.Ival))
		e.name = "?column?"
		return e, nil
	case *pg.A_Const_Fval:
		var f float64
		if _, err := fmt.Sscan(v.Fval.Fval, &f); err != nil {
			return nil, cp.errAt("22P02", c.Location, "invalid input syntax for type numeric: %q", v.Fval.Fval)
		}
		if f == float64(int64(f)) && !strings.ContainsAny(v.Fval.Fval, ".eE") {
			e := constExpr(OIDInt8, int64(f))
			e.name = "?column?"
			return e, nil
		}
		e := constExpr(OIDNumeric, f)
		e.name = "?column?"
		return e, nil
	case *pg.A_Const_Boolval:
		e := constExpr(OIDBool, v.Boolval.Boolval)
		e.name = "?column?"
		return e, nil
	case *pg.A_Const_Sval:
		text := v.Sval.Sval
		e := constExpr(OIDUnknown, text)
		e.lit = &text
		e.name = "?column?"
		return e, nil
	case *pg.A_Const_Bsval:
		e := constExpr(OIDText, v.Bsval.Bsval)
		e.name = "?column?"
		return e, nil
	}
	return nil, cp.errAt(CodeFeatureUnsupported, c.Location, "constant not supported")
}

func (cp *compiler) compileParam(p *pg.ParamRef) (*expr, error) {
	n := int(p.Number)
	if n < 1 || n > 65535 {
		return nil, cp.errAt("42P02", p.Location, "there is no parameter $%d", n)
	}
	for len(cp.params) < n {
		cp.params = append(cp.params, 0)
	}
	typ := cp.params[n-1]
	if typ == 0 {
		typ = OIDUnknown
	}
	return &expr{typ: typ, typmod: -1, param: n, name: "?column?", eval: func(c *evalCtx) (any, error) {
		if n > len(c.x.params) {
			return nil, &Error{Code: "08P01", Message: fmt.Sprintf("bind message supplies %d parameters, but prepared statement requires %d", len(c.x.params), len(cp.params))}
		}
		v := normalize(c.x.params[n-1])
		want := cp.params[n-1]
		if s, ok := v.(string); ok && !isTextType(want) && want != 0 {
			return c.x.cast(s, OIDUnknown, want)
		}
		return v, nil
	}}, nil
}

// normalize turns a parameter's Go value into this package's value kinds.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case uint16:
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	}
	return v
}

func (cp *compiler) compileColumnRef(cr *pg.ColumnRef, sc *scope) (*expr, error) {
	var parts []string
	for _, f := range cr.Fields {
		if f.GetAStar() != nil {
			return nil, cp.errAt(CodeSyntaxError, cr.Location, "* is not allowed here")
		}
		parts = append(parts, strVal(f))
	}
	name := parts[len(parts)-1]
	rel := ""
	if len(parts) > 1 {
		rel = parts[len(parts)-2]
	}
	depth := 0
	for s := sc; s != nil; s = s.outer {
		idx := -1
		for i, col := range s.cols {
			if col.name == name && (rel == "" && !col.hidden || rel != "" && col.rel == rel) {
				if idx >= 0 {
					return nil, cp.errAt("42702", cr.Location, "column reference %q is ambiguous", name)
				}
				idx = i
			}
		}
		if idx >= 0 {
			col := s.cols[idx]
			d := depth
			return &expr{typ: col.typ, typmod: col.typmod, name: name, fields: col.fields, eval: func(c *evalCtx) (any, error) {
				for i := 0; i < d; i++ {
					c = c.outer
				}
				return c.row[idx], nil
			}}, nil
		}
		depth++
	}
	if rel != "" {
		known := false
		for s := sc; s != nil; s = s.outer {
			for _, col := range s.cols {
				if col.rel == rel {
					known = true
				}
			}
		}
		if !known {
			return nil, cp.errAt(CodeUndefinedTable, cr.Location, "missing FROM-clause entry for table %q", rel)
		}
		return nil, cp.errAt(CodeUndefinedColumn, cr.Location, "column %s.%s does not exist", rel, name)
	}
	return nil, cp.errAt(CodeUndefinedColumn, cr.Location, "column %q does not exist", name)
}

var regexCache sync.Map

func compileRegex(pattern string, fold bool) (*regexp.Regexp, error) {
	key := pattern
	if fold {
		key = "(?i)" + pattern
	}
	if re, ok := regexCache.Load(key); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(key)
	if err != nil {
		return nil, &Error{Code: "2201B", Message: fmt.Sprintf("invalid regular expression: %v", err)}
	}
	regexCache.Store(key, re)
	return re, nil
}

// likeRegex turns a LIKE pattern (% _ and \ escapes) into a regexp.
func likeRegex(pattern string) string {
	var b strings.Builder
	b.WriteString("(?s)^")
	for i := 0; i < len(pattern); i++ {
		switch ch := pattern[i]; ch {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i+1 < len(pattern) {
				i++
				b.WriteString(regexp.QuoteMeta(string(pattern[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	return b.String()
}

// binaryOp is a strict operator over two non-NULL values.
func (cp *compiler) binaryOp(op string, l, r *expr, loc int32) (*expr, error) {
	if op == "||" && !isArrayType(l.typ) && !isArrayType(r.typ) {
		// text || anything: the untyped side is text, not the other's type.
		l, r = cp.resolveUnknown(l, OIDText), cp.resolveUnknown(r, OIDText)
	}
	l, r = cp.unify(l, r)
	var typ uint32 = OIDBool
	var f func(c *evalCtx, a, b any) (any, error)
	switch op {
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		f = func(_ *evalCtx, a, b any) (any, error) {
			k := compareValues(a, b)
			switch op {
			case "=":
				return k == 0, nil
			case "<>", "!=":
				return k != 0, nil
			case "<":
				return k < 0, nil
			case ">":
				return k > 0, nil
			case "<=":
				return k <= 0, nil
			}
			return k >= 0, nil
		}
	case "~", "!~", "~*", "!~*", "~~", "!~~", "~~*", "!~~*":
		negate := strings.HasPrefix(op, "!")
		fold := strings.HasSuffix(op, "*")
		like := strings.Contains(op, "~~")
		f = func(c *evalCtx, a, b any) (any, error) {
			pattern := c.x.textOf(b, r.typ)
			if like {
				pattern = likeRegex(pattern)
			}
			re, err := compileRegex(pattern, fold)
			if err != nil {
				return nil, err
			}
			return re.MatchString(c.x.textOf(a, l.typ)) != negate, nil
		}
	case "||":
		typ = OIDText
		if isArrayType(l.typ) || isArrayType(r.typ) {
			typ = l.typ
			if !isArrayType(typ) {
				typ = r.typ
			}
			f = func(_ *evalCtx, a, b any) (any, error) {
				out := []any{}
				for _, v := range []any{a, b} {
					if arr, ok := v.([]any); ok {
						out = append(out, arr...)
					} else {
						out = append(out, v)
					}
				}
				return out, nil
			}
			break
		}
		f = func(c *evalCtx, a, b any) (any, error) {
			return c.x.textOf(a, l.typ) + c.x.textOf(b, r.typ), nil
		}
	case "+", "-", "*", "/", "%":
		typ = l.typ
		if numericRank(r.typ) > numericRank(l.typ) {
			typ = r.typ
		}
		if numericRank(typ) == 0 {
			return nil, cp.errAt(CodeUndefinedFunction, loc, "operator does not exist: %s %s %s", formatType(l.typ, -1), op, formatType(r.typ, -1))
		}
		f = func(_ *evalCtx, a, b any) (any, error) { return arith(op, a, b) }
	default:
		return nil, cp.errAt(CodeUndefinedFunction, loc, "operator does not exist: %s %s %s", formatType(l.typ, -1), op, formatType(r.typ, -1))
	}
	// Concatenating arrays is not strict: a NULL array is an empty one.
	arrayCat := op == "||" && isArrayType(typ)
	return &expr{typ: typ, typmod: -1, name: "?column?", eval: func(c *evalCtx) (any, error) {
		a, err := l.eval(c)
		if err != nil || a == nil && !arrayCat {
			return nil, err
		}
		b, err := r.eval(c)
		if err != nil || b == nil && !arrayCat {
			return nil, err
		}
		if a == nil && b == nil {
			return nil, nil
		}
		if a == nil && isArrayType(l.typ) {
			a = []any{}
		}
		if b == nil && isArrayType(r.typ) {
			b = []any{}
		}
		return f(c, a, b)
	}}, nil
}

func arith(op string, a, b any) (any, error) {
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	if aInt && bInt {
		return arithOf(op, ai, bi, func(x, y int64) int64 { return x % y })
	}
	af, err := toFloat(a)
	if err != nil {
		return nil, err
	}
	bf, err := toFloat(b)
	if err != nil {
		return nil, err
	}
	return arithOf(op, af, bf, math.Mod)
}

// arithOf applies op (+ - * / %) to two integers or two floats; mod is
// the type's remainder.
func arithOf[T int64 | float64](op string, a, b T, mod func(T, T) T) (any, error) {
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	}
	if b == 0 {
		return nil, &Error{Code: "22012", Message: "division by zero"}
	}
	if op == "/" {
		return a / b, nil
	}
	return mod(a, b), nil
}

func (cp *compiler) compileAExpr(a *pg.A_Expr, sc *scope) (*expr, error) {
	op := nameOf(a.Name)
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if a.Lexpr == nil {
			r, err := cp.compileExpr(a.Rexpr, sc)
			if err != nil {
				return nil, err
			}
			if op == "+" {
				return r, nil
			}
			if op != "-" {
				return nil, cp.errAt(CodeUndefinedFunction, a.Location, "operator does not exist: %s %s", op, formatType(r.typ, -1))
			}
			return cp.binaryOp("-", constExpr(r.typ, int64(0)), cp.resolveUnknown(r, OIDInt4), a.Location)
		}
		l, err := cp.compileExpr(a.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		r, err := cp.compileExpr(a.Rexpr, sc)
		if err != nil {
			return nil, err
		}
		return cp.binaryOp(op, l, r, a.Location)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		l, err := cp.compileExpr(a.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		r, err := cp.compileExpr(a.Rexpr, sc)
		if err != nil {
			return nil, err
		}
		if r.typ == OIDUnknown || r.param > 0 {
			elem := l.typ
			if elem == OIDUnknown {
				elem = OIDText
			}
			r = cp.resolveUnknown(r, arrayTypeOf(elem))
		}
		if l.typ == OIDUnknown {
			l = cp.resolveUnknown(l, elemType(r.typ))
		}
		return cp.quantified(op, l, a.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL, func(c *evalCtx) ([]any, error) {
			v, err := r.eval(c)
			if err != nil || v == nil {
				return nil, err
			}
			arr, ok := v.([]any)
			if !ok {
				return nil, &Error{Code: "42809", Message: "op ANY/ALL (array) requires array on right side"}
			}
			return arr, nil
		}, elemType(r.typ), a.Location)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, err := cp.compileExpr(a.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		r, err := cp.compileExpr(a.Rexpr, sc)
		if err != nil {
			return nil, err
		}
		l, r = cp.unify(l, r)
		distinct := a.Kind == pg.A_Expr_Kind_AEXPR_DISTINCT
		return &expr{typ: OIDBool, typmod: -1, name: "?column?", eval: func(c *evalCtx) (any, error) {
			x, err := l.eval(c)
			if err != nil {
				return nil, err
			}
			y, err := r.eval(c)
			if err != nil {
				return nil, err
			}
			same := x == nil && y == nil || x != nil && y != nil && compareValues(x, y) == 0
			return same != distinct, nil
		}}, nil
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		l, err := cp.compileExpr(a.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		r, err := cp.compileExpr(a.Rexpr, sc)
		if err != nil {
			return nil, err
		}
		l, r = cp.unify(l, r)
		return &expr{typ: l.typ, typmod: l.typmod, name: "nullif", eval: func(c *evalCtx) (any, error) {
			x, err := l.eval(c)
			if err != nil || x == nil {
				return x, err
			}
			y, err := r.eval(c)
			if err != nil {
				return nil, err
			}
			if y != nil && compareValues(x, y) == 0 {
				return nil, nil
			}
			return x, nil
		}}, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		l, err := cp.compileExpr(a.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		var items []*expr
		for _, item := range a.Rexpr.GetList().GetItems() {
			e, err := cp.compileExpr(item, sc)
			if err != nil {
				return nil, err
			}
			items = append(items, e)
		}
		for i := range items {
			if l.typ != OIDUnknown {
				items[i] = cp.resolveUnknown(items[i], l.typ)
			} else if items[i].typ != OIDUnknown {
				l = cp.resolveUnknown(l, items[i].typ)
			}
		}
		if l.typ == OIDUnknown {
			l = cp.resolveUnknown(l, OIDText)
		}
		notIn := op == "<>"
		return cp.quantified(op, l, notIn, func(c *evalCtx) ([]any, error) {
			vals := make([]any, len(items))
			for i, it := range items {
				v, err := it.eval(c)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			return vals, nil
		}, l.typ, a.Location)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		l, err := cp.compileExpr(a.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		r, err := cp.compileExpr(a.Rexpr, sc)
		if err != nil {
			return nil, err
		}
		return cp.binaryOp(op, cp.resolveUnknown(l, OIDText), cp.resolveUnknown(r, OIDText), a.Location)
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN, pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		l, err := cp.compileExpr(a.Lexpr, sc)
		if err != nil {
			return nil, err
		}
		bounds := a.Rexpr.GetList().GetItems()
		if len(bounds) != 2 {
			return nil, cp.errAt(CodeSyntaxError, a.Location, "BETWEEN needs two bounds")
		}
		lo, err := cp.compileExpr(bounds[0], sc)
		if err != nil {
			return nil, err
		}
		hi, err := cp.compileExpr(bounds[1], sc)
		if err != nil {
			return nil, err
		}
		ge, err := cp.binaryOp(">=", l, lo, a.Location)
		if err != nil {
			return nil, err
		}
		le, err := cp.binaryOp("<=", l, hi, a.Location)
		if err != nil {
			return nil, err
		}
		sym := a.Kind == pg.A_Expr_Kind_AEXPR_BETWEEN_SYM || a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM
		not := a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN || a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM
		both := andExpr([]*expr{ge, le})
		if sym {
			ge2, _ := cp.binaryOp(">=", l, hi, a.Location)
			le2, _ := cp.binaryOp("<=", l, lo, a.Location)
			both = orExpr([]*expr{both, andExpr([]*expr{ge2, le2})})
		}
		if not {
			return notExpr(both), nil
		}
		return both, nil
	}
	return nil, cp.errAt(CodeFeatureUnsupported, a.Location, "operator %s is not supported by Sluice's Postgres catalog", op)
}

// quantified is l op ANY/ALL (values): SQL's rules for NULLs among them.
func (cp *compiler) quantified(op string, l *expr, all bool, values func(c *evalCtx) ([]any, error), elem uint32, loc int32) (*expr, error) {
	switch op {
	case "=", "<>", "!=", "<", ">", "<=", ">=", "~", "~*", "!~", "!~*", "~~", "~~*", "!~~", "!~~*":
	default:
		return nil, cp.errAt(CodeUndefinedFunction, loc, "operator does not exist: %s %s %s", formatType(l.typ, -1), op, formatType(elem, -1))
	}
	return &expr{typ: OIDBool, typmod: -1, name: "?column?", eval: func(c *evalCtx) (any, error) {
		x, err := l.eval(c)
		if err != nil {
			return nil, err
		}
		vals, err := values(c)
		if err != nil {
			return nil, err
		}
		if vals == nil {
			return nil, nil
		}
		sawNull := false
		for _, v := range vals {
			if x == nil || v == nil {
				sawNull = true
				continue
			}
			res, err := compareOp(c, op, x, v, l.typ, elem)
			if err != nil {
				return nil, err
			}
			if res != all {
				return res, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return all, nil
	}}, nil
}

// compareOp applies a comparison or match operator to two non-NULL values.
func compareOp(c *evalCtx, op string, a, b any, at, bt uint32) (bool, error) {
	switch op {
	case "=":
		return compareValues(a, b) == 0, nil
	case "<>", "!=":
		return compareValues(a, b) != 0, nil
	case "<":
		return compareValues(a, b) < 0, nil
	case ">":
		return compareValues(a, b) > 0, nil
	case "<=":
		return compareValues(a, b) <= 0, nil
	case ">=":
		return compareValues(a, b) >= 0, nil
	case "~", "~*", "!~", "!~*", "~~", "~~*", "!~~", "!~~*":
		pattern := c.x.textOf(b, bt)
		if strings.Contains(op, "~~") {
			pattern = likeRegex(pattern)
		}
		re, err := compileRegex(pattern, strings.HasSuffix(op, "*"))
		if err != nil {
			return false, err
		}
		return re.MatchString(c.x.textOf(a, at)) != strings.HasPrefix(op, "!"), nil
	}
	return false, &Error{Code: CodeUndefinedFunction, Message: fmt.Sprintf("operator does not exist: %s", op)}
}

func andExpr(args []*expr) *expr {
	return &expr{typ: OIDBool, typmod: -1, name: "?column?", eval: func(c *evalCtx) (any, error) {
		unknown := false
		for _, a := range args {
			v, err := a.eval(c)
			if err != nil {
				return nil, err
			}
			t, known := truth(v)
			if known && !t {
				return false, nil
			}
			if !known {
				unknown = true
			}
		}
		if unknown {
			return nil, nil
		}
		return true, nil
	}}
}

func orExpr(args []*expr) *expr {
	return &expr{typ: OIDBool, typmod: -1, name: "?column?", eval: func(c *evalCtx) (any, error) {
		unknown := false
		for _, a := range args {
			v, err := a.eval(c)
			if err != nil {
				return nil, err
			}
			t, known := truth(v)
			if known && t {
				return true, nil
			}
			if !known {
				unknown = true
			}
		}
		if unknown {
			return nil, nil
		}
		return false, nil
	}}
}

func notExpr(a *expr) *expr {
	return &expr{typ: OIDBool, typmod: -1, name: "?column?", eval: func(c *evalCtx) (any, error) {
		v, err := a.eval(c)
		if err != nil {
			return nil, err
		}
		t, known := truth(v)
		if !known {
			return nil, nil
		}
		return !t, nil
	}}
}

func (cp *compiler) compileBoolExpr(b *pg.BoolExpr, sc *scope) (*expr, error) {
	var args []*expr
	for _, n := range b.Args {
		e, err := cp.compileExpr(n, sc)
		if err != nil {
			return nil, err
		}
		args = append(args, cp.resolveUnknown(e, OIDBool))
	}
	switch b.Boolop {
	case pg.BoolExprType_AND_EXPR:
		return andExpr(args), nil
	case pg.BoolExprType_OR_EXPR:
		return orExpr(args), nil
	}
	return notExpr(args[0]), nil
}

func (cp *compiler) compileBooleanTest(bt *pg.BooleanTest, sc *scope) (*expr, error) {
	arg, err := cp.compileExpr(bt.Arg, sc)
	if err != nil {
		return nil, err
	}
	kind := bt.Booltesttype
	return &expr{typ: OIDBool, typmod: -1, name: "?column?", eval: func(c *evalCtx) (any, error) {
		v, err := arg.eval(c)
		if err != nil {
			return nil, err
		}
		t, known := truth(v)
		switch kind {
		case pg.BoolTestType_IS_TRUE:
			return known && t, nil
		case pg.BoolTestType_IS_NOT_TRUE:
			return !(known && t), nil
		case pg.BoolTestType_IS_FALSE:
			return known && !t, nil
		case pg.BoolTestType_IS_NOT_FALSE:
			return !(known && !t), nil
		case pg.BoolTestType_IS_UNKNOWN:
			return !known, nil
		}
		return known, nil
	}}, nil
}

// typeOfName resolves a TypeName node to a type oid and typmod.
func (cp *compiler) typeOfName(tn *pg.TypeName) (uint32, int32, error) {
	var names []string
	for _, n := range tn.Names {
		names = append(names, strVal(n))
	}
	name := names[len(names)-1]
	if len(names) > 1 && names[0] != "pg_catalog" {
		if names[0] == "information_schema" {
			// information_schema's domains are their base types here.
			switch name {
			case "sql_identifier":
				name = "name"
			case "cardinal_number":
				name = "int4"
			default:
				name = "varchar"
			}
		} else {
			return 0, 0, cp.errAt("42704", tn.Location, "type %q does not exist", strings.Join(names, "."))
		}
	}
	oid, ok := lookupTypeName(name)
	if !ok {
		return 0, 0, cp.errAt("42704", tn.Location, "type %q does not exist", name)
	}
	typmod := int32(-1)
	var mods []int32
	for _, m := range tn.Typmods {
		if c := m.GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
				mods = append(mods, iv.Ival.Ival)
			}
		}
	}
	switch oid {
	case OIDNumeric:
		if len(mods) == 2 {
			typmod = mods[0]<<16 | mods[1] + 4
		} else if len(mods) == 1 {
			typmod = mods[0]<<16 + 4
		}
	case OIDVarchar, OIDBpchar:
		if len(mods) == 1 {
			typmod = mods[0] + 4
		}
	}
	if len(tn.ArrayBounds) > 0 {
		oid = arrayTypeOf(oid)
		typmod = -1
	}
	return oid, typmod, nil
}

func (cp *compiler) compileTypeCast(tc *pg.TypeCast, sc *scope) (*expr, error) {
	arg, err := cp.compileExpr(tc.Arg, sc)
	if err != nil {
		return nil, err
	}
	to, typmod, err := cp.typeOfName(tc.TypeName)
	if err != nil {
		return nil, err
	}
	// A cast keeps its argument's name unless that is only a literal's
	// or another cast's: then the type names the column, as in Postgres.
	name, weak := arg.name, arg.weak
	if arg.weak || arg.lit != nil || arg.name == "?column?" || arg.name == "" {
		name, weak = formatNameForCast(to), true
	}
	if arg.param > 0 && cp.params[arg.param-1] == 0 {
		cp.params[arg.param-1] = to
		return &expr{typ: to, typmod: typmod, eval: arg.eval, name: name, weak: weak}, nil
	}
	from := arg.typ
	// A literal that does not read as the type is the literal's fault.
	loc := tc.Location
	if c := tc.Arg.GetAConst(); c != nil {
		loc = c.Location
	}
	return &expr{typ: to, typmod: typmod, name: name, weak: weak, eval: func(c *evalCtx) (any, error) {
		v, err := arg.eval(c)
		if err != nil {
			return nil, err
		}
		out, err := c.x.cast(v, from, to)
		if e, ok := err.(*Error); ok && e.Position == 0 {
			e.Position = cp.position(loc)
		}
		if str, ok := out.(string); ok && (to == OIDBpchar || to == OIDVarchar) && typmod >= 4 {
			if r := []rune(str); len(r) > int(typmod-4) {
				out = string(r[:typmod-4])
			}
		}
		return out, err
	}}, nil
}

// formatNameForCast is the column name of a cast of a constant: the
// type's name, as Postgres names '1'::int4 "int4".
func formatNameForCast(oid uint32) string {
	if t := pgTypes[oid]; t != nil {
		if t.elem != 0 && t.category == 'A' {
			return pgTypes[t.elem].name
		}
		return t.name
	}
	return "?column?"
}

func (cp *compiler) compileCase(ce *pg.CaseExpr, sc *scope) (*expr, error) {
	var arg *expr
	var err error
	if ce.Arg != nil {
		if arg, err = cp.compileExpr(ce.Arg, sc); err != nil {
			return nil, err
		}
	}
	type when struct{ cond, result *expr }
	var whens []when
	var results []*expr
	for _, w := range ce.Args {
		cw := w.GetCaseWhen()
		cond, err := cp.compileExpr(cw.Expr, sc)
		if err != nil {
			return nil, err
		}
		if arg != nil {
			if cond, err = cp.binaryOp("=", arg, cond, cw.Location); err != nil {
				return nil, err
			}
		}
		res, err := cp.compileExpr(cw.Result, sc)
		if err != nil {
			return nil, err
		}
		whens = append(whens, when{cond, res})
		results = append(results, res)
	}
	def := constExpr(OIDUnknown, nil)
	if ce.Defresult != nil {
		if def, err = cp.compileExpr(ce.Defresult, sc); err != nil {
			return nil, err
		}
	}
	results = append(results, def)
	typ, typmod := cp.commonType(results)
	for i := range whens {
		whens[i].result = cp.resolveUnknown(whens[i].result, typ)
	}
	// Postgres names a CASE after its ELSE branch when that has a name
	// of its own (a column, a function).
	name, weak := "case", true
	if def.name != "" && def.name != "?column?" && !def.weak {
		name, weak = def.name, false
	}
	def = cp.resolveUnknown(def, typ)
	return &expr{typ: typ, typmod: typmod, name: name, weak: weak, eval: func(c *evalCtx) (any, error) {
		for _, w := range whens {
			v, err := w.cond.eval(c)
			if err != nil {
				return nil, err
			}
			if t, known := truth(v); known && t {
				return w.result.eval(c)
			}
		}
		return def.eval(c)
	}}, nil
}

// commonType is the type of a CASE, COALESCE or UNION column: the first
// typed branch's, text when all are untyped literals.
func (cp *compiler) commonType(es []*expr) (uint32, int32) {
	var typ uint32
	var typmod int32 = -1
	for _, e := range es {
		if e.typ != OIDUnknown && e.typ != 0 {
			if typ == 0 {
				typ, typmod = e.typ, e.typmod
			} else if numericRank(e.typ) > numericRank(typ) && numericRank(typ) > 0 {
				typ, typmod = e.typ, -1
			}
		}
	}
	if typ == 0 {
		typ = OIDText
	}
	return typ, typmod
}

func (cp *compiler) compileVariadic(name string, nodes []*pg.Node, sc *scope, f func([]any) any) (*expr, error) {
	var args []*expr
	for _, n := range nodes {
		e, err := cp.compileExpr(n, sc)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	typ, typmod := cp.commonType(args)
	for i := range args {
		args[i] = cp.resolveUnknown(args[i], typ)
	}
	lazy := name == "coalesce"
	return &expr{typ: typ, typmod: typmod, name: name, eval: func(c *evalCtx) (any, error) {
		vals := make([]any, 0, len(args))
		for _, a := range args {
			v, err := a.eval(c)
			if err != nil {
				return nil, err
			}
			if lazy && v != nil {
				return v, nil
			}
			vals = append(vals, v)
		}
		return f(vals), nil
	}}, nil
}

func (cp *compiler) compileArray(ae *pg.A_ArrayExpr, sc *scope) (*expr, error) {
	var elems []*expr
	for _, n := range ae.Elements {
		e, err := cp.compileExpr(n, sc)
		if err != nil {
			return nil, err
		}
		elems = append(elems, e)
	}
	typ, _ := cp.commonType(elems)
	for i := range elems {
		elems[i] = cp.resolveUnknown(elems[i], typ)
	}
	return &expr{typ: arrayTypeOf(typ), typmod: -1, name: "array", eval: func(c *evalCtx) (any, error) {
		out := make([]any, len(elems))
		for i, e := range elems {
			v, err := e.eval(c)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}}, nil
}

func (cp *compiler) compileIndirection(ind *pg.A_Indirection, sc *scope) (*expr, error) {
	cur, err := cp.compileExpr(ind.Arg, sc)
	if err != nil {
		return nil, err
	}
	for _, step := range ind.Indirection {
		switch {
		case step.GetAIndices() != nil:
			idx := step.GetAIndices()
			if idx.IsSlice {
				return nil, &Error{Code: CodeFeatureUnsupported, Message: "array slices are not supported by Sluice's Postgres catalog"}
			}
			sub, err := cp.compileExpr(idx.Uidx, sc)
			if err != nil {
				return nil, err
			}
			sub = cp.resolveUnknown(sub, OIDInt4)
			arr := cur
			// int2vector and oidvector count from 0; arrays from 1.
			base := int64(1)
			if arr.typ == OIDInt2Vector || arr.typ == OIDOidVector {
				base = 0
			}
			cur = &expr{typ: elemType(arr.typ), typmod: -1, name: arr.name, eval: func(c *evalCtx) (any, error) {
				v, err := arr.eval(c)
				if err != nil || v == nil {
					return nil, err
				}
				i, err := sub.eval(c)
				if err != nil || i == nil {
					return nil, err
				}
				n, err := toInt(i, OIDInt4)
				if err != nil {
					return nil, err
				}
				a, _ := v.([]any)
				if n-base < 0 || n-base >= int64(len(a)) {
					return nil, nil
				}
				return a[n-base], nil
			}}
		case step.GetString_() != nil:
			field := strVal(step)
			rec := cur
			names, types := recordFields(rec)
			pos := -1
			for i, n := range names {
				if n == field {
					pos = i
				}
			}
			if pos < 0 {
				return nil, &Error{Code: CodeUndefinedColumn, Message: fmt.Sprintf("column %q not found in data type %s", field, formatType(rec.typ, -1))}
			}
			cur = &expr{typ: types[pos], typmod: -1, name: field, eval: func(c *evalCtx) (any, error) {
				v, err := rec.eval(c)
				if err != nil || v == nil {
					return nil, err
				}
				fields, ok := v.([]any)
				if !ok || pos >= len(fields) {
					return nil, &Error{Code: "42809", Message: fmt.Sprintf("column %q not found in data type %s", field, formatType(rec.typ, -1))}
				}
				return fields[pos], nil
			}}
		default:
			return nil, &Error{Code: CodeFeatureUnsupported, Message: "this indirection is not supported by Sluice's Postgres catalog"}
		}
	}
	return cur, nil
}

// recordFields are the field names and types of a record-typed
// expression (a composite result such as _pg_expandarray's).
func recordFields(e *expr) ([]string, []uint32) {
	names := make([]string, len(e.fields))
	types := make([]uint32, len(e.fields))
	for i, f := range e.fields {
		names[i], types[i] = f.name, f.typ
	}
	return names, types
}

func (cp *compiler) compileSQLValueFunction(f *pg.SQLValueFunction) (*expr, error) {
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE, pg.SQLValueFunctionOp_SVFOP_USER, pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		names := map[pg.SQLValueFunctionOp]string{
			pg.SQLValueFunctionOp_SVFOP_CURRENT_USER: "current_user", pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE: "current_role",
			pg.SQLValueFunctionOp_SVFOP_USER: "user", pg.SQLValueFunctionOp_SVFOP_SESSION_USER: "session_user",
		}
		return &expr{typ: OIDName, typmod: -1, name: names[f.Op], eval: func(c *evalCtx) (any, error) { return c.x.sess.user, nil }}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return &expr{typ: OIDName, typmod: -1, name: "current_catalog", eval: func(c *evalCtx) (any, error) { return c.x.sess.database, nil }}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return &expr{typ: OIDName, typmod: -1, name: "current_schema", eval: func(c *evalCtx) (any, error) { return "public", nil }}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return &expr{typ: OIDTimestamptz, typmod: -1, name: "current_timestamp", eval: func(c *evalCtx) (any, error) { return c.x.now, nil }}, nil
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return &expr{typ: OIDTimestamp, typmod: -1, name: "localtimestamp", eval: func(c *evalCtx) (any, error) { return c.x.now, nil }}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return &expr{typ: OIDDate, typmod: -1, name: "current_date", eval: func(c *evalCtx) (any, error) { return c.x.now.Truncate(24 * time.Hour), nil }}, nil
	}
	return nil, cp.errAt(CodeFeatureUnsupported, f.Location, "this SQL value function is not supported by Sluice's Postgres catalog")
}
