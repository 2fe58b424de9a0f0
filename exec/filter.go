package exec

import "github.com/sluice-sql/sluice/expr"

// FilterNode keeps the rows for which Pred is TRUE (NULL counts as false).
type FilterNode struct {
	Pred expr.Eval
	Text string
	// TombstoneOnReject gives HAVING its table semantics: a rejected row
	// whose previous version (Row.Old) passed becomes a deletion of its
	// key, since it leaves the result table; a row that never passed
	// emits nothing.
	TombstoneOnReject bool
}

var _ Node = (*FilterNode)(nil)

func (n *FilterNode) New(next Operator) (Operator, error) {
	return &filter{forward{next}, n}, nil
}
func (n *FilterNode) Describe() string     { return "filter " + n.Text }
func (n *FilterNode) Stateful() bool       { return false }
func (n *FilterNode) StoreNames() []string { return nil }

type filter struct {
	forward
	node *FilterNode
}

func (f *filter) Process(tc *TaskContext, row *Row) error {
	if row.Tombstone {
		return f.emit(tc, row)
	}
	if b, _ := f.node.Pred(row.Cols).(bool); b {
		return f.emit(tc, row)
	}
	if f.node.TombstoneOnReject && row.Old != nil {
		if was, _ := f.node.Pred(row.Old).(bool); was {
			return f.emit(tc, &Row{Cols: row.Cols, Ts: row.Ts, Tombstone: true})
		}
	}
	return nil
}
