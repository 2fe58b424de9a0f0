package logical

import "github.com/sluice-sql/sluice/parser"

// Filter keeps the rows its predicate holds for (WHERE, HAVING).
type Filter struct {
	Pred  parser.Expr
	Input Node
}

var _ Node = (*Filter)(nil)

func (f *Filter) Describe() string { return "filter " + f.Pred.String() }
func (f *Filter) Inputs() []Node   { return one(f.Input) }
func (f *Filter) WithInputs(ins ...Node) Node {
	n := *f
	n.Input = ins[0]
	return &n
}
