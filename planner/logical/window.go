package logical

import (
	"strings"

	"github.com/sluice-sql/sluice/parser"
)

// Window assigns each row to its windows (WINDOW TUMBLING, HOPPING,
// SESSION) before an aggregate.
type Window struct {
	Spec  *parser.WindowSpec
	Input Node
}

var _ Node = (*Window)(nil)

func (w *Window) Describe() string { return "window " + strings.TrimPrefix(w.Spec.String(), "WINDOW ") }
func (w *Window) Inputs() []Node   { return one(w.Input) }
func (w *Window) WithInputs(ins ...Node) Node {
	n := *w
	n.Input = ins[0]
	return &n
}
