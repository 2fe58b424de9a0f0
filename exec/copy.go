package exec

import (
	"fmt"
	"strconv"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// recordCopy runs a JSONCopy in a task: the shortcut of a chain that
// rearranges JSON columns (SELECT *, SELECT A, B AS C, SELECT A, B * 2 AS
// D … WHERE …, JSON values on both sides). The result record is largely its input's text
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

// JSONCopy is the planner's choice (planner/rule_json_copy.go) that the
// records of a sub-topology may be copied instead of running its chain:
// a source read straight into an optional filter, a projection and a
// sink, with JSON values on both sides. It names what the chain does in
// the terms the copy needs; exec instantiates it (newRecordCopy) and
// decides nothing about which chains qualify.
type JSONCopy struct {
	// Sink is the chain's sink, whose topic and value columns the copy
	// writes.
	Sink *SinkNode
	// From gives, per sink value column, the source value column whose
	// text is copied, or -1 for a column Computed computes.
	From []int
	// Computed holds, per sink value column, the projection's expression
	// of a computed one (nil: copied); nil when every column is copied.
	Computed []expr.Eval
	// Filter is the WHERE clause (nil: none).
	Filter expr.Eval
	// KeyType is the type of the one KAFKA key column whose bytes carry
	// over unchanged; nil when neither side has a key column and the
	// result has none.
	KeyType *types.Type
	// TsCol, when ≥ 0, is the INT or BIGINT source value column holding
	// event time; otherwise the record timestamp is the event time.
	TsCol int
}

// Describe is EXPLAIN's line for the copy.
func (c *JSONCopy) Describe() string {
	computed := 0
	for _, e := range c.Computed {
		if e != nil {
			computed++
		}
	}
	copied := len(c.From) - computed
	return fmt.Sprintf("json copy: %d of %d value columns copied as text, only what the rest and the filter read converted; unusual records take the steps", copied, len(c.From))
}

// newRecordCopy instantiates the sub-topology's JSON copy, or returns nil
// when the planner chose none or the JSON codec cannot copy its columns.
func newRecordCopy(sub *SubTopology) *recordCopy {
	spec, src := sub.Copy, sub.Source
	if spec == nil || src == nil {
		return nil
	}
	sink := spec.Sink
	nk, nv := len(src.KeyCols), len(src.ValueCols)
	c := &recordCopy{sink: sink, tsCol: spec.TsCol, nk: nk, nv: nv, computed: spec.Computed, keyType: spec.KeyType, keyless: spec.KeyType == nil}
	if c.value = format.NewJSONCopy(src.ValueCols, src.ValueProps, sink.ValueCols, sink.ValueProps, spec.From, src.Needed); c.value == nil {
		return nil
	}
	if spec.Filter != nil || spec.Computed != nil {
		kc, err := format.NewKeyCodec(src.KeyFormat, src.KeyCols, src.KeyProps)
		if err != nil {
			return nil
		}
		c.filter, c.keyCodec = spec.Filter, kc
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
	// The result is about as long as the input, longer by what computed
	// columns and renamed fields add.
	value, err := c.value.Write(tc.arena.begin(len(rec.Value)+64), rec.Value, vals)
	if err != nil {
		return false // the chain counts the serialisation error
	}
	value = tc.arena.end(value)
	c.copied++
	tc.Metrics.RecordsOut.Add(1)
	out := tc.record()
	*out = Record{Topic: c.sink.Topic, Partition: -1, Key: key, Value: value, Timestamp: ts}
	tc.Out.Produce(out)
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
