package planner

import (
	"fmt"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// Table functions in a SELECT list (EXPLODE(arr), EXPLODE(arr)->F1 + 1)
// are lifted out of the items: each call becomes a column KSQL_SYNTH_n
// that a flat-map step appends to the input row, and the projection
// reads those columns where the calls stood.

func (p *planning) hasTableFunctions() bool {
	found := false
	for _, it := range p.items {
		walkExpr(it.expr, func(e parser.Expr) {
			if f, ok := e.(*parser.FuncCall); ok && p.cat.IsTableFunction(f.Name) {
				found = true
			}
		})
	}
	return found
}

// flatMap plans the table functions of the items: the node that runs
// them, the scope the projection compiles the rewritten items against,
// and the rewritten items (p.rewritten).
func (p *planning) flatMap() (exec.Node, expr.Scope, error) {
	if p.src.Kind == parser.KindTable {
		return nil, nil, posErr(p.sel.Pos, fmt.Errorf("%w: Table source is not supported with table functions", ErrInvalid))
	}
	if p.join != nil {
		return nil, nil, posErr(p.sel.Pos, fmt.Errorf("%w: table functions over a join", ErrUnsupported))
	}
	node := &exec.FlatMapNode{}
	synth := &synthScope{inner: p.sc, base: len(p.sc.schema.Columns)}
	var lifted error
	p.rewritten = make([]parser.Expr, len(p.items))
	for i, it := range p.items {
		p.rewritten[i] = parser.Rewrite(it.expr, func(e parser.Expr) parser.Expr {
			call, ok := e.(*parser.FuncCall)
			if !ok || !p.cat.IsTableFunction(call.Name) || lifted != nil {
				return nil
			}
			tc, err := expr.CompileTableCall(call, p.withFunctions(p.sc))
			if err != nil {
				lifted = err
				return e
			}
			name := fmt.Sprintf("KSQL_SYNTH_%d", len(node.Funcs))
			node.Funcs = append(node.Funcs, tc.Eval)
			node.Names = append(node.Names, name)
			synth.cols = append(synth.cols, types.Column{Name: name, Type: tc.Type})
			return &parser.ColumnRef{Pos: call.Pos, Name: name}
		})
	}
	if lifted != nil {
		return nil, nil, lifted
	}
	return node, synth, nil
}

// synthScope resolves the flat-map's columns, appended after the input
// row's, and every other name as the input scope does.
type synthScope struct {
	inner expr.Scope
	base  int
	cols  []types.Column
}

func (s *synthScope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	if ref.Source == "" {
		for j, c := range s.cols {
			if c.Name == ref.Name {
				return s.base + j, c.Type, nil
			}
		}
	}
	return s.inner.Resolve(ref)
}
