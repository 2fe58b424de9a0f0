package logical

import (
	"strings"

	"github.com/sluice-sql/sluice/parser"
)

// Repartition re-keys its input by new key expressions and sends each
// row to its new key's partition through an internal topic, so that a
// following aggregate or join sees every row of a key in one task.
type Repartition struct {
	By []string
	// Exprs are the bound expressions By prints, for a PARTITION BY:
	// what the builder keys the rows by (an aggregate's or a join
	// input's repartition is keyed by its GROUP BY or its side of ON).
	Exprs []parser.Expr
	// Carries, when set, lists the only input columns a join input's
	// repartition topic carries, by their names in the joined row (the
	// join-column-pruning rule); nil: all of them. Its key, time and
	// pseudo columns, and the hidden slots of joins before, always go.
	Carries []string
	// Keying is how the repartition topic is keyed (not printed).
	Keying Keying
	Input  Node
}

var _ Node = (*Repartition)(nil)

func (r *Repartition) Describe() string {
	out := "repartition by " + strings.Join(r.By, ", ")
	switch {
	case r.Carries == nil:
	case len(r.Carries) == 0:
		out += " (carries no input columns)"
	default:
		out += " (carries " + strings.Join(r.Carries, ", ") + ")"
	}
	return out
}
func (r *Repartition) Inputs() []Node { return one(r.Input) }
func (r *Repartition) WithInputs(ins ...Node) Node {
	n := *r
	n.Input = ins[0]
	return &n
}
