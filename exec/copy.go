package exec

import (
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// recordCopy is the shortcut of a chain that only selects columns: a
// source read straight into a projection of plain column references and
// a sink, with JSON values on both sides (SELECT *, SELECT A, B AS C).
// Such a query's result record is its input's text rearranged, so the
// task copies the selected values' text (format.JSONCopy) and, when the
// key's bytes carry over unchanged, the key, instead of decoding each
// field into a Go value and encoding it again. It produces exactly the
// record the chain would: any record it cannot copy exactly (a tombstone,
// an escape, a number spelled differently, a missing column, a key that
// does not read back the same) it declines, and that record goes through
// the chain.
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
	// copied counts the records copied (for tests and benchmarks).
	copied int64
}

// newRecordCopy returns the shortcut for sub, or nil when its chain does
// more than select JSON columns.
func newRecordCopy(sub *SubTopology) *recordCopy {
	src := sub.Source
	if src == nil || len(sub.Sides) > 0 || len(sub.Nodes) != 2 || src.Window != NotWindowed || src.Dedupe || src.Table {
		return nil
	}
	proj, ok := sub.Nodes[0].(*ProjectNode)
	if !ok || proj.TombstoneKeys > 0 || len(proj.Inputs) != len(proj.Exprs) {
		return nil
	}
	sink, ok := sub.Nodes[1].(*SinkNode)
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
	from := make([]int, len(sink.ValueIdx))
	for o, out := range sink.ValueIdx {
		in := rowPos(out)
		if in < nk || in >= nk+nv {
			return nil // a key, a pseudo-column or a computed value
		}
		from[o] = in - nk
	}
	c := &recordCopy{sink: sink, tsCol: -1}
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
	return c
}

// copy produces rec's result if it can be copied exactly, and sets
// *evTime to the record's event time; false sends rec through the chain.
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
	value, ok := c.value.Append(nil, rec.Value)
	if !ok {
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
	c.copied++
	tc.Metrics.RecordsOut.Add(1)
	tc.Out.Produce(&Record{Topic: c.sink.Topic, Partition: -1, Key: key, Value: value, Timestamp: ts})
	*evTime = ts
	return true
}
