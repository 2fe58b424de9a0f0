package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// showStatement is SHOW STREAMS, TABLES, QUERIES, TOPICS, PROPERTIES,
// TYPES and FUNCTIONS.
type showStatement struct{}

func (showStatement) execute(ctx context.Context, e *Engine, st *parser.Show, c call, sess *session) (*Result, error) {
	text, ent, err := e.show(ctx, st, sess.snapshot())
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Text: text, Entity: ent}, nil
}

// describeStatement is DESCRIBE of a stream or table, or DESCRIBE
// FUNCTION.
type describeStatement struct{}

func (describeStatement) execute(_ context.Context, e *Engine, st *parser.Describe, c call, sess *session) (*Result, error) {
	if st.Function {
		f, ok := expr.LookupFunction(st.Name)
		if !ok {
			return nil, fmt.Errorf("%w: Can't find any functions with the name '%s'", expr.ErrUnknownFunction, strings.ToUpper(st.Name))
		}
		text := fmt.Sprintf("Name        : %s\nType        : %s\nCategory    : %s\nOverview    : %s\n", f.Name, f.Type, f.Category, f.Description)
		return &Result{Statement: c.text, Text: text, Entity: &FunctionDescription{f}}, nil
	}
	text, ent, err := e.describe(st, sess.snapshot())
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Text: text, Entity: ent}, nil
}

func (e *Engine) show(ctx context.Context, st *parser.Show, props map[string]string) (string, Entity, error) {
	var b strings.Builder
	switch st.What {
	case parser.ShowStreams, parser.ShowTables:
		kind := parser.KindStream
		if st.What == parser.ShowTables {
			kind = parser.KindTable
		}
		l := e.sourceList(kind)
		for _, s := range l.Sources {
			fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", s.Name, s.Topic, s.KeyFormat, s.ValueFormat)
		}
		return b.String(), l, nil
	case parser.ShowQueries:
		l := e.queryList()
		for _, q := range l.Queries {
			state := q.State
			if q.Error != "" {
				state += ": " + q.Error
			}
			topic := ""
			if len(q.SinkTopics) > 0 {
				topic = q.SinkTopics[0]
			}
			fmt.Fprintf(&b, "%s\t%s\t%s\n", q.ID, topic, state)
			if st.Extended {
				e.writeOwners(&b, q.ID)
			}
		}
		return b.String(), l, nil
	case parser.ShowTopics:
		l, err := e.topicList(ctx)
		if err != nil {
			return "", nil, err
		}
		return e.showTopicsText(l), l, nil
	case parser.ShowProperties:
		l := e.propertyList(props, overrides(ctx))
		return e.showPropertiesText(l), l, nil
	case parser.ShowTypes:
		l := &TypeList{Types: e.cat.Types()}
		for _, t := range l.Types {
			fmt.Fprintf(&b, "%s\t%s\n", t.Name, t.Type)
		}
		return b.String(), l, nil
	case parser.ShowFunctions:
		l := &FunctionList{Functions: expr.Functions()}
		fmt.Fprintf(&b, "%-24s | %-10s | %s\n", "Function Name", "Type", "Category")
		for _, f := range l.Functions {
			fmt.Fprintf(&b, "%-24s | %-10s | %s\n", f.Name, f.Type, f.Category)
		}
		return b.String(), l, nil
	}
	return "", nil, fmt.Errorf("%w: SHOW %s is not supported yet", planner.ErrUnsupported, st.What)
}
