package format

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/hamba/avro/v2"

	"github.com/sluice-sql/sluice/types"
)

// The AVRO format: records in the Confluent wire format (confluent.go)
// whose payload is Avro binary. Records are read with the schema they
// were written with, fetched from the registry by the id in their header,
// and matched to the declared columns by field name (exactly, then
// ignoring case), so a record written with an older or newer schema reads
// as long as the fields the columns name keep compatible types: a field
// the writer lacks is NULL, a field the columns lack is ignored. Records
// are written with the schema the sink registered (Props.Schema,
// Props.SchemaID), which GenerateAvroSchema makes from the columns the way
// ksqlDB does: a record io.confluent.ksql.avro_schemas.KsqlDataSourceSchema
// with an optional field per column.

// Avro names ksqlDB gives the schemas it generates.
const (
	avroNamespace  = "io.confluent.ksql.avro_schemas"
	avroRecordName = "KsqlDataSourceSchema"
)

// avroReaders are reused readers of Avro payloads. (avro.Unmarshal takes
// an empty payload for a zero value; a reader says it ended early.)
var avroReaders = sync.Pool{New: func() any { return avro.NewReader(nil, 0) }}

// avroWriters are reused writers of Avro payloads, with their buffers.
var avroWriters = sync.Pool{New: func() any { return avro.NewWriter(nil, 256) }}

// avroCodec encodes and decodes one side of a record in AVRO.
type avroCodec struct {
	cols []types.Column
	// unwrapped: a single column written as the bare Avro value, not a
	// record (single keys, and values with WRAP_SINGLE_VALUE=false).
	unwrapped bool
	writeID   int
	write     avro.Schema // nil: the codec cannot encode (a source)
	// writeCols is, per field of a record write schema, its column.
	writeCols []int
	// writePrims, when every field of a record write schema is a
	// primitive (avroPrim), are those fields: Encode writes them itself.
	writePrims []avroPrim
	reg        Schemas
	// readers caches the writer schemas of the ids seen, parsed, with
	// their fields' columns.
	readers sync.Map // int → *avroReader
	// byName maps each column name, and its lower-case form, to its
	// position.
	exact, folded map[string]int
}

var (
	_ Codec    = (*avroCodec)(nil)
	_ Appender = (*avroCodec)(nil)
)

func newAvroCodec(cols []types.Column, p Props, key bool) (Codec, error) {
	c := &avroCodec{cols: cols, reg: p.Registry, writeID: p.SchemaID, exact: map[string]int{}, folded: map[string]int{}}
	c.unwrapped = Unwrapped(cols, p, key)
	for i, col := range cols {
		c.exact[col.Name] = i
		if _, dup := c.folded[strings.ToLower(col.Name)]; !dup {
			c.folded[strings.ToLower(col.Name)] = i
		}
	}
	if p.Schema != "" {
		s, err := avro.Parse(p.Schema)
		if err != nil {
			return nil, fmt.Errorf("%w: AVRO schema: %v", ErrUnsupported, err)
		}
		c.write = s
		if rs, ok := s.(*avro.RecordSchema); ok {
			c.writeCols = c.fieldColumns(rs)
			c.writePrims = primFields(rs)
		}
	}
	return c, nil
}

// avroReader is a writer schema records are read with.
type avroReader struct {
	schema avro.Schema
	// cols is, per field of a record schema, the column it fills (-1:
	// none), matched once per schema rather than per record.
	cols []int
	// prims, when every field of a record schema is a primitive
	// (avroPrim), are those fields: Decode reads them itself.
	prims []avroPrim
}

// avroPrim is a record field of a primitive type without a logical type,
// bare or in a union with null: the fields the codec reads and writes
// itself, field by field, rather than through hamba/avro's generic
// map[string]any, which costs a map, its hashing and an allocation per
// field on every record. What the codec does is what the generic path
// gives: the generic path's Go values (int for Avro int, int64 for long)
// go through the same conversions, and a value the fast path does not
// take (writing) sends the whole record down the generic path.
type avroPrim struct {
	typ    avro.Type // Boolean, Int, Long, Float, Double, String, Bytes
	schema avro.Schema
	union  bool
	// null and value are the union's branch indexes.
	null, value int64
}

// primFields returns the record's fields as avroPrims, or nil when a
// field is of another type.
func primFields(rs *avro.RecordSchema) []avroPrim {
	out := make([]avroPrim, len(rs.Fields()))
	for j, f := range rs.Fields() {
		p := avroPrim{schema: f.Type()}
		s := f.Type()
		if u, ok := s.(*avro.UnionSchema); ok {
			ts := u.Types()
			if len(ts) != 2 || (ts[0].Type() == avro.Null) == (ts[1].Type() == avro.Null) {
				return nil
			}
			p.union, p.null, p.value, s = true, 0, 1, ts[1]
			if ts[1].Type() == avro.Null {
				p.null, p.value, s = 1, 0, ts[0]
			}
		}
		switch s.Type() {
		case avro.Boolean, avro.Int, avro.Long, avro.Float, avro.Double, avro.String, avro.Bytes:
		default:
			return nil
		}
		if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
			return nil
		}
		p.typ = s.Type()
		out[j] = p
	}
	return out
}

// fieldColumns matches a record's fields to columns by name: exactly,
// then ignoring case; -1 for a field no column names.
func (c *avroCodec) fieldColumns(rs *avro.RecordSchema) []int {
	out := make([]int, len(rs.Fields()))
	for j, f := range rs.Fields() {
		i, ok := c.exact[f.Name()]
		if !ok {
			if i, ok = c.folded[strings.ToLower(f.Name())]; !ok {
				i = -1
			}
		}
		out[j] = i
	}
	return out
}

// Unwrapped says whether a single column goes without a record around
// it: keys unless WRAP_SINGLE_VALUE=true, values only with
// WRAP_SINGLE_VALUE=false (ksqlDB's rule for every format).
func Unwrapped(cols []types.Column, p Props, key bool) bool {
	if len(cols) != 1 {
		return false
	}
	if key {
		return p.WrapSingleValue == nil || !*p.WrapSingleValue
	}
	return p.WrapSingleValue != nil && !*p.WrapSingleValue
}

// GenerateAvroSchema returns the Avro schema ksqlDB would register for
// columns: an optional field per column in a record named fullName
// (default io.confluent.ksql.avro_schemas.KsqlDataSourceSchema), or, with
// unwrapped, the optional type of the single column.
func GenerateAvroSchema(cols []types.Column, fullName string, unwrapped bool) (string, error) {
	if fullName == "" {
		fullName = avroNamespace + "." + avroRecordName
	}
	var s any
	if unwrapped {
		if len(cols) != 1 {
			return "", fmt.Errorf("%w: an unwrapped AVRO schema needs one column, got %d", ErrUnsupported, len(cols))
		}
		t, err := avroType(cols[0].Type, fullName+"_"+cols[0].Name)
		if err != nil {
			return "", err
		}
		s = []any{"null", t}
	} else {
		fields := make([]any, 0, len(cols))
		for _, col := range cols {
			if err := avroName(col.Name); err != nil {
				return "", err
			}
			t, err := avroType(col.Type, fullName+"_"+col.Name)
			if err != nil {
				return "", fmt.Errorf("column %s: %w", col.Name, err)
			}
			fields = append(fields, map[string]any{"name": col.Name, "type": []any{"null", t}, "default": nil})
		}
		name, ns := fullName, ""
		if i := strings.LastIndexByte(fullName, '.'); i >= 0 {
			ns, name = fullName[:i], fullName[i+1:]
		}
		rec := map[string]any{"type": "record", "name": name, "fields": fields}
		if ns != "" {
			rec["namespace"] = ns
		}
		s = rec
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// avroName checks a field name against Avro's rule: a letter or _, then
// letters, digits and _.
func avroName(name string) error {
	for i, r := range name {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && !letter {
			return fmt.Errorf("%w: Schema is not compatible with Avro: Illegal initial character: %s", ErrUnsupported, name)
		}
		if !letter && !(r >= '0' && r <= '9') {
			return fmt.Errorf("%w: Schema is not compatible with Avro: Illegal character in: %s", ErrUnsupported, name)
		}
	}
	return nil
}

// avroType is the Avro type of a SQL type; name names a STRUCT's record.
func avroType(t types.Type, name string) (any, error) {
	switch t.Kind {
	case types.Boolean:
		return "boolean", nil
	case types.Integer:
		return "int", nil
	case types.BigInt:
		return "long", nil
	case types.Double:
		return "double", nil
	case types.String:
		return "string", nil
	case types.Bytes:
		return "bytes", nil
	case types.Decimal:
		return map[string]any{"type": "bytes", "logicalType": "decimal", "precision": t.Precision, "scale": t.Scale}, nil
	case types.Timestamp:
		return map[string]any{"type": "long", "logicalType": "timestamp-millis"}, nil
	case types.Date:
		return map[string]any{"type": "int", "logicalType": "date"}, nil
	case types.Time:
		return map[string]any{"type": "int", "logicalType": "time-millis"}, nil
	case types.Array:
		e, err := avroType(*t.Elem, name)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": []any{"null", e}}, nil
	case types.Map:
		if t.Key.Kind != types.String {
			return nil, fmt.Errorf("%w: Avro only supports MAPs with STRING keys, not %s", ErrUnsupported, *t.Key)
		}
		e, err := avroType(*t.Elem, name)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "map", "values": []any{"null", e}}, nil
	case types.Struct:
		fields := make([]any, 0, len(t.Fields))
		for _, f := range t.Fields {
			ft, err := avroType(f.Type, name+"_"+f.Name)
			if err != nil {
				return nil, err
			}
			fields = append(fields, map[string]any{"name": f.Name, "type": []any{"null", ft}, "default": nil})
		}
		short := name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			short = name[i+1:]
		}
		return map[string]any{"type": "record", "name": short, "fields": fields}, nil
	}
	return nil, fmt.Errorf("%w: AVRO cannot carry %s", ErrUnsupported, t)
}

func (c *avroCodec) Encode(vals []any) ([]byte, error) { return c.AppendEncode(nil, vals) }

// AppendEncode implements Appender: a record of primitive fields is
// written straight into dst; any other is encoded and then copied there.
func (c *avroCodec) AppendEncode(dst []byte, vals []any) ([]byte, error) {
	if vals == nil || len(c.cols) == 0 {
		return nil, nil
	}
	if err := checkEncodeLen(vals, len(c.cols)); err != nil {
		return nil, err
	}
	if c.write == nil {
		return nil, fmt.Errorf("%w: no AVRO schema registered to write with", ErrEncode)
	}
	if c.writePrims != nil && !c.unwrapped {
		if b, ok := c.encodePrims(dst, vals); ok {
			return b, nil
		}
	}
	b, err := c.encodeGeneric(vals)
	if b == nil || err != nil || dst == nil {
		return b, err
	}
	return append(dst, b...), nil
}

// encodePrims writes a record of avroPrim fields with hamba/avro's
// primitive writer, the bytes its generic encoder writes for it; ok is false for a value it does not take (a Go type
// other than the field's, or NULL in a field that is not nullable),
// which the generic path then writes or refuses.
func (c *avroCodec) encodePrims(dst []byte, vals []any) (b []byte, ok bool) {
	w := avroWriters.Get().(*avro.Writer)
	defer avroWriters.Put(w)
	w.Reset(nil)
	_, _ = w.Write(appendWireHeader(make([]byte, 0, wireHeaderLen), c.writeID))
	for j, p := range c.writePrims {
		var v any
		if i := c.writeCols[j]; i >= 0 {
			v = vals[i]
		}
		if v == nil {
			if !p.union {
				return nil, false
			}
			w.WriteLong(p.null)
			continue
		}
		if p.union {
			w.WriteLong(p.value)
		}
		switch p.typ {
		case avro.Long:
			x, ok := v.(int64)
			if !ok {
				return nil, false
			}
			w.WriteLong(x)
		case avro.Int:
			x, ok := v.(int32)
			if !ok {
				return nil, false
			}
			w.WriteInt(x)
		case avro.Double:
			x, ok := v.(float64)
			if !ok {
				return nil, false
			}
			w.WriteDouble(x)
		case avro.Float:
			x, ok := v.(float32)
			if !ok {
				return nil, false
			}
			w.WriteFloat(x)
		case avro.String:
			x, ok := v.(string)
			if !ok {
				return nil, false
			}
			w.WriteString(x)
		case avro.Bytes:
			x, ok := v.([]byte)
			if !ok {
				return nil, false
			}
			w.WriteBytes(x)
		case avro.Boolean:
			x, ok := v.(bool)
			if !ok {
				return nil, false
			}
			w.WriteBool(x)
		}
	}
	// The writer goes back to the pool: the record keeps a copy, in dst
	// when there is one.
	if dst == nil {
		dst = make([]byte, 0, w.Buffered())
	}
	return append(dst, w.Buffer()...), true
}

// encodeGeneric writes vals through hamba/avro's generic encoder.
func (c *avroCodec) encodeGeneric(vals []any) ([]byte, error) {
	var v any
	if c.unwrapped {
		if vals[0] == nil {
			return nil, nil
		}
		v = toAvro(vals[0], c.cols[0].Type, c.write)
	} else {
		rec, ok := c.write.(*avro.RecordSchema)
		if !ok {
			return nil, fmt.Errorf("%w: AVRO schema %s is not a record, but %d columns are written", ErrEncode, c.write.Type(), len(c.cols))
		}
		out := make(map[string]any, len(c.cols))
		for j, f := range rec.Fields() {
			if i := c.writeCols[j]; i >= 0 {
				out[f.Name()] = avroFieldValue(f, toAvro(vals[i], c.cols[i].Type, f.Type()))
			} else {
				out[f.Name()] = avroFieldValue(f, nil)
			}
		}
		v = out
	}
	b := appendWireHeader(make([]byte, 0, 64), c.writeID)
	body, err := avro.Marshal(c.write, v)
	if err != nil {
		return nil, fmt.Errorf("%w: AVRO: %v", ErrEncode, err)
	}
	return append(b, body...), nil
}

// toAvro converts a SQL value to what hamba/avro writes for schema s:
// logical types as the Go types it expects (and picks union branches
// by), records and maps in a union named explicitly.
func toAvro(v any, t types.Type, s avro.Schema) any {
	if v == nil {
		return nil
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		var branch avro.Schema
		for _, b := range u.Types() {
			if b.Type() != avro.Null {
				branch = b
				break
			}
		}
		if branch == nil {
			return nil
		}
		inner := toAvro(v, t, branch)
		switch b := branch.(type) {
		case *avro.RecordSchema:
			return map[string]any{b.FullName(): inner}
		case *avro.MapSchema:
			return map[string]any{"map": inner}
		}
		return inner
	}
	switch s.Type() {
	case avro.Float:
		// A DOUBLE column into an Avro float (a schema someone else
		// registered): narrowed, as ksqlDB's converter does.
		if f, ok := v.(float64); ok {
			return float32(f)
		}
	case avro.Int:
		if n, ok := v.(int64); ok {
			return int32(n)
		}
	case avro.Long:
		if n, ok := v.(int32); ok {
			return int64(n)
		}
	}
	switch t.Kind {
	case types.Decimal:
		if d, ok := v.(*apd.Decimal); ok {
			return decimalRat(d)
		}
	case types.Timestamp:
		if ms, ok := v.(int64); ok && isLogical(s, avro.TimestampMillis, avro.TimestampMicros) {
			return time.UnixMilli(ms).UTC()
		}
	case types.Date:
		if days, ok := v.(int32); ok && isLogical(s, avro.Date) {
			return time.Unix(int64(days)*86400, 0).UTC()
		}
	case types.Time:
		if ms, ok := v.(int32); ok && isLogical(s, avro.TimeMillis, avro.TimeMicros) {
			return time.Duration(ms) * time.Millisecond
		}
	case types.Array:
		in, _ := v.([]any)
		items := s
		if a, ok := s.(*avro.ArraySchema); ok {
			items = a.Items()
		}
		out := make([]any, len(in))
		for i, e := range in {
			out[i] = toAvro(e, *t.Elem, items)
		}
		return out
	case types.Map:
		in, _ := v.(map[string]any)
		values := s
		if m, ok := s.(*avro.MapSchema); ok {
			values = m.Values()
		}
		out := make(map[string]any, len(in))
		for k, e := range in {
			out[k] = toAvro(e, *t.Elem, values)
		}
		return out
	case types.Struct:
		in, _ := v.([]any)
		rec, ok := s.(*avro.RecordSchema)
		if !ok {
			return nil
		}
		out := make(map[string]any, len(rec.Fields()))
		for _, f := range rec.Fields() {
			var fv any
			for i, sf := range t.Fields {
				if i < len(in) && strings.EqualFold(sf.Name, f.Name()) {
					fv = toAvro(in[i], sf.Type, f.Type())
					break
				}
			}
			out[f.Name()] = avroFieldValue(f, fv)
		}
		return out
	}
	return v
}

// avroFieldValue is what a record field gets for v: a NULL in a field
// that cannot hold one (a schema someone else registered) takes the
// field's default, as ksqlDB's converter writes it, when it has one.
func avroFieldValue(f *avro.Field, v any) any {
	if v != nil || !f.HasDefault() || f.Type().Type() == avro.Union || f.Type().Type() == avro.Null {
		return v
	}
	return f.Default()
}

// isLogical says whether s is a primitive of one of the logical types.
func isLogical(s avro.Schema, want ...avro.LogicalType) bool {
	ls, ok := s.(avro.LogicalTypeSchema)
	if !ok || ls.Logical() == nil {
		return false
	}
	for _, w := range want {
		if ls.Logical().Type() == w {
			return true
		}
	}
	return false
}

func decimalRat(d *apd.Decimal) *big.Rat {
	var coeff big.Int
	coeff.SetString(d.Coeff.String(), 10)
	if d.Negative {
		coeff.Neg(&coeff)
	}
	r := new(big.Rat).SetInt(&coeff)
	if d.Exponent > 0 {
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Exponent)), nil)))
	} else if d.Exponent < 0 {
		r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Exponent)), nil)))
	}
	return r
}

func (c *avroCodec) Decode(data []byte, dst []any) error {
	n := len(c.cols)
	if len(data) == 0 {
		setNull(dst, n)
		return nil
	}
	id, body, err := readWireHeader(data)
	if err != nil {
		return err
	}
	rd, err := c.reader(id)
	if err != nil {
		return err
	}
	s := rd.schema
	r := avroReaders.Get().(*avro.Reader)
	r.Reset(body)
	if rd.prims != nil && !c.unwrapped {
		err := c.decodePrims(r, rd, dst)
		rerr := r.Error
		r.Error = nil
		avroReaders.Put(r)
		if rerr != nil {
			return fmt.Errorf("%w: AVRO payload for schema id %d: %v", ErrMalformed, id, rerr)
		}
		return err
	}
	var v any
	r.ReadVal(s, &v)
	err = r.Error
	r.Error = nil
	avroReaders.Put(r)
	if err != nil {
		return fmt.Errorf("%w: AVRO payload for schema id %d: %v", ErrMalformed, id, err)
	}
	if c.unwrapped {
		if rec, ok := s.(*avro.RecordSchema); ok && (c.cols[0].Type.Kind != types.Struct || slices.Contains(rd.cols, 0)) {
			// A record around a single column: read its field. (A
			// STRUCT column without such a field is the record itself.)
			if m, ok := v.(map[string]any); ok {
				return c.fromRecord(m, rec, rd.cols, dst)
			}
		}
		val, err := fromAvro(v, c.cols[0].Type, s)
		if err != nil {
			return fmt.Errorf("%w: column %s: %v", ErrMalformed, c.cols[0].Name, err)
		}
		dst[0] = val
		return nil
	}
	rs, isRecord := s.(*avro.RecordSchema)
	m, ok := v.(map[string]any)
	if !isRecord || !ok {
		if n == 1 {
			// An unwrapped value where a record was declared: ksqlDB
			// reads a bare value as the single column too.
			val, err := fromAvro(v, c.cols[0].Type, s)
			if err != nil {
				return fmt.Errorf("%w: column %s: %v", ErrMalformed, c.cols[0].Name, err)
			}
			dst[0] = val
			return nil
		}
		return fmt.Errorf("%w: AVRO schema id %d is not a record, but %d columns are declared", ErrMalformed, id, n)
	}
	return c.fromRecord(m, rs, rd.cols, dst)
}

// decodeRecord reads a record with its writer schema into hamba/avro's
// generic form: the fields by name, and the record's schema.
func (c *avroCodec) decodeRecord(data []byte) (map[string]any, *avro.RecordSchema, error) {
	id, body, err := readWireHeader(data)
	if err != nil {
		return nil, nil, err
	}
	rd, err := c.reader(id)
	if err != nil {
		return nil, nil, err
	}
	rs, ok := rd.schema.(*avro.RecordSchema)
	if !ok {
		return nil, nil, fmt.Errorf("%w: AVRO schema id %d is not a record", ErrMalformed, id)
	}
	r := avroReaders.Get().(*avro.Reader)
	r.Reset(body)
	var v any
	r.ReadVal(rs, &v)
	err = r.Error
	r.Error = nil
	avroReaders.Put(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: AVRO payload for schema id %d: %v", ErrMalformed, id, err)
	}
	m, _ := v.(map[string]any)
	return m, rs, nil
}

// decodePrims reads a record of avroPrim fields into dst, as the generic
// path and fromRecord do: it reads the whole record (a payload error, in
// r.Error, goes before a column's), and returns the first field's
// conversion error.
func (c *avroCodec) decodePrims(r *avro.Reader, rd *avroReader, dst []any) error {
	setNull(dst, len(c.cols))
	var first error
	for j, p := range rd.prims {
		if p.union {
			switch idx := r.ReadLong(); {
			case r.Error != nil:
				return nil
			case idx == p.null:
				continue
			case idx != p.value:
				r.ReportError("decode union", fmt.Sprintf("unknown union index %d", idx))
				return nil
			}
		}
		// A field no column names is read all the same (not skipped), so
		// what a bad payload reports does not depend on the columns.
		i := rd.cols[j]
		k := types.Unknown
		if i >= 0 {
			k = c.cols[i].Type.Kind
		}
		var v any
		switch p.typ {
		case avro.Long:
			n := r.ReadLong()
			if k == types.BigInt || k == types.Timestamp {
				dst[i] = n
				continue
			}
			v = n
		case avro.Int:
			n := r.ReadInt()
			if k == types.Integer || k == types.Date || k == types.Time {
				dst[i] = n
				continue
			}
			v = int(n)
		case avro.Double:
			x := r.ReadDouble()
			if k == types.Double {
				dst[i] = x
				continue
			}
			v = x
		case avro.Float:
			v = r.ReadFloat()
		case avro.String:
			x := r.ReadString()
			if k == types.String {
				dst[i] = x
				continue
			}
			v = x
		case avro.Bytes:
			v = r.ReadBytes()
		case avro.Boolean:
			v = r.ReadBool()
		}
		if r.Error != nil {
			return nil
		}
		if i < 0 {
			continue
		}
		t := c.cols[i].Type
		val, err := fromAvro(v, t, p.schema)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("%w: column %s: %v", ErrMalformed, c.cols[i].Name, err)
			}
			continue
		}
		dst[i] = val
	}
	return first
}

// fromRecord fills dst from a decoded record by field name.
func (c *avroCodec) fromRecord(rec map[string]any, rs *avro.RecordSchema, cols []int, dst []any) error {
	setNull(dst, len(c.cols))
	for j, f := range rs.Fields() {
		i := cols[j]
		if i < 0 {
			continue
		}
		val, err := fromAvro(rec[f.Name()], c.cols[i].Type, f.Type())
		if err != nil {
			return fmt.Errorf("%w: column %s: %v", ErrMalformed, c.cols[i].Name, err)
		}
		dst[i] = val
	}
	return nil
}

// reader returns the parsed writer schema of id, asking the registry
// once per id.
func (c *avroCodec) reader(id int) (*avroReader, error) {
	if r, ok := c.readers.Load(id); ok {
		return r.(*avroReader), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	sch, err := c.reg.Schema(ctx, id)
	if err != nil {
		return nil, schemaLookupErr(id, err)
	}
	s, err := avro.Parse(sch.Text)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d is not an Avro schema: %v", ErrMalformed, id, err)
	}
	r := &avroReader{schema: s}
	if rs, ok := s.(*avro.RecordSchema); ok {
		r.cols = c.fieldColumns(rs)
		r.prims = primFields(rs)
	}
	c.readers.Store(id, r)
	return r, nil
}

// unionBranch finds the branch of a union a decoded value belongs to: the
// one named when hamba/avro gives a complex branch as {name: value},
// else the first non-null branch of the value's shape.
func unionBranch(v any, u *avro.UnionSchema) (any, avro.Schema) {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for k, inner := range m {
			for _, b := range u.Types() {
				if branchName(b) == k {
					return inner, b
				}
			}
		}
	}
	var first avro.Schema
	for _, b := range u.Types() {
		if b.Type() == avro.Null {
			continue
		}
		if first == nil {
			first = b
		}
		switch v.(type) {
		case []any:
			if b.Type() == avro.Array {
				return v, b
			}
		case map[string]any:
			if b.Type() == avro.Map || b.Type() == avro.Record {
				return v, b
			}
		}
	}
	return v, first
}

// branchName is how hamba/avro names a union branch: a named type by its
// full name, others by their type.
func branchName(s avro.Schema) string {
	if n, ok := deref(s).(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}

// fromAvro converts what hamba/avro decodes with schema s into the Go
// value of t.
func fromAvro(v any, t types.Type, s avro.Schema) (any, error) {
	if v == nil {
		return nil, nil
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		v, s = unionBranch(v, u)
		if v == nil {
			return nil, nil
		}
	}
	s = deref(s)
	switch t.Kind {
	case types.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case types.Integer:
		if n, ok := avroInt(v); ok {
			return int32(n), nil
		}
	case types.BigInt:
		if n, ok := avroInt(v); ok {
			return n, nil
		}
		if tm, ok := v.(time.Time); ok {
			return tm.UnixMilli(), nil
		}
	case types.Double:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
		if n, ok := avroInt(v); ok {
			return float64(n), nil
		}
	case types.String:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
		if text, ok := javaText(v); ok {
			return text, nil
		}
	case types.Bytes:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case types.Decimal:
		var d *apd.Decimal
		switch x := v.(type) {
		case *big.Rat:
			var err error
			if d, err = types.ParseDecimal(x.FloatString(t.Scale)); err != nil {
				return nil, err
			}
		case float64:
			var err error
			if d, err = types.DecimalFromFloat(x); err != nil {
				return nil, err
			}
		default:
			if n, ok := avroInt(v); ok {
				d = types.DecimalFromInt(n)
			}
		}
		if d != nil {
			return types.FitDecimal(d, t.Precision, t.Scale)
		}
	case types.Timestamp:
		if tm, ok := v.(time.Time); ok {
			return tm.UnixMilli(), nil
		}
		if n, ok := avroInt(v); ok {
			return n, nil
		}
	case types.Date:
		if tm, ok := v.(time.Time); ok {
			return int32(tm.Unix() / 86400), nil
		}
		if n, ok := avroInt(v); ok {
			return int32(n), nil
		}
	case types.Time:
		if d, ok := v.(time.Duration); ok {
			return int32(d.Milliseconds()), nil
		}
		if n, ok := avroInt(v); ok {
			return int32(n), nil
		}
	case types.Array:
		in, ok := v.([]any)
		if !ok {
			break
		}
		var items avro.Schema
		if a, ok := s.(*avro.ArraySchema); ok {
			items = a.Items()
		}
		out := make([]any, len(in))
		for i, e := range in {
			x, err := fromAvro(e, *t.Elem, items)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case types.Map:
		in, ok := v.(map[string]any)
		if !ok {
			break
		}
		var values avro.Schema
		if m, ok := s.(*avro.MapSchema); ok {
			values = m.Values()
		}
		out := make(map[string]any, len(in))
		for k, e := range in {
			x, err := fromAvro(e, *t.Elem, values)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case types.Struct:
		in, ok := v.(map[string]any)
		if !ok {
			break
		}
		fieldSchemas := map[string]avro.Schema{}
		if rs, ok := s.(*avro.RecordSchema); ok {
			for _, f := range rs.Fields() {
				fieldSchemas[f.Name()] = f.Type()
			}
		}
		out := make([]any, len(t.Fields))
		for name, e := range in {
			for i, f := range t.Fields {
				if f.Name == name || strings.EqualFold(f.Name, name) {
					x, err := fromAvro(e, f.Type, fieldSchemas[name])
					if err != nil {
						return nil, err
					}
					out[i] = x
					break
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("Avro value %T does not read as %s", v, t)
}

// avroInt reads the integers hamba/avro decodes (int for Avro int, int64
// for long).
func avroInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}
