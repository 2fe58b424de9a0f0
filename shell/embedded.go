package shell

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
)

// Embedded runs statements on an engine in this process.
type Embedded struct {
	eng *engine.Engine
	// conn reaches the engine's Kafka, for PRINT (the engine reads topics
	// only through queries).
	conn []kgo.Opt
}

// NewEmbedded wraps an open engine; conn are the options it connects to
// Kafka with (nil: PRINT is unavailable). Close closes the engine.
func NewEmbedded(eng *engine.Engine, conn []kgo.Opt) *Embedded {
	return &Embedded{eng: eng, conn: conn}
}

var _ Backend = (*Embedded)(nil)

// Execute implements Backend.
func (b *Embedded) Execute(ctx context.Context, p parser.Parsed) (*Result, error) {
	if st, ok := p.Stmt.(*parser.Print); ok {
		return b.print(ctx, st)
	}
	res, err := b.eng.ExecuteStatement(ctx, p)
	if err != nil {
		return nil, err
	}
	switch {
	case res.Rows != nil:
		return &Result{Rows: newEngineRows(res.Rows)}, nil
	case isAssert(res.Entity):
		return &Result{Message: res.Message}, nil
	case res.Entity != nil:
		if r := entityResult(p, res.Entity); r != nil {
			return r, nil
		}
		return &Result{Message: fmt.Sprintf("(no layout for a %T result)", res.Entity)}, nil
	}
	return &Result{Message: res.Message}, nil
}

// Names implements Backend.
func (b *Embedded) Names(context.Context) Names {
	var n Names
	cols := map[string]bool{}
	for _, kind := range []parser.SourceKind{parser.KindStream, parser.KindTable} {
		for _, s := range b.eng.Catalog().Sources(kind) {
			n.Sources = append(n.Sources, s.Name)
			n.Topics = append(n.Topics, s.Topic)
			for _, c := range s.Schema.Columns {
				cols[c.Name] = true
			}
		}
	}
	for c := range cols {
		n.Columns = append(n.Columns, c)
	}
	sort.Strings(n.Sources)
	sort.Strings(n.Columns)
	n.Functions = functionNames()
	return n
}

// Close implements Backend: the engine stops its queries cleanly.
func (b *Embedded) Close() error { return b.eng.Close() }

// aggregateNames are the aggregate functions completion offers; the list
// is checked against expr so a renamed function does not linger.
var aggregateNames = []string{"AVG", "COUNT", "EARLIEST_BY_OFFSET", "LATEST_BY_OFFSET", "MAX", "MIN", "SUM", "TOPK", "TOPKDISTINCT"}

func functionNames() []string {
	out := expr.ScalarNames()
	for _, a := range aggregateNames {
		if expr.IsAggregate(a) {
			out = append(out, a)
		}
	}
	for i := range out {
		out[i] = strings.ToUpper(out[i])
	}
	sort.Strings(out)
	return out
}

// engineRows adapts an engine.RowStream.
type engineRows struct {
	rs   *engine.RowStream
	cols []Column
}

func newEngineRows(rs *engine.RowStream) *engineRows {
	r := &engineRows{rs: rs}
	for _, c := range rs.Columns.Columns {
		r.cols = append(r.cols, Column{Name: c.Name, Type: c.Type.String()})
	}
	return r
}

func (r *engineRows) Columns() []Column { return r.cols }
func (r *engineRows) Pull() bool        { return r.rs.Pull }
func (r *engineRows) Close() error      { r.rs.Close(); return nil }

func (r *engineRows) Next(ctx context.Context) ([]any, bool, error) {
	select {
	case row, ok := <-r.rs.C:
		if !ok {
			return nil, false, nil
		}
		out := make([]any, len(row.Cols))
		for i, v := range row.Cols {
			out[i] = format.ToJSON(v, r.rs.Columns.Columns[i].Type)
		}
		return out, true, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// isAssert reports an ASSERT's result, which the shell prints as its
// message ("Topic t exists").
func isAssert(ent engine.Entity) bool {
	switch ent.(type) {
	case *engine.AssertTopicResult, *engine.AssertSchemaResult:
		return true
	}
	return false
}

// entityResult lays out SHOW, DESCRIBE and EXPLAIN results as the
// remote backend does: the entity in the shape the server would send
// (engine.WireEntity), printed by wireResult, so there is one layout per
// result, followed for DESCRIBE … EXTENDED by the engine's Runtime
// details; nil for an entity the server has no shape for.
func entityResult(p parser.Parsed, ent engine.Entity) *Result {
	w := engine.WireEntity(p.Text+";", ent)
	if w == nil {
		return nil
	}
	res := wireResult(w, p)
	if d, ok := ent.(*engine.SourceDescription); ok {
		// What only this process knows of the running query, which
		// ksqlDB's entity has no place for, before the warnings.
		res.After = d.Runtime + res.After
	}
	return res
}

// EntityLayout is an engine's SHOW, DESCRIBE, EXPLAIN or ASSERT result
// as the shell lays it out, for callers that show it in their own form
// (the Postgres front door sends the table as rows): the lines before
// the table, the table (nil when there is none), the lines after it.
// ok is false for an entity the shell has no layout for.
func EntityLayout(p parser.Parsed, ent engine.Entity) (before string, t *Table, after string, ok bool) {
	res := entityResult(p, ent)
	if res == nil {
		return "", nil, "", false
	}
	before = res.Text
	if res.Message != "" {
		before = res.Message + "\n" + before
	}
	return before, res.Table, res.After, true
}

// WriteEntity prints an engine's SHOW, DESCRIBE, EXPLAIN or ASSERT result
// to w as the shell prints it (tables in the table format), for callers
// that print results without a shell, such as `sluice run`.
func WriteEntity(w io.Writer, p parser.Parsed, ent engine.Entity) {
	res := entityResult(p, ent)
	if res == nil {
		res = &Result{Message: fmt.Sprintf("(no layout for a %T result)", ent)}
	}
	writeResult(w, FormatTable, res)
}
