package engine

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// Properties of pull queries, as ksqlDB names them.
const (
	// PullTableScanProperty, when 'false', limits pull queries on tables
	// to key lookups: every disjunct of the WHERE must pin each key
	// column with = or IN to values it can compute, as ksqlDB requires
	// without table scans. Default true: any WHERE, answered by a scan
	// when it pins no key.
	PullTableScanProperty = "ksql.query.pull.table.scan.enabled"
	// PullLimitProperty, when 'false', refuses LIMIT in pull queries.
	PullLimitProperty = "ksql.query.pull.limit.clause.enabled"
)

// pullHint ends ksqlDB's errors for what pull queries cannot do.
const pullHint = " See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."

// pullPseudoColumns are the pseudo columns a pull query may not read:
// a table's state and a scan's rows do not keep where records came from.
var pullPseudoColumns = []string{"ROWPARTITION", "ROWOFFSET"}

// checkPullQuery checks a SELECT without EMIT by checkPull when it reads
// a table, or a stream on a broker (without one, such a SELECT on a
// stream runs as a push query).
func (e *Engine) checkPullQuery(sel *parser.Select, props map[string]string) error {
	if sel.Emit != parser.EmitNone || sel.From == nil {
		return nil
	}
	src, err := e.cat.Lookup(sel.From.Name)
	if err != nil || (src.Kind == parser.KindStream && !e.clu.scansTopics()) {
		return nil
	}
	return checkPull(sel, src, props)
}

// checkPull applies ksqlDB's rules for pull queries (a SELECT without
// EMIT) to sel, which reads src, before it is planned, so that users get
// the errors ksqlDB gives rather than those of a query that was never
// meant to run continuously.
func checkPull(sel *parser.Select, src *planner.Source, props map[string]string) error {
	refuse := func(what string) error {
		return fmt.Errorf("%w: Pull queries don't support %s clauses."+pullHint, planner.ErrUnsupported, what)
	}
	switch {
	case len(sel.Joins) > 0:
		return refuse("JOIN")
	case sel.Window != nil:
		return refuse("WINDOW")
	case len(sel.GroupBy) > 0:
		return refuse("GROUP BY")
	case len(sel.PartitionBy) > 0:
		return refuse("PARTITION BY")
	case sel.Having != nil:
		return refuse("HAVING")
	}
	if sel.HasLimit && sel.Limit < 0 {
		return fmt.Errorf("%w: Pull queries don't support negative integers in the LIMIT clause."+pullHint, planner.ErrUnsupported)
	}
	if sel.HasLimit && !propBool(props, propPullLimit) {
		return fmt.Errorf("%w: LIMIT clause in pull queries is currently disabled. You can enable them by setting %s=true."+pullHint, planner.ErrUnsupported, PullLimitProperty)
	}
	var selected []parser.Expr
	for _, it := range sel.Items {
		if it.Expr != nil {
			selected = append(selected, it.Expr)
		}
	}
	if err := refusePseudo("SELECT", selected...); err != nil {
		return err
	}
	if sel.Where != nil {
		if err := refusePseudo("WHERE", sel.Where); err != nil {
			return err
		}
	}
	if src.Kind != parser.KindTable {
		return nil
	}
	if err := duplicateValues(sel, src); err != nil {
		return err
	}
	if sel.Where == nil {
		return nil
	}
	if src.Window == exec.NotWindowed {
		var bound string
		planner.WalkColumns(sel.Where, func(ref *parser.ColumnRef) {
			if n := strings.ToUpper(ref.Name); bound == "" && (n == "WINDOWSTART" || n == "WINDOWEND") {
				bound = n
			}
		})
		if bound != "" {
			return fmt.Errorf("%w: WHERE column '%s' cannot be resolved", planner.ErrInvalid, bound)
		}
	}
	if err := checkKeyValues(sel.Where, src); err != nil {
		return err
	}
	if !propBool(props, propPullTableScan) {
		return checkKeyLookup(sel.Where, src)
	}
	return nil
}

func refusePseudo(clause string, es ...parser.Expr) error {
	var found []string
	seen := map[string]bool{}
	for _, e := range es {
		planner.WalkColumns(e, func(ref *parser.ColumnRef) {
			n := strings.ToUpper(ref.Name)
			for _, p := range pullPseudoColumns {
				if n == p && !seen[n] {
					seen[n] = true
					found = append(found, "`"+n+"`")
				}
			}
		})
	}
	if len(found) == 0 {
		return nil
	}
	return fmt.Errorf("%w: Pull queries don't support the following columns in %s clauses: %s", planner.ErrUnsupported, clause, strings.Join(found, ", "))
}

// duplicateValues refuses a pull query that selects a value column twice
// under one name, as ksqlDB does.
func duplicateValues(sel *parser.Select, src *planner.Source) error {
	seen := map[string]bool{}
	for _, it := range sel.Items {
		ref, ok := it.Expr.(*parser.ColumnRef)
		if !ok || it.Alias != "" {
			continue
		}
		i := src.Schema.Find(ref.Name)
		if i < 0 || src.Schema.Columns[i].Key {
			continue
		}
		c := src.Schema.Columns[i]
		if seen[c.Name] {
			return fmt.Errorf("%w: Duplicate value columns found in schema: `%s` %s", planner.ErrInvalid, c.Name, c.Type)
		}
		seen[c.Name] = true
	}
	return nil
}

// splitOn flattens e's tree of op (AND or OR) into its operands.
func splitOn(e parser.Expr, op parser.BinaryOp) []parser.Expr {
	if b, ok := e.(*parser.Binary); ok && b.Op == op {
		return append(splitOn(b.Left, op), splitOn(b.Right, op)...)
	}
	return []parser.Expr{e}
}

// keyColumn returns the table's key column e names, when e is a bare
// reference to one.
func keyColumn(e parser.Expr, src *planner.Source) (types.Column, bool) {
	ref, ok := e.(*parser.ColumnRef)
	if !ok {
		return types.Column{}, false
	}
	for _, k := range src.Schema.Keys() {
		if strings.EqualFold(k.Name, ref.Name) {
			return k, true
		}
	}
	return types.Column{}, false
}

// checkKeyValues checks the values an IN list gives a key column: none
// may be NULL, and each must have the key's type or one it widens to.
func checkKeyValues(where parser.Expr, src *planner.Source) error {
	for _, c := range splitOn(where, parser.OpAnd) {
		in, ok := c.(*parser.In)
		if !ok || in.Not {
			continue
		}
		key, ok := keyColumn(in.X, src)
		if !ok {
			continue
		}
		for _, v := range in.List {
			lit, ok := v.(*parser.Literal)
			if !ok {
				continue
			}
			if lit.Kind == parser.LitNull {
				return fmt.Errorf("%w: Primary key columns can not be NULL: (%s = null)", planner.ErrInvalid, key.Name)
			}
			cv, err := expr.Compile(lit, expr.SchemaScope(types.Schema{}))
			if err != nil {
				return err
			}
			if !widensTo(cv.Type, key.Type) {
				return fmt.Errorf("%w: %s can not be converted to the type of the key column: %s %s KEY", expr.ErrType, parser.KsqlText(lit), key.Name, key.Type)
			}
		}
	}
	return nil
}

// widensTo reports whether a value of type from may stand for one of
// type to without a cast: the same type, or a wider number.
func widensTo(from, to types.Type) bool {
	if from.Kind == to.Kind {
		return true
	}
	rank := map[types.Kind]int{types.Integer: 1, types.BigInt: 2, types.Decimal: 3, types.Double: 4}
	f, ok1 := rank[from.Kind]
	t, ok2 := rank[to.Kind]
	return ok1 && ok2 && f <= t
}

// checkKeyLookup applies the rules of pull queries without table scans:
// each disjunct of the WHERE must pin every key column, once, with = or
// IN, to values that read no column; other conditions filter what the
// lookup finds.
func checkKeyLookup(where parser.Expr, src *planner.Source) error {
	keys := src.Schema.Keys()
	var likes bool
	for _, disjunct := range splitOn(where, parser.OpOr) {
		pinned := map[string]int{}
		for _, c := range splitOn(disjunct, parser.OpAnd) {
			if _, ok := c.(*parser.Like); ok {
				likes = true
				continue
			}
			readsKey := false
			planner.WalkColumns(c, func(ref *parser.ColumnRef) {
				for _, k := range keys {
					if strings.EqualFold(k.Name, ref.Name) {
						readsKey = true
					}
				}
			})
			if !readsKey {
				continue
			}
			key, op, values, ok := keyComparison(c, src)
			if !ok {
				return fmt.Errorf("%w: A comparison must directly reference a key column.", planner.ErrUnsupported)
			}
			pinned[key.Name]++
			if pinned[key.Name] > 1 {
				return fmt.Errorf("%w: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate", planner.ErrUnsupported)
			}
			for _, v := range values {
				if readsColumns(v) {
					return fmt.Errorf("%w: A comparison must be between a key column and a resolvable expression.", planner.ErrUnsupported)
				}
			}
			if op != "=" {
				if n := countKeyComparisons(disjunct, src); n > 1 {
					return fmt.Errorf("%w: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate", planner.ErrUnsupported)
				}
				return fmt.Errorf("%w: Bound on key columns '%s' must currently be '='. ", planner.ErrUnsupported, keyList(keys))
			}
		}
		if likes {
			return fmt.Errorf("%w: Like condition must be between strings", planner.ErrUnsupported)
		}
		switch {
		case len(pinned) == 0:
			return fmt.Errorf("%w: WHERE clause missing key column for disjunct: %s", planner.ErrUnsupported, parser.KsqlText(disjunct))
		case len(pinned) < len(keys):
			return fmt.Errorf("%w: Multi-column sources must specify every key in the WHERE clause", planner.ErrUnsupported)
		}
	}
	return nil
}

// keyComparison reads a condition that compares a bare key column: the
// key, "=" for = and IN or the operator otherwise, and the expressions it
// is compared with.
func keyComparison(c parser.Expr, src *planner.Source) (types.Column, string, []parser.Expr, bool) {
	switch x := c.(type) {
	case *parser.Binary:
		if k, ok := keyColumn(x.Left, src); ok {
			return k, x.Op.String(), []parser.Expr{x.Right}, true
		}
		if k, ok := keyColumn(x.Right, src); ok {
			return k, x.Op.String(), []parser.Expr{x.Left}, true
		}
	case *parser.In:
		if k, ok := keyColumn(x.X, src); ok && !x.Not {
			return k, "=", x.List, true
		}
	case *parser.Between:
		if k, ok := keyColumn(x.X, src); ok {
			return k, "BETWEEN", []parser.Expr{x.Lo, x.Hi}, true
		}
	}
	return types.Column{}, "", nil, false
}

func countKeyComparisons(disjunct parser.Expr, src *planner.Source) int {
	n := 0
	for _, c := range splitOn(disjunct, parser.OpAnd) {
		if _, _, _, ok := keyComparison(c, src); ok {
			n++
		}
	}
	return n
}

func readsColumns(e parser.Expr) bool {
	found := false
	planner.WalkColumns(e, func(*parser.ColumnRef) { found = true })
	return found
}

func keyList(keys []types.Column) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("`%s` %s KEY", k.Name, k.Type)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
