// Package logical holds the logical plan of a query: what it computes,
// as a tree of relational steps (source, filter, project, flat-map,
// window, aggregate, join, repartition, sink, subscribe, store lookup
// and scan, JSON copy), before it is laid out as an exec.Topology of
// sub-topologies, stores and topics.
//
// Place in the flow: the planner binds a SELECT into this tree, runs its
// named rules over the plan (planner/rules.go: some decide on it before
// the physical topology is built, such as where rows are re-keyed, or
// rewrite its expressions) and builds the physical topology from it,
// compiling the expressions its nodes carry; EXPLAIN prints the tree with Print, the rules that changed
// the plan, and the topology.
//
// Example: CREATE STREAM big AS SELECT id, qty * price AS total FROM
// orders WHERE qty > 1 prints as
//
//	sink BIG (stream, topic BIG)
//	└─ project ID, TOTAL
//	   └─ filter QTY > 1
//	      └─ source ORDERS (stream, topic orders)
package logical

import "strings"

// Node is one step of a logical plan.
type Node interface {
	// Describe is the step's one line in EXPLAIN.
	Describe() string
	// Inputs are the steps whose rows the step reads, left first.
	Inputs() []Node
	// WithInputs is a copy of the step reading ins instead, one for each
	// of Inputs.
	WithInputs(ins ...Node) Node
}

// Transform rebuilds the plan bottom-up, replacing each step n by f(n)
// once its inputs are transformed; f returns n itself to keep it.
func Transform(root Node, f func(Node) Node) Node {
	ins := root.Inputs()
	if len(ins) > 0 {
		out := make([]Node, len(ins))
		changed := false
		for i, in := range ins {
			out[i] = Transform(in, f)
			changed = changed || out[i] != in
		}
		if changed {
			root = root.WithInputs(out...)
		}
	}
	return f(root)
}

// Print renders the plan as a tree, the root first and each step's
// inputs indented below it: the one printer EXPLAIN and plan tests use.
func Print(root Node) string {
	var b strings.Builder
	b.WriteString(root.Describe() + "\n")
	printInputs(&b, root, "")
	return b.String()
}

func printInputs(b *strings.Builder, n Node, indent string) {
	ins := n.Inputs()
	for i, in := range ins {
		branch, next := "├─ ", "│  "
		if i == len(ins)-1 {
			branch, next = "└─ ", "   "
		}
		b.WriteString(indent + branch + in.Describe() + "\n")
		printInputs(b, in, indent+next)
	}
}

// one wraps a single input for Inputs.
func one(in Node) []Node {
	if in == nil {
		return nil
	}
	return []Node{in}
}
