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
	// RejectDeletes makes every rejected row of a table a deletion of its
	// key, as a Kafka Streams KTable filter forwards one: the key's row
	// may have passed before. A table result keeping its rows
	// (MaterializeNode.SameRow) drops the deletion of a key it does not
	// hold.
	RejectDeletes bool
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

// A filter hands on the rows it is given: it borrows them when what
// follows does.
func (f *filter) borrowsRows() bool { return f.next != nil && borrowsRows(f.next) }

func (f *filter) Process(tc *TaskContext, row *Row) error {
	if row.Tombstone {
		if f.node.TombstoneOnReject && row.Old != nil {
			if was, _ := f.node.Pred(row.Old).(bool); !was {
				// The old result was not in the table: nothing leaves it.
				r := *row
				r.Old = nil
				return f.emit(tc, &r)
			}
		}
		return f.emit(tc, row)
	}
	if b, _ := f.node.Pred(row.Cols).(bool); b {
		if f.node.TombstoneOnReject && row.Old != nil {
			if was, _ := f.node.Pred(row.Old).(bool); !was {
				// The old result was not in the table: for what comes
				// after (a sink of change events), the key is new.
				r := *row
				r.Old = nil
				return f.emit(tc, &r)
			}
		}
		return f.emit(tc, row)
	}
	if f.node.TombstoneOnReject && row.Old != nil {
		if was, _ := f.node.Pred(row.Old).(bool); was {
			return f.emit(tc, &Row{Cols: row.Cols, Ts: row.Ts, Tombstone: true, Old: row.Old})
		}
	}
	if f.node.RejectDeletes {
		return f.emit(tc, &Row{Cols: row.Cols, Ts: row.Ts, Tombstone: true})
	}
	return nil
}
