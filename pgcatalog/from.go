package pgcatalog

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// compileFrom compiles a FROM list: its items joined, on the WHERE
// clause's column = column conditions between them where it has some
// (the WHERE clause itself is still applied to the joined rows).
func (cp *compiler) compileFrom(items []*pg.Node, outer *scope, where *pg.Node) (*source, error) {
	var acc *source
	for _, item := range items {
		if acc != nil && isLateral(item) {
			r, err := cp.compileFromItem(item, &scope{cols: acc.cols, outer: outer})
			if err != nil {
				return nil, err
			}
			acc = lateralJoin(acc, r, pg.JoinType_JOIN_INNER, nil)
			continue
		}
		s, err := cp.compileFromItem(item, outer)
		if err != nil {
			return nil, err
		}
		if acc == nil {
			acc = s
			continue
		}
		acc = joinSources(acc, s, pg.JoinType_JOIN_INNER, nil, cp.equiKeys(where, acc, s))
	}
	return acc, nil
}

// isLateral reports whether a FROM item may read the items before it: a
// function call (always, in Postgres) or a LATERAL subquery.
func isLateral(n *pg.Node) bool {
	if n.GetRangeFunction() != nil {
		return true
	}
	if rs := n.GetRangeSubselect(); rs != nil {
		return rs.Lateral
	}
	return false
}

// lateralJoin joins each left row with the rows r gives for it (r was
// compiled in a scope of l's columns).
func lateralJoin(l, r *source, kind pg.JoinType, cond *expr) *source {
	lw, rw := len(l.cols), len(r.cols)
	cols := append(append([]scopeCol(nil), l.cols...), r.cols...)
	return &source{cols: cols, rows: func(outer *evalCtx) ([][]any, error) {
		lrows, err := l.rows(outer)
		if err != nil {
			return nil, err
		}
		var out [][]any
		for _, lr := range lrows {
			lr = padRow(lr, lw)
			rrows, err := r.rows(&evalCtx{row: lr, outer: outer, x: outer.x})
			if err != nil {
				return nil, err
			}
			matched := false
			for _, rr := range rrows {
				row := append(append(make([]any, 0, lw+rw), lr...), padRow(rr, rw)...)
				if cond != nil {
					v, err := cond.eval(&evalCtx{row: row, outer: outer, x: outer.x})
					if err != nil {
						return nil, err
					}
					if t, known := truth(v); !known || !t {
						continue
					}
				}
				matched = true
				out = append(out, row)
				if len(out) > maxJoinRows {
					return nil, &Error{Code: "54000", Message: fmt.Sprintf("a join of more than %d rows: too large for Sluice's Postgres catalog", maxJoinRows)}
				}
			}
			if !matched && kind == pg.JoinType_JOIN_LEFT {
				out = append(out, append(append(make([]any, 0, lw+rw), lr...), make([]any, rw)...))
			}
			if err := outer.x.ctx.Err(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}}
}

// equiKey is one column = column condition of a join: l reads the left
// rows, r the right ones.
type equiKey struct{ l, r *expr }

// conjuncts flattens a condition's ANDs.
func conjuncts(n *pg.Node) []*pg.Node {
	if n == nil {
		return nil
	}
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_AND_EXPR {
		var out []*pg.Node
		for _, a := range b.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []*pg.Node{n}
}

// bareColumn is the column reference under casts and collations, if the
// expression is one.
func bareColumn(n *pg.Node) *pg.ColumnRef {
	for n != nil {
		switch {
		case n.GetColumnRef() != nil:
			return n.GetColumnRef()
		case n.GetTypeCast() != nil:
			n = n.GetTypeCast().Arg
		case n.GetCollateClause() != nil:
			n = n.GetCollateClause().Arg
		default:
			return nil
		}
	}
	return nil
}

// equiKeys are the conditions of cond that compare a column of l with a
// column of r: a hash join on them finds the matching pairs without
// trying every pair, which matters once there are many sources (JDBC's
// getColumns joins pg_class, pg_attribute and pg_type).
func (cp *compiler) equiKeys(cond *pg.Node, l, r *source) []equiKey {
	var keys []equiKey
	only := func(cr *pg.ColumnRef, s *source) *expr {
		e, err := cp.compileColumnRef(cr, &scope{cols: s.cols})
		if err != nil {
			return nil
		}
		return e
	}
	for _, c := range conjuncts(cond) {
		a := c.GetAExpr()
		if a == nil || a.Kind != pg.A_Expr_Kind_AEXPR_OP || nameOf(a.Name) != "=" {
			continue
		}
		x, y := bareColumn(a.Lexpr), bareColumn(a.Rexpr)
		if x == nil || y == nil {
			continue
		}
		if lx, ry := only(x, l), only(y, r); lx != nil && ry != nil && only(x, r) == nil && only(y, l) == nil {
			keys = append(keys, equiKey{lx, ry})
		} else if ly, rx := only(y, l), only(x, r); ly != nil && rx != nil && only(y, r) == nil && only(x, l) == nil {
			keys = append(keys, equiKey{ly, rx})
		}
	}
	return keys
}

// hashKey is a join key's map key: numbers of either kind alike, as
// compareValues compares them; ok false when a part is NULL (it matches
// nothing).
func hashKey(c *evalCtx, keys []*expr) (string, bool, error) {
	var b strings.Builder
	for _, k := range keys {
		v, err := k.eval(c)
		if err != nil {
			return "", false, err
		}
		switch x := v.(type) {
		case nil:
			return "", false, nil
		case int64:
			b.WriteString("n" + strconv.FormatInt(x, 10))
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1e18 {
				b.WriteString("n" + strconv.FormatInt(int64(x), 10))
			} else {
				b.WriteString("f" + strconv.FormatFloat(x, 'g', -1, 64))
			}
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				b.WriteString("n" + strconv.FormatInt(n, 10))
			} else {
				b.WriteString("s" + x)
			}
		default:
			fmt.Fprintf(&b, "%T%v", v, v)
		}
		b.WriteByte(0)
	}
	return b.String(), true, nil
}

func aliasCols(cols []scopeCol, alias *pg.Alias, rel string) []scopeCol {
	out := make([]scopeCol, len(cols))
	copy(out, cols)
	if alias != nil && alias.Aliasname != "" {
		rel = alias.Aliasname
		for i, n := range alias.Colnames {
			if i < len(out) {
				out[i].name = strVal(n)
			}
		}
	}
	for i := range out {
		out[i].rel = rel
	}
	return out
}

func (cp *compiler) compileFromItem(n *pg.Node, outer *scope) (*source, error) {
	switch {
	case n.GetRangeVar() != nil:
		return cp.compileRangeVar(n.GetRangeVar())
	case n.GetJoinExpr() != nil:
		return cp.compileJoin(n.GetJoinExpr(), outer)
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		p, err := cp.compileQuery(rs.Subquery, outer)
		if err != nil {
			return nil, err
		}
		rel := ""
		if rs.Alias != nil {
			rel = rs.Alias.Aliasname
		}
		return &source{cols: aliasCols(p.cols, rs.Alias, rel), rows: p.run}, nil
	case n.GetRangeFunction() != nil:
		return cp.compileRangeFunction(n.GetRangeFunction(), outer)
	}
	return nil, &Error{Code: CodeFeatureUnsupported, Message: fmt.Sprintf("FROM item %s is not supported by Sluice's Postgres catalog", nodeKind(n))}
}

func (cp *compiler) compileRangeVar(rv *pg.RangeVar) (*source, error) {
	if rv.Schemaname == "" {
		for i := len(cp.ctes) - 1; i >= 0; i-- {
			if p, ok := cp.ctes[i][rv.Relname]; ok {
				return &source{cols: aliasCols(p.cols, rv.Alias, rv.Relname), rows: p.run}, nil
			}
		}
	}
	r := cp.lookupRelation(rv)
	if r == nil {
		name := rv.Relname
		if rv.Schemaname != "" {
			name = rv.Schemaname + "." + name
		}
		return nil, cp.errAt(CodeUndefinedTable, rv.Location, "relation %q does not exist", name)
	}
	if r.src != nil {
		return nil, cp.errAt(CodeFeatureUnsupported, rv.Location, "%s is a Sluice %s: query it in Sluice's SQL, not through the Postgres catalog", r.name, r.src.Kind)
	}
	cols := make([]scopeCol, len(r.cols))
	for i, c := range r.cols {
		cols[i] = scopeCol{name: c.name, typ: c.typ, typmod: c.typmod}
	}
	return &source{cols: aliasCols(cols, rv.Alias, rv.Relname), rows: func(outer *evalCtx) ([][]any, error) {
		return outer.x.relationRows(r), nil
	}}, nil
}

// lookupRelation finds a FROM name among the catalog relations (the
// user's relations too: the caller decides what they mean here).
func (cp *compiler) lookupRelation(rv *pg.RangeVar) *vrel {
	schema := rv.Schemaname
	if schema == "" {
		if r := systemByName["pg_catalog."+rv.Relname]; r != nil {
			return r
		}
		schema = "public"
	}
	if schema == "public" {
		// The user's relations exist only in a snapshot; a plain lookup
		// by name is enough to say what the name is.
		cat := newCatalog(cp.sess)
		return cat.lookup("public", rv.Relname)
	}
	return systemByName[schema+"."+rv.Relname]
}

// relationRows are a catalog relation's rows in this execution's
// snapshot, built once per execution.
func (x *execCtx) relationRows(r *vrel) [][]any {
	if r.rows == nil {
		return nil
	}
	if x.cache == nil {
		x.cache = map[*vrel][][]any{}
	}
	rows, ok := x.cache[r]
	if !ok {
		rows = r.rows(x.cat)
		x.cache[r] = rows
	}
	return rows
}

func (cp *compiler) compileJoin(j *pg.JoinExpr, outer *scope) (*source, error) {
	l, err := cp.compileFromItem(j.Larg, outer)
	if err != nil {
		return nil, err
	}
	lateral := isLateral(j.Rarg) && (j.Jointype == pg.JoinType_JOIN_INNER || j.Jointype == pg.JoinType_JOIN_LEFT)
	rscope := outer
	if lateral {
		rscope = &scope{cols: l.cols, outer: outer}
	}
	r, err := cp.compileFromItem(j.Rarg, rscope)
	if err != nil {
		return nil, err
	}
	var using []string
	for _, u := range j.UsingClause {
		using = append(using, strVal(u))
	}
	if j.IsNatural {
		for _, lc := range l.cols {
			for _, rc := range r.cols {
				if lc.name == rc.name && !lc.hidden && !rc.hidden {
					using = append(using, lc.name)
				}
			}
		}
	}
	combined := append(append([]scopeCol(nil), l.cols...), r.cols...)
	var cond *expr
	if len(using) > 0 {
		var eqs []*expr
		for _, name := range using {
			li, ri := -1, -1
			for i, c := range l.cols {
				if c.name == name && !c.hidden {
					li = i
				}
			}
			for i, c := range r.cols {
				if c.name == name && !c.hidden {
					ri = i
				}
			}
			if li < 0 || ri < 0 {
				return nil, &Error{Code: CodeUndefinedColumn, Message: fmt.Sprintf("column %q specified in USING clause does not exist in both tables", name)}
			}
			// The merged column is the left one; the right one is
			// reachable only qualified.
			combined[len(l.cols)+ri].hidden = true
			lpos, rpos := li, len(l.cols)+ri
			eqs = append(eqs, &expr{typ: OIDBool, eval: func(c *evalCtx) (any, error) {
				a, b := c.row[lpos], c.row[rpos]
				if a == nil || b == nil {
					return nil, nil
				}
				return compareValues(a, b) == 0, nil
			}})
		}
		cond = andExpr(eqs)
	} else if j.Quals != nil {
		sc := &scope{cols: combined, outer: outer}
		q, err := cp.compileExpr(j.Quals, sc)
		if err != nil {
			return nil, err
		}
		cond = cp.resolveUnknown(q, OIDBool)
	}
	var s *source
	if lateral {
		s = lateralJoin(l, r, j.Jointype, cond)
	} else {
		s = joinSources(l, r, j.Jointype, cond, cp.equiKeys(j.Quals, l, r))
	}
	s.cols = combined
	if j.Alias != nil && j.Alias.Aliasname != "" {
		s.cols = aliasCols(s.cols, j.Alias, j.Alias.Aliasname)
	}
	return s, nil
}

// maxJoinRows bounds a join's result, so that a careless cross join of
// catalog relations fails alone instead of exhausting the server.
const maxJoinRows = 1_000_000

// joinSources joins two FROM items: by hashing the right rows on keys
// when the condition has column = column parts, else by trying each pair.
func joinSources(l, r *source, kind pg.JoinType, cond *expr, keys []equiKey) *source {
	lw, rw := len(l.cols), len(r.cols)
	cols := append(append([]scopeCol(nil), l.cols...), r.cols...)
	lkeys := make([]*expr, len(keys))
	rkeys := make([]*expr, len(keys))
	for i, k := range keys {
		lkeys[i], rkeys[i] = k.l, k.r
	}
	return &source{cols: cols, rows: func(outer *evalCtx) ([][]any, error) {
		lrows, err := l.rows(outer)
		if err != nil {
			return nil, err
		}
		rrows, err := r.rows(outer)
		if err != nil {
			return nil, err
		}
		all := make([]int, len(rrows))
		for i := range all {
			all[i] = i
		}
		var buckets map[string][]int
		if len(keys) > 0 {
			buckets = map[string][]int{}
			for ri, rr := range rrows {
				k, ok, err := hashKey(&evalCtx{row: padRow(rr, rw), outer: outer, x: outer.x}, rkeys)
				if err != nil {
					return nil, err
				}
				if ok {
					buckets[k] = append(buckets[k], ri)
				}
			}
		}
		var out [][]any
		rightMatched := make([]bool, len(rrows))
		for _, lr := range lrows {
			matched := false
			candidates := all
			if buckets != nil {
				k, ok, err := hashKey(&evalCtx{row: padRow(lr, lw), outer: outer, x: outer.x}, lkeys)
				if err != nil {
					return nil, err
				}
				candidates = nil
				if ok {
					candidates = buckets[k]
				}
			}
			for _, ri := range candidates {
				rr := rrows[ri]
				row := make([]any, 0, lw+rw)
				row = append(append(row, padRow(lr, lw)...), padRow(rr, rw)...)
				if cond != nil {
					v, err := cond.eval(&evalCtx{row: row, outer: outer, x: outer.x})
					if err != nil {
						return nil, err
					}
					if t, known := truth(v); !known || !t {
						continue
					}
				}
				matched = true
				rightMatched[ri] = true
				out = append(out, row)
				if len(out) > maxJoinRows {
					return nil, &Error{Code: "54000", Message: fmt.Sprintf("a join of more than %d rows: too large for Sluice's Postgres catalog", maxJoinRows)}
				}
			}
			if !matched && (kind == pg.JoinType_JOIN_LEFT || kind == pg.JoinType_JOIN_FULL) {
				out = append(out, append(append(make([]any, 0, lw+rw), padRow(lr, lw)...), make([]any, rw)...))
			}
			if err := outer.x.ctx.Err(); err != nil {
				return nil, err
			}
		}
		if kind == pg.JoinType_JOIN_RIGHT || kind == pg.JoinType_JOIN_FULL {
			for ri, rr := range rrows {
				if !rightMatched[ri] {
					out = append(out, append(make([]any, lw, lw+rw), padRow(rr, rw)...))
				}
			}
		}
		return out, nil
	}}
}

func padRow(r []any, w int) []any {
	if len(r) >= w {
		return r[:w]
	}
	return append(append([]any(nil), r...), make([]any, w-len(r))...)
}

func (cp *compiler) compileRangeFunction(rf *pg.RangeFunction, outer *scope) (*source, error) {
	if len(rf.Functions) != 1 {
		return nil, &Error{Code: CodeFeatureUnsupported, Message: "ROWS FROM with several functions is not supported by Sluice's Postgres catalog"}
	}
	var fc *pg.FuncCall
	if items := rf.Functions[0].GetList().GetItems(); len(items) > 0 {
		fc = items[0].GetFuncCall()
	}
	if fc == nil {
		return nil, &Error{Code: CodeFeatureUnsupported, Message: "this FROM function is not supported by Sluice's Postgres catalog"}
	}
	sc := childScope(outer)
	name := nameOf(fc.Funcname)
	var args []*expr
	for _, a := range fc.Args {
		e, err := cp.compileExpr(a, sc)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	srf, ok := setFunctions[name]
	var cols []scopeCol
	var gen func(c *evalCtx, vals []any) ([][]any, error)
	if ok {
		var err error
		cols, gen, err = srf(cp, args, fc.Location)
		if err != nil {
			return nil, err
		}
	} else {
		e, err := cp.compileFuncCall(fc, sc)
		if err != nil {
			return nil, err
		}
		cols = []scopeCol{{name: name, typ: e.typ, typmod: e.typmod}}
		gen = func(c *evalCtx, _ []any) ([][]any, error) {
			v, err := e.eval(c)
			return [][]any{{v}}, err
		}
		args = nil
	}
	if len(cols) == 1 {
		cols[0].name = name
		if rf.Alias != nil && rf.Alias.Aliasname != "" && len(rf.Alias.Colnames) == 0 {
			cols[0].name = rf.Alias.Aliasname
		}
	}
	if rf.Ordinality {
		cols = append(cols, scopeCol{name: "ordinality", typ: OIDInt8, typmod: -1})
	}
	ordinality := rf.Ordinality
	return &source{cols: aliasCols(cols, rf.Alias, name), rows: func(outerCtx *evalCtx) ([][]any, error) {
		c := &evalCtx{outer: outerCtx, x: outerCtx.x}
		vals := make([]any, len(args))
		for i, a := range args {
			v, err := a.eval(c)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		rows, err := gen(c, vals)
		if err != nil {
			return nil, err
		}
		if ordinality {
			for i := range rows {
				rows[i] = append(rows[i], int64(i+1))
			}
		}
		return rows, nil
	}}, nil
}
