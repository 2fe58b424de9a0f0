package format

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hamba/avro/v2"
	"github.com/sluice-sql/sluice/types"
	"github.com/valyala/fastjson"
)

// Envelopes, as written in VALUE_ENVELOPE. An envelope wraps the row a
// record carries in a change event of a change-data-capture tool; the
// value format (JSON) still says how the row's columns are written.
const (
	EnvelopeNone     = "NONE"
	EnvelopeDebezium = "DEBEZIUM"
)

// Envelopes lists the VALUE_ENVELOPE values Sluice implements.
var Envelopes = []string{EnvelopeNone, EnvelopeDebezium, EnvelopeMaxwell}

// ErrEnvelope: a record's value is not a change event of its envelope
// (no op, an op the envelope does not define, no row image where the op
// needs one). Such a record is malformed; exec counts and skips it.
var ErrEnvelope = errors.New("malformed change event")

// Change operations, as Debezium's op field spells them.
const (
	OpCreate = 'c'
	OpRead   = 'r' // a row read by a snapshot
	OpUpdate = 'u'
	OpDelete = 'd'
)

// Change is one change event read out of its envelope: the operation,
// the row images as JSON text (nil where the event has none), the time
// the database made the change and where in the database it came from.
type Change struct {
	Op     byte
	Before []byte
	After  []byte
	// TsMs is source.ts_ms (the time the database committed the
	// change), or the envelope's ts_ms when the source block has none;
	// nil when neither is there.
	TsMs any
	// Source is the source block's fields as text (numbers as written,
	// null as nil): connector, db, schema, table, lsn, txId, snapshot….
	Source map[string]any
}

// Image is the row image the op makes current: after for c, r and u,
// before for d.
func (c *Change) Image() []byte {
	if c.Op == OpDelete {
		return c.Before
	}
	return c.After
}

// ReadDebeziumJSON reads the change event of a record written by
// Kafka Connect's JsonConverter from a Debezium connector, with
// schemas.enable true ({"schema":…,"payload":{…}}) or false (the bare
// envelope). The row images are returned as the JSON text they are in
// the record, for the value codec to convert to columns.
func ReadDebeziumJSON(data []byte) (Change, error) {
	var ch Change
	p := jsonParsers.Get()
	defer jsonParsers.Put(p)
	v, err := p.ParseBytes(data)
	if err != nil {
		return ch, fmt.Errorf("%w: %w: %v", ErrMalformed, ErrEnvelope, err)
	}
	if v.Type() != fastjson.TypeObject {
		return ch, fmt.Errorf("%w: %w: a Debezium change event is a JSON object, not %s", ErrMalformed, ErrEnvelope, v.Type())
	}
	// JsonConverter with schemas.enable=true wraps every value as
	// {"schema":…,"payload":…}; an envelope has neither field.
	if pl := v.Get("payload"); pl != nil && v.Get("schema") != nil && v.Get("op") == nil {
		if pl.Type() != fastjson.TypeObject {
			return ch, fmt.Errorf("%w: %w: the payload of a Debezium change event is a JSON object, not %s", ErrMalformed, ErrEnvelope, pl.Type())
		}
		v = pl
	}
	op := v.Get("op")
	if op == nil || op.Type() == fastjson.TypeNull {
		return ch, fmt.Errorf("%w: %w: no op field", ErrMalformed, ErrEnvelope)
	}
	ob, err := op.StringBytes()
	if err != nil || len(ob) != 1 || !strings.ContainsRune("crud", rune(ob[0])) {
		return ch, fmt.Errorf("%w: %w: unknown op %s (Debezium writes c, r, u or d)", ErrMalformed, ErrEnvelope, op)
	}
	ch.Op = ob[0]
	if ch.Before, err = image(v, "before"); err != nil {
		return ch, err
	}
	if ch.After, err = image(v, "after"); err != nil {
		return ch, err
	}
	switch ch.Op {
	case OpCreate, OpRead, OpUpdate:
		if ch.After == nil {
			return ch, fmt.Errorf("%w: %w: op %c without an after image", ErrMalformed, ErrEnvelope, ch.Op)
		}
	case OpDelete:
		if ch.Before == nil {
			return ch, fmt.Errorf("%w: %w: op d without a before image (set the table's REPLICA IDENTITY so the database logs the deleted row's key)", ErrMalformed, ErrEnvelope)
		}
	}
	if src := v.Get("source"); src != nil && src.Type() == fastjson.TypeObject {
		obj, _ := src.Object()
		ch.Source = make(map[string]any, obj.Len())
		obj.Visit(func(k []byte, fv *fastjson.Value) {
			ch.Source[string(k)] = jsonText(fv)
		})
		ch.TsMs = int64Of(src.Get("ts_ms"))
	}
	if ch.TsMs == nil {
		ch.TsMs = int64Of(v.Get("ts_ms"))
	}
	return ch, nil
}

// image is the JSON text of a row image field, nil when it is absent or
// null; anything but an object is malformed.
func image(v *fastjson.Value, name string) ([]byte, error) {
	f := v.Get(name)
	if f == nil || f.Type() == fastjson.TypeNull {
		return nil, nil
	}
	if f.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("%w: %w: %s is a JSON object or null, not %s", ErrMalformed, ErrEnvelope, name, f.Type())
	}
	return f.MarshalTo(nil), nil
}

// jsonText is a source field as MAP<STRING,STRING> holds it: a string's
// contents, any other value's JSON text, null as nil.
func jsonText(v *fastjson.Value) any {
	switch v.Type() {
	case fastjson.TypeNull:
		return nil
	case fastjson.TypeString:
		return string(v.GetStringBytes())
	}
	return string(v.MarshalTo(nil))
}

func int64Of(v *fastjson.Value) any {
	if v == nil {
		return nil
	}
	switch v.Type() {
	case fastjson.TypeNumber:
		if n, err := v.Int64(); err == nil {
			return n
		}
	case fastjson.TypeString:
		if n, err := strconv.ParseInt(string(v.GetStringBytes()), 10, 64); err == nil {
			return n
		}
	}
	return nil
}

// DebeziumOutVersion is the source.version a Sluice sink writes: the
// version of the change events it writes, not of a Debezium release.
const DebeziumOutVersion = "sluice-1"

// DebeziumOut writes the change events of one Sluice table in
// Debezium's envelope: in JSON as JsonConverter writes them without
// schemas, in AVRO as the record DebeziumEnvelopeColumns describe,
// registered for the topic. The row images hold the table's key and
// value columns; source names the writer.
type DebeziumOut struct {
	image   Codec  // JSON: a row image
	avro    Codec  // AVRO: the whole event
	srcHead []byte // {"version":…,"connector":"sluice","name":…,"ts_ms":
	srcTail []byte // ,"snapshot":"false","db":…,"table":…}
	service string
	table   string
}

// DebeziumEnvelopeColumns are the fields of a change event of a table of
// cols, as an AVRO sink's generated schema has them.
func DebeziumEnvelopeColumns(cols []types.Column) []types.Column {
	fields := make([]types.Field, len(cols))
	for i, c := range cols {
		fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	row := types.Type{Kind: types.Struct, Fields: fields}
	source := types.Type{Kind: types.Struct, Fields: []types.Field{
		{Name: "version", Type: types.StringType}, {Name: "connector", Type: types.StringType},
		{Name: "name", Type: types.StringType}, {Name: "ts_ms", Type: types.BigIntType},
		{Name: "snapshot", Type: types.StringType}, {Name: "db", Type: types.StringType},
		{Name: "table", Type: types.StringType},
	}}
	return []types.Column{
		{Name: "before", Type: row}, {Name: "after", Type: row}, {Name: "source", Type: source},
		{Name: "op", Type: types.StringType}, {Name: "ts_ms", Type: types.BigIntType},
	}
}

// NewDebeziumOut writes events of a table of cols in valueFormat (JSON,
// or AVRO with p holding the registered envelope schema) whose source
// block names the service (name and db, as Debezium names its logical
// server and database) and the table.
func NewDebeziumOut(service, table string, cols []types.Column, valueFormat string, p Props) (*DebeziumOut, error) {
	cols = append([]types.Column(nil), cols...)
	for i := range cols {
		cols[i].Key = false
	}
	str := func(s string) string { return string(types.AppendJSONString(nil, s)) }
	w := &DebeziumOut{
		srcHead: []byte(`{"version":` + str(DebeziumOutVersion) + `,"connector":"sluice","name":` + str(service) + `,"ts_ms":`),
		srcTail: []byte(`,"snapshot":"false","db":` + str(service) + `,"table":` + str(table) + `}`),
		service: service, table: table,
	}
	switch strings.ToUpper(valueFormat) {
	case JSON:
		w.image = newJSONCodec(cols, Props{}, false)
	case Avro:
		c, err := NewValueCodec(Avro, DebeziumEnvelopeColumns(cols), p)
		if err != nil {
			return nil, err
		}
		w.avro = c
	default:
		return nil, fmt.Errorf("%w: Debezium change events are written in JSON or AVRO, not %s", ErrUnsupported, valueFormat)
	}
	return w, nil
}

// Append appends the change event of op with the rows before and after
// (the table's columns' values; nil: none) at time tsMs, which is both
// source.ts_ms and the event's ts_ms: a change written again after a
// crash is then the same bytes.
func (w *DebeziumOut) Append(dst []byte, op byte, before, after []any, tsMs int64) ([]byte, error) {
	if w.avro != nil {
		src := []any{DebeziumOutVersion, "sluice", w.service, tsMs, "false", w.service, w.table}
		var b, a any
		if before != nil {
			b = before
		}
		if after != nil {
			a = after
		}
		ev, err := w.avro.Encode([]any{b, a, src, string(op), tsMs})
		return append(dst, ev...), err
	}
	img := func(dst []byte, row []any) ([]byte, error) {
		if row == nil {
			return append(dst, "null"...), nil
		}
		return w.image.(Appender).AppendEncode(dst, row)
	}
	var err error
	dst = append(dst, `{"before":`...)
	if dst, err = img(dst, before); err != nil {
		return nil, err
	}
	dst = append(dst, `,"after":`...)
	if dst, err = img(dst, after); err != nil {
		return nil, err
	}
	dst = append(dst, `,"source":`...)
	dst = append(dst, w.srcHead...)
	dst = strconv.AppendInt(dst, tsMs, 10)
	dst = append(dst, w.srcTail...)
	dst = append(dst, `,"op":"`...)
	dst = append(dst, op)
	dst = append(dst, `","ts_ms":`...)
	dst = strconv.AppendInt(dst, tsMs, 10)
	return append(dst, '}'), nil
}

// ChangeCodec reads the change events of one envelope and value format
// into a table's columns (its key columns, then its value columns), by
// name. The record's key plays no part: the row image holds the primary
// key.
type ChangeCodec struct {
	cols []types.Column
	// image and before read a JSON event's row images (image may leave
	// columns undecoded: Select).
	image, before Codec
	// avro reads an AVRO event, an Envelope record as Debezium's
	// AvroConverter registers it.
	avro    *avroCodec
	rowType types.Type
	// read takes a JSON event out of its envelope.
	read func([]byte) (Change, error)
}

// Event is what a change event says besides the row: the op, the row
// before the change (nil when the event has none), the database's time
// of the change and its source block as text.
type Event struct {
	Op     byte
	Before []any
	TsMs   any
	Source map[string]any
}

// NewChangeCodec reads change events of envelope in valueFormat into
// cols: EnvelopeDebezium in JSON or AVRO (whose registry p names),
// EnvelopeMaxwell in JSON.
func NewChangeCodec(envelope, valueFormat string, cols []types.Column, p Props) (*ChangeCodec, error) {
	if envelope != EnvelopeDebezium && (envelope != EnvelopeMaxwell || !strings.EqualFold(valueFormat, JSON)) {
		return nil, fmt.Errorf("%w: VALUE_ENVELOPE %s with VALUE_FORMAT %s (supported are DEBEZIUM in JSON or AVRO, MAXWELL in JSON)", ErrUnsupported, envelope, valueFormat)
	}
	cols = append([]types.Column(nil), cols...)
	fields := make([]types.Field, len(cols))
	for i := range cols {
		cols[i].Key = false
		fields[i] = types.Field{Name: cols[i].Name, Type: cols[i].Type}
	}
	c := &ChangeCodec{cols: cols, rowType: types.Type{Kind: types.Struct, Fields: fields}, read: ReadDebeziumJSON}
	if envelope == EnvelopeMaxwell {
		c.read = ReadMaxwellJSON
	}
	switch strings.ToUpper(valueFormat) {
	case JSON:
		c.image, c.before = newJSONCodec(cols, Props{}, false), newJSONCodec(cols, Props{}, false)
	case Avro:
		if p.Registry == nil {
			return nil, fmt.Errorf("%w: format AVRO needs a Schema Registry, and none is configured", ErrUnsupported)
		}
		ac, err := newAvroCodec(nil, Props{Registry: p.Registry}, false)
		if err != nil {
			return nil, err
		}
		c.avro = ac.(*avroCodec)
	default:
		return nil, fmt.Errorf("%w: VALUE_ENVELOPE %s reads JSON or AVRO values, not %s", ErrUnsupported, envelope, valueFormat)
	}
	return c, nil
}

// Select makes Read convert only the needed columns of the row (the
// before image is read whole).
func (c *ChangeCodec) Select(needed []bool) {
	if sel, ok := c.image.(Selective); ok {
		sel.Select(needed)
	}
}

// Missing is the number of columns the last row image lacked.
func (c *ChangeCodec) Missing() int {
	if mr, ok := c.image.(MissingReporter); ok {
		return mr.Missing()
	}
	return 0
}

// Read fills row with the row the event's op makes current (after for
// c, r and u; before for d) and returns the rest of the event.
func (c *ChangeCodec) Read(data []byte, row []any) (Event, error) {
	if c.avro != nil {
		return c.readAvro(data, row)
	}
	ch, err := c.read(data)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Op: ch.Op, TsMs: ch.TsMs, Source: ch.Source}
	if ch.Before != nil {
		ev.Before = make([]any, len(c.cols))
		if err := c.before.Decode(ch.Before, ev.Before); err != nil {
			return ev, fmt.Errorf("before: %w", err)
		}
	}
	if ch.Op == OpDelete {
		copy(row, ev.Before)
		return ev, nil
	}
	if err := c.image.Decode(ch.After, row); err != nil {
		return ev, fmt.Errorf("after: %w", err)
	}
	return ev, nil
}

// readAvro reads an Envelope record: before and after unions of null
// and the table's Value record, op, ts_ms and the source record.
func (c *ChangeCodec) readAvro(data []byte, row []any) (Event, error) {
	var ev Event
	rec, rs, err := c.avro.decodeRecord(data)
	if err != nil {
		return ev, err
	}
	schemas := make(map[string]avro.Schema, len(rs.Fields()))
	for _, f := range rs.Fields() {
		schemas[f.Name()] = f.Type()
	}
	op, err := fromAvro(rec["op"], types.StringType, schemas["op"])
	if s, ok := op.(string); err != nil || !ok {
		return ev, fmt.Errorf("%w: %w: no op field", ErrMalformed, ErrEnvelope)
	} else if len(s) != 1 || !strings.ContainsRune("crud", rune(s[0])) {
		return ev, fmt.Errorf("%w: %w: unknown op %q (Debezium writes c, r, u or d)", ErrMalformed, ErrEnvelope, s)
	} else {
		ev.Op = s[0]
	}
	image := func(name string) ([]any, error) {
		v, err := fromAvro(rec[name], c.rowType, schemas[name])
		if err != nil {
			return nil, fmt.Errorf("%w: %w: %s: %v", ErrMalformed, ErrEnvelope, name, err)
		}
		vals, _ := v.([]any)
		return vals, nil
	}
	if ev.Before, err = image("before"); err != nil {
		return ev, err
	}
	after, err := image("after")
	if err != nil {
		return ev, err
	}
	switch {
	case ev.Op == OpDelete && ev.Before == nil:
		return ev, fmt.Errorf("%w: %w: op d without a before image (set the table's REPLICA IDENTITY so the database logs the deleted row's key)", ErrMalformed, ErrEnvelope)
	case ev.Op == OpDelete:
		copy(row, ev.Before)
	case after == nil:
		return ev, fmt.Errorf("%w: %w: op %c without an after image", ErrMalformed, ErrEnvelope, ev.Op)
	default:
		copy(row, after)
	}
	if src, ok := avroRecordValue(rec["source"], schemas["source"]); ok {
		ev.Source = make(map[string]any, len(src))
		for k, v := range src {
			ev.Source[k] = avroText(v)
		}
		if n, ok := avroInt(src["ts_ms"]); ok {
			ev.TsMs = n
		}
	}
	if ev.TsMs == nil {
		if v, _ := unionValue(rec["ts_ms"], schemas["ts_ms"]); v != nil {
			if n, ok := avroInt(v); ok {
				ev.TsMs = n
			}
		}
	}
	return ev, nil
}

// unionValue takes a decoded value out of its union branch, if s is a
// union.
func unionValue(v any, s avro.Schema) (any, avro.Schema) {
	if u, ok := s.(*avro.UnionSchema); ok && v != nil {
		return unionBranch(v, u)
	}
	return v, s
}

// avroRecordValue is a decoded record's fields (out of a union with null).
func avroRecordValue(v any, s avro.Schema) (map[string]any, bool) {
	v, _ = unionValue(v, s)
	m, ok := v.(map[string]any)
	return m, ok
}

// avroText is a source field as MAP<STRING,STRING> holds it.
func avroText(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return x
	case map[string]any:
		for _, inner := range x { // a union branch {type: value}
			return avroText(inner)
		}
		return nil
	}
	return fmt.Sprint(v)
}
