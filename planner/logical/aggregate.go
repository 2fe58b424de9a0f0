package logical

import (
	"strings"

	"github.com/sluice-sql/sluice/parser"
)

// Aggregate groups rows by its keys and folds each group with the
// aggregate functions, keeping the groups in a state store.
type Aggregate struct {
	GroupBy []string
	// Keys are the bound GROUP BY expressions GroupBy prints.
	Keys []parser.Expr
	// Calls are the aggregate calls of the SELECT list and HAVING, each
	// once, in the order they appear. The builder compiles them where
	// they stand, in the Project above and the HAVING Filter: a rule
	// that rewrites a call rewrites it there too.
	Calls []*parser.FuncCall
	Input Node
}

var _ Node = (*Aggregate)(nil)

func (a *Aggregate) Describe() string {
	calls := make([]string, len(a.Calls))
	for i, c := range a.Calls {
		calls[i] = c.String()
	}
	out := "aggregate " + strings.Join(calls, ", ")
	if len(a.GroupBy) > 0 {
		out += " by " + strings.Join(a.GroupBy, ", ")
	}
	return out
}
func (a *Aggregate) Inputs() []Node { return one(a.Input) }
func (a *Aggregate) WithInputs(ins ...Node) Node {
	n := *a
	n.Input = ins[0]
	return &n
}
