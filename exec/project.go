package exec

import (
	"strings"

	"github.com/sluice-sql/sluice/expr"
)

// ProjectNode computes a new row from expressions over the input row.
// Tombstones keep only the columns listed in KeepOnTombstone (the key),
// since a deleted row has no values to compute from.
type ProjectNode struct {
	Exprs []expr.Eval
	Names []string
	// KeyInputs maps output positions to input positions for key columns
	// that pass straight through, so tombstones can carry their key.
	KeyInputs map[int]int
	// TombstoneKeys, when > 0, computes the first TombstoneKeys outputs
	// of a tombstone (a stream's null-value record) from its key: PARTITION
	// BY re-keys those records too. The expressions see only the first
	// InputKeys input columns; the others read as null, since the record
	// has no value (and, as in ksqlDB, no ROWTIME to read either).
	TombstoneKeys int
	InputKeys     int
	// KeepsKey says the key columns of the output are the input's key
	// columns unchanged: a row read from a null-key record keeps its null
	// key (Row.NullKey) through it. Other projections compute a new key.
	KeepsKey bool
	// TombstoneNull says, for each of those outputs, that its expression
	// reads a value (or pseudo) column: on a null-value record it is NULL,
	// as in ksqlDB, rather than computed over NULLs (NAME IS NULL would
	// be true).
	TombstoneNull []bool
	// Inputs, when set, gives for each output the input position it
	// copies unchanged (a plain column reference), or -1 for a computed
	// value. A chain of such a projection into a sink may copy a record's
	// text instead of decoding it (see recordCopy).
	Inputs []int
	// KeepOld projects the key's previous row (Row.Old, an aggregate's
	// previous result) alike, for a sink writing change events.
	KeepOld bool
	// NullKeysOnFailure is how many of the first outputs are PARTITION BY
	// keys: a user-defined function failing in one makes that key NULL
	// and the row goes on, as in ksqlDB, counted and logged as a function
	// error (keyOrNull), where elsewhere it makes a bad record.
	NullKeysOnFailure int
}

var _ Node = (*ProjectNode)(nil)

func (n *ProjectNode) New(next Operator) (Operator, error) {
	return &project{forward: forward{next}, node: n, reuse: borrowsRows(next)}, nil
}
func (n *ProjectNode) Describe() string     { return "project " + strings.Join(n.Names, ", ") }
func (n *ProjectNode) Stateful() bool       { return false }
func (n *ProjectNode) StoreNames() []string { return nil }

type project struct {
	forward
	node *ProjectNode
	// reuse says next keeps nothing of a row (rowBorrower): every row
	// goes out in row, its columns in cols.
	reuse bool
	row   Row
	cols  []any
}

// A projection keeps nothing of its input: it copies the values it needs
// into a row of its own.
func (p *project) borrowsRows() bool { return true }

func (p *project) Process(tc *TaskContext, row *Row) error {
	var out []any
	if p.reuse {
		if cap(p.cols) < len(p.node.Exprs) {
			p.cols = make([]any, len(p.node.Exprs))
		}
		out = p.cols[:len(p.node.Exprs)]
	} else {
		out = make([]any, len(p.node.Exprs))
	}
	if row.Tombstone {
		clear(out) // a tombstone fills the key columns only
		for o, i := range p.node.KeyInputs {
			out[o] = row.Cols[i]
		}
		if n := p.node.TombstoneKeys; n > 0 {
			keyOnly := make([]any, len(row.Cols))
			copy(keyOnly[:p.node.InputKeys], row.Cols)
			for o := 0; o < n; o++ {
				if o < len(p.node.TombstoneNull) && p.node.TombstoneNull[o] {
					out[o] = nil
					continue
				}
				out[o] = p.node.Exprs[o](keyOnly)
			}
		}
	} else {
		for i, e := range p.node.Exprs {
			if i < p.node.NullKeysOnFailure {
				out[i] = keyOrNull(tc, e, row.Cols)
				continue
			}
			out[i] = e(row.Cols)
		}
	}
	var old []any
	if row.Old != nil && p.node.KeepOld {
		old = make([]any, len(p.node.Exprs))
		for i, e := range p.node.Exprs {
			old[i] = e(row.Old)
		}
	}
	nullKey := row.NullKey && p.node.KeepsKey
	if p.reuse {
		p.row = Row{Cols: out, Ts: row.Ts, Tombstone: row.Tombstone, NullKey: nullKey, Old: old}
		return p.emit(tc, &p.row)
	}
	return p.emit(tc, &Row{Cols: out, Ts: row.Ts, Tombstone: row.Tombstone, NullKey: nullKey, Old: old})
}
