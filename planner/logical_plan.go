package planner

import (
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// builtChain is what the builder made of the query's final chain, for
// the rules that run on the built plan.
type builtChain struct {
	sub     *exec.SubTopology
	filter  *exec.FilterNode
	project *exec.ProjectNode
	sink    *exec.SinkNode
	// evaluated marks the row positions the filter and the computed
	// items read (not those only selected), from their one compilation.
	evaluated map[int]bool
}

// readsScope resolves through a scope and records the row positions it
// resolved, so the builder learns what an expression reads from the
// compilation it does anyway.
type readsScope struct {
	expr.Scope
	reads map[int]bool
}

func (r *readsScope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	i, t, err := r.Scope.Resolve(ref)
	if err == nil {
		r.reads[i] = true
	}
	return i, t, err
}

// pull reports whether the query is a pull query: a SELECT without EMIT
// that answers with the rows as of now.
func (p *planning) pull() bool {
	return p.target == nil && p.sel.Emit == parser.EmitNone
}

func exprTexts(es []parser.Expr) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}
