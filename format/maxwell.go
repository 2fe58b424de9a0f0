package format

import (
	"errors"
	"fmt"

	"github.com/sluice-sql/sluice/types"
	"github.com/valyala/fastjson"
)

// EnvelopeMaxwell is Maxwell's daemon's change event: one JSON object per
// row change, {"database":…,"table":…,"type":"insert"|"update"|"delete",
// "ts":<seconds>,"xid":…,"data":{row},"old":{changed fields' old values}}.
const EnvelopeMaxwell = "MAXWELL"

// ErrNoChange: a record of a change-data-capture topic that changes no
// row (Maxwell's bootstrap-start and bootstrap-complete markers). exec
// skips it without counting it bad.
var ErrNoChange = errors.New("not a row change")

// ReadMaxwellJSON reads a Maxwell change event: insert is c,
// bootstrap-insert (a row read by a bootstrap) r, update u with before
// made of data and old's values of the changed fields, delete d with data
// as before. TsMs is ts in milliseconds; Source holds every field but
// data and old.
func ReadMaxwellJSON(data []byte) (Change, error) {
	var ch Change
	p := jsonParsers.Get()
	defer jsonParsers.Put(p)
	v, err := p.ParseBytes(data)
	if err != nil {
		return ch, fmt.Errorf("%w: %w: %v", ErrMalformed, ErrEnvelope, err)
	}
	obj, err := v.Object()
	if err != nil {
		return ch, fmt.Errorf("%w: %w: a Maxwell change event is a JSON object, not %s", ErrMalformed, ErrEnvelope, v.Type())
	}
	typ := v.Get("type")
	if typ == nil || typ.Type() != fastjson.TypeString {
		return ch, fmt.Errorf("%w: %w: no type field", ErrMalformed, ErrEnvelope)
	}
	row, err := image(v, "data")
	if err != nil {
		return ch, err
	}
	switch t := string(typ.GetStringBytes()); t {
	case "insert", "bootstrap-insert":
		ch.Op, ch.After = OpCreate, row
		if t == "bootstrap-insert" {
			ch.Op = OpRead
		}
	case "update":
		ch.Op, ch.After = OpUpdate, row
		if row != nil {
			ch.Before = overlay(v.Get("data"), v.Get("old"))
		}
	case "delete":
		ch.Op, ch.Before = OpDelete, row
	case "bootstrap-start", "bootstrap-complete":
		return ch, ErrNoChange
	default:
		return ch, fmt.Errorf("%w: %w: unknown type %q (Maxwell writes insert, update, delete, bootstrap-insert)", ErrMalformed, ErrEnvelope, t)
	}
	if row == nil {
		return ch, fmt.Errorf("%w: %w: %s without data", ErrMalformed, ErrEnvelope, typ.GetStringBytes())
	}
	ch.Source = make(map[string]any, obj.Len())
	obj.Visit(func(k []byte, fv *fastjson.Value) {
		if key := string(k); key != "data" && key != "old" {
			ch.Source[key] = jsonText(fv)
		}
	})
	if ts, ok := int64Of(v.Get("ts")).(int64); ok {
		ch.TsMs = ts * 1000
	}
	return ch, nil
}

// overlay is the JSON object of data with the fields old has replaced by
// old's values: Maxwell's old holds only the fields an update changed.
func overlay(data, old *fastjson.Value) []byte {
	obj, _ := data.Object()
	var prev *fastjson.Object
	if old != nil && old.Type() == fastjson.TypeObject {
		prev, _ = old.Object()
	}
	out := []byte{'{'}
	obj.Visit(func(k []byte, fv *fastjson.Value) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = types.AppendJSONString(out, string(k))
		out = append(out, ':')
		if prev != nil {
			if ov := prev.Get(string(k)); ov != nil {
				fv = ov
			}
		}
		out = fv.MarshalTo(out)
	})
	return append(out, '}')
}
