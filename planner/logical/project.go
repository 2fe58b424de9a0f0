package logical

import (
	"strings"

	"github.com/sluice-sql/sluice/parser"
)

// Project computes the result's columns (the SELECT list), key columns
// first.
type Project struct {
	// Columns are the result's columns as bound: each expression and its
	// output name (ksqlDB's, given before any rule rewrites an
	// expression: KSQL_COL_n for an unaliased expression, * expanded).
	Columns []Column
	// Items is the SELECT list as written, for a join: its * and the
	// names of its qualified columns depend on how the join lays out its
	// row, so the builder expands it and Columns are filled in after.
	Items []parser.SelectItem
	// PartitionBy are the bound PARTITION BY expressions the result is
	// keyed by (a persistent query's rows reach them through a
	// Repartition below, whose expressions then count).
	PartitionBy []parser.Expr
	Input       Node
}

// Column is one output column of a Project.
type Column struct {
	Expr parser.Expr
	Name string
	// Pos is where the SELECT item that gave the column is.
	Pos parser.Pos
	// Star marks a column a * expanded to, and SourceKey one of those
	// that is a key column of the source (PARTITION BY moves it to the
	// value).
	Star, SourceKey bool
}

var _ Node = (*Project)(nil)

func (p *Project) Describe() string {
	names := make([]string, len(p.Columns))
	for i, c := range p.Columns {
		names[i] = c.Name
	}
	return "project " + strings.Join(names, ", ")
}
func (p *Project) Inputs() []Node { return one(p.Input) }
func (p *Project) WithInputs(ins ...Node) Node {
	n := *p
	n.Input = ins[0]
	return &n
}
