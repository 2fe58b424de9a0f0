package exec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// ErrTimestampExtractor fails a query whose source has FailOnBadTimestamp
// set when a record's event time cannot be read. The text is ksqlDB's
// (Kafka Streams') for the same failure, so users and ksqlDB's tests
// recognise it.
var ErrTimestampExtractor = errors.New("Fatal user code error in TimestampExtractor callback for record")

// WindowType says how a source's or sink's keys carry a window.
type WindowType int

const (
	NotWindowed WindowType = iota
	TimeWindowed
	SessionWindowed
)

// Pseudo-column names appended to every source row, as in ksqlDB.
const (
	ColRowTime      = "ROWTIME"
	ColRowPartition = "ROWPARTITION"
	ColRowOffset    = "ROWOFFSET"
	ColWindowStart  = "WINDOWSTART"
	ColWindowEnd    = "WINDOWEND"
)

// Pseudo-column names a source read through a change-data-capture
// envelope (VALUE_ENVELOPE) adds after the others: the change's op (c,
// r, u, d), the database's time of the change (source.ts_ms), the row
// before the change (NULL when the event has none) and the envelope's
// source block. On a table they describe the change that made the
// current row.
const (
	ColCDCOp     = "CDC_OP"
	ColCDCTsMs   = "CDC_TS_MS"
	ColCDCBefore = "CDC_BEFORE"
	ColCDCSource = "CDC_SOURCE"
)

// CDCColumns are the envelope's pseudo columns for a source of the
// given key and value columns.
func CDCColumns(keys, values []types.Column) []types.Column {
	fields := make([]types.Field, 0, len(keys)+len(values))
	for _, c := range append(append([]types.Column(nil), keys...), values...) {
		fields = append(fields, types.Field{Name: c.Name, Type: c.Type})
	}
	return []types.Column{
		{Name: ColCDCOp, Type: types.StringType},
		{Name: ColCDCTsMs, Type: types.BigIntType},
		{Name: ColCDCBefore, Type: types.Type{Kind: types.Struct, Fields: fields}},
		{Name: ColCDCSource, Type: types.MapOf(types.StringType, types.StringType)},
	}
}

// errNoChange says a record of an enveloped source is no change at all:
// the tombstone Debezium writes after a delete so that compaction can
// drop the key. It is skipped without being counted as bad.
var errNoChange = errors.New("no change")

// SourceSpec decodes the records of one topic into rows laid out as
//
//	[key columns…, value columns…, ROWTIME, ROWPARTITION, ROWOFFSET, (WINDOWSTART, WINDOWEND), (CDC_OP, CDC_TS_MS, CDC_BEFORE, CDC_SOURCE)]
//
// A source whose ValueProps name an Envelope reads each record's value
// as a change event: its row image (after; before for a delete) gives
// the key and value columns by name, the record's key serving only to
// partition, and a delete is a row deletion on a table.
type SourceSpec struct {
	Topic       string
	KeyFormat   string
	ValueFormat string
	KeyCols     []types.Column
	ValueCols   []types.Column
	// HeaderCols are read from the record's headers (types.Column.Header):
	// HEADERS as ARRAY<STRUCT<KEY STRING, VALUE BYTES>>, HEADER('k') as
	// the BYTES of the last header k. They follow the value columns.
	HeaderCols []types.Column
	KeyProps   format.Props
	ValueProps format.Props
	Window     WindowType
	// WindowSize gives time-windowed keys their end (start + size): the
	// key carries only the start.
	WindowSize int64
	// TimestampCol is the position of the column holding event time, or
	// -1 to use the record timestamp.
	TimestampCol int
	// TimestampFormat parses string timestamps (empty: ISO-8601).
	TimestampFormat string
	// FailOnBadTimestamp makes a record whose event time cannot be read
	// (null, negative, unparsable) fail the query with
	// ErrTimestampExtractor instead of being counted and skipped. Only a
	// user's explicit ksql.timestamp.throw.on.invalid sets it.
	FailOnBadTimestamp bool
	// Table sources turn null values into row deletions; stream sources
	// skip them, since a stream has nothing to delete, unless
	// KeepNullValues is set.
	Table bool
	// KeepNullValues lets a stream source's null-value records go on as
	// rows holding only their key columns (Row.Tombstone), so that a
	// persistent projection writes them out with a null value, as ksqlDB
	// does. ksqlDB drops them at a WHERE or an aggregation, so the planner
	// sets this only for plain projections.
	KeepNullValues bool
	// Evaluated, when set, says which value columns the query's filter
	// and computed columns read, as opposed to those it only selects: a
	// task copying a record's text converts only these (see recordCopy).
	// Nil: every needed column.
	Evaluated []bool
	// Needed, when set, says which value columns the query reads; the
	// others are left NULL, so a format that can skip a field does not
	// convert it. Nil: all.
	Needed []bool
	// RowTimeUnread and RowOffsetUnread say the query reads no ROWTIME
	// (ROWOFFSET) of this source: the decoder leaves the column NULL
	// rather than box the record's timestamp (offset) for every record.
	// Event time travels in Row.Ts either way.
	RowTimeUnread, RowOffsetUnread bool
	// Dedupe marks a repartition topic: its records carry the partition
	// and offset of the record upstream that produced them, and a record
	// whose upstream offset was already applied is skipped. After an
	// at-least-once crash the upstream task writes some records again;
	// this keeps them from being counted twice.
	Dedupe bool
	// NoCDCColumns leaves an enveloped source's rows without the
	// envelope's pseudo columns: a join's rows end with the join's own
	// pseudo columns, so its inputs carry none of their own.
	NoCDCColumns bool
}

// RowSchema is the layout of the rows the source produces.
func (s *SourceSpec) RowSchema() types.Schema {
	var cols []types.Column
	cols = append(cols, s.KeyCols...)
	cols = append(cols, s.ValueCols...)
	cols = append(cols, s.HeaderCols...)
	cols = append(cols,
		types.Column{Name: ColRowTime, Type: types.BigIntType},
		types.Column{Name: ColRowPartition, Type: types.IntegerType},
		types.Column{Name: ColRowOffset, Type: types.BigIntType},
	)
	if s.Window != NotWindowed {
		cols = append(cols,
			types.Column{Name: ColWindowStart, Type: types.BigIntType},
			types.Column{Name: ColWindowEnd, Type: types.BigIntType},
		)
	}
	if s.Enveloped() && !s.NoCDCColumns {
		cols = append(cols, CDCColumns(s.KeyCols, s.ValueCols)...)
	}
	return types.Schema{Columns: cols}
}

// Enveloped reports whether the source's values are change events
// (VALUE_ENVELOPE other than NONE).
func (s *SourceSpec) Enveloped() bool {
	return s.ValueProps.Envelope != "" && s.ValueProps.Envelope != format.EnvelopeNone
}

// Describe is the line EXPLAIN prints.
func (s *SourceSpec) Describe() string {
	ts := "record timestamp"
	if s.TimestampCol >= 0 {
		all := s.RowSchema()
		ts = all.Columns[s.TimestampCol].Name
	}
	reads := ""
	if s.Needed != nil {
		var names []string
		for j, n := range s.Needed {
			if n {
				names = append(names, s.ValueCols[j].Name)
			}
		}
		reads = fmt.Sprintf(", reads %d of %d value columns: %s", len(names), len(s.ValueCols), strings.Join(names, ", "))
		if len(names) == 0 {
			reads = fmt.Sprintf(", reads none of %d value columns", len(s.ValueCols))
		}
	}
	value := s.ValueFormat
	if s.Enveloped() {
		value += " in " + s.ValueProps.Envelope + " change events"
	}
	return fmt.Sprintf("source %s (key %s, value %s, event time %s%s)", s.Topic, s.KeyFormat, value, ts, reads)
}

// headerValue is a header column's value: with key, the last value of
// that header (NULL when absent); without, every header as a
// STRUCT<KEY, VALUE>, an empty array when there are none. Headers are
// the user's: Sluice's own (sluice.*) are left out.
func headerValue(hs []Header, key string) any {
	if key != "" {
		for i := len(hs) - 1; i >= 0; i-- {
			if hs[i].Key == key {
				return hs[i].Value
			}
		}
		return nil
	}
	out := make([]any, 0, len(hs))
	for _, h := range hs {
		if !internalHeader(h.Key) {
			out = append(out, []any{h.Key, h.Value})
		}
	}
	return out
}

// internalHeader says a header is Sluice's own bookkeeping (the
// repartition de-duplication header), not one for users to see.
func internalHeader(key string) bool { return strings.HasPrefix(key, "sluice.") }

// decoder is the per-task instance of a SourceSpec.
type decoder struct {
	spec     *SourceSpec
	key, val format.Codec
	nk, nv   int
	width    int
	// changes, for an enveloped source, reads a change event's row into
	// the key and value columns, by name; cdc is the position of the
	// first envelope pseudo column (-1: none).
	changes *format.ChangeCodec
	cdc     int
	// reuse says the chain the rows go to keeps nothing of them
	// (rowBorrower): every row's columns are decoded into cols.
	reuse bool
	cols  []any
}

func newDecoder(s *SourceSpec) (*decoder, error) {
	kc, err := format.NewKeyCodec(s.KeyFormat, s.KeyCols, s.KeyProps)
	if err != nil {
		return nil, fmt.Errorf("source %s key: %w", s.Topic, err)
	}
	vc, err := format.NewValueCodec(s.ValueFormat, s.ValueCols, s.ValueProps)
	if err != nil {
		return nil, fmt.Errorf("source %s value: %w", s.Topic, err)
	}
	if sel, ok := vc.(format.Selective); ok && s.Needed != nil {
		sel.Select(s.Needed)
	}
	d := &decoder{spec: s, key: kc, val: vc, nk: len(s.KeyCols), nv: len(s.ValueCols), width: len(s.RowSchema().Columns)}
	if s.Enveloped() {
		cc, err := format.NewChangeCodec(s.ValueProps.Envelope, s.ValueFormat, append(append([]types.Column(nil), s.KeyCols...), s.ValueCols...), s.ValueProps)
		if err != nil {
			return nil, fmt.Errorf("source %s change events: %w", s.Topic, err)
		}
		if s.Needed != nil {
			needed := make([]bool, d.nk+d.nv)
			for i := range needed {
				needed[i] = i < d.nk || s.Needed[i-d.nk]
			}
			cc.Select(needed)
		}
		d.changes = cc
		d.cdc = -1
		if !s.NoCDCColumns {
			d.cdc = d.width - len(CDCColumns(nil, nil))
		}
	}
	return d, nil
}

// missingColumns reports how many value columns the last record lacked
// (0 when the format cannot tell).
func (d *decoder) missingColumns() int {
	if d.changes != nil {
		return d.changes.Missing()
	}
	if mr, ok := d.val.(format.MissingReporter); ok {
		return mr.Missing()
	}
	return 0
}

// decodeError says which part of a record could not be read.
type decodeError struct {
	kind string
	err  error
}

func (e *decodeError) Error() string { return e.err.Error() }

func (e *decodeError) Unwrap() error { return e.err }

// decode fills row from rec. A tombstone (nil value) on a table source
// yields a row with Tombstone set and only key columns.
func (d *decoder) decode(rec *Record, row *Row) error {
	var cols []any
	if d.reuse {
		if len(d.cols) != d.width {
			d.cols = make([]any, d.width)
		}
		cols = d.cols
		clear(cols) // columns a record lacks read as NULL
	} else {
		cols = make([]any, d.width)
	}
	key := rec.Key
	var wstart, wend int64
	switch d.spec.Window {
	case TimeWindowed:
		k, start, err := format.DecodeTimeWindowedKey(key)
		if err != nil {
			return &decodeError{ErrKindDeserialize, fmt.Errorf("windowed key: %w", err)}
		}
		key, wstart, wend = k, start, start+d.spec.WindowSize
	case SessionWindowed:
		k, start, end, err := format.DecodeSessionWindowedKey(key)
		if err != nil {
			return &decodeError{ErrKindDeserialize, fmt.Errorf("session key: %w", err)}
		}
		key, wstart, wend = k, start, end
	}
	if d.changes != nil {
		if err := d.decodeChange(rec, row, cols); err != nil {
			return err
		}
	} else {
		row.NullKey = d.nk > 0 && rec.Key == nil
		if d.nk > 0 {
			if err := d.key.Decode(key, cols[:d.nk]); err != nil {
				return &decodeError{ErrKindDeserialize, fmt.Errorf("key: %w", err)}
			}
		}
		if rec.Value == nil {
			row.Tombstone = true
		} else if d.nv > 0 {
			if err := d.val.Decode(rec.Value, cols[d.nk:d.nk+d.nv]); err != nil {
				return &decodeError{ErrKindDeserialize, fmt.Errorf("value: %w", err)}
			}
		}
	}
	for j, hc := range d.spec.HeaderCols {
		cols[d.nk+d.nv+j] = headerValue(rec.Headers, hc.HeaderKey)
	}
	base := d.nk + d.nv + len(d.spec.HeaderCols)
	if !d.spec.RowTimeUnread {
		cols[base] = rec.Timestamp
	}
	cols[base+1] = rec.Partition
	if !d.spec.RowOffsetUnread {
		cols[base+2] = rec.Offset
	}
	if d.spec.Window != NotWindowed {
		cols[base+3] = wstart
		cols[base+4] = wend
	}
	row.Cols = cols
	row.Ts = rec.Timestamp
	if rec.Timestamp < 0 && d.spec.TimestampCol < 0 {
		return &decodeError{ErrKindTimestamp, fmt.Errorf("negative record timestamp %d", rec.Timestamp)}
	}
	if tc := d.spec.TimestampCol; tc >= 0 && !row.Tombstone {
		ts, err := eventTime(cols[tc], d.spec.TimestampFormat)
		if err != nil {
			return &decodeError{ErrKindTimestamp, err}
		}
		row.Ts = ts
		if !d.spec.RowTimeUnread {
			cols[base] = ts
		}
	}
	return nil
}

// decodeChange fills the key and value columns and the envelope's
// pseudo columns from a change event. The key columns come from the row
// image by name, not from the record's key: Debezium's key is a struct
// of the primary key's columns in its converter's shape (schema wrapper
// or not), which no ksqlDB key format reads as the bare value a single
// key column is, while the image always holds the primary key. A
// delete on a table is a row deletion of before's key; on a stream it is
// a row of before's columns.
func (d *decoder) decodeChange(rec *Record, row *Row, cols []any) error {
	if rec.Value == nil {
		return errNoChange
	}
	ch, err := d.changes.Read(rec.Value, cols[:d.nk+d.nv])
	if errors.Is(err, format.ErrNoChange) {
		return errNoChange
	}
	if err != nil {
		return &decodeError{ErrKindDeserialize, fmt.Errorf("value: %w", err)}
	}
	if d.spec.Table {
		// A table's row needs its key: an image without it names other
		// columns than the table declares, which must not pass unseen.
		for i, c := range d.spec.KeyCols {
			if cols[i] == nil {
				return &decodeError{ErrKindDeserialize, fmt.Errorf("value: %w: the row image has no value for key column %s", format.ErrEnvelope, c.Name)}
			}
		}
	}
	row.Tombstone = ch.Op == format.OpDelete && d.spec.Table
	if d.cdc < 0 {
		return nil
	}
	cols[d.cdc] = string(ch.Op)
	cols[d.cdc+1] = ch.TsMs
	if ch.Before != nil {
		cols[d.cdc+2] = ch.Before
	}
	if ch.Source != nil {
		cols[d.cdc+3] = ch.Source
	}
	return nil
}

func eventTime(v any, layout string) (int64, error) {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return 0, fmt.Errorf("negative timestamp %d", x)
		}
		return x, nil
	case int32:
		return int64(x), nil
	case string:
		return parseTimestamp(x, layout)
	case nil:
		return 0, fmt.Errorf("timestamp column is null")
	}
	return 0, fmt.Errorf("timestamp column holds %T, not a time", v)
}

func parseTimestamp(s, layout string) (int64, error) {
	if layout == "" {
		return parseISO(s)
	}
	return parseJavaLayout(strings.TrimSpace(s), layout)
}
