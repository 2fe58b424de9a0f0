package logical

// Answer returns the result's rows as of now to the client and ends: a
// pull query.
type Answer struct {
	Input Node
}

var _ Node = (*Answer)(nil)

func (a *Answer) Describe() string { return "answer (the rows as of now, then the query ends)" }
func (a *Answer) Inputs() []Node   { return one(a.Input) }
func (a *Answer) WithInputs(ins ...Node) Node {
	n := *a
	n.Input = ins[0]
	return &n
}
