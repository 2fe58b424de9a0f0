package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// showStatement is SHOW STREAMS, TABLES, QUERIES, TOPICS, PROPERTIES,
// TYPES and FUNCTIONS.
type showStatement struct{}

func (showStatement) execute(ctx context.Context, e *Engine, st *parser.Show, c call, sess *session) (*Result, error) {
	ent, err := e.show(ctx, st, sess.snapshot())
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Entity: ent}, nil
}

// describeStatement is DESCRIBE of a stream or table, or DESCRIBE
// FUNCTION.
type describeStatement struct{}

func (describeStatement) execute(_ context.Context, e *Engine, st *parser.Describe, c call, sess *session) (*Result, error) {
	if st.Function {
		if fs := e.cat.Functions(strings.ToUpper(st.Name)); len(fs) > 0 || len(e.cat.Functions(st.Name)) > 0 {
			if len(fs) == 0 {
				fs = e.cat.Functions(st.Name)
			}
			return &Result{Statement: c.text, Entity: &FunctionDescription{FunctionInfo: userFunctionInfo(fs[0]), Overloads: fs}}, nil
		}
		f, ok := expr.LookupFunction(st.Name)
		if !ok {
			return nil, fmt.Errorf("%w: Can't find any functions with the name '%s'", expr.ErrUnknownFunction, strings.ToUpper(st.Name))
		}
		return &Result{Statement: c.text, Entity: &FunctionDescription{FunctionInfo: f}}, nil
	}
	ent, err := e.describe(st, sess.snapshot())
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Entity: ent}, nil
}

func (e *Engine) show(ctx context.Context, st *parser.Show, props map[string]string) (Entity, error) {
	switch st.What {
	case parser.ShowStreams, parser.ShowTables:
		kind := parser.KindStream
		if st.What == parser.ShowTables {
			kind = parser.KindTable
		}
		return e.sourceList(kind), nil
	case parser.ShowQueries:
		return e.queryList(), nil
	case parser.ShowTopics:
		return e.topicList(ctx)
	case parser.ShowProperties:
		return e.propertyList(props, overrides(ctx)), nil
	case parser.ShowTypes:
		return &TypeList{Types: e.cat.Types()}, nil
	case parser.ShowFunctions:
		fns := expr.Functions()
		seen := map[string]bool{}
		for _, f := range e.cat.UserFunctions() {
			if !seen[f.Name] {
				seen[f.Name] = true
				fns = append(fns, userFunctionInfo(f))
			}
		}
		sort.Slice(fns, func(i, j int) bool { return fns[i].Name < fns[j].Name })
		return &FunctionList{Functions: fns}, nil
	}
	return nil, fmt.Errorf("%w: SHOW %s is not supported yet", planner.ErrUnsupported, st.What)
}

// UserFunctionCategory is the category SHOW FUNCTIONS gives user-defined
// functions.
const UserFunctionCategory = "USER-DEFINED"

func userFunctionInfo(f *expr.UserFunction) expr.FunctionInfo {
	info := expr.FunctionInfo{Name: f.Name, Type: "SCALAR", Category: UserFunctionCategory,
		Description: fmt.Sprintf("A user-defined function (LANGUAGE %s).", f.Language)}
	switch f.Kind {
	case parser.TableFunction:
		info.Type = "TABLE"
		info.Description = fmt.Sprintf("A user-defined table function (LANGUAGE %s).", f.Language)
	case parser.AggregateFunction:
		info.Type = expr.KindAggregate
		info.Description = fmt.Sprintf("A user-defined aggregate function (LANGUAGE %s).", f.Language)
	}
	if f.Dir != "" {
		info.Description = strings.TrimSuffix(info.Description, ".") + ", from --udf-dir " + f.Dir + "."
	}
	return info
}
