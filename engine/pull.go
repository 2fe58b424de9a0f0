package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// pullSource returns the query materializing the table a SELECT reads,
// when the SELECT is a pull query: no EMIT clause, FROM a table that an
// aggregation keeps in state. Other SELECTs are push queries.
func (e *Engine) pullSource(sel *parser.Select) (*Query, *exec.TableReader) {
	if sel.Emit != parser.EmitNone || len(sel.Joins) > 0 {
		return nil, nil
	}
	src, err := e.cat.Lookup(sel.From.Name)
	if err != nil || src.Kind != parser.KindTable || src.QueryID == "" {
		return nil, nil
	}
	q := e.query(src.QueryID)
	if q == nil {
		return nil, nil
	}
	r, err := exec.NewTableReader(q.Plan.Topology)
	if err != nil {
		return nil, nil
	}
	return q, r
}

// pullQuery answers a SELECT on a materialized table from the table's
// committed state on this instance (as of its last commit: at most one
// commit interval old), then ends. WHERE, projection and LIMIT apply as
// in a push query; the key's partitions on other instances are not
// asked (scale-out forwards them: see the server).
//
// With WithPartitions in ctx only those store partitions are read, and
// each must be one this instance owns with its state restored: see
// ErrPartitionUnavailable.
func (e *Engine) pullQuery(ctx context.Context, sel *parser.Select, q *Query, reader *exec.TableReader, props map[string]string) (*RowStream, error) {
	if len(sel.GroupBy) > 0 || sel.Window != nil || sel.Having != nil {
		return nil, fmt.Errorf("%w: pull queries cannot aggregate or window; add EMIT CHANGES for a push query", planner.ErrUnsupported)
	}
	id := fmt.Sprintf("pull_%s_%d", strings.ToUpper(sel.From.Name), time.Now().UnixNano())
	plan, err := planner.PlanQuery(e.cat, sel, nil, id, e.planOptions(props))
	if err != nil {
		return nil, err
	}
	if len(plan.Topology.Subs) != 1 {
		return nil, fmt.Errorf("%w: pull queries cannot repartition", planner.ErrUnsupported)
	}
	if plan.Collect == nil {
		return nil, errors.New("pull query: plan has no client output")
	}
	var rows [][]any
	plan.Collect.Fn = func(row *exec.Row) { rows = append(rows, append([]any(nil), row.Cols...)) }
	chain, err := exec.NewChain(id, plan.Topology.Subs[0].Nodes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", planner.ErrUnsupported, err)
	}
	src, err := e.cat.Lookup(sel.From.Name)
	if err != nil {
		return nil, err
	}
	if parts, ok := partitionsOf(ctx); ok {
		if err := q.servable(reader.Topic(), parts); err != nil {
			return nil, err
		}
		reader = reader.Only(parts)
	}
	rowTime := len(src.Schema.Columns) // ROWTIME follows the key and value columns
	var procErr error
	scan := reader.Scan
	if keys, ok := lookupKeys(sel, src); ok {
		scan = func(db *state.DB, fn func([]any) bool) error { return reader.ScanKeys(db, keys, fn) }
	}
	err = scan(e.db, func(row []any) bool {
		ts, _ := row[rowTime].(int64)
		if procErr = chain.Process(row, ts); procErr != nil {
			return false
		}
		return plan.Limit <= 0 || len(rows) < plan.Limit
	})
	if err == nil {
		err = procErr
	}
	if err != nil {
		return nil, fmt.Errorf("pull query on %s: %w", src.Name, err)
	}
	if plan.Limit > 0 && len(rows) > plan.Limit {
		rows = rows[:plan.Limit]
	}
	if sel.HasLimit && sel.Limit == 0 {
		rows = nil
	}
	rs := pulledRows(plan, id, rows)
	rs.Columns = markPullKeys(sel, src, rs.Columns)
	rs.LimitReached = sel.HasLimit && len(rows) >= sel.Limit
	return rs, nil
}

// markPullKeys marks the key columns of a pull query's answer on a
// table, as ksqlDB's header shows them (`ID` STRING KEY): the columns
// that copy one of the table's key columns as they are, and a windowed
// table's WINDOWSTART and WINDOWEND. Computed columns are values even
// when they read a key.
func markPullKeys(sel *parser.Select, src *planner.Source, out types.Schema) types.Schema {
	isKey := func(name string) bool {
		if src.Window != exec.NotWindowed && (strings.EqualFold(name, "WINDOWSTART") || strings.EqualFold(name, "WINDOWEND")) {
			return true
		}
		for _, k := range src.Schema.Keys() {
			if strings.EqualFold(k.Name, name) {
				return true
			}
		}
		return false
	}
	keys := map[string]bool{}
	for _, it := range sel.Items {
		switch {
		case it.Star:
			for _, c := range out.Columns {
				if isKey(c.Name) {
					keys[c.Name] = true
				}
			}
		case it.Expr != nil:
			ref, ok := it.Expr.(*parser.ColumnRef)
			if !ok || !isKey(ref.Name) {
				continue
			}
			name := ref.Name
			if it.Alias != "" {
				name = it.Alias
			}
			keys[strings.ToUpper(name)] = true
			keys[name] = true
		}
	}
	cols := append([]types.Column(nil), out.Columns...)
	for i := range cols {
		cols[i].Key = keys[cols[i].Name]
	}
	return types.Schema{Columns: cols}
}

// pulledRows is the RowStream of a pull query's gathered rows.
func pulledRows(plan *planner.Query, id string, rows [][]any) *RowStream {
	ch := make(chan []any, len(rows))
	for _, r := range rows {
		ch <- r
	}
	close(ch)
	return &RowStream{Columns: plan.Output, C: ch, QueryID: id, Pull: true, closed: make(chan struct{}), stop: func() {}}
}

// lookupKeys finds, in a pull query's WHERE, a conjunct that pins the
// table's one key column to literals (KEY = x, or KEY IN (x, y, …)) and
// returns those keys encoded as the aggregation stores them, so that the
// read goes straight to them. The WHERE still filters the rows read, so
// a lookup that finds more than it should changes nothing.
func lookupKeys(sel *parser.Select, src *planner.Source) ([][]byte, bool) {
	vals, ok := lookupKeyValues(sel, src)
	if !ok {
		return nil, false
	}
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = types.AppendValues(nil, []any{v})
	}
	return out, true
}

// lookupKeyValues is lookupKeys with the key values as they are, cast to
// the key column's type.
func lookupKeyValues(sel *parser.Select, src *planner.Source) ([]any, bool) {
	keyCols := src.Schema.Keys()
	if sel.Where == nil || len(keyCols) != 1 {
		return nil, false
	}
	key := keyCols[0]
	isKey := func(x parser.Expr) bool {
		ref, ok := x.(*parser.ColumnRef)
		return ok && strings.EqualFold(ref.Name, key.Name)
	}
	values := func(lits []parser.Expr) ([]any, bool) {
		out := make([]any, 0, len(lits))
		for _, l := range lits {
			if _, ok := l.(*parser.Literal); !ok {
				return nil, false
			}
			c, err := expr.Compile(l, expr.SchemaScope(types.Schema{}))
			if err != nil {
				return nil, false
			}
			cast, err := expr.CastFunc(c.Type, key.Type)
			if err != nil {
				return nil, false
			}
			v := cast(c.Eval(nil))
			if v == nil {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	}
	var conjuncts []parser.Expr
	var split func(parser.Expr)
	split = func(x parser.Expr) {
		if b, ok := x.(*parser.Binary); ok && b.Op == parser.OpAnd {
			split(b.Left)
			split(b.Right)
			return
		}
		conjuncts = append(conjuncts, x)
	}
	split(sel.Where)
	for _, c := range conjuncts {
		switch x := c.(type) {
		case *parser.Binary:
			if x.Op != parser.OpEq {
				continue
			}
			if isKey(x.Left) {
				return values([]parser.Expr{x.Right})
			}
			if isKey(x.Right) {
				return values([]parser.Expr{x.Left})
			}
		case *parser.In:
			if !x.Not && isKey(x.X) {
				return values(x.List)
			}
		}
	}
	return nil, false
}
