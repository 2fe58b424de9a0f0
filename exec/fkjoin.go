package exec

import (
	"bytes"
	"fmt"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// A foreign-key join of two tables (ON left.fk = right.pk) pairs rows
// that live in different partitions: the left table is partitioned by
// its own key, the right by the foreign key. It runs as two
// sub-topologies that talk through two internal topics:
//
//	left task (left table ⊕ response topic, partitioned like the left)
//	  a left row subscribes to its foreign key     → subscription topic
//	right task (subscription topic ⊕ right table, partitioned like the right)
//	  a subscription or a right change answers     → response topic
//	left task
//	  a response is joined with the current left row and emitted
//
// A response is dropped when the left row's foreign key has changed
// since it subscribed: only the answer for the current key counts.
// Results are keyed by the left table's key, as in ksqlDB.

// Subscription operations.
const (
	fkSubscribe int32 = iota // answer only when the right row exists
	fkSubscribeAlways
	fkUnsubscribe
)

// FKTopic is an internal topic of a foreign-key join and how its
// records are encoded.
type FKTopic struct {
	Topic      string
	KeyFormat  string
	KeyCols    []types.Column
	KeyProps   format.Props
	ValueCols  []types.Column // in format.Rows: only Sluice reads these topics
	Partitions int32
}

func (t *FKTopic) codecs() (key, value format.Codec, err error) {
	if key, err = format.NewKeyCodec(t.KeyFormat, t.KeyCols, t.KeyProps); err != nil {
		return nil, nil, fmt.Errorf("%s key: %w", t.Topic, err)
	}
	if value, err = format.NewValueCodec(format.Rows, t.ValueCols, format.Props{}); err != nil {
		return nil, nil, fmt.Errorf("%s value: %w", t.Topic, err)
	}
	return key, value, nil
}

// Spec is how a sub-topology reads the topic.
func (t *FKTopic) Spec() *SourceSpec {
	return &SourceSpec{Topic: t.Topic, KeyFormat: t.KeyFormat, ValueFormat: format.Rows, KeyCols: t.KeyCols, ValueCols: t.ValueCols, KeyProps: t.KeyProps, TimestampCol: -1}
}

func (t *FKTopic) produce(tc *TaskContext, key, value format.Codec, keyVals, vals []any, ts int64) error {
	k, err := key.Encode(keyVals)
	if err != nil {
		return fmt.Errorf("encode %s key: %w", t.Topic, err)
	}
	v, err := value.Encode(vals)
	if err != nil {
		return fmt.Errorf("encode %s value: %w", t.Topic, err)
	}
	tc.Out.Produce(&Record{Topic: t.Topic, Partition: -1, Key: k, Value: v, Timestamp: ts})
	return nil
}

// joinTableKey is how joins key a table row in their stores: its key
// columns (the one column as itself), then its window bounds.
func joinTableKey(buf []byte, cols []any, nkeys int, window []int) []byte {
	if nkeys == 1 {
		buf = types.AppendValue(buf, cols[0])
	} else {
		buf = types.AppendValues(buf, cols[:nkeys])
	}
	for _, w := range window {
		buf = types.AppendValue(buf, cols[w])
	}
	return buf
}

// FKJoinLeftNode is the left table's half of a foreign-key join: it keeps
// the left rows, subscribes them to their foreign keys, and joins the
// answers. Its output rows are laid out like JoinNode's.
type FKJoinLeftNode struct {
	Type       JoinType // InnerJoin or LeftJoin
	LeftName   string
	LeftWidth  int
	LeftKeys   int // the left row's key columns come first
	RightWidth int
	// RightCols is the number of the right table's key and value columns;
	// a response carries them after the foreign key and a found flag,
	// then the right row's time.
	RightCols    int
	FK           expr.Eval // the foreign key of a left row
	Store        string
	Subscription *FKTopic
	Text         string
}

func (n *FKJoinLeftNode) Describe() string {
	return fmt.Sprintf("foreign-key join %s %s by %s [store %s] → subscriptions %s", n.Type, n.LeftName, n.Text, n.Store, n.Subscription.Topic)
}
func (n *FKJoinLeftNode) Stateful() bool       { return true }
func (n *FKJoinLeftNode) StoreNames() []string { return []string{n.Store} }
func (n *FKJoinLeftNode) New(next Operator) (Operator, error) {
	k, v, err := n.Subscription.codecs()
	if err != nil {
		return nil, err
	}
	return &fkLeftOp{forward: forward{next}, node: n, subKey: k, subValue: v}, nil
}

type fkLeftOp struct {
	forward
	node             *FKJoinLeftNode
	store            *state.Store
	subKey, subValue format.Codec
}

func (o *fkLeftOp) Open(tc *TaskContext) error {
	s, err := tc.Store(o.node.Store)
	o.store = s
	return err
}

// Process handles a change of the left table.
func (o *fkLeftOp) Process(tc *TaskContext, row *Row) error {
	n := o.node
	if row.Cols[0] == nil {
		return nil
	}
	k := joinTableKey(nil, row.Cols, n.LeftKeys, nil)
	old, _, _, err := o.leftRow(k)
	if err != nil {
		return err
	}
	pk := row.Cols[:n.LeftKeys]
	var oldFK, newFK any
	if old != nil {
		oldFK = n.FK(old)
	}
	if row.Tombstone {
		o.store.Delete(k)
		if old == nil {
			return nil
		}
		if oldFK != nil {
			if err := o.subscribe(tc, oldFK, pk, fkUnsubscribe, row.Ts); err != nil {
				return err
			}
		}
		return o.emit(tc, old, nil, row.Ts, true)
	}
	o.store.Put(k, EncodeTableRow(nil, row.Ts, row.Cols))
	newFK = n.FK(row.Cols)
	if oldFK != nil && !sameValue(oldFK, newFK) {
		if err := o.subscribe(tc, oldFK, pk, fkUnsubscribe, row.Ts); err != nil {
			return err
		}
	}
	if newFK == nil {
		// A NULL foreign key matches nothing.
		if n.Type == LeftJoin {
			return o.emit(tc, row.Cols, nil, row.Ts, false)
		}
		if old != nil {
			return o.emit(tc, row.Cols, nil, row.Ts, true)
		}
		return nil
	}
	op := fkSubscribe
	// A left join answers without a right row too; an inner join must
	// retract a result the row had before.
	if n.Type == LeftJoin || old != nil {
		op = fkSubscribeAlways
	}
	return o.subscribe(tc, newFK, pk, op, row.Ts)
}

func (o *fkLeftOp) subscribe(tc *TaskContext, fk any, pk []any, op int32, ts int64) error {
	vals := append([]any{op}, pk...)
	return o.node.Subscription.produce(tc, o.subKey, o.subValue, []any{fk}, vals, ts)
}

func (o *fkLeftOp) leftRow(k []byte) ([]any, int64, bool, error) {
	v, ok, err := o.store.Get(k)
	if err != nil || !ok {
		return nil, 0, false, err
	}
	return decodeTableRow(v)
}

// ProcessSide joins a response (side 1) with the current left row.
//
// A response row is [left key…, FK, FOUND, right columns…, right time,
// ROWTIME, ROWPARTITION, ROWOFFSET].
func (o *fkLeftOp) ProcessSide(tc *TaskContext, _ int, row *Row) error {
	n := o.node
	if row.Tombstone {
		return nil
	}
	cur, _, ok, err := o.leftRow(joinTableKey(nil, row.Cols, n.LeftKeys, nil))
	if err != nil || !ok {
		return err
	}
	fk := row.Cols[n.LeftKeys]
	if !sameValue(n.FK(cur), fk) {
		return nil // answers a foreign key the row no longer has
	}
	if found, _ := row.Cols[n.LeftKeys+1].(bool); found {
		right := make([]any, n.RightWidth)
		base := n.LeftKeys + 2
		copy(right, row.Cols[base:base+n.RightCols])
		right[n.RightCols] = row.Cols[base+n.RightCols] // the right row's ROWTIME
		return o.emit(tc, cur, right, row.Ts, false)
	}
	return o.emit(tc, cur, nil, row.Ts, n.Type != LeftJoin)
}

func (o *fkLeftOp) emit(tc *TaskContext, left, right []any, ts int64, tombstone bool) error {
	n := o.node
	cols := make([]any, n.LeftWidth+n.RightWidth+4)
	copy(cols, left)
	copy(cols[n.LeftWidth:], right)
	base := n.LeftWidth + n.RightWidth
	if n.LeftKeys == 1 {
		// The joined row's key slot: a join after this one on the left
		// table's key reads it there.
		cols[base] = left[0]
	}
	cols[base+1] = ts
	cols[base+2] = tc.Partition
	if tc.input != nil {
		cols[base+3] = tc.input.Offset
	}
	return o.forward.emit(tc, &Row{Cols: cols, Ts: ts, Tombstone: tombstone})
}

func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return bytes.Equal(types.AppendValue(nil, a), types.AppendValue(nil, b))
}

// FKJoinRightNode is the right table's half of a foreign-key join: it
// keeps the right rows and which left keys subscribed to each, and
// answers subscriptions and right changes on the response topic.
type FKJoinRightNode struct {
	RightName  string
	RightCols  int // key and value columns of a right row
	LeftKeys   int // left key columns in a subscription, after FK and OP
	Store      string
	SubStore   string
	Response   *FKTopic
	Subscribed string // for EXPLAIN: the subscription topic
}

func (n *FKJoinRightNode) Describe() string {
	return fmt.Sprintf("foreign-key lookup %s [stores %s, %s] → responses %s", n.RightName, n.Store, n.SubStore, n.Response.Topic)
}
func (n *FKJoinRightNode) Stateful() bool       { return true }
func (n *FKJoinRightNode) StoreNames() []string { return []string{n.Store, n.SubStore} }
func (n *FKJoinRightNode) New(next Operator) (Operator, error) {
	k, v, err := n.Response.codecs()
	if err != nil {
		return nil, err
	}
	return &fkRightOp{forward: forward{next}, node: n, respKey: k, respValue: v}, nil
}

type fkRightOp struct {
	forward
	node               *FKJoinRightNode
	right, subs        *state.Store
	respKey, respValue format.Codec
}

func (o *fkRightOp) Open(tc *TaskContext) error {
	var err error
	if o.right, err = tc.Store(o.node.Store); err != nil {
		return err
	}
	o.subs, err = tc.Store(o.node.SubStore)
	return err
}

// Process handles a subscription: [FK, OP, left key…, ROWTIME, …].
func (o *fkRightOp) Process(tc *TaskContext, row *Row) error {
	n := o.node
	if row.Tombstone || row.Cols[0] == nil {
		return nil
	}
	fk := types.AppendValue(nil, row.Cols[0])
	op, _ := row.Cols[1].(int32)
	pk := row.Cols[2 : 2+n.LeftKeys]
	sk := types.AppendValues(append([]byte(nil), fk...), pk)
	if op == fkUnsubscribe {
		o.subs.Delete(sk)
		return nil
	}
	o.subs.Put(sk, []byte{1})
	right, rts, found, err := o.rightRow(fk)
	if err != nil {
		return err
	}
	if !found && op != fkSubscribeAlways {
		return nil
	}
	return o.respond(tc, pk, row.Cols[0], right, rts, row.Ts)
}

// ProcessSide handles a change of the right table: every subscribed left
// key gets the new row (or its absence).
func (o *fkRightOp) ProcessSide(tc *TaskContext, _ int, row *Row) error {
	if row.Cols[0] == nil {
		return nil
	}
	fk := types.AppendValue(nil, row.Cols[0])
	var right []any
	if row.Tombstone {
		o.right.Delete(fk)
	} else {
		o.right.Put(fk, EncodeTableRow(nil, row.Ts, row.Cols))
		right = row.Cols
	}
	var pks [][]any
	var derr error
	err := o.subs.Range(fk, func(k, _ []byte) bool {
		pk, _, err := types.DecodeValues(k[len(fk):])
		if err != nil {
			derr = fmt.Errorf("foreign-key subscription: %w", err)
			return false
		}
		pks = append(pks, pk)
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return err
	}
	for _, pk := range pks {
		if err := o.respond(tc, pk, row.Cols[0], right, row.Ts, row.Ts); err != nil {
			return err
		}
	}
	return nil
}

func (o *fkRightOp) rightRow(fk []byte) ([]any, int64, bool, error) {
	v, ok, err := o.right.Get(fk)
	if err != nil || !ok {
		return nil, 0, false, err
	}
	return decodeTableRow(v)
}

// respond writes [FK, FOUND, right columns…, right time] keyed by the
// left key.
func (o *fkRightOp) respond(tc *TaskContext, pk []any, fk any, right []any, rightTs, ts int64) error {
	n := o.node
	vals := make([]any, 0, n.RightCols+3)
	vals = append(vals, fk, right != nil)
	if right != nil {
		vals = append(vals, right[:n.RightCols]...)
		vals = append(vals, rightTs)
	} else {
		vals = append(vals, make([]any, n.RightCols+1)...)
	}
	return n.Response.produce(tc, o.respKey, o.respValue, pk, vals, ts)
}
