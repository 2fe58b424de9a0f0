package exec

import (
	"bytes"
	"fmt"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// Modes of a table change row.
const (
	ChangeAdd     int32 = iota // a new row: add its values
	ChangeUndo                 // a row gone from its group: take its old values out
	ChangeReplace              // a row changed within its group: out with the old, in with the new
)

// TableChangeNode turns the records of a table into the changes an
// aggregation over the table needs, as Kafka Streams' KTable groupBy
// does: it keeps each key's current row (in a store whose changelog is
// the table's own topic) and, for a new value of a key, takes the old
// row's contribution out of its group before adding the new row's. It
// emits rows
//
//	[group key…, new arguments…, old arguments…, mode]
//
// one with mode ChangeReplace when old and new rows fall in the same
// group, else a ChangeUndo for the old group and a ChangeAdd for the new.
// A row the WHERE clause rejects, or whose group key is NULL, counts as
// absent.
type TableChangeNode struct {
	Store string
	NKeys int       // the table's key columns lead its rows
	Where expr.Eval // nil: every row
	Group []expr.Eval
	Args  []expr.Eval
	Text  string
	// SameRow, when above 0, makes a row whose first SameRow columns (its
	// key and value columns) equal the kept row's no change at all: it
	// emits nothing and keeps the kept row. A change-data-capture table
	// gets it, since its connector re-sends events after a restart.
	SameRow int
}

func (n *TableChangeNode) Describe() string {
	return fmt.Sprintf("table changes by %s [store %s]: old rows out, new rows in", n.Text, n.Store)
}
func (n *TableChangeNode) Stateful() bool       { return true }
func (n *TableChangeNode) StoreNames() []string { return []string{n.Store} }
func (n *TableChangeNode) New(next Operator) (Operator, error) {
	return &tableChangeOp{forward: forward{next}, node: n}, nil
}

type tableChangeOp struct {
	forward
	node  *TableChangeNode
	store *state.Store
	// kbuf and vbuf are the record's key and encoded row, reused: the
	// store copies what it keeps.
	kbuf, vbuf []byte
}

func (o *tableChangeOp) Open(tc *TaskContext) error {
	s, err := tc.Store(o.node.Store)
	o.store = s
	return err
}

func (o *tableChangeOp) Process(tc *TaskContext, row *Row) error {
	n := o.node
	if row.Cols[0] == nil {
		return nil
	}
	k := joinTableKey(o.kbuf[:0], row.Cols, n.NKeys, nil)
	o.kbuf = k
	v, existed, err := o.store.Get(k)
	if err != nil {
		return err
	}
	var old []any
	if existed {
		if old, _, _, err = decodeTableRow(v); err != nil {
			return err
		}
	}
	if n.SameRow > 0 && (row.Tombstone && !existed || !row.Tombstone && existed && sameRow(old, row.Cols, n.SameRow)) {
		return nil
	}
	var cur []any
	if row.Tombstone {
		o.store.Delete(k)
	} else {
		o.vbuf = EncodeTableRow(o.vbuf[:0], row.Ts, row.Cols)
		o.store.Put(k, o.vbuf)
		cur = row.Cols
	}
	newGroup, newArgs, newOK := o.parts(cur)
	oldGroup, oldArgs, oldOK := o.parts(old)
	na := len(n.Args)
	out := func(group, args, oldArgs []any, mode int32) error {
		cols := make([]any, 0, len(group)+2*na+1)
		cols = append(cols, group...)
		cols = append(cols, padded(args, na)...)
		cols = append(cols, padded(oldArgs, na)...)
		cols = append(cols, mode)
		return o.emit(tc, &Row{Cols: cols, Ts: row.Ts})
	}
	if newOK && oldOK && sameGroup(newGroup, oldGroup) {
		return out(newGroup, newArgs, oldArgs, ChangeReplace)
	}
	if oldOK {
		if err := out(oldGroup, nil, oldArgs, ChangeUndo); err != nil {
			return err
		}
	}
	if newOK {
		return out(newGroup, newArgs, nil, ChangeAdd)
	}
	return nil
}

// parts evaluates a row's group key and arguments; ok is false for no
// row, a row WHERE rejects, or a NULL group key.
func (o *tableChangeOp) parts(cols []any) (group, args []any, ok bool) {
	n := o.node
	if cols == nil {
		return nil, nil, false
	}
	if n.Where != nil {
		if pass, _ := n.Where(cols).(bool); !pass {
			return nil, nil, false
		}
	}
	group = make([]any, len(n.Group))
	for i, g := range n.Group {
		if group[i] = g(cols); group[i] == nil {
			return nil, nil, false
		}
	}
	args = make([]any, len(n.Args))
	for i, a := range n.Args {
		args[i] = a(cols)
	}
	return group, args, true
}

func padded(vals []any, n int) []any {
	if vals == nil {
		return make([]any, n)
	}
	return vals
}

// sameRow reports whether two rows hold the same values in their first
// n columns.
func sameRow(a, b []any, n int) bool {
	if len(a) < n || len(b) < n {
		return false
	}
	return bytes.Equal(types.AppendValues(nil, a[:n]), types.AppendValues(nil, b[:n]))
}

func sameGroup(a, b []any) bool {
	return bytes.Equal(types.AppendValues(nil, a), types.AppendValues(nil, b))
}
