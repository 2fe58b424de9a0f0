package logical

import "strings"

// Project computes the result's columns (the SELECT list), key columns
// first.
type Project struct {
	Names []string
	Input Node
}

var _ Node = (*Project)(nil)

func (p *Project) Describe() string { return "project " + strings.Join(p.Names, ", ") }
func (p *Project) Inputs() []Node   { return one(p.Input) }
func (p *Project) WithInputs(ins ...Node) Node {
	n := *p
	n.Input = ins[0]
	return &n
}
