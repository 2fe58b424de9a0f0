package pgcatalog

import (
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// plan is a compiled query: its output columns and how to produce its
// rows given the enclosing query's row (for correlated subqueries).
type plan struct {
	cols []scopeCol
	run  func(outer *evalCtx) ([][]any, error)
}

// source is a compiled FROM item.
type source struct {
	cols []scopeCol
	rows func(outer *evalCtx) ([][]any, error)
}

type aggSpec struct {
	name     string
	args     []*expr
	star     bool
	distinct bool
	filter   *expr
	order    []sortKey
	typ      uint32
}

type winSpec struct {
	name      string
	partition []*expr
	order     []sortKey
}

type sortKey struct {
	e          *expr
	out        int // output column index when >= 0
	desc       bool
	nullsFirst bool
}

func (cp *compiler) compileQuery(n *pg.Node, outer *scope) (*plan, error) {
	if s := n.GetSelectStmt(); s != nil {
		return cp.compileSelect(s, outer)
	}
	return nil, &Error{Code: CodeFeatureUnsupported, Message: fmt.Sprintf("%s is not supported by Sluice's Postgres catalog", nodeKind(n))}
}

func childScope(outer *scope) *scope {
	return &scope{outer: outer}
}

func (cp *compiler) compileSelect(stmt *pg.SelectStmt, outer *scope) (*plan, error) {
	if stmt.WithClause != nil {
		ctes := map[string]*plan{}
		for _, n := range stmt.WithClause.Ctes {
			cte := n.GetCommonTableExpr()
			var p *plan
			var err error
			if stmt.WithClause.Recursive && cte.Ctequery.GetSelectStmt() != nil && cte.Ctequery.GetSelectStmt().Op == pg.SetOperation_SETOP_UNION && readsRelation(cte.Ctequery, cte.Ctename) {
				p, err = cp.compileRecursive(cte, outer)
			} else {
				p, err = cp.compileQuery(cte.Ctequery, outer)
			}
			if err != nil {
				return nil, err
			}
			if len(cte.Aliascolnames) > 0 {
				cols := append([]scopeCol(nil), p.cols...)
				for i, a := range cte.Aliascolnames {
					if i < len(cols) {
						cols[i].name = strVal(a)
					}
				}
				p = &plan{cols: cols, run: p.run}
			}
			ctes[cte.Ctename] = p
			// Later CTEs and the body see the earlier ones.
			cp.ctes = append(cp.ctes, map[string]*plan{cte.Ctename: p})
		}
		defer func() { cp.ctes = cp.ctes[:len(cp.ctes)-len(ctes)] }()
	}
	if stmt.Op != pg.SetOperation_SETOP_NONE && stmt.Op != pg.SetOperation_SET_OPERATION_UNDEFINED {
		return cp.compileSetOp(stmt, outer)
	}
	if len(stmt.ValuesLists) > 0 {
		return cp.compileValues(stmt, outer)
	}
	st := &selectState{}
	sc := childScope(outer)
	sc.sel = st
	var src *source
	if len(stmt.FromClause) > 0 {
		var err error
		if src, err = cp.compileFrom(stmt.FromClause, outer, stmt.WhereClause); err != nil {
			return nil, err
		}
		sc.cols = src.cols
	}
	// The select list, with * expanded.
	var targets []*expr
	var names []string
	for _, t := range stmt.TargetList {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			rel := ""
			if len(cr.Fields) > 1 {
				rel = strVal(cr.Fields[len(cr.Fields)-2])
			}
			found := false
			for i, col := range sc.cols {
				if rel == "" && !col.hidden || rel != "" && col.rel == rel {
					i := i
					found = true
					targets = append(targets, &expr{typ: col.typ, typmod: col.typmod, name: col.name, eval: func(c *evalCtx) (any, error) { return c.row[i], nil }})
					names = append(names, col.name)
				}
			}
			if !found && rel != "" {
				return nil, cp.errAt(CodeUndefinedTable, cr.Location, "missing FROM-clause entry for table %q", rel)
			}
			if !found && rel == "" && src == nil {
				return nil, cp.errAt(CodeSyntaxError, cr.Location, "SELECT * with no tables specified is not valid")
			}
			continue
		}
		e, err := cp.compileExpr(rt.Val, sc)
		if err != nil {
			return nil, err
		}
		if e.typ == OIDUnknown {
			e = cp.resolveUnknown(e, OIDText)
			if e.typ == OIDUnknown {
				e.typ = OIDText
			}
		}
		name := e.name
		if rt.Name != "" {
			name = rt.Name
		}
		if name == "" {
			name = "?column?"
		}
		targets = append(targets, e)
		names = append(names, name)
	}
	// Postgres resolves the select list before WHERE; errors come in that order.
	var where *expr
	if stmt.WhereClause != nil {
		st.noAgg = "WHERE"
		w, err := cp.compileExpr(stmt.WhereClause, sc)
		if err != nil {
			return nil, err
		}
		where = cp.resolveUnknown(w, OIDBool)
		st.noAgg = ""
	}
	var groups []*expr
	for _, g := range stmt.GroupClause {
		if c := g.GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
				i := int(iv.Ival.Ival)
				if i < 1 || i > len(targets) {
					return nil, cp.errAt("42P10", c.Location, "GROUP BY position %d is not in select list", i)
				}
				groups = append(groups, targets[i-1])
				continue
			}
		}
		st.noAgg = "GROUP BY"
		e, err := cp.compileExpr(g, sc)
		st.noAgg = ""
		if err != nil {
			// GROUP BY may name an output column that is no input column.
			if cr := g.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
				for i, n := range names {
					if n == strVal(cr.Fields[0]) {
						e, err = targets[i], nil
						break
					}
				}
			}
			if err != nil {
				return nil, err
			}
		}
		groups = append(groups, e)
	}
	var having *expr
	if stmt.HavingClause != nil {
		h, err := cp.compileExpr(stmt.HavingClause, sc)
		if err != nil {
			return nil, err
		}
		having = h
	}
	keys, err := cp.compileSort(stmt.SortClause, sc, targets, names)
	if err != nil {
		return nil, err
	}
	limit, offset, err := cp.compileLimit(stmt, outer)
	if err != nil {
		return nil, err
	}
	distinct := len(stmt.DistinctClause) > 0
	// DISTINCT ON (exprs): the first row of each group of equal exprs, in
	// the ORDER BY's order.
	var distinctOn []*expr
	for _, d := range stmt.DistinctClause {
		if d == nil || d.GetNode() == nil {
			continue
		}
		e, err := cp.compileSortTarget(d, sc, targets, names)
		if err != nil {
			return nil, err
		}
		distinctOn = append(distinctOn, e)
	}
	grouped := len(groups) > 0 || len(st.aggs) > 0 || having != nil
	cols := make([]scopeCol, len(targets))
	for i, t := range targets {
		cols[i] = scopeCol{name: names[i], typ: t.typ, typmod: t.typmod, fields: t.fields}
	}
	run := func(outerCtx *evalCtx) ([][]any, error) {
		x := outerCtx.x
		input := [][]any{nil}
		if src != nil {
			var err error
			if input, err = src.rows(outerCtx); err != nil {
				return nil, err
			}
		}
		var ctxs []*evalCtx
		for _, r := range input {
			c := &evalCtx{row: r, outer: outerCtx, x: x}
			if where != nil {
				v, err := where.eval(c)
				if err != nil {
					return nil, err
				}
				if t, known := truth(v); !known || !t {
					continue
				}
			}
			ctxs = append(ctxs, c)
			if err := x.ctx.Err(); err != nil {
				return nil, err
			}
		}
		if grouped {
			var err error
			if ctxs, err = group(ctxs, groups, st.aggs, outerCtx, len(sc.cols)); err != nil {
				return nil, err
			}
			if having != nil {
				kept := ctxs[:0]
				for _, c := range ctxs {
					v, err := having.eval(c)
					if err != nil {
						return nil, err
					}
					if t, known := truth(v); known && t {
						kept = append(kept, c)
					}
				}
				ctxs = kept
			}
		}
		if err := windows(ctxs, st.wins); err != nil {
			return nil, err
		}
		type outRow struct {
			vals []any
			keys []any
			on   string
		}
		out := make([]outRow, 0, len(ctxs))
		expanded, err := expandSets(ctxs, st.srfs)
		if err != nil {
			return nil, err
		}
		for _, c := range expanded {
			vals := make([]any, len(targets))
			for i, t := range targets {
				v, err := t.eval(c)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			kv := make([]any, len(keys))
			for i, k := range keys {
				if k.out >= 0 {
					kv[i] = vals[k.out]
					continue
				}
				v, err := k.e.eval(c)
				if err != nil {
					return nil, err
				}
				kv[i] = v
			}
			on := ""
			if len(distinctOn) > 0 {
				ov := make([]any, len(distinctOn))
				for i, e := range distinctOn {
					v, err := e.eval(&evalCtx{row: c.row, outer: c.outer, x: c.x, aggs: c.aggs, wins: c.wins, srfs: c.srfs, out: vals})
					if err != nil {
						return nil, err
					}
					ov[i] = v
				}
				on = rowKey(ov)
			}
			out = append(out, outRow{vals, kv, on})
		}
		if len(distinctOn) > 0 {
			sort.SliceStable(out, func(i, j int) bool { return lessKeys(out[i].keys, out[j].keys, keys) })
			seen := map[string]bool{}
			kept := out[:0]
			for _, r := range out {
				if !seen[r.on] {
					seen[r.on] = true
					kept = append(kept, r)
				}
			}
			out = kept
		} else if distinct {
			seen := map[string]bool{}
			kept := out[:0]
			for _, r := range out {
				k := rowKey(r.vals)
				if !seen[k] {
					seen[k] = true
					kept = append(kept, r)
				}
			}
			out = kept
		}
		if len(keys) > 0 {
			sort.SliceStable(out, func(i, j int) bool { return lessKeys(out[i].keys, out[j].keys, keys) })
		}
		rows := make([][]any, len(out))
		for i, r := range out {
			rows[i] = r.vals
		}
		return applyLimit(rows, limit, offset, outerCtx)
	}
	return &plan{cols: cols, run: run}, nil
}

// rowKey is a map key for a row's values (DISTINCT, GROUP BY, UNION).
func rowKey(vals []any) string {
	var b strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&b, "%T:%v\x00", v, v)
	}
	return b.String()
}

func lessKeys(a, b []any, keys []sortKey) bool {
	for i, k := range keys {
		x, y := a[i], b[i]
		if x == nil && y == nil {
			continue
		}
		if x == nil || y == nil {
			// NULLs sort last ascending and first descending unless told.
			return (x == nil) == k.nullsFirst
		}
		c := compareValues(x, y)
		if c == 0 {
			continue
		}
		if k.desc {
			return c > 0
		}
		return c < 0
	}
	return false
}

func (cp *compiler) compileSort(items []*pg.Node, sc *scope, targets []*expr, names []string) ([]sortKey, error) {
	var keys []sortKey
	for _, item := range items {
		sb := item.GetSortBy()
		k := sortKey{out: -1, desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC}
		k.nullsFirst = k.desc
		switch sb.SortbyNulls {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			k.nullsFirst = true
		case pg.SortByNulls_SORTBY_NULLS_LAST:
			k.nullsFirst = false
		}
		if c := sb.Node.GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
				i := int(iv.Ival.Ival)
				if i < 1 || i > len(targets) {
					return nil, cp.errAt("42P10", c.Location, "ORDER BY position %d is not in select list", i)
				}
				k.out = i - 1
				keys = append(keys, k)
				continue
			}
		}
		if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
			name := strVal(cr.Fields[0])
			for i, n := range names {
				if n == name {
					k.out = i
					break
				}
			}
			if k.out >= 0 {
				keys = append(keys, k)
				continue
			}
		}
		if sc == nil {
			return nil, cp.errAt(CodeUndefinedColumn, sb.Location, "ORDER BY on a UNION must name or number an output column")
		}
		e, err := cp.compileExpr(sb.Node, sc)
		if err != nil {
			return nil, err
		}
		k.e = e
		keys = append(keys, k)
	}
	return keys, nil
}

func (cp *compiler) compileLimit(stmt *pg.SelectStmt, outer *scope) (limit, offset *expr, err error) {
	sc := childScope(outer)
	if stmt.LimitCount != nil {
		if limit, err = cp.compileExpr(stmt.LimitCount, sc); err != nil {
			return nil, nil, err
		}
		limit = cp.resolveUnknown(limit, OIDInt8)
	}
	if stmt.LimitOffset != nil {
		if offset, err = cp.compileExpr(stmt.LimitOffset, sc); err != nil {
			return nil, nil, err
		}
		offset = cp.resolveUnknown(offset, OIDInt8)
	}
	return limit, offset, nil
}

func applyLimit(rows [][]any, limit, offset *expr, c *evalCtx) ([][]any, error) {
	n, set, err := rowCount(offset, c)
	if err != nil {
		return nil, err
	}
	if set {
		if n >= int64(len(rows)) {
			rows = nil
		} else if n > 0 {
			rows = rows[n:]
		}
	}
	n, set, err = rowCount(limit, c)
	if err != nil {
		return nil, err
	}
	if set && n < int64(len(rows)) && n >= 0 {
		rows = rows[:n]
	}
	return rows, nil
}

// rowCount is a LIMIT's or OFFSET's count; set is false when there is
// none or it is NULL (no limit, no offset).
func rowCount(e *expr, c *evalCtx) (n int64, set bool, err error) {
	if e == nil {
		return 0, false, nil
	}
	v, err := e.eval(c)
	if err != nil || v == nil {
		return 0, false, err
	}
	n, err = toInt(v, OIDInt8)
	return n, err == nil, err
}

func (cp *compiler) compileSetOp(stmt *pg.SelectStmt, outer *scope) (*plan, error) {
	l, err := cp.compileSelect(stmt.Larg, outer)
	if err != nil {
		return nil, err
	}
	r, err := cp.compileSelect(stmt.Rarg, outer)
	if err != nil {
		return nil, err
	}
	if len(l.cols) != len(r.cols) {
		return nil, &Error{Code: CodeSyntaxError, Message: "each UNION query must have the same number of columns"}
	}
	cols := append([]scopeCol(nil), l.cols...)
	// Postgres's rule for a UNION column: the first typed branch's type,
	// widened to the other's when both are numbers.
	for i := range cols {
		lt, rt := cols[i].typ, r.cols[i].typ
		switch {
		case lt == OIDUnknown:
			cols[i].typ, cols[i].typmod = rt, r.cols[i].typmod
		case numericRank(lt) > 0 && numericRank(rt) > numericRank(lt):
			cols[i].typ, cols[i].typmod = rt, -1
		}
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	keys, err := cp.compileSort(stmt.SortClause, nil, make([]*expr, len(cols)), names)
	if err != nil {
		return nil, err
	}
	limit, offset, err := cp.compileLimit(stmt, outer)
	if err != nil {
		return nil, err
	}
	op, all := stmt.Op, stmt.All
	run := func(outerCtx *evalCtx) ([][]any, error) {
		a, err := l.run(outerCtx)
		if err != nil {
			return nil, err
		}
		b, err := r.run(outerCtx)
		if err != nil {
			return nil, err
		}
		var rows [][]any
		switch op {
		case pg.SetOperation_SETOP_UNION:
			rows = append(append(rows, a...), b...)
			if !all {
				rows = dedupe(rows)
			}
		case pg.SetOperation_SETOP_INTERSECT, pg.SetOperation_SETOP_EXCEPT:
			inB := map[string]bool{}
			for _, row := range b {
				inB[rowKey(row)] = true
			}
			for _, row := range a {
				if inB[rowKey(row)] == (op == pg.SetOperation_SETOP_INTERSECT) {
					rows = append(rows, row)
				}
			}
			if !all {
				rows = dedupe(rows)
			}
		}
		if len(keys) > 0 {
			sort.SliceStable(rows, func(i, j int) bool {
				ki := make([]any, len(keys))
				kj := make([]any, len(keys))
				for n, k := range keys {
					ki[n], kj[n] = rows[i][k.out], rows[j][k.out]
				}
				return lessKeys(ki, kj, keys)
			})
		}
		return applyLimit(rows, limit, offset, outerCtx)
	}
	return &plan{cols: cols, run: run}, nil
}

func dedupe(rows [][]any) [][]any {
	seen := map[string]bool{}
	var out [][]any
	for _, r := range rows {
		k := rowKey(r)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func (cp *compiler) compileValues(stmt *pg.SelectStmt, outer *scope) (*plan, error) {
	sc := childScope(outer)
	var rows [][]*expr
	for _, l := range stmt.ValuesLists {
		var row []*expr
		for _, n := range l.GetList().GetItems() {
			e, err := cp.compileExpr(n, sc)
			if err != nil {
				return nil, err
			}
			row = append(row, e)
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return nil, &Error{Code: CodeSyntaxError, Message: "VALUES lists must all be the same length"}
		}
		rows = append(rows, row)
	}
	cols := make([]scopeCol, len(rows[0]))
	for i := range cols {
		var column []*expr
		for _, r := range rows {
			if i < len(r) {
				column = append(column, r[i])
			}
		}
		typ, typmod := cp.commonType(column)
		cols[i] = scopeCol{name: fmt.Sprintf("column%d", i+1), typ: typ, typmod: typmod}
		for _, r := range rows {
			if i < len(r) {
				r[i] = cp.resolveUnknown(r[i], typ)
			}
		}
	}
	return &plan{cols: cols, run: func(outerCtx *evalCtx) ([][]any, error) {
		c := &evalCtx{outer: outerCtx, x: outerCtx.x}
		var out [][]any
		for _, r := range rows {
			vals := make([]any, len(r))
			for i, e := range r {
				v, err := e.eval(c)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			out = append(out, vals)
		}
		return out, nil
	}}, nil
}

// group folds rows into groups: one context per group holding its first
// row (for grouped columns) and its aggregates' values.
func group(ctxs []*evalCtx, keys []*expr, aggs []*aggSpec, outer *evalCtx, width int) ([]*evalCtx, error) {
	type grp struct {
		first *evalCtx
		rows  []*evalCtx
	}
	var order []string
	groups := map[string]*grp{}
	for _, c := range ctxs {
		vals := make([]any, len(keys))
		for i, k := range keys {
			v, err := k.eval(c)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		key := rowKey(vals)
		g := groups[key]
		if g == nil {
			g = &grp{first: c}
			groups[key] = g
			order = append(order, key)
		}
		g.rows = append(g.rows, c)
	}
	if len(keys) == 0 && len(groups) == 0 {
		groups[""] = &grp{first: &evalCtx{row: make([]any, width), outer: outer, x: outer.x}}
		order = append(order, "")
	}
	out := make([]*evalCtx, 0, len(order))
	for _, key := range order {
		g := groups[key]
		c := &evalCtx{row: g.first.row, outer: g.first.outer, x: g.first.x, aggs: make([]any, len(aggs))}
		for i, a := range aggs {
			v, err := a.compute(g.rows)
			if err != nil {
				return nil, err
			}
			c.aggs[i] = v
		}
		out = append(out, c)
	}
	return out, nil
}

// windows computes each window function's value for every row.
func windows(ctxs []*evalCtx, wins []*winSpec) error {
	if len(wins) == 0 {
		return nil
	}
	for _, c := range ctxs {
		c.wins = make([]any, len(wins))
	}
	for wi, w := range wins {
		parts := map[string][]int{}
		var order []string
		for i, c := range ctxs {
			vals := make([]any, len(w.partition))
			for j, p := range w.partition {
				v, err := p.eval(c)
				if err != nil {
					return err
				}
				vals[j] = v
			}
			k := rowKey(vals)
			if _, ok := parts[k]; !ok {
				order = append(order, k)
			}
			parts[k] = append(parts[k], i)
		}
		for _, k := range order {
			idx := parts[k]
			sortVals := make([][]any, len(idx))
			for n, i := range idx {
				sortVals[n] = make([]any, len(w.order))
				for j, o := range w.order {
					v, err := o.e.eval(ctxs[i])
					if err != nil {
						return err
					}
					sortVals[n][j] = v
				}
			}
			perm := make([]int, len(idx))
			for i := range perm {
				perm[i] = i
			}
			sort.SliceStable(perm, func(a, b int) bool { return lessKeys(sortVals[perm[a]], sortVals[perm[b]], w.order) })
			rank, dense := int64(0), int64(0)
			for pos, p := range perm {
				peer := pos > 0 && !lessKeys(sortVals[perm[pos-1]], sortVals[p], w.order)
				if !peer {
					rank = int64(pos + 1)
					dense++
				}
				var v any
				switch w.name {
				case "row_number":
					v = int64(pos + 1)
				case "rank":
					v = rank
				case "dense_rank":
					v = dense
				}
				ctxs[idx[p]].wins[wi] = v
			}
		}
	}
	return nil
}

// compute folds one aggregate over a group's rows.
func (a *aggSpec) compute(rows []*evalCtx) (any, error) {
	if len(a.order) > 0 {
		keys := make(map[*evalCtx][]any, len(rows))
		for _, c := range rows {
			kv := make([]any, len(a.order))
			for i, k := range a.order {
				v, err := k.e.eval(c)
				if err != nil {
					return nil, err
				}
				kv[i] = v
			}
			keys[c] = kv
		}
		rows = append([]*evalCtx(nil), rows...)
		sort.SliceStable(rows, func(i, j int) bool { return lessKeys(keys[rows[i]], keys[rows[j]], a.order) })
	}
	var vals [][]any
	seen := map[string]bool{}
	for _, c := range rows {
		if a.filter != nil {
			v, err := a.filter.eval(c)
			if err != nil {
				return nil, err
			}
			if t, known := truth(v); !known || !t {
				continue
			}
		}
		args := make([]any, len(a.args))
		for i, e := range a.args {
			v, err := e.eval(c)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		if a.distinct {
			k := rowKey(args)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		vals = append(vals, args)
	}
	return aggregates[a.name].fold(a, vals)
}

// srfSpec is a set-returning function in a select list: each input row
// yields as many output rows as its longest set (Postgres 10's rule, the
// shorter sets padded with NULLs).
type srfSpec struct {
	args []*expr
	gen  func(c *evalCtx, vals []any) ([][]any, error)
	// record: the function returns several columns, as one record value.
	record bool
}

func expandSets(ctxs []*evalCtx, srfs []*srfSpec) ([]*evalCtx, error) {
	if len(srfs) == 0 {
		return ctxs, nil
	}
	var out []*evalCtx
	for _, c := range ctxs {
		sets := make([][][]any, len(srfs))
		n := 0
		for i, f := range srfs {
			vals := make([]any, len(f.args))
			for j, a := range f.args {
				v, err := a.eval(c)
				if err != nil {
					return nil, err
				}
				vals[j] = v
			}
			rows, err := f.gen(c, vals)
			if err != nil {
				return nil, err
			}
			sets[i] = rows
			n = max(n, len(rows))
		}
		for k := 0; k < n; k++ {
			cc := *c
			cc.srfs = make([]any, len(srfs))
			for i, f := range srfs {
				if k >= len(sets[i]) {
					continue
				}
				if f.record {
					cc.srfs[i] = sets[i][k]
				} else {
					cc.srfs[i] = sets[i][k][0]
				}
			}
			out = append(out, &cc)
		}
	}
	return out, nil
}

// compileSortTarget compiles a DISTINCT ON item as ORDER BY reads it: an
// output column's ordinal or name, else an expression over the input.
func (cp *compiler) compileSortTarget(n *pg.Node, sc *scope, targets []*expr, names []string) (*expr, error) {
	out := -1
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
			out = int(iv.Ival.Ival) - 1
			if out < 0 || out >= len(targets) {
				return nil, cp.errAt("42P10", c.Location, "SELECT DISTINCT ON position %d is not in select list", out+1)
			}
		}
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
		for i, name := range names {
			if name == strVal(cr.Fields[0]) {
				out = i
				break
			}
		}
	}
	if out >= 0 {
		i := out
		return &expr{typ: targets[i].typ, typmod: -1, eval: func(c *evalCtx) (any, error) { return c.out[i], nil }}, nil
	}
	return cp.compileExpr(n, sc)
}

// maxRecursion bounds a WITH RECURSIVE query's rows.
const maxRecursion = 100_000

// compileRecursive compiles WITH RECURSIVE name AS (base UNION [ALL]
// step): the base's rows, then step's over the rows the last round added,
// until a round adds none.
func (cp *compiler) compileRecursive(cte *pg.CommonTableExpr, outer *scope) (*plan, error) {
	u := cte.Ctequery.GetSelectStmt()
	base, err := cp.compileSelect(u.Larg, outer)
	if err != nil {
		return nil, err
	}
	cols := append([]scopeCol(nil), base.cols...)
	for i, a := range cte.Aliascolnames {
		if i < len(cols) {
			cols[i].name = strVal(a)
		}
	}
	// The step reads the working table: the rows of the round before.
	var working [][]any
	cp.ctes = append(cp.ctes, map[string]*plan{cte.Ctename: {cols: cols, run: func(*evalCtx) ([][]any, error) { return working, nil }}})
	step, err := cp.compileSelect(u.Rarg, outer)
	cp.ctes = cp.ctes[:len(cp.ctes)-1]
	if err != nil {
		return nil, err
	}
	if len(step.cols) != len(cols) {
		return nil, &Error{Code: CodeSyntaxError, Message: "each UNION query must have the same number of columns"}
	}
	all := u.All
	return &plan{cols: cols, run: func(outerCtx *evalCtx) ([][]any, error) {
		rows, err := base.run(outerCtx)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		if !all {
			rows = dedupe(rows)
			for _, r := range rows {
				seen[rowKey(r)] = true
			}
		}
		out := append([][]any(nil), rows...)
		working = rows
		for len(working) > 0 {
			next, err := step.run(outerCtx)
			if err != nil {
				return nil, err
			}
			if !all {
				kept := next[:0]
				for _, r := range next {
					if k := rowKey(r); !seen[k] {
						seen[k] = true
						kept = append(kept, r)
					}
				}
				next = kept
			}
			out = append(out, next...)
			if len(out) > maxRecursion {
				return nil, &Error{Code: "54000", Message: fmt.Sprintf("WITH RECURSIVE %s: more than %d rows", cte.Ctename, maxRecursion)}
			}
			if err := outerCtx.x.ctx.Err(); err != nil {
				return nil, err
			}
			working = next
		}
		return out, nil
	}}, nil
}

// readsRelation reports whether a query names the relation name (a WITH
// RECURSIVE query is recursive only if it reads itself).
func readsRelation(n *pg.Node, name string) bool {
	found := false
	var walk func(n *pg.Node)
	walk = func(n *pg.Node) {
		if found || n == nil {
			return
		}
		if rv := n.GetRangeVar(); rv != nil && rv.Schemaname == "" && rv.Relname == name {
			found = true
			return
		}
		visitChildren(n, walk)
	}
	walk(n)
	return found
}
