package logical

import "strings"

// FlatMap turns each row into one row per element of its table
// functions (EXPLODE, …).
type FlatMap struct {
	Functions []string
	Input     Node
}

var _ Node = (*FlatMap)(nil)

func (f *FlatMap) Describe() string { return "flat-map " + strings.Join(f.Functions, ", ") }
func (f *FlatMap) Inputs() []Node   { return one(f.Input) }
func (f *FlatMap) WithInputs(ins ...Node) Node {
	n := *f
	n.Input = ins[0]
	return &n
}
