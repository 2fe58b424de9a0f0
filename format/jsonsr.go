package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sluice-sql/sluice/types"
)

// The JSON_SR format: JSON in the Confluent wire format (confluent.go).
// The payload is read and written as JSON is (json.go), so the schema id
// a record carries is checked for form but its schema is not fetched:
// JSON names its fields. Sinks register a JSON Schema generated from
// their columns the way ksqlDB (Kafka Connect's JSON Schema converter)
// does, and sources declared without columns take them from the topic's
// registered JSON Schema.

// JSONSR is the format name.
const JSONSR = "JSON_SR"

// jsonSRCodec wraps the JSON codec in the wire format.
type jsonSRCodec struct {
	*jsonCodec
	writeID int
}

var (
	_ Codec    = (*jsonSRCodec)(nil)
	_ Appender = (*jsonSRCodec)(nil)
)

func newJSONSRCodec(cols []types.Column, p Props, key bool) (*jsonSRCodec, error) {
	if err := checkJSONMapKeys(cols); err != nil {
		return nil, err
	}
	return &jsonSRCodec{jsonCodec: newJSONCodec(cols, p, key), writeID: p.SchemaID}, nil
}

// checkJSONMapKeys refuses a MAP whose keys are not STRINGs, anywhere in
// the columns, as ksqlDB's JSON and JSON_SR formats both do: a JSON
// object's property names are strings, so other keys would not read back
// as they were written.
func checkJSONMapKeys(cols []types.Column) error {
	for _, c := range cols {
		if mapKeyNotString(c.Type) {
			return &SchemaError{Format: JSON, Reason: "JSON only supports MAP types with STRING keys"}
		}
	}
	return nil
}

// mapKeyNotString reports a MAP with a key other than STRING in t.
func mapKeyNotString(t types.Type) bool {
	switch t.Kind {
	case types.Map:
		return t.Key != nil && t.Key.Kind != types.String || mapKeyNotString(*t.Elem)
	case types.Array:
		return mapKeyNotString(*t.Elem)
	case types.Struct:
		for _, f := range t.Fields {
			if mapKeyNotString(f.Type) {
				return true
			}
		}
	}
	return false
}

func (c *jsonSRCodec) Encode(vals []any) ([]byte, error) {
	return c.AppendEncode(make([]byte, 0, wireHeaderLen+64+32*len(c.cols)), vals)
}

// AppendEncode implements Appender: the wire header, then the JSON.
func (c *jsonSRCodec) AppendEncode(dst []byte, vals []any) ([]byte, error) {
	b, err := c.jsonCodec.AppendEncode(appendWireHeader(dst, c.writeID), vals)
	if b == nil || err != nil {
		return nil, err
	}
	return b, nil
}

func (c *jsonSRCodec) Decode(data []byte, dst []any) error {
	if len(data) == 0 {
		return c.jsonCodec.Decode(data, dst)
	}
	_, payload, err := readWireHeader(data)
	if err != nil {
		return err
	}
	return c.jsonCodec.Decode(payload, dst)
}

// Kafka Connect's names for the logical types, as its JSON Schema
// converter writes them in "title".
const (
	connectDecimal   = "org.apache.kafka.connect.data.Decimal"
	connectTimestamp = "org.apache.kafka.connect.data.Timestamp"
	connectDate      = "org.apache.kafka.connect.data.Date"
	connectTime      = "org.apache.kafka.connect.data.Time"
)

// GenerateJSONSchema returns the JSON Schema ksqlDB would register for
// columns: an object with an optional property per column (each with its
// connect.index), or, unwrapped, the optional schema of the one column.
func GenerateJSONSchema(cols []types.Column, unwrapped bool) (string, error) {
	var s any
	if unwrapped {
		if len(cols) != 1 {
			return "", fmt.Errorf("%w: an unwrapped JSON_SR schema needs one column, got %d", ErrUnsupported, len(cols))
		}
		s = optionalJSON(jsonSchemaOf(cols[0].Type))
	} else {
		fields := make([]types.Field, len(cols))
		for i, c := range cols {
			fields[i] = types.Field{Name: c.Name, Type: c.Type}
		}
		s = jsonObjectSchema(fields)
	}
	b, err := json.Marshal(s)
	return string(b), err
}

func optionalJSON(s map[string]any) map[string]any {
	return map[string]any{"oneOf": []any{map[string]any{"type": "null"}, s}}
}

func jsonObjectSchema(fields []types.Field) map[string]any {
	props := make(map[string]any, len(fields))
	for i, f := range fields {
		p := optionalJSON(jsonSchemaOf(f.Type))
		p["connect.index"] = i
		props[f.Name] = p
	}
	return map[string]any{"type": "object", "properties": props}
}

func jsonSchemaOf(t types.Type) map[string]any {
	logical := func(typ, name, connectType string) map[string]any {
		return map[string]any{"type": typ, "title": name, "connect.version": 1, "connect.type": connectType}
	}
	switch t.Kind {
	case types.Boolean:
		return map[string]any{"type": "boolean"}
	case types.Integer:
		return map[string]any{"type": "integer", "connect.type": "int32"}
	case types.BigInt:
		return map[string]any{"type": "integer", "connect.type": "int64"}
	case types.Double:
		return map[string]any{"type": "number", "connect.type": "float64"}
	case types.Bytes:
		return map[string]any{"type": "string", "connect.type": "bytes"}
	case types.Decimal:
		s := logical("number", connectDecimal, "bytes")
		s["connect.parameters"] = map[string]any{"scale": strconv.Itoa(t.Scale), "connect.decimal.precision": strconv.Itoa(t.Precision)}
		return s
	case types.Timestamp:
		return logical("integer", connectTimestamp, "int64")
	case types.Date:
		return logical("integer", connectDate, "int32")
	case types.Time:
		return logical("integer", connectTime, "int32")
	case types.Array:
		return map[string]any{"type": "array", "items": optionalJSON(jsonSchemaOf(*t.Elem))}
	case types.Map:
		return map[string]any{"type": "object", "connect.type": "map", "additionalProperties": optionalJSON(jsonSchemaOf(*t.Elem))}
	case types.Struct:
		return jsonObjectSchema(t.Fields)
	}
	return map[string]any{"type": "string"}
}

// JSONSchemaColumns returns the columns a source declared without a
// column list takes from a JSON Schema, as ksqlDB infers them: an
// object's properties (in connect.index order, else as written), or one
// column ROWKEY / ROWVAL for any other schema.
func JSONSchemaColumns(schema string, key bool) ([]types.Column, error) {
	cols, _, err := jsonSchemaColumns(schema, key)
	return cols, err
}

// jsonSchemaColumns is JSONSchemaColumns, also saying whether the schema
// is an object of properties.
func jsonSchemaColumns(schema string, key bool) (cols []types.Column, object bool, err error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, false, fmt.Errorf("%w: not a JSON Schema: %v", ErrUnsupported, err)
	}
	// The maintained validator checks the schema is one; the columns
	// come from its text, which keeps the order of properties and the
	// connect.* annotations.
	c := jsonschema.NewCompiler()
	if err := c.AddResource("registered.json", doc); err != nil {
		return nil, false, fmt.Errorf("%w: JSON Schema: %v", ErrUnsupported, err)
	}
	if _, err := c.Compile("registered.json"); err != nil {
		return nil, false, fmt.Errorf("%w: JSON Schema: %v", ErrUnsupported, err)
	}
	root, err := parseOrdered([]byte(schema))
	if err != nil {
		return nil, false, fmt.Errorf("%w: not a JSON Schema: %v", ErrUnsupported, err)
	}
	r := &jsonSchemaReader{root: root}
	node := r.deref(r.nullable(root))
	if props, ok := node.get("properties"); ok && node.str("type") != "array" {
		fields, err := r.fields(props.(*ordered), 0)
		if err != nil {
			return nil, false, err
		}
		cols := make([]types.Column, len(fields))
		for i, f := range fields {
			cols[i] = types.Column{Name: f.Name, Type: f.Type, Key: key}
		}
		return cols, true, nil
	}
	t, err := r.sqlType(root, 0)
	if err != nil {
		return nil, false, err
	}
	return soleColumn(t, key), false, nil
}

// ordered is a JSON object that keeps its keys' order.
type ordered struct {
	keys []string
	vals map[string]any
}

func (o *ordered) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *ordered) str(k string) string {
	s, _ := o.vals[k].(string)
	return s
}

// parseOrdered parses JSON with objects as *ordered and numbers as
// json.Number.
func parseOrdered(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return orderedValue(d)
}

func orderedValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &ordered{vals: map[string]any{}}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := orderedValue(d)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[k]; !dup {
				o.keys = append(o.keys, k)
			}
			o.vals[k] = v
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		var a []any
		for d.More() {
			v, err := orderedValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}

type jsonSchemaReader struct{ root any }

// deref follows a local "$ref" (#/definitions/x, #/$defs/x).
func (r *jsonSchemaReader) deref(n any) *ordered {
	for range 32 {
		o, ok := n.(*ordered)
		if !ok {
			return &ordered{vals: map[string]any{}}
		}
		ref := o.str("$ref")
		if !strings.HasPrefix(ref, "#") {
			return o
		}
		n = r.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
			if part == "" {
				continue
			}
			if po, ok := n.(*ordered); ok {
				n = po.vals[part]
			}
		}
	}
	return &ordered{vals: map[string]any{}}
}

// nullable unwraps oneOf/anyOf [null, X] to X.
func (r *jsonSchemaReader) nullable(n any) any {
	o, ok := n.(*ordered)
	if !ok {
		return n
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, ok := o.vals[k].([]any)
		if !ok {
			continue
		}
		var other []any
		for _, a := range alts {
			if ao, ok := a.(*ordered); ok && ao.str("type") == "null" {
				continue
			}
			other = append(other, a)
		}
		if len(other) == 1 {
			return other[0]
		}
	}
	return n
}

func (r *jsonSchemaReader) fields(props *ordered, depth int) ([]types.Field, error) {
	type indexed struct {
		f     types.Field
		index int
	}
	var out []indexed
	for pos, k := range props.keys {
		t, err := r.sqlType(props.vals[k], depth+1)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", k, err)
		}
		idx := pos
		if po, ok := props.vals[k].(*ordered); ok {
			if n, ok := po.vals["connect.index"].(json.Number); ok {
				if i, err := n.Int64(); err == nil {
					idx = int(i)
				}
			}
		}
		out = append(out, indexed{types.Field{Name: k, Type: t}, idx})
	}
	// Stable by connect.index; properties without one keep their place.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].index < out[j-1].index; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	fs := make([]types.Field, len(out))
	for i, x := range out {
		fs[i] = x.f
	}
	return fs, nil
}

// sqlType is the SQL type of a JSON Schema, read as Kafka Connect's JSON
// Schema converter writes them.
func (r *jsonSchemaReader) sqlType(n any, depth int) (types.Type, error) {
	if depth > 32 {
		return types.Type{}, fmt.Errorf("%w: JSON Schema nests too deep", ErrUnsupported)
	}
	o := r.deref(r.nullable(n))
	typ := o.str("type")
	if alts, ok := o.vals["type"].([]any); ok { // ["null", "integer"]
		for _, a := range alts {
			if s, _ := a.(string); s != "null" {
				typ = s
			}
		}
	}
	title, connectType := o.str("title"), o.str("connect.type")
	switch typ {
	case "boolean":
		return types.BooleanType, nil
	case "integer":
		switch {
		case title == connectTimestamp:
			return types.TimestampType, nil
		case title == connectDate:
			return types.DateType, nil
		case title == connectTime:
			return types.TimeType, nil
		case connectType == "int8" || connectType == "int16" || connectType == "int32":
			return types.IntegerType, nil
		}
		return types.BigIntType, nil
	case "number":
		if title == connectDecimal {
			precision, scale := 64, 0
			if ps, ok := o.vals["connect.parameters"].(*ordered); ok {
				if p, err := strconv.Atoi(ps.str("connect.decimal.precision")); err == nil {
					precision = p
				}
				if s, err := strconv.Atoi(ps.str("scale")); err == nil {
					scale = s
				}
			}
			return types.DecimalOf(precision, scale), nil
		}
		return types.DoubleType, nil
	case "string":
		if connectType == "bytes" {
			return types.BytesType, nil
		}
		return types.StringType, nil
	case "array":
		items, ok := o.vals["items"]
		if !ok {
			return types.Type{}, fmt.Errorf("%w: a JSON Schema array without items", ErrUnsupported)
		}
		e, err := r.sqlType(items, depth+1)
		if err != nil {
			return types.Type{}, err
		}
		return types.ArrayOf(e), nil
	case "object", "":
		if props, ok := o.vals["properties"].(*ordered); ok && connectType != "map" {
			fields, err := r.fields(props, depth)
			if err != nil {
				return types.Type{}, err
			}
			return types.Type{Kind: types.Struct, Fields: fields}, nil
		}
		if add, ok := o.vals["additionalProperties"].(*ordered); ok {
			v, err := r.sqlType(add, depth+1)
			if err != nil {
				return types.Type{}, err
			}
			return types.MapOf(types.StringType, v), nil
		}
	}
	return types.Type{}, fmt.Errorf("%w: JSON Schema type %q", ErrUnsupported, typ)
}
