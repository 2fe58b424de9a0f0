package logical

import "fmt"

// JSONCopy marks the chain below it (an optional filter and a projection
// of one source into a sink, JSON on both sides) as one a task may run by
// copying the text of the selected columns into the result (the
// json-copy rule); records the copy cannot reproduce exactly take the
// chain.
type JSONCopy struct {
	Copied, Columns int
	Input           Node
}

var _ Node = (*JSONCopy)(nil)

func (c *JSONCopy) Describe() string {
	return fmt.Sprintf("json copy (%d of %d value columns copied as text)", c.Copied, c.Columns)
}
func (c *JSONCopy) Inputs() []Node { return one(c.Input) }
func (c *JSONCopy) WithInputs(ins ...Node) Node {
	n := *c
	n.Input = ins[0]
	return &n
}
