package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// ErrNotQueryable is the kind of the error a pull query on a table no
// query keeps in state gets: a table declared with CREATE TABLE (not
// SOURCE) over a topic, as in ksqlDB.
var ErrNotQueryable = errors.New("table not queryable")

// notQueryable is ksqlDB's error for a pull query on such a table, word
// for word; it is also an invalid statement.
type notQueryable struct{ table string }

func (e *notQueryable) Error() string {
	return fmt.Sprintf("The `%s` table isn't queryable. To derive a queryable table, you can do 'CREATE TABLE QUERYABLE_%s AS SELECT * FROM %s'. See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query.", e.table, e.table, e.table)
}

func (e *notQueryable) Is(target error) bool {
	return target == ErrNotQueryable || target == planner.ErrInvalid
}

// pullSource returns the query keeping in state the table a SELECT
// reads, when the SELECT is a pull query: no EMIT clause, FROM a table.
// Other SELECTs are push queries (nil, nil, nil).
func (e *Engine) pullSource(sel *parser.Select) (*Query, *exec.TableReader, error) {
	if sel.Emit != parser.EmitNone || len(sel.Joins) > 0 {
		return nil, nil, nil
	}
	src, err := e.cat.Lookup(sel.From.Name)
	if err != nil || src.Kind != parser.KindTable {
		return nil, nil, nil
	}
	return e.tableKeeper(src)
}

// tableKeeper returns the query keeping table src in state and the
// reader of that state: the table's CREATE TABLE … AS SELECT (an
// aggregation's store, or the result rows a MaterializeNode keeps) or,
// for a CREATE SOURCE TABLE, the CST_ query materializing it; a table
// neither keeps is refused with ErrNotQueryable.
func (e *Engine) tableKeeper(src *planner.Source) (*Query, *exec.TableReader, error) {
	id := src.QueryID
	if id == "" {
		id = materializer(src)
	}
	q := e.query(id)
	if q == nil {
		return nil, nil, &notQueryable{table: src.Name}
	}
	r, err := exec.NewTableReader(q.Plan.Topology)
	if err != nil {
		return nil, nil, &notQueryable{table: src.Name}
	}
	return q, r, nil
}

// tableStore names the state store keeping table, for the planner
// (planner.Options.TableStore): a pull query on a table none keeps is
// refused there, after ksqlDB's other refusals and before planning.
func (e *Engine) tableStore(table string) (string, error) {
	src, err := e.cat.Lookup(table)
	if err != nil {
		return "", err
	}
	_, r, err := e.tableKeeper(src)
	if err != nil {
		return "", err
	}
	return r.Store(), nil
}

// pullQuery answers a pull query on a materialized table, planned as
// plan (its checks passed), from the table's
// committed state on this instance (as of its last commit: at most one
// commit interval old), then ends. WHERE, projection and LIMIT apply as
// in a push query; the key's partitions on other instances are not
// asked (scale-out forwards them: see the server).
//
// With WithPartitions in ctx only those store partitions are read, and
// each must be one this instance owns with its state restored: see
// ErrPartitionUnavailable. With WithStandbyPartitions they are read from
// this instance's standby state instead (standbyServable).
func (e *Engine) pullQuery(ctx context.Context, sel *parser.Select, plan *planner.Query, q *Query, reader *exec.TableReader, props map[string]string) (*RowStream, error) {
	id := plan.ID
	if len(plan.Topology.Subs) != 1 {
		return nil, fmt.Errorf("%w: pull queries cannot repartition", planner.ErrUnsupported)
	}
	if plan.Collect == nil {
		return nil, errors.New("pull query: plan has no client output")
	}
	read := plan.StoreRead()
	if read == nil {
		return nil, fmt.Errorf("pull query on %s: the plan reads no state store", sel.From.Name)
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
	standby := false
	if parts, ok := standbyPartitionsOf(ctx); ok {
		if err := q.standbyServable(ctx, reader.Topic(), parts, props); err != nil {
			return nil, err
		}
		reader, standby = reader.Only(parts), true
	} else if parts, ok := partitionsOf(ctx); ok {
		if err := q.servable(reader.Topic(), parts); err != nil {
			return nil, err
		}
		reader = reader.Only(parts)
	}
	rowTime := len(src.Schema.Columns) // ROWTIME follows the key and value columns
	var procErr error
	var keysRead int64
	reader = reader.CountKeys(&keysRead)
	scan := reader.Scan
	if read.Window != nil {
		scan = func(db *state.DB, fn func([]any) bool) error {
			return reader.ScanWindows(db, read.Keys, read.Window, fn)
		}
	} else if keys := read.Keys; keys != nil {
		scan = func(db *state.DB, fn func([]any) bool) error { return reader.ScanKeys(db, keys, fn) }
	} else if rng := read.Range; rng != nil {
		scan = func(db *state.DB, fn func([]any) bool) error { return reader.ScanRange(db, rng, fn) }
	}
	var perPartition []PartitionRows
	err = scan(e.db, func(row []any) bool {
		ts, _ := row[rowTime].(int64)
		before := len(rows)
		if procErr = chain.Process(row, ts); procErr != nil {
			return false
		}
		if n := len(rows) - before; n > 0 {
			part, _ := row[rowTime+1].(int32)
			if k := len(perPartition); k > 0 && perPartition[k-1].Partition == part {
				perPartition[k-1].Rows += n
			} else {
				perPartition = append(perPartition, PartitionRows{Partition: part, Rows: n})
			}
		}
		return plan.Limit <= 0 || len(rows) < plan.Limit
	})
	if err == nil {
		err = procErr
	}
	if err != nil && standby && errors.Is(err, state.ErrRestoring) {
		// A standby rebuilding from scratch has no table to show yet.
		return nil, fmt.Errorf("%w: pull query on %s: standby state: %w", ErrPartitionUnavailable, src.Name, err)
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
	perPartition = cutPartitionRows(perPartition, len(rows))
	rs := pulledRows(plan, id, rows)
	rs.Columns = markPullKeys(sel, src, rs.Columns)
	rs.LimitReached = sel.HasLimit && len(rows) >= sel.Limit
	rs.KeysRead = keysRead
	rs.PartitionRows = perPartition
	return rs, nil
}

// PartitionRows says how many of a pull query's rows, in order, came
// from one store partition: a table is read partition by partition, so
// an instance merging the answers of several can put them in partition
// order.
type PartitionRows struct {
	Partition int32
	Rows      int
}

// cutPartitionRows keeps the counts of the first n rows.
func cutPartitionRows(parts []PartitionRows, n int) []PartitionRows {
	var out []PartitionRows
	for _, p := range parts {
		if n <= 0 {
			break
		}
		p.Rows = min(p.Rows, n)
		n -= p.Rows
		out = append(out, p)
	}
	return out
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
	ch := make(chan StreamRow, len(rows))
	for _, r := range rows {
		ch <- StreamRow{Cols: r}
	}
	close(ch)
	return &RowStream{Columns: plan.Output, C: ch, QueryID: id, Pull: true, closed: make(chan struct{}), stop: func() {}}
}
