package logical

import (
	"strings"

	"github.com/sluice-sql/sluice/parser"
)

// FlatMap turns each row into one row per element of its table
// functions (EXPLODE, …).
type FlatMap struct {
	// Calls are the table function calls of the SELECT list, in order.
	// The builder lifts them out of the Project above, where they stand:
	// a rule that rewrites a call rewrites it there too.
	Calls []*parser.FuncCall
	Input Node
}

var _ Node = (*FlatMap)(nil)

func (f *FlatMap) Describe() string {
	calls := make([]string, len(f.Calls))
	for i, c := range f.Calls {
		calls[i] = c.String()
	}
	return "flat-map " + strings.Join(calls, ", ")
}
func (f *FlatMap) Inputs() []Node { return one(f.Input) }
func (f *FlatMap) WithInputs(ins ...Node) Node {
	n := *f
	n.Input = ins[0]
	return &n
}
