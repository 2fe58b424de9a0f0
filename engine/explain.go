package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// explainStatement is EXPLAIN of a statement or of a running query.
type explainStatement struct{}

func (explainStatement) execute(_ context.Context, e *Engine, st *parser.Explain, c call, sess *session) (*Result, error) {
	ent, err := e.explain(st, sess.snapshot())
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Entity: ent}, nil
}

func (e *Engine) explain(st *parser.Explain, props map[string]string) (*QueryDescription, error) {
	if st.Statement == nil {
		q := e.query(strings.ToUpper(st.QueryID))
		if q == nil {
			return nil, fmt.Errorf("query %s %w", st.QueryID, planner.ErrNotFound)
		}
		d := &QueryDescription{QuerySummary: e.querySummary(q), Topology: q.Plan.Explain()}
		if q.Plan.Sink != nil {
			d.Fields = fieldsOf(q.Plan.Sink.Schema)
		}
		if parsed, err := parser.ParseOne(q.Statement); err == nil {
			if sel := selectOf(parsed); sel != nil {
				d.Warning = e.graceWarning(sel)
			}
		}
		warnings, err := e.scaleWarnings(q, props)
		if err != nil {
			return nil, fmt.Errorf("explain %s: %w", q.ID, err)
		}
		d.Warnings = warnings
		return d, nil
	}
	var sel *parser.Select
	var target *planner.Target
	id := "EXPLAIN"
	switch s := st.Statement.(type) {
	case *parser.Select:
		sel = s
	case *parser.CreateSource:
		if s.Query == nil {
			return nil, fmt.Errorf("%w: EXPLAIN takes a query", planner.ErrInvalid)
		}
		t, err := planner.TargetOf(s, "")
		if err != nil {
			return nil, err
		}
		sel, target, id = s.Query, t, queryID(s.Kind, s.Name)
	case *parser.InsertSelect:
		t, err := e.cat.Lookup(s.Target)
		if err != nil {
			return nil, err
		}
		sel, target = s.Query, &planner.Target{Name: t.Name, Existing: t}
	default:
		return nil, fmt.Errorf("%w: EXPLAIN takes a query", planner.ErrInvalid)
	}
	plan, err := planner.PlanQuery(e.cat, sel, target, id, e.planOptions(props))
	if err != nil {
		return nil, err
	}
	d := &QueryDescription{QuerySummary: QuerySummary{ID: id, Statement: fmt.Sprint(st.Statement), State: "NOT_RUNNING", Sources: plan.Sources},
		Topology: plan.Explain(), Warning: e.graceWarning(sel), Fields: fieldsOf(plan.Output)}
	if plan.Sink != nil {
		d.Sinks, d.SinkTopics, d.Fields = []string{plan.Sink.Name}, []string{plan.Sink.Topic}, fieldsOf(plan.Sink.Schema)
	}
	return d, nil
}
