package exec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// recordCopy is the shortcut of a chain that rearranges JSON columns: a
// source read straight into an optional filter, a projection and a sink,
// with JSON values on both sides (SELECT *, SELECT A, B AS C, SELECT A,
// B * 2 AS D … WHERE …). The result record is largely its input's text
// rearranged, so the task copies the text of the columns the projection
// selects unchanged (format.JSONCopy) and, when the key's bytes carry over
// unchanged, the key; only a filter and computed columns see values,
// converted straight from their text. Nothing is decoded into a row that
// nothing reads, or encoded again from it. It produces exactly the record
// the chain would: any record it cannot copy exactly (a tombstone, an
// escape, a number spelled differently, a missing column, a key that does
// not read back the same) it declines, and that record goes through the
// chain.
type recordCopy struct {
	sink  *SinkNode
	value *format.JSONCopy
	// keyType is the key column's type when the key's bytes are copied
	// (a KAFKA key selected unchanged into a KAFKA key); keyless is set
	// when neither side has a key column, and the result has no key.
	keyType *types.Type
	keyless bool
	// tsCol, when ≥ 0, is the value column holding event time (an INT
	// or BIGINT); otherwise the record timestamp is the event time.
	tsCol int
	// filter, when set, is the WHERE clause; computed lists, per sink
	// value column, the projection's expression for a computed one
	// (nil: copied). Either needs row, the source row the chain would
	// have built, and the key codec to fill its key columns.
	filter   expr.Eval
	computed []expr.Eval
	vals     []any
	row      []any
	keyCodec format.Codec
	nk, nv   int
	// evaluated marks the value columns the filter and computed columns
	// read: the only ones converted (nil: all needed).
	evaluated []bool
	// copied counts the records the shortcut handled, filtered out or
	// copied (for tests and benchmarks).
	copied int64
}

// newRecordCopy returns the shortcut for sub, or nil when its chain does
// more than filter and project JSON columns.
func newRecordCopy(sub *SubTopology) *recordCopy {
	src := sub.Source
	if src == nil || len(sub.Sides) > 0 || src.Window != NotWindowed || src.Dedupe || src.Table || len(src.HeaderCols) > 0 {
		return nil
	}
	nodes := sub.Nodes
	var filter *FilterNode
	if len(nodes) == 3 {
		f, ok := nodes[0].(*FilterNode)
		if !ok || f.TombstoneOnReject {
			return nil
		}
		filter, nodes = f, nodes[1:]
	}
	if len(nodes) != 2 {
		return nil
	}
	proj, ok := nodes[0].(*ProjectNode)
	if !ok || proj.TombstoneKeys > 0 || len(proj.Inputs) != len(proj.Exprs) {
		return nil
	}
	sink, ok := nodes[1].(*SinkNode)
	if !ok || sink.Internal || sink.Timestamp != nil || sink.Window != NotWindowed {
		return nil
	}
	if !strings.EqualFold(src.ValueFormat, format.JSON) || !strings.EqualFold(sink.ValueFormat, format.JSON) {
		return nil
	}
	nk, nv := len(src.KeyCols), len(src.ValueCols)
	// input row position of each sink column, or -1
	rowPos := func(out int) int {
		if out < 0 || out >= len(proj.Inputs) {
			return -1
		}
		return proj.Inputs[out]
	}
	c := &recordCopy{sink: sink, tsCol: -1, nk: nk, nv: nv}
	from := make([]int, len(sink.ValueIdx))
	computed := false
	c.computed = make([]expr.Eval, len(sink.ValueIdx))
	for o, out := range sink.ValueIdx {
		if in := rowPos(out); in >= nk && in < nk+nv {
			from[o] = in - nk
			continue
		}
		// A key, a pseudo-column or an expression: computed.
		if out < 0 || out >= len(proj.Exprs) {
			return nil
		}
		from[o], c.computed[o], computed = -1, proj.Exprs[out], true
	}
	if !computed {
		c.computed = nil
	}
	if tc := src.TimestampCol; tc >= 0 {
		// Event time from a value column: an integer one, which the
		// copy reads and checks as the chain would; a STRING with a
		// format is left to the chain.
		j := tc - nk
		if j < 0 || j >= nv || (src.Needed != nil && !src.Needed[j]) {
			return nil
		}
		if k := src.ValueCols[j].Type.Kind; k != types.BigInt && k != types.Integer {
			return nil
		}
		c.tsCol = j
	}
	switch {
	case nk == 0 && len(sink.KeyIdx) == 0:
		// Without key columns the chain writes what the sink's key
		// format makes of none: no key, for every format.
		kc, err := format.NewKeyCodec(sink.KeyFormat, nil, sink.KeyProps)
		if err != nil {
			return nil
		}
		if k, err := kc.Encode([]any{}); err != nil || k != nil {
			return nil
		}
		c.keyless = true
	case nk == 1 && len(sink.KeyIdx) == 1 && rowPos(sink.KeyIdx[0]) == 0 &&
		strings.EqualFold(src.KeyFormat, format.Kafka) && strings.EqualFold(sink.KeyFormat, format.Kafka) &&
		src.KeyCols[0].Type.Equal(sink.KeyCols[0].Type):
		c.keyType = &src.KeyCols[0].Type
	default:
		return nil
	}
	if c.value = format.NewJSONCopy(src.ValueCols, src.ValueProps, sink.ValueCols, sink.ValueProps, from, src.Needed); c.value == nil {
		return nil
	}
	if filter != nil || computed {
		kc, err := format.NewKeyCodec(src.KeyFormat, src.KeyCols, src.KeyProps)
		if err != nil {
			return nil
		}
		if filter != nil {
			c.filter = filter.Pred
		}
		c.keyCodec = kc
		if len(src.Evaluated) == nv {
			c.evaluated = src.Evaluated
		}
		c.row = make([]any, len(src.RowSchema().Columns))
		c.vals = make([]any, len(sink.ValueIdx))
	}
	return c
}

// copy produces rec's result if it can be copied exactly, and sets
// *evTime to the record's event time; false sends rec through the chain.
// A record the filter drops is handled too: nothing is produced.
func (c *recordCopy) copy(tc *TaskContext, rec *Record, evTime *int64) bool {
	if rec.Value == nil || rec.Timestamp < 0 {
		return false
	}
	var key []byte
	switch {
	case c.keyless:
	case !format.KafkaCopies(*c.keyType, rec.Key):
		return false
	default:
		key = rec.Key
	}
	if !c.value.Read(rec.Value) {
		return false
	}
	ts := rec.Timestamp
	if c.tsCol >= 0 {
		// The text is a canonical integer or null; null and negative
		// times are the chain's to count.
		n, err := strconv.ParseInt(string(c.value.Column(rec.Value, c.tsCol)), 10, 64)
		if err != nil || n < 0 {
			return false
		}
		ts = n
	}
	var vals []any
	if c.row != nil {
		if !c.fillRow(rec, ts) {
			return false
		}
		if c.filter != nil {
			if pass, _ := c.filter(c.row).(bool); !pass {
				c.copied++
				*evTime = ts
				return true
			}
		}
		for o, e := range c.computed {
			if e != nil {
				c.vals[o] = e(c.row)
			}
		}
		vals = c.vals
	}
	value, err := c.value.Write(nil, rec.Value, vals)
	if err != nil {
		return false // the chain counts the serialisation error
	}
	c.copied++
	tc.Metrics.RecordsOut.Add(1)
	tc.Out.Produce(&Record{Topic: c.sink.Topic, Partition: -1, Key: key, Value: value, Timestamp: ts})
	*evTime = ts
	return true
}

// fillRow lays out rec as the source's decoder would, for the filter and
// the computed columns: key columns, value columns, ROWTIME (the event
// time), ROWPARTITION, ROWOFFSET.
func (c *recordCopy) fillRow(rec *Record, ts int64) bool {
	clear(c.row)
	if c.nk > 0 && c.keyCodec.Decode(rec.Key, c.row[:c.nk]) != nil {
		return false
	}
	if !c.value.Decode(rec.Value, c.row[c.nk:c.nk+c.nv], c.evaluated) {
		return false
	}
	base := c.nk + c.nv
	c.row[base], c.row[base+1], c.row[base+2] = ts, rec.Partition, rec.Offset
	return true
}

// describe is EXPLAIN's line for the shortcut.
func (c *recordCopy) describe() string {
	computed := 0
	for _, e := range c.computed {
		if e != nil {
			computed++
		}
	}
	copied := len(c.sink.ValueIdx) - computed
	return fmt.Sprintf("(JSON read in place: %d of %d value columns copied as text, only what the rest and the filter read converted; unusual records take the steps)", copied, len(c.sink.ValueIdx))
}
