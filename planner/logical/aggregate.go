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
	Keys       []parser.Expr
	Aggregates []string
	Input      Node
}

var _ Node = (*Aggregate)(nil)

func (a *Aggregate) Describe() string {
	out := "aggregate " + strings.Join(a.Aggregates, ", ")
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
