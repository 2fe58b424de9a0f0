package exec

import (
	"strings"

	"github.com/sluice-sql/sluice/expr"
)

// FlatMapNode runs a SELECT's table functions (EXPLODE, CUBE_EXPLODE): a
// row becomes as many rows as its longest function result, each the input
// row with one column per function appended, NULL where a result is
// shorter, as in ksqlDB. A row whose every result is empty (or NULL)
// gives no row; so does a tombstone, which has nothing to explode.
type FlatMapNode struct {
	Funcs []expr.TableEval
	Names []string
}

var _ Node = (*FlatMapNode)(nil)

func (n *FlatMapNode) New(next Operator) (Operator, error) {
	return &flatMap{forward: forward{next}, node: n}, nil
}
func (n *FlatMapNode) Describe() string     { return "flat-map " + strings.Join(n.Names, ", ") }
func (n *FlatMapNode) Stateful() bool       { return false }
func (n *FlatMapNode) StoreNames() []string { return nil }

type flatMap struct {
	forward
	node    *FlatMapNode
	results [][]any
}

func (f *flatMap) Process(tc *TaskContext, row *Row) error {
	if row.Tombstone {
		return nil
	}
	f.results = f.results[:0]
	rows := 0
	for _, fn := range f.node.Funcs {
		r := fn(row.Cols)
		f.results = append(f.results, r)
		rows = max(rows, len(r))
	}
	base := len(row.Cols)
	for i := range rows {
		cols := make([]any, base+len(f.results))
		copy(cols, row.Cols)
		for j, r := range f.results {
			if i < len(r) {
				cols[base+j] = r[i]
			}
		}
		out := *row
		out.Cols = cols
		if err := f.emit(tc, &out); err != nil {
			return err
		}
	}
	return nil
}
