package pgwire

import (
	"context"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/pgcatalog"
	"github.com/sluice-sql/sluice/types"
)

// Backend is what pgwire needs of the server it fronts. Package server
// implements it over the same paths its REST API takes, so a statement
// sent over the Postgres protocol does what it does sent to /ksql or
// /query-stream.
type Backend interface {
	// Execute runs one statement that is not a query (DDL, INSERT …
	// VALUES, TERMINATE, SHOW, DESCRIBE, EXPLAIN, …) as /ksql runs it,
	// with props the session's properties.
	Execute(ctx context.Context, p parser.Parsed, props map[string]string) (*engine.Result, error)
	// Query starts a SELECT: a pull query's rows (gathered from the
	// instances owning them, as /query-stream does) or a push query's
	// stream, which ends at its LIMIT, on Close, or when ctx ends.
	Query(ctx context.Context, p parser.Parsed, props map[string]string) (Rows, error)
	// Schema plans a SELECT and gives its columns without running it.
	Schema(ctx context.Context, sel *parser.Select, props map[string]string) (types.Schema, error)
	// Source is a stream's or table's columns, for the types of the
	// parameters compared with or inserted into them; ok is false for an
	// unknown name.
	Source(name string) (types.Schema, bool)
	// Relations are the streams and tables as pgcatalog shows them.
	Relations() []pgcatalog.Relation
}

// Rows are a query's rows as the Backend gives them.
type Rows interface {
	Columns() types.Schema
	// Next returns the next row; ok is false once the query ended (its
	// rows all read, its LIMIT reached) and err says why when it failed
	// or ctx ended first.
	Next(ctx context.Context) (row []any, ok bool, err error)
	// Push reports a push query: rows arrive until LIMIT or Close.
	Push() bool
	Close()
}

// StreamRows are the rows of an engine RowStream.
func StreamRows(rs *engine.RowStream) Rows { return &streamRows{rs: rs} }

type streamRows struct{ rs *engine.RowStream }

func (r *streamRows) Columns() types.Schema { return r.rs.Columns }
func (r *streamRows) Push() bool            { return !r.rs.Pull }
func (r *streamRows) Close()                { r.rs.Close() }

func (r *streamRows) Next(ctx context.Context) ([]any, bool, error) {
	select {
	case row, ok := <-r.rs.C:
		if !ok {
			return nil, false, r.rs.Err()
		}
		return row.Cols, true, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// SliceRows are rows already gathered.
func SliceRows(cols types.Schema, rows [][]any) Rows { return &sliceRows{cols: cols, rows: rows} }

type sliceRows struct {
	cols types.Schema
	rows [][]any
}

func (r *sliceRows) Columns() types.Schema { return r.cols }
func (r *sliceRows) Push() bool            { return false }
func (r *sliceRows) Close()                { r.rows = nil }

func (r *sliceRows) Next(context.Context) ([]any, bool, error) {
	if len(r.rows) == 0 {
		return nil, false, nil
	}
	row := r.rows[0]
	r.rows = r.rows[1:]
	return row, true, nil
}
