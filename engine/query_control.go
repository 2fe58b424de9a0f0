package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser"
)

// terminateCommand is TERMINATE of one query or ALL.
type terminateCommand struct{}

func (terminateCommand) check(_ context.Context, e *Engine, st *parser.Terminate, _ call) (*Result, bool, error) {
	if !st.All && e.query(strings.ToUpper(st.QueryID)) == nil {
		return nil, false, unknownQuery(st.QueryID)
	}
	return nil, false, nil
}

func (terminateCommand) apply(ctx context.Context, e *Engine, st *parser.Terminate, c call) (*Result, error) {
	msg, err := e.terminate(ctx, st)
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Message: msg}, nil
}

func (terminateCommand) statusID(st *parser.Terminate) string {
	if st.All {
		return "terminate/ALL/execute"
	}
	return "terminate/" + st.QueryID + "/execute"
}

// pauseCommand is PAUSE and RESUME of one query or ALL.
type pauseCommand struct{}

func (pauseCommand) check(_ context.Context, e *Engine, st *parser.PauseQuery, _ call) (*Result, bool, error) {
	if !st.All && e.query(strings.ToUpper(st.QueryID)) == nil {
		return nil, false, unknownQuery(st.QueryID)
	}
	return nil, false, nil
}

func (pauseCommand) apply(_ context.Context, e *Engine, st *parser.PauseQuery, c call) (*Result, error) {
	msg, err := e.pause(st)
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Message: msg}, nil
}

func (pauseCommand) statusID(*parser.PauseQuery) string { return "" }

// pause applies PAUSE / RESUME to one query or all: the runner stops or
// starts fetching; the query keeps its group membership and state.
func (e *Engine) pause(st *parser.PauseQuery) (string, error) {
	verb := "paused"
	if st.Resume {
		verb = "resumed"
	}
	set := func(q *Query) {
		e.mu.Lock()
		q.paused = !st.Resume
		r := q.runner
		e.mu.Unlock()
		if r != nil {
			r.SetPaused(!st.Resume)
		}
	}
	if st.All {
		for _, q := range e.Queries() {
			set(q)
		}
		return "All queries " + verb + ".", nil
	}
	q := e.query(strings.ToUpper(st.QueryID))
	if q == nil {
		return "", unknownQuery(st.QueryID)
	}
	set(q)
	return fmt.Sprintf("Query %s %s.", q.ID, verb), nil
}

func (e *Engine) terminate(ctx context.Context, st *parser.Terminate) (string, error) {
	if st.All {
		for _, q := range e.Queries() {
			if err := e.terminateQuery(ctx, q); err != nil {
				return "", err
			}
		}
		return "All queries terminated.", nil
	}
	q := e.query(strings.ToUpper(st.QueryID))
	if q == nil {
		return "", unknownQuery(st.QueryID)
	}
	if err := e.terminateQuery(ctx, q); err != nil {
		return "", err
	}
	return fmt.Sprintf("Query %s terminated.", q.ID), nil
}

func unknownQuery(id string) error {
	return fmt.Errorf("unknown queryId: %s", id)
}
