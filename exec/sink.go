package exec

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// SinkNode encodes rows into records of one topic: key columns into the
// key (with the window appended for windowed results), value columns into
// the value, and the row's event time as the record timestamp.
type SinkNode struct {
	Topic       string
	KeyFormat   string
	ValueFormat string
	KeyCols     []types.Column
	ValueCols   []types.Column
	KeyProps    format.Props
	ValueProps  format.Props
	// KeyIdx and ValueIdx are the positions of the key and value columns
	// in the incoming row.
	KeyIdx   []int
	ValueIdx []int
	// Window, when not NotWindowed, takes window bounds from the row
	// positions WindowStartIdx and WindowEndIdx.
	Window         WindowType
	WindowStartIdx int
	WindowEndIdx   int
	// Internal marks a repartition topic (for EXPLAIN).
	Internal bool
	// Timestamp, when set, takes record timestamps from a column of the
	// row (the sink's TIMESTAMP property) instead of the row's event time.
	Timestamp *SinkTimestamp
	// Changes, when set, makes the sink write the table's changes as
	// change events of a change-data-capture envelope (VALUE_ENVELOPE)
	// instead of its rows: each row needs the key's previous row
	// (Row.Old, nil for a new key), which the node before the sink keeps.
	Changes *ChangesOut
}

// ChangesOut names the writer of a sink's change events (Debezium's
// source block): the service and the table.
type ChangesOut struct {
	Service string
	Table   string
}

// SinkTimestamp is the column a sink's record timestamps come from.
type SinkTimestamp struct {
	Col  int    // position in the incoming row
	Name string // for EXPLAIN
	// Format parses STRING columns (empty: ISO-8601), as a source's
	// TIMESTAMP_FORMAT does.
	Format string
}

var _ Node = (*SinkNode)(nil)

func (n *SinkNode) New(Operator) (Operator, error) {
	kc, err := format.NewKeyCodec(n.KeyFormat, n.KeyCols, n.KeyProps)
	if err != nil {
		return nil, fmt.Errorf("sink %s key: %w", n.Topic, err)
	}
	vc, err := format.NewValueCodec(n.ValueFormat, n.ValueCols, n.ValueProps)
	if err != nil {
		return nil, fmt.Errorf("sink %s value: %w", n.Topic, err)
	}
	s := &sink{node: n, key: kc, val: vc,
		keyVals: make([]any, len(n.KeyIdx)), valVals: make([]any, len(n.ValueIdx))}
	s.keyApp, _ = kc.(format.Appender)
	s.valApp, _ = vc.(format.Appender)
	if c := n.Changes; c != nil {
		cols := append(append([]types.Column(nil), n.KeyCols...), n.ValueCols...)
		if s.changes, err = format.NewDebeziumOut(c.Service, c.Table, cols, n.ValueFormat, n.ValueProps); err != nil {
			return nil, fmt.Errorf("sink %s change events: %w", n.Topic, err)
		}
	}
	return s, nil
}

func (n *SinkNode) Describe() string {
	kind := "sink"
	if n.Internal {
		kind = "repartition"
	}
	names := func(cs []types.Column) string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Name
		}
		return strings.Join(out, ", ")
	}
	ts := ""
	if n.Timestamp != nil {
		ts = ", timestamp " + n.Timestamp.Name
	}
	value := n.ValueFormat
	if n.Changes != nil {
		value += " in " + n.ValueProps.Envelope + " change events"
	}
	return fmt.Sprintf("%s %s (key %s [%s], value %s [%s]%s)", kind, n.Topic, n.KeyFormat, names(n.KeyCols), value, names(n.ValueCols), ts)
}
func (n *SinkNode) Stateful() bool       { return false }
func (n *SinkNode) StoreNames() []string { return nil }

type sink struct {
	node             *SinkNode
	key, val         format.Codec
	keyVals, valVals []any
	// keyApp and valApp are key and val when they can append to the
	// task's arena (nil: they allocate each record's bytes).
	keyApp, valApp format.Appender
	// changes writes change events (SinkNode.Changes).
	changes *format.DebeziumOut
}

// sinkValueHint is the room a value encoding is given in the arena: a
// value that outgrows it costs an allocation of its own, no more.
const sinkValueHint = 1024

// encode encodes vals with c, in the task's arena when app (c as an
// Appender) is set.
func encode(tc *TaskContext, c format.Codec, app format.Appender, vals []any, hint int) ([]byte, error) {
	if app == nil {
		return c.Encode(vals)
	}
	b, err := app.AppendEncode(tc.arena.begin(hint), vals)
	if err != nil {
		return nil, err
	}
	return tc.arena.end(b), nil
}

// A sink encodes what it needs of a row (keys, values, a change event's
// images) before Process returns.
func (s *sink) borrowsRows() bool { return true }

func (s *sink) Open(*TaskContext) error        { return nil }
func (s *sink) AdvanceTime(*TaskContext) error { return nil }
func (s *sink) Close() error                   { return nil }

func (s *sink) Process(tc *TaskContext, row *Row) error {
	ts := row.Ts
	if t := s.node.Timestamp; t != nil && !row.Tombstone {
		var err error
		if ts, err = eventTime(row.Cols[t.Col], t.Format); err != nil {
			// As in ksqlDB, a row whose timestamp column is null, negative
			// or unparsable is counted and dropped: Kafka cannot carry it.
			if n := tc.Metrics.CountError(ErrKindTimestamp); n <= 1 || n%1000 == 0 {
				tc.Log.Warn("dropping row: bad sink timestamp", "query", tc.QueryID, "topic", s.node.Topic, "column", t.Name, "err", err, "so_far", n)
			}
			return nil
		}
	}
	var key []byte
	if !row.NullKey || s.node.Window != NotWindowed {
		var err error
		if key, err = s.encodeKey(tc, row); err != nil {
			return s.fail(tc, "key", err)
		}
	}
	if s.changes != nil {
		return s.change(tc, row, key, ts)
	}
	var value []byte
	if !row.Tombstone {
		for i, c := range s.node.ValueIdx {
			s.valVals[i] = row.Cols[c]
		}
		var err error
		if value, err = encode(tc, s.val, s.valApp, s.valVals, sinkValueHint); err != nil {
			return s.fail(tc, "value", err)
		}
		if value == nil {
			value = []byte{} // an empty value is not a tombstone
		}
	}
	s.produce(tc, key, value, ts)
	return nil
}

// sinkKeyHint is the room a key encoding is given in the arena, its
// window bounds included.
const sinkKeyHint = 64

// encodeKey encodes row's key columns and, for a windowed sink, the
// window after them, in the task's arena when the key codec appends (so a
// windowed key costs no allocation of its own).
func (s *sink) encodeKey(tc *TaskContext, row *Row) ([]byte, error) {
	for i, c := range s.node.KeyIdx {
		s.keyVals[i] = row.Cols[c]
	}
	if s.keyApp == nil {
		key, err := s.key.Encode(s.keyVals)
		if err != nil || s.node.Window == NotWindowed {
			return key, err
		}
		return s.appendWindow(bytes.Clone(key), row), nil
	}
	b, err := s.keyApp.AppendEncode(tc.arena.begin(sinkKeyHint), s.keyVals)
	if err != nil {
		return nil, err
	}
	return tc.arena.end(s.appendWindow(b, row)), nil
}

// appendWindow appends row's window bounds to key as a windowed sink's
// key carries them (nothing for a sink without windows).
func (s *sink) appendWindow(key []byte, row *Row) []byte {
	switch s.node.Window {
	case TimeWindowed:
		start, _ := row.Cols[s.node.WindowStartIdx].(int64)
		return format.AppendTimeWindow(key, start)
	case SessionWindowed:
		start, _ := row.Cols[s.node.WindowStartIdx].(int64)
		end, _ := row.Cols[s.node.WindowEndIdx].(int64)
		return format.AppendSessionWindow(key, start, end)
	}
	return key
}

// produce writes one record of the sink.
func (s *sink) produce(tc *TaskContext, key, value []byte, ts int64) {
	if !s.node.Internal {
		tc.Metrics.RecordsOut.Add(1)
	}
	out := tc.record()
	*out = Record{Topic: s.node.Topic, Partition: -1, Key: key, Value: value, Timestamp: ts}
	if tc.input != nil {
		// The input record's headers go with its results, as Kafka
		// Streams forwards them (through repartitions too).
		for _, h := range tc.input.Headers {
			if !internalHeader(h.Key) {
				out.Headers = append(out.Headers, h)
			}
		}
		if s.node.Internal {
			out.Headers = append(out.Headers, Header{Key: upstreamHeader, Value: encodeUpstream(tc.input.Partition, tc.input.Offset, tc.outSeq, tc.inputIdx)})
			tc.outSeq++
		}
	}
	tc.Out.Produce(out)
}

// change writes the change a row makes to the sink's table as a change
// event: c for a key the table did not hold, u with the old row as
// before, d with the old row as before followed by a tombstone (as
// Debezium writes one, so that compaction can drop the key). A row equal
// to the old one, or the deletion of a key the table did not hold,
// changes nothing and writes nothing.
func (s *sink) change(tc *TaskContext, row *Row, key []byte, ts int64) error {
	var before, after []any
	if row.Old != nil {
		before = s.image(row.Old)
	}
	if !row.Tombstone {
		after = s.image(row.Cols)
	}
	var op byte
	switch {
	case row.Tombstone && before == nil:
		return nil
	case row.Tombstone:
		op = format.OpDelete
	case before == nil:
		op = format.OpCreate
	case sameRow(before, after, len(after)):
		return nil
	default:
		op = format.OpUpdate
	}
	value, err := s.changes.Append(tc.arena.begin(sinkValueHint), op, before, after, ts)
	if err != nil {
		return s.fail(tc, "value", err)
	}
	s.produce(tc, key, tc.arena.end(value), ts)
	if op == format.OpDelete {
		s.produce(tc, key, nil, ts)
	}
	return nil
}

// image is a row's key and value columns: a change event's row image.
func (s *sink) image(cols []any) []any {
	out := make([]any, 0, len(s.node.KeyIdx)+len(s.node.ValueIdx))
	for _, c := range s.node.KeyIdx {
		out = append(out, cols[c])
	}
	for _, c := range s.node.ValueIdx {
		out = append(out, cols[c])
	}
	return out
}

// fail counts a row that cannot be serialised and drops it: one bad row
// must not stop the query.
func (s *sink) fail(tc *TaskContext, part string, err error) error {
	if n := tc.Metrics.CountError(ErrKindSerialize); n == 1 || n%1000 == 0 {
		tc.Log.Warn("cannot serialise result row; row dropped", "query", tc.QueryID, "topic", s.node.Topic, "part", part, "err", err, "count", n)
	}
	return nil
}
