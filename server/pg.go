package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/pgcatalog"
	"github.com/sluice-sql/sluice/pgwire"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// PGBackend is what the Postgres front door (package pgwire) runs
// statements through: the paths of this server's REST API, so a
// statement does over Postgres what it does over /ksql and
// /query-stream.
func (s *Server) PGBackend() pgwire.Backend { return pgBackend{s} }

type pgBackend struct{ s *Server }

var errShuttingDown = errors.New("the server is shutting down")

// Execute runs a statement as /ksql does: through the engine's
// command path (the command topic) for catalog statements, with the
// session's properties; the command status is kept for GET /status.
func (b pgBackend) Execute(ctx context.Context, p parser.Parsed, props map[string]string) (*engine.Result, error) {
	if b.s.shuttingDown() {
		return nil, errShuttingDown
	}
	res, err := b.s.eng.ExecuteStatement(engine.WithProperties(ctx, props), p)
	if err != nil {
		return nil, err
	}
	if res.Entity == nil && res.Rows == nil {
		b.s.resultEntity(p, res)
	}
	return res, nil
}

// Query starts a SELECT as /query-stream does: a pull query on a table
// is answered by the instances owning its partitions when this server
// is one of several; anything else runs on this instance.
func (b pgBackend) Query(ctx context.Context, p parser.Parsed, props map[string]string) (pgwire.Rows, error) {
	s := b.s
	if s.shuttingDown() {
		return nil, errShuttingDown
	}
	sel, ok := p.Stmt.(*parser.Select)
	if !ok {
		return nil, fmt.Errorf("%w: not a query", planner.ErrInvalid)
	}
	pctx := engine.WithProperties(ctx, props)
	if s.opts.Cluster != nil {
		target, ok, err := s.eng.PullTarget(pctx, sel)
		if err != nil {
			return nil, err
		}
		if ok {
			res, err := s.pullGathered(pctx, p, sel, p.Text, props, target)
			if err != nil {
				return nil, err
			}
			rows, err := decodePullRows(res)
			if err != nil {
				return nil, err
			}
			return pgwire.SliceRows(res.columns, rows), nil
		}
	}
	res, err := s.eng.ExecuteStatement(pctx, p)
	if err != nil {
		return nil, err
	}
	if res.Rows == nil {
		return nil, fmt.Errorf("%w: the query gave no rows", planner.ErrInvalid)
	}
	return pgwire.StreamRows(res.Rows), nil
}

// decodePullRows reads a gathered pull query's rows, JSON as the REST
// API writes them, back into engine values of their columns' types.
func decodePullRows(res *pullResult) ([][]any, error) {
	out := make([][]any, 0, len(res.rows))
	cols := res.columns.Columns
	for _, raw := range res.rows {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var vals []any
		if err := dec.Decode(&vals); err != nil {
			return nil, fmt.Errorf("pull query row %.200s: %w", raw, err)
		}
		if len(vals) != len(cols) {
			return nil, fmt.Errorf("pull query row has %d values for %d columns", len(vals), len(cols))
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			x, err := format.FromJSON(v, cols[i].Type)
			if err != nil {
				return nil, fmt.Errorf("pull query column %s: %w", cols[i].Name, err)
			}
			row[i] = x
		}
		out = append(out, row)
	}
	return out, nil
}

// Schema plans a SELECT as the engine would run it and gives its
// columns.
func (b pgBackend) Schema(_ context.Context, sel *parser.Select, _ map[string]string) (types.Schema, error) {
	cat := b.s.eng.Catalog()
	st, err := planner.ResolveTypes(cat, sel)
	if err != nil {
		return types.Schema{}, err
	}
	resolved, ok := st.(*parser.Select)
	if !ok {
		return types.Schema{}, fmt.Errorf("%w: not a query", planner.ErrInvalid)
	}
	plan, err := planner.PlanQuery(cat, resolved, nil, "pg_describe", planner.Options{ServiceID: b.s.eng.ServiceID()})
	if err != nil {
		return types.Schema{}, err
	}
	return plan.Output, nil
}

// Source is a stream's or table's columns.
func (b pgBackend) Source(name string) (types.Schema, bool) {
	src, err := b.s.eng.Catalog().Lookup(name)
	if err != nil {
		return types.Schema{}, false
	}
	return src.Schema, true
}

// Relations are the catalog's streams and tables, sorted by kind and
// name.
func (b pgBackend) Relations() []pgcatalog.Relation {
	cat := b.s.eng.Catalog()
	var out []pgcatalog.Relation
	for _, kind := range []parser.SourceKind{parser.KindStream, parser.KindTable} {
		for _, src := range cat.Sources(kind) {
			r := pgcatalog.Relation{Name: src.Name, Kind: kind.String(), Topic: src.Topic}
			// A windowed source's rows carry their window after the key, as
			// SELECT * gives them, and the window is part of the row's
			// identity.
			windowed := src.Window != exec.NotWindowed
			addWindow := func() {
				r.Columns = append(r.Columns,
					pgcatalog.Column{Name: "WINDOWSTART", Type: types.BigIntType, Key: true},
					pgcatalog.Column{Name: "WINDOWEND", Type: types.BigIntType, Key: true})
				windowed = false
			}
			for i, c := range src.Schema.Columns {
				if windowed && !c.Key && (i == 0 || src.Schema.Columns[i-1].Key) {
					addWindow()
				}
				r.Columns = append(r.Columns, pgcatalog.Column{Name: c.Name, Type: c.Type, Key: c.Key})
			}
			if windowed {
				addWindow()
			}
			out = append(out, r)
		}
	}
	return out
}
