package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// PullTableScanProperty, PullRangeScanProperty and PullLimitProperty
// name the session properties behind Options.PullKeyLookupsOnly,
// Options.PullRangeScansDisabled and Options.PullLimitDisabled, as
// ksqlDB names them.
const (
	PullTableScanProperty = "ksql.query.pull.table.scan.enabled"
	PullRangeScanProperty = "ksql.query.pull.range.scan.enabled"
	PullLimitProperty     = "ksql.query.pull.limit.clause.enabled"
)

// pullHint ends ksqlDB's errors for what pull queries cannot do.
const pullHint = " See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."

// pullPseudoColumns are the pseudo columns a pull query may not read:
// a table's state and a scan's rows do not keep where records came from.
var pullPseudoColumns = []string{exec.ColRowPartition, exec.ColRowOffset}

// validatePull is the validation stage of a pull query (a SELECT
// without EMIT that writes nowhere, on a table or on a stream whose topic
// is scanned): it refuses, with ksqlDB's words, what ksqlDB's pull
// queries cannot do, before anything else is planned, so that users get
// those errors rather than the planner's for a query that was never
// meant to run continuously. It runs on the statement as written, before
// the onStatement rules rewrite it (the refusals quote its WHERE). A pull
// query on a table then asks Options.TableStore which state store keeps
// the table (p.store). Other SELECTs pass.
func (p *planning) validatePull() error {
	sel := p.sel
	if !p.pull() || sel.From == nil {
		return nil
	}
	src, err := p.cat.Lookup(sel.From.Name)
	if err != nil {
		// The planner reports an unknown source where it resolves it.
		return nil
	}
	if src.Kind == parser.KindStream && p.opts.NoStreamScans {
		// A push query on an engine that cannot scan the stream.
		return nil
	}
	if err := (&pullCheck{sel: sel, src: src, opts: p.opts}).validate(); err != nil {
		return err
	}
	if src.Kind != parser.KindTable || len(sel.Joins) > 0 || p.opts.TableStore == nil {
		return nil
	}
	store, err := p.opts.TableStore(src.Name)
	if err != nil {
		return err
	}
	p.store = store
	return nil
}

// pullCheck is one pull query being validated: the SELECT, the source it
// reads and the session's settings.
type pullCheck struct {
	sel  *parser.Select
	src  *Source
	opts Options
}

func (c *pullCheck) validate() error {
	if err := c.clauses(); err != nil {
		return err
	}
	if err := c.pseudoColumns(); err != nil {
		return err
	}
	if c.src.Kind != parser.KindTable {
		return nil
	}
	if err := c.duplicateValues(); err != nil {
		return err
	}
	where := c.sel.Where
	if where == nil {
		return nil
	}
	if err := c.windowBounds(); err != nil {
		return err
	}
	if err := c.keyValues(); err != nil {
		return err
	}
	if c.opts.PullKeyLookupsOnly {
		return c.keyLookupOnly()
	}
	return nil
}

// clauses refuses the clauses of continuous queries and LIMITs pull
// queries do not take.
func (c *pullCheck) clauses() error {
	sel := c.sel
	refuse := func(what string) error {
		return fmt.Errorf("%w: Pull queries don't support %s clauses."+pullHint, ErrUnsupported, what)
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
		return fmt.Errorf("%w: Pull queries don't support negative integers in the LIMIT clause."+pullHint, ErrUnsupported)
	}
	if sel.HasLimit && c.opts.PullLimitDisabled {
		return fmt.Errorf("%w: LIMIT clause in pull queries is currently disabled. You can enable them by setting %s=true."+pullHint, ErrUnsupported, PullLimitProperty)
	}
	return nil
}

// pullCDCColumns are the change-event pseudo columns a pull query on a
// table with a VALUE_ENVELOPE may not read: the table's store keeps each
// key's row, not the change that made it (a scan of a stream decodes the
// events and has them).
var pullCDCColumns = []string{exec.ColCDCOp, exec.ColCDCTsMs, exec.ColCDCBefore, exec.ColCDCSource}

// pseudoColumns refuses ROWPARTITION and ROWOFFSET in SELECT and WHERE,
// and a CDC table's CDC_* columns.
func (c *pullCheck) pseudoColumns() error {
	refused := pullPseudoColumns
	if c.src.Kind == parser.KindTable && c.src.ValueProps.Envelope != "" {
		refused = append(slices.Clip(refused), pullCDCColumns...)
	}
	if err := refusePseudo(refused, "SELECT", selectExprs(c.sel)...); err != nil {
		return err
	}
	if c.sel.Where != nil {
		return refusePseudo(refused, "WHERE", c.sel.Where)
	}
	return nil
}

func refusePseudo(refused []string, clause string, es ...parser.Expr) error {
	found := pseudoIn(refused, es...)
	if len(found) == 0 {
		return nil
	}
	for i, n := range found {
		found[i] = "`" + n + "`"
	}
	return fmt.Errorf("%w: Pull queries don't support the following columns in %s clauses: %s", ErrUnsupported, clause, strings.Join(found, ", "))
}

// pseudoIn lists, once each and in the order met, the columns of names
// (upper-case) that es read.
func pseudoIn(names []string, es ...parser.Expr) []string {
	var found []string
	for _, e := range es {
		walkColumns(e, func(ref *parser.ColumnRef) {
			n := strings.ToUpper(ref.Name)
			if slices.Contains(names, n) && !slices.Contains(found, n) {
				found = append(found, n)
			}
		})
	}
	return found
}

// selectExprs are the expressions of sel's SELECT list (a * has none).
func selectExprs(sel *parser.Select) []parser.Expr {
	var out []parser.Expr
	for _, it := range sel.Items {
		if it.Expr != nil {
			out = append(out, it.Expr)
		}
	}
	return out
}

// duplicateValues refuses a pull query that selects a value column twice
// under one name, as ksqlDB does.
func (c *pullCheck) duplicateValues() error {
	seen := map[string]bool{}
	for _, it := range c.sel.Items {
		ref, ok := it.Expr.(*parser.ColumnRef)
		if !ok || it.Alias != "" {
			continue
		}
		i := c.src.Schema.Find(ref.Name)
		if i < 0 || c.src.Schema.Columns[i].Key {
			continue
		}
		col := c.src.Schema.Columns[i]
		if seen[col.Name] {
			return fmt.Errorf("%w: Duplicate value columns found in schema: `%s` %s", ErrInvalid, col.Name, col.Type)
		}
		seen[col.Name] = true
	}
	return nil
}

// windowBounds refuses WINDOWSTART and WINDOWEND in the WHERE of a pull
// query on a table without windows.
func (c *pullCheck) windowBounds() error {
	if c.src.Window != exec.NotWindowed {
		return nil
	}
	var bound string
	walkColumns(c.sel.Where, func(ref *parser.ColumnRef) {
		if n := strings.ToUpper(ref.Name); bound == "" && isWindowBound(n) {
			bound = n
		}
	})
	if bound != "" {
		return fmt.Errorf("%w: WHERE column '%s' cannot be resolved", ErrInvalid, bound)
	}
	return nil
}

// keyValues checks the values an IN list gives a key column: none may be
// NULL, and each must have the key's type or one it widens to.
func (c *pullCheck) keyValues() error {
	for _, cond := range splitOn(c.sel.Where, parser.OpAnd) {
		in, ok := cond.(*parser.In)
		if !ok || in.Not {
			continue
		}
		key, ok := c.keyColumn(in.X)
		if !ok {
			continue
		}
		for _, v := range in.List {
			lit, ok := v.(*parser.Literal)
			if !ok {
				continue
			}
			if lit.Kind == parser.LitNull {
				return fmt.Errorf("%w: Primary key columns can not be NULL: (%s = null)", ErrInvalid, key.Name)
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

// keyLookupOnly applies the rules of pull queries without table scans:
// each disjunct of the WHERE must pin every key column, once, with = or
// IN, to values that read no column; other conditions filter what the
// lookup finds.
func (c *pullCheck) keyLookupOnly() error {
	keys := c.src.Schema.Keys()
	var likes, ranged bool
	for _, disjunct := range splitOn(c.sel.Where, parser.OpOr) {
		pinned := map[string]int{}
		for _, cond := range splitOn(disjunct, parser.OpAnd) {
			if _, ok := cond.(*parser.Like); ok {
				likes = true
				continue
			}
			readsKey := false
			walkColumns(cond, func(ref *parser.ColumnRef) {
				for _, k := range keys {
					if strings.EqualFold(k.Name, ref.Name) {
						readsKey = true
					}
				}
			})
			if !readsKey {
				continue
			}
			key, op, values, ok := c.keyComparison(cond)
			if !ok {
				return fmt.Errorf("%w: A comparison must directly reference a key column.", ErrUnsupported)
			}
			pinned[key.Name]++
			if pinned[key.Name] > 1 {
				return fmt.Errorf("%w: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate", ErrUnsupported)
			}
			for _, v := range values {
				if readsColumns(v) {
					return fmt.Errorf("%w: A comparison must be between a key column and a resolvable expression.", ErrUnsupported)
				}
			}
			switch op {
			case "=":
			case "BETWEEN":
				// ksqlDB reads BETWEEN as two bounds on the key.
				return errKeyCombined
			case "<", "<=", ">", ">=":
				// One bound on the key: a range of keys, which a range
				// scan reads without a table scan.
				if c.countKeyComparisons(disjunct) > 1 {
					return errKeyCombined
				}
				ranged = true
			default:
				if c.countKeyComparisons(disjunct) > 1 {
					return errKeyCombined
				}
				return fmt.Errorf("%w: Bound on key columns '%s' must currently be '='. ", ErrUnsupported, keyList(keys))
			}
		}
		if likes {
			return fmt.Errorf("%w: Like condition must be between strings", ErrUnsupported)
		}
		switch {
		case len(pinned) == 0:
			return fmt.Errorf("%w: WHERE clause missing key column for disjunct: %s", ErrUnsupported, parser.KsqlText(disjunct))
		case len(pinned) < len(keys):
			var specified []string
			for _, k := range keys {
				if pinned[k.Name] > 0 {
					specified = append(specified, fmt.Sprintf("`%s`", k.Name))
				}
			}
			return fmt.Errorf("%w: Multi-column sources must specify every key in the WHERE clause. Specified: [%s] Expected: %s",
				ErrUnsupported, strings.Join(specified, ", "), keyList(keys))
		}
	}
	// A range of keys is read by a range scan; without range scans, or
	// on a windowed table (whose store ksqlDB does not range-scan), it
	// would take a table scan, which is off.
	if ranged && (c.opts.PullRangeScansDisabled || c.src.Window != exec.NotWindowed) {
		return fmt.Errorf("%w: Query requires table scan to be enabled. Table scans can be enabled by setting %s=true", ErrUnsupported, PullTableScanProperty)
	}
	return nil
}

// errKeyCombined is ksqlDB's refusal, without table scans, of a key
// column compared more than once in a disjunct.
var errKeyCombined = fmt.Errorf("%w: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate", ErrUnsupported)

// keyColumn returns the table's key column e names, when e is a bare
// reference to one.
func (c *pullCheck) keyColumn(e parser.Expr) (types.Column, bool) {
	ref, ok := e.(*parser.ColumnRef)
	if !ok {
		return types.Column{}, false
	}
	for _, k := range c.src.Schema.Keys() {
		if strings.EqualFold(k.Name, ref.Name) {
			return k, true
		}
	}
	return types.Column{}, false
}

// keyComparison reads a condition that compares a bare key column: the
// key, "=" for = and IN or the operator otherwise, and the expressions it
// is compared with.
func (c *pullCheck) keyComparison(cond parser.Expr) (types.Column, string, []parser.Expr, bool) {
	switch x := cond.(type) {
	case *parser.Binary:
		if k, ok := c.keyColumn(x.Left); ok {
			return k, x.Op.String(), []parser.Expr{x.Right}, true
		}
		if k, ok := c.keyColumn(x.Right); ok {
			return k, x.Op.String(), []parser.Expr{x.Left}, true
		}
	case *parser.In:
		if k, ok := c.keyColumn(x.X); ok && !x.Not {
			return k, "=", x.List, true
		}
	case *parser.Between:
		if k, ok := c.keyColumn(x.X); ok {
			return k, "BETWEEN", []parser.Expr{x.Lo, x.Hi}, true
		}
	}
	return types.Column{}, "", nil, false
}

func (c *pullCheck) countKeyComparisons(disjunct parser.Expr) int {
	n := 0
	for _, cond := range splitOn(disjunct, parser.OpAnd) {
		if _, _, _, ok := c.keyComparison(cond); ok {
			n++
		}
	}
	return n
}

// splitOn flattens e's tree of op (AND or OR) into its operands.
func splitOn(e parser.Expr, op parser.BinaryOp) []parser.Expr {
	if b, ok := e.(*parser.Binary); ok && b.Op == op {
		return append(splitOn(b.Left, op), splitOn(b.Right, op)...)
	}
	return []parser.Expr{e}
}

func readsColumns(e parser.Expr) bool {
	found := false
	walkColumns(e, func(*parser.ColumnRef) { found = true })
	return found
}

func keyList(keys []types.Column) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("`%s` %s KEY", k.Name, k.Type)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
