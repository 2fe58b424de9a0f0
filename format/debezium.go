package format

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

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
var Envelopes = []string{EnvelopeNone, EnvelopeDebezium}

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
// Debezium's envelope, without schemas (JsonConverter's
// schemas.enable=false): before and after are the JSON objects of the
// table's rows (key and value columns), source names the writer.
type DebeziumOut struct {
	srcHead []byte // {"version":…,"connector":"sluice","name":…,"ts_ms":
	srcTail []byte // ,"snapshot":"false","db":…,"table":…}
}

// NewDebeziumOut writes events whose source block names the service
// (name and db, as Debezium names its logical server and database) and
// the table.
func NewDebeziumOut(service, table string) *DebeziumOut {
	str := func(s string) string { return string(types.AppendJSONString(nil, s)) }
	return &DebeziumOut{
		srcHead: []byte(`{"version":` + str(DebeziumOutVersion) + `,"connector":"sluice","name":` + str(service) + `,"ts_ms":`),
		srcTail: []byte(`,"snapshot":"false","db":` + str(service) + `,"table":` + str(table) + `}`),
	}
}

// Append appends the change event of op with the row images before and
// after (JSON objects; nil writes null) at time tsMs, which is both
// source.ts_ms and the event's ts_ms: a change written again after a
// crash is then the same bytes.
func (w *DebeziumOut) Append(dst []byte, op byte, before, after []byte, tsMs int64) []byte {
	img := func(dst, b []byte) []byte {
		if b == nil {
			return append(dst, "null"...)
		}
		return append(dst, b...)
	}
	dst = append(dst, `{"before":`...)
	dst = img(dst, before)
	dst = append(dst, `,"after":`...)
	dst = img(dst, after)
	dst = append(dst, `,"source":`...)
	dst = append(dst, w.srcHead...)
	dst = strconv.AppendInt(dst, tsMs, 10)
	dst = append(dst, w.srcTail...)
	dst = append(dst, `,"op":"`...)
	dst = append(dst, op)
	dst = append(dst, `","ts_ms":`...)
	dst = strconv.AppendInt(dst, tsMs, 10)
	return append(dst, '}')
}
