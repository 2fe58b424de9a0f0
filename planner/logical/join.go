package logical

// Join joins two inputs on a condition: stream-stream (windowed),
// stream-table, table-table or table-table on a foreign key.
type Join struct {
	// Kind is INNER, LEFT OUTER, RIGHT OUTER or FULL OUTER.
	Kind        string
	On          string
	Left, Right Node
}

var _ Node = (*Join)(nil)

func (j *Join) Describe() string { return "join " + j.Kind + " ON " + j.On }
func (j *Join) Inputs() []Node   { return []Node{j.Left, j.Right} }
func (j *Join) WithInputs(ins ...Node) Node {
	n := *j
	n.Left, n.Right = ins[0], ins[1]
	return &n
}
