package logical

import "github.com/sluice-sql/sluice/parser"

// Join joins two inputs on a condition: stream-stream (windowed),
// stream-table, table-table or table-table on a foreign key.
type Join struct {
	// Kind is INNER, LEFT OUTER, RIGHT OUTER or FULL OUTER.
	Kind string
	On   string
	// OnExpr is the bound ON clause On prints, which the builder
	// compiles.
	OnExpr parser.Expr
	// Index is the join's place in the FROM clause (0 for the first).
	Index int
	// OnSides are the bound sides of the ON equality, the left input's
	// first: what each input must be keyed by.
	OnSides     [2]parser.Expr
	Left, Right Node

	// Set by the planner's repartition rule (not printed):
	// Keyed says which inputs were keyed by their side of ON as they
	// came (before the rule re-keyed one to match the other's key
	// format); ForeignKey that the join is a foreign-key join of two
	// tables (no input is re-keyed); Candidates the columns of the joined
	// row that hold the join key; Keying how the result is keyed.
	Keyed      [2]bool
	ForeignKey bool
	Candidates []string
	Keying     Keying
}

var _ Node = (*Join)(nil)

func (j *Join) Describe() string { return "join " + j.Kind + " ON " + j.On }
func (j *Join) Inputs() []Node   { return []Node{j.Left, j.Right} }
func (j *Join) WithInputs(ins ...Node) Node {
	n := *j
	n.Left, n.Right = ins[0], ins[1]
	return &n
}
