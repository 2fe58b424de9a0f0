package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// insertSelectCommand is INSERT INTO … SELECT: a persistent query
// writing into an existing stream.
type insertSelectCommand struct{}

func (insertSelectCommand) check(_ context.Context, e *Engine, st *parser.InsertSelect, c call) (*Result, bool, error) {
	_, err := e.planInsert(st, c.text, c.props, 0)
	return nil, false, err
}

func (insertSelectCommand) apply(ctx context.Context, e *Engine, st *parser.InsertSelect, c call) (*Result, error) {
	q, err := e.insertSelect(ctx, st, c.text, c.props)
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Query: q, Message: fmt.Sprintf("Created query with ID %s", q.ID)}, nil
}

func (insertSelectCommand) statusID(st *parser.InsertSelect) string {
	return fmt.Sprintf("stream/`%s`/create", st.Target)
}

// planInsert plans INSERT INTO … SELECT as query number n of its target
// without side effects.
func (e *Engine) planInsert(st *parser.InsertSelect, text string, props map[string]string, n int) (*planner.Query, error) {
	if st.Query.HasLimit {
		return nil, fmt.Errorf("%w: INSERT INTO statements don't support LIMIT clause.", planner.ErrUnsupported)
	}
	target, err := e.cat.LookupAt(st.Target, st.TargetPos)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("INSERTQUERY_%s_%d", strings.ToUpper(target.Name), n)
	return planner.PlanQuery(e.cat, st.Query, &planner.Target{Name: target.Name, Existing: target, Text: text}, id, e.planOptions(props))
}

// insertSelect numbers the INSERT queries of each target 1, 2, … in the
// order they are applied, never reusing a number (a terminated query's
// id stays its own): so the same statements, run again or replayed from
// the command topic, get the same ids and resume the same consumer
// groups and state.
func (e *Engine) insertSelect(ctx context.Context, st *parser.InsertSelect, text string, props map[string]string) (*Query, error) {
	key := strings.ToUpper(st.Target)
	e.mu.Lock()
	n := e.insertSeq[key] + 1
	e.mu.Unlock()
	plan, err := e.planInsert(st, text, props, n)
	if err != nil {
		return nil, err
	}
	q, err := e.start(ctx, plan, text, props)
	if err != nil {
		return nil, err
	}
	// Counted only once started: a command retried after a broker error
	// must get the same number.
	e.mu.Lock()
	e.insertSeq[key] = n
	e.mu.Unlock()
	return q, nil
}
