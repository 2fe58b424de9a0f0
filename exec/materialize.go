package exec

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// MaterializeNode keeps a table's current rows in a state store, keyed
// by the table's key, so that pull queries can read tables no
// aggregation holds: the result of a CREATE TABLE … AS SELECT that
// projects, filters or joins tables (the node stands just before the
// sink and keeps each row as the sink writes it), and a CREATE SOURCE
// TABLE (the node is the whole chain of the query ksqlDB starts for it,
// CST_<name>). A tombstone deletes the key's row.
//
// The layout is a join's table store's (see EncodeTableRow): key
// joinTableKey of the key columns, value the event time and then the
// key, value (and header) columns. That lets a source table's store use
// the table's own topic as its changelog (StoreSpec.FromSource): a
// restore decodes its records exactly as a join's table store does, and
// the rows it writes begin with the same columns. A CTAS result's store
// has a changelog of its own, because the sink topic need not be
// partitioned like the task (other partition count, other key format).
type MaterializeNode struct {
	Store string
	// KeyIdx and ValueIdx are the positions of the table's key and
	// value columns in the incoming row, in the table's column order.
	KeyIdx   []int
	ValueIdx []int
	// Timestamp, when set, is the sink's TIMESTAMP column: the row's
	// ROWTIME is the record timestamp the sink writes.
	Timestamp *SinkTimestamp
	// ByInputKey says that the table's key is the key of the chain's
	// input, column for column: a key's row then is in the store
	// partition of the key's partition in the input topic (see
	// TableReader.KeyPartition). Otherwise any partition may hold it.
	ByInputKey bool
	Text       string // the table's name, for EXPLAIN
	// AsWritten, when it has columns, makes the kept value columns those
	// a reader of the sink gets back in its value format: PROTOBUF
	// writes a NULL scalar as proto3's default (0, ""), and ksqlDB's pull
	// queries answer what the table's topic holds.
	AsWritten AsWritten
	// SameRow makes a row equal to the key's kept row (key and value
	// columns), and the delete of a key the table does not hold, no
	// change: nothing is kept or emitted. A query over a
	// change-data-capture table gets it, since its connector re-sends
	// events after a restart.
	SameRow bool
	// WithOld attaches the key's kept row to each row passed on (Row.Old,
	// in the incoming row's layout; nil for a key the table did not
	// hold), for a sink writing change events.
	WithOld bool
}

// AsWritten names a value format that changes what it carries: the
// columns and properties to encode and decode the values with.
type AsWritten struct {
	Format string
	Cols   []types.Column
	Props  format.Props
}

var _ Node = (*MaterializeNode)(nil)

func (n *MaterializeNode) Describe() string {
	where := "a key's row in its input partition"
	if !n.ByInputKey {
		where = "a key's row in any partition"
	}
	return fmt.Sprintf("materialize %s by key [store %s]: the rows pull queries read, %s", n.Text, n.Store, where)
}
func (n *MaterializeNode) Stateful() bool       { return true }
func (n *MaterializeNode) StoreNames() []string { return []string{n.Store} }
func (n *MaterializeNode) New(next Operator) (Operator, error) {
	op := &materializeOp{forward: forward{next}, node: n, cols: make([]any, len(n.KeyIdx)+len(n.ValueIdx))}
	if w := n.AsWritten; len(w.Cols) > 0 {
		c, err := format.NewValueCodec(w.Format, w.Cols, w.Props)
		if err != nil {
			return nil, fmt.Errorf("materialize %s: %w", n.Text, err)
		}
		op.written = c
	}
	return op, nil
}

// Width is the number of columns a stored row begins with: the key
// columns, then the value columns.
func (n *MaterializeNode) Width() int { return len(n.KeyIdx) + len(n.ValueIdx) }

type materializeOp struct {
	forward
	node  *MaterializeNode
	store *state.Store
	cols  []any
	// written, when set, reads the value columns back as the sink's
	// value format carries them (AsWritten).
	written format.Codec
	// kbuf and vbuf are the record's key and encoded row, reused: the
	// store copies what it keeps.
	kbuf, vbuf []byte
}

func (o *materializeOp) Open(tc *TaskContext) error {
	s, err := tc.Store(o.node.Store)
	o.store = s
	return err
}

func (o *materializeOp) Close() error { return nil }

func (o *materializeOp) Process(tc *TaskContext, row *Row) error {
	n := o.node
	for i, c := range n.KeyIdx {
		o.cols[i] = row.Cols[c]
	}
	// A row without a key is not in the table (the sink writes it, if at
	// all, with a null key that no lookup can name).
	if row.NullKey || len(n.KeyIdx) == 0 || o.cols[0] == nil {
		return o.emit(tc, row)
	}
	k := joinTableKey(o.kbuf[:0], o.cols, len(n.KeyIdx), nil)
	o.kbuf = k
	var kept []any
	if n.SameRow || n.WithOld {
		v, held, err := o.store.Get(k)
		if err != nil {
			return err
		}
		if held {
			if kept, _, _, err = decodeTableRow(v); err != nil {
				return err
			}
		}
	}
	if n.WithOld && kept != nil {
		r := *row
		r.Old = make([]any, len(row.Cols))
		for i, c := range n.KeyIdx {
			r.Old[c] = kept[i]
		}
		for i, c := range n.ValueIdx {
			r.Old[c] = kept[len(n.KeyIdx)+i]
		}
		row = &r
	}
	if row.Tombstone {
		if n.SameRow && kept == nil {
			return nil
		}
		o.store.Delete(k)
		return o.emit(tc, row)
	}
	ts := row.Ts
	if t := n.Timestamp; t != nil {
		var err error
		if ts, err = eventTime(row.Cols[t.Col], t.Format); err != nil {
			return o.emit(tc, row) // the sink drops the row: so does the table
		}
	}
	for i, c := range n.ValueIdx {
		o.cols[len(n.KeyIdx)+i] = row.Cols[c]
	}
	if o.written != nil {
		vals := o.cols[len(n.KeyIdx):]
		b, err := o.written.Encode(vals)
		if err == nil {
			err = o.written.Decode(b, vals)
		}
		if err != nil {
			return o.emit(tc, row) // the sink cannot write it either
		}
	}
	if n.SameRow && kept != nil && sameRow(kept, o.cols, len(o.cols)) {
		return nil
	}
	o.vbuf = EncodeTableRow(o.vbuf[:0], ts, o.cols)
	o.store.Put(k, o.vbuf)
	return o.emit(tc, row)
}

// identity is 0, 1, …, n-1.
func identity(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// NewSourceMaterialize is the node of a source table's CST query: it
// keeps the rows of the table's topic, decoded in the source layout
// (key, value and header columns first).
func NewSourceMaterialize(store, table string, spec *SourceSpec) *MaterializeNode {
	nk := len(spec.KeyCols)
	return &MaterializeNode{Store: store, KeyIdx: identity(0, nk), ValueIdx: identity(nk, len(spec.ValueCols)+len(spec.HeaderCols)), ByInputKey: true, Text: strings.ToUpper(table)}
}
