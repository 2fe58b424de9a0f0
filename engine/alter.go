package engine

import (
	"context"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// alterCommand is ALTER STREAM/TABLE … ADD COLUMN.
type alterCommand struct{}

func (alterCommand) check(_ context.Context, e *Engine, st *parser.AlterSource, _ call) (*Result, bool, error) {
	_, err := planner.AlterSource(e.cat, st)
	return nil, false, err
}

func (alterCommand) apply(_ context.Context, e *Engine, st *parser.AlterSource, c call) (*Result, error) {
	src, err := planner.AlterSource(e.cat, st)
	if err != nil {
		return nil, err
	}
	if err := e.cat.Add(src, true); err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Message: st.Kind.String()[:1] + strings.ToLower(st.Kind.String()[1:]) + " altered."}, nil
}

func (alterCommand) statusID(*parser.AlterSource) string { return "" }
