package format

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/cockroachdb/apd/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/sluice-sql/sluice/types"
)

// The PROTOBUF and PROTOBUF_NOSR formats: proto3 messages. PROTOBUF
// records are in the Confluent wire format (confluent.go) with the
// message indexes of the record's message after the schema id; they are
// read with the schema they were written with, fetched by id and compiled
// once, its fields matched to the declared columns by name (exactly, then
// ignoring case). PROTOBUF_NOSR records are the bare message of the
// schema generated from the columns, fields matched by number.
//
// proto3 has no null for a field without presence: such a field that is
// absent reads as its default (0, "", false, an empty list or map), as
// in ksqlDB; a message field (a STRUCT, a DECIMAL, a TIMESTAMP) that is
// absent reads as NULL. PROTOBUF_NULLABLE_REPRESENTATION (OPTIONAL or
// WRAPPER) generates schemas whose primitive fields have presence
// (proto3 optional, or google.protobuf wrapper messages), so NULL
// survives.

// Format names of the Protobuf formats.
const (
	Protobuf     = "PROTOBUF"
	ProtobufNoSR = "PROTOBUF_NOSR"
)

// Values of PROTOBUF_NULLABLE_REPRESENTATION.
const (
	NullableOptional = "OPTIONAL"
	NullableWrapper  = "WRAPPER"
)

// protoDefaultName is the message name ksqlDB gives the schemas it
// generates (nested messages count on: ConnectDefault2, ...).
const protoDefaultName = "ConnectDefault"

// protoMainFile is the name a schema's own text is compiled under.
const protoMainFile = "sluice.registered.schema.proto"

// protoImports are files registry schemas import without a reference:
// registries know them. Ours declare what the formats read of them.
// (google/protobuf/* come with protocompile.)
var protoImports = map[string]string{
	"confluent/meta.proto": `syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
}
extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
`,
	// Schemas use (confluent.field_meta) on a Decimal field without
	// importing meta.proto themselves: the import is public.
	"confluent/type/decimal.proto": `syntax = "proto3";
package confluent.type;
import public "confluent/meta.proto";
message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
`,
	"google/type/date.proto": `syntax = "proto3";
package google.type;
message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
`,
	"google/type/timeofday.proto": `syntax = "proto3";
package google.type;
message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
`,
}

// CompileProtobuf compiles a registered .proto schema with its
// references.
func CompileProtobuf(s Schema) (protoreflect.FileDescriptor, error) {
	files := map[string]string{protoMainFile: s.Text}
	for name, text := range protoImports {
		files[name] = text
	}
	for name, text := range s.References {
		files[name] = text
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(protoFiles(files))}
	fds, err := c.Compile(context.Background(), protoMainFile)
	if err != nil {
		return nil, fmt.Errorf("%w: PROTOBUF schema: %v", ErrUnsupported, strings.ReplaceAll(err.Error(), protoMainFile+":", ""))
	}
	return fds[0], nil
}

// protoFiles resolves the files of a schema by name: .proto source, or a
// serialized FileDescriptorProto in base64, the form Confluent's clients
// register (and ask for with ?format=serialized).
type protoFiles map[string]string

func (f protoFiles) FindFileByPath(path string) (protocompile.SearchResult, error) {
	text, ok := f[path]
	if !ok {
		return protocompile.SearchResult{}, fmt.Errorf("file %s not found: %w", path, protoregistry.NotFound)
	}
	if fdp := SerializedDescriptor(text); fdp != nil {
		fdp.Name = proto.String(path)
		return protocompile.SearchResult{Proto: fdp}, nil
	}
	return protocompile.SearchResult{Source: strings.NewReader(text)}, nil
}

// SerializedDescriptor reads a schema given as a base64 serialized
// FileDescriptorProto; nil when text is not one (.proto source has
// characters base64 lacks).
func SerializedDescriptor(text string) *descriptorpb.FileDescriptorProto {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(b) == 0 {
		return nil
	}
	fdp := &descriptorpb.FileDescriptorProto{}
	if proto.Unmarshal(b, fdp) != nil || len(fdp.GetMessageType())+len(fdp.GetEnumType()) == 0 {
		return nil
	}
	// protoc fills in every field's json_name, and the linker takes an
	// absent one for a custom "" (clashing with the next); descriptors
	// some clients serialize lack them, so the defaults are filled in.
	var fill func(ms []*descriptorpb.DescriptorProto)
	fill = func(ms []*descriptorpb.DescriptorProto) {
		for _, m := range ms {
			for _, f := range m.Field {
				if f.GetJsonName() == "" {
					f.JsonName = proto.String(jsonCamelCase(f.GetName()))
				}
			}
			fill(m.NestedType)
		}
	}
	fill(fdp.MessageType)
	return fdp
}

// jsonCamelCase is protoc's default JSON name of a field: underscores
// dropped, the letter after each upper-cased.
func jsonCamelCase(name string) string {
	var b strings.Builder
	upper := false
	for _, r := range name {
		switch {
		case r == '_':
			upper = true
		case upper && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			upper = false
		default:
			b.WriteRune(r)
			upper = false
		}
	}
	return b.String()
}

// SerializeProtobuf is a schema's main file as a base64 serialized
// FileDescriptorProto.
func SerializeProtobuf(s Schema) (string, error) {
	if SerializedDescriptor(s.Text) != nil {
		return strings.TrimSpace(s.Text), nil
	}
	fd, err := CompileProtobuf(s)
	if err != nil {
		return "", err
	}
	b, err := proto.Marshal(protodesc.ToFileDescriptorProto(fd))
	if err != nil {
		return "", fmt.Errorf("%w: PROTOBUF schema: %v", ErrUnsupported, err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// protoMessageNamed finds a file's message by full or simple name, among
// nested messages too; "" names the first.
func protoMessageNamed(fd protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	if fd.Messages().Len() == 0 {
		return nil, fmt.Errorf("%w: PROTOBUF schema declares no message", ErrUnsupported)
	}
	if name == "" {
		return fd.Messages().Get(0), nil
	}
	var found protoreflect.MessageDescriptor
	var walk func(ms protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len() && found == nil; i++ {
			m := ms.Get(i)
			if string(m.FullName()) == name || string(m.Name()) == name {
				found = m
				return
			}
			walk(m.Messages())
		}
	}
	walk(fd.Messages())
	if found == nil {
		return nil, fmt.Errorf("%w: PROTOBUF schema has no message %s", ErrUnsupported, name)
	}
	return found, nil
}

// messageIndexes is md's path in its file: its index among its parent's
// messages, from the top.
func messageIndexes(md protoreflect.MessageDescriptor) []int {
	var path []int
	for d := protoreflect.Descriptor(md); ; d = d.Parent() {
		m, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			break
		}
		path = append([]int{m.Index()}, path...)
	}
	return path
}

// appendMessageIndexes writes message indexes as Confluent does: zigzag
// varints, the count first, and [0] (the first message) as a single 0.
func appendMessageIndexes(b []byte, idx []int) []byte {
	if len(idx) == 1 && idx[0] == 0 {
		return append(b, 0)
	}
	b = binary.AppendVarint(b, int64(len(idx)))
	for _, i := range idx {
		b = binary.AppendVarint(b, int64(i))
	}
	return b
}

// firstMessageIndexes are the indexes of a file's first message, shared
// (read only) by every record that names it.
var firstMessageIndexes = []int{0}

func readMessageIndexes(b []byte) (idx []int, rest []byte, err error) {
	n, k := binary.Varint(b)
	if k <= 0 || n < 0 || n > 100 {
		return nil, nil, fmt.Errorf("%w: bad PROTOBUF message indexes", ErrMalformed)
	}
	b = b[k:]
	if n == 0 {
		return firstMessageIndexes, b, nil
	}
	idx = make([]int, n)
	for j := range idx {
		v, k := binary.Varint(b)
		if k <= 0 || v < 0 {
			return nil, nil, fmt.Errorf("%w: bad PROTOBUF message indexes", ErrMalformed)
		}
		idx[j], b = int(v), b[k:]
	}
	return idx, b, nil
}

func messageAt(fd protoreflect.FileDescriptor, idx []int) (protoreflect.MessageDescriptor, error) {
	ms := fd.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range idx {
		if i >= ms.Len() {
			return nil, fmt.Errorf("%w: PROTOBUF message indexes %v are not in the schema", ErrMalformed, idx)
		}
		md = ms.Get(i)
		ms = md.Messages()
	}
	return md, nil
}

// protoCodec encodes and decodes one side of a record in PROTOBUF or
// PROTOBUF_NOSR.
type protoCodec struct {
	cols []types.Column
	wire bool // PROTOBUF: Confluent wire format; PROTOBUF_NOSR: bare
	reg  Schemas
	// write is the message records are written with (and, for NOSR,
	// read with); writeID its schema's id, writeIdx its message indexes.
	write    *protoMessage
	writeID  int
	writeIdx []int
	// readers caches the writer schemas of the ids seen, compiled.
	readers       sync.Map // int → *protoFile
	exact, folded map[string]int
}

var _ Codec = (*protoCodec)(nil)

// protoFile is a compiled writer schema, with its messages' field
// matchings made as records name them.
type protoFile struct {
	fd protoreflect.FileDescriptor
	// first is the file's first message, which nearly every record names
	// (indexes [0]): matched once, found without building a map key.
	first *protoMessage
	msgs  sync.Map // fmt of other indexes → *protoMessage
}

// protoMessage is a message with, per field, the column it fills (-1:
// none).
type protoMessage struct {
	md   protoreflect.MessageDescriptor
	cols []int
}

func newProtoCodec(cols []types.Column, p Props, key bool, wire bool) (Codec, error) {
	name := Protobuf
	if !wire {
		name = ProtobufNoSR
	}
	if p.WrapSingleValue != nil && !*p.WrapSingleValue {
		return nil, fmt.Errorf("%w: Format '%s' does not support 'WRAP_SINGLE_VALUE' set to 'false'.", ErrUnsupported, name)
	}
	for _, col := range cols {
		if err := protoSupports(col.Type); err != nil {
			return nil, err
		}
	}
	c := &protoCodec{cols: cols, wire: wire, reg: p.Registry, writeID: p.SchemaID, exact: map[string]int{}, folded: map[string]int{}}
	for i, col := range cols {
		c.exact[col.Name] = i
		if _, dup := c.folded[strings.ToLower(col.Name)]; !dup {
			c.folded[strings.ToLower(col.Name)] = i
		}
	}
	schema := Schema{Type: SchemaProtobuf, Text: p.Schema, References: p.References}
	if !wire {
		text, err := GenerateProtobufSchema(cols, p.FullName, p.Nullable)
		if err != nil {
			return nil, err
		}
		schema = Schema{Type: SchemaProtobuf, Text: text}
	}
	if schema.Text != "" && len(cols) > 0 {
		fd, err := CompileProtobuf(schema)
		if err != nil {
			return nil, err
		}
		md, err := protoMessageNamed(fd, p.FullName)
		if err != nil {
			return nil, err
		}
		c.write = c.matched(md, wire)
		c.writeIdx = messageIndexes(md)
	}
	return c, nil
}

// protoSupports checks a column type has a Protobuf form.
func protoSupports(t types.Type) error {
	switch t.Kind {
	case types.Map:
		if t.Key != nil && t.Key.Kind != types.String {
			return fmt.Errorf("%w: PROTOBUF format only supports MAP types with STRING keys", ErrUnsupported)
		}
		if t.Elem.Kind == types.Array || t.Elem.Kind == types.Map {
			return fmt.Errorf("%w: PROTOBUF format does not support MAP values of type %s", ErrUnsupported, t.Elem)
		}
		return protoSupports(*t.Elem)
	case types.Array:
		if t.Elem.Kind == types.Array || t.Elem.Kind == types.Map {
			return fmt.Errorf("%w: PROTOBUF format does not support ARRAY elements of type %s", ErrUnsupported, t.Elem)
		}
		return protoSupports(*t.Elem)
	case types.Struct:
		for _, f := range t.Fields {
			if err := protoSupports(f.Type); err != nil {
				return err
			}
		}
	}
	return nil
}

// matched pairs a message's fields with columns: by name (exactly, then
// ignoring case), or for NOSR by number (field n is column n-1).
func (c *protoCodec) matched(md protoreflect.MessageDescriptor, byName bool) *protoMessage {
	fields := md.Fields()
	pm := &protoMessage{md: md, cols: make([]int, fields.Len())}
	for j := range pm.cols {
		f := fields.Get(j)
		i := -1
		if byName {
			var ok bool
			if i, ok = c.exact[string(f.Name())]; !ok {
				if i, ok = c.folded[strings.ToLower(string(f.Name()))]; !ok {
					i = -1
				}
			}
		} else if n := int(f.Number()) - 1; n < len(c.cols) {
			i = n
		}
		pm.cols[j] = i
	}
	return pm
}

func (c *protoCodec) Encode(vals []any) ([]byte, error) {
	if vals == nil || len(c.cols) == 0 {
		return nil, nil
	}
	if err := checkEncodeLen(vals, len(c.cols)); err != nil {
		return nil, err
	}
	if c.write == nil {
		return nil, fmt.Errorf("%w: no PROTOBUF schema registered to write with", ErrEncode)
	}
	msg := dynamicpb.NewMessage(c.write.md)
	fields := c.write.md.Fields()
	for j, i := range c.write.cols {
		if i < 0 || vals[i] == nil {
			continue
		}
		if err := setProtoField(msg, fields.Get(j), vals[i], c.cols[i].Type); err != nil {
			return nil, fmt.Errorf("%w: column %s: %v", ErrEncode, c.cols[i].Name, err)
		}
	}
	var b []byte
	if c.wire {
		b = appendWireHeader(make([]byte, 0, 64), c.writeID)
		b = appendMessageIndexes(b, c.writeIdx)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(b, msg)
	if err != nil {
		return nil, fmt.Errorf("%w: PROTOBUF: %v", ErrEncode, err)
	}
	if b == nil {
		b = []byte{} // every field default: an empty message, not a tombstone
	}
	return b, nil
}

func (c *protoCodec) Decode(data []byte, dst []any) error {
	n := len(c.cols)
	if data == nil || (c.wire && len(data) == 0) {
		setNull(dst, n)
		return nil
	}
	pm := c.write
	payload := data
	if c.wire {
		id, body, err := readWireHeader(data)
		if err != nil {
			return err
		}
		idx, body, err := readMessageIndexes(body)
		if err != nil {
			return err
		}
		if pm, err = c.message(id, idx); err != nil {
			return err
		}
		payload = body
	}
	if pm == nil {
		setNull(dst, n)
		return nil
	}
	msg := dynamicpb.NewMessage(pm.md)
	if err := proto.Unmarshal(payload, msg); err != nil {
		return fmt.Errorf("%w: PROTOBUF payload: %v", ErrMalformed, err)
	}
	setNull(dst, n)
	fields := pm.md.Fields()
	for j, i := range pm.cols {
		if i < 0 {
			continue
		}
		v, err := protoField(msg, fields.Get(j), c.cols[i].Type)
		if err != nil {
			return fmt.Errorf("%w: column %s: %v", ErrMalformed, c.cols[i].Name, err)
		}
		dst[i] = v
	}
	return nil
}

// message returns the message a record's indexes name in the schema of
// id, asking the registry once per id.
func (c *protoCodec) message(id int, idx []int) (*protoMessage, error) {
	var pf *protoFile
	if f, ok := c.readers.Load(id); ok {
		pf = f.(*protoFile)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
		defer cancel()
		sch, err := c.reg.Schema(ctx, id)
		if err != nil {
			return nil, schemaLookupErr(id, err)
		}
		fd, err := CompileProtobuf(sch)
		if err != nil {
			return nil, fmt.Errorf("%w: schema id %d: %v", ErrMalformed, id, err)
		}
		nf := &protoFile{fd: fd}
		if fd.Messages().Len() > 0 {
			nf.first = c.matched(fd.Messages().Get(0), true)
		}
		f, _ := c.readers.LoadOrStore(id, nf)
		pf = f.(*protoFile)
	}
	if len(idx) == 1 && idx[0] == 0 && pf.first != nil {
		return pf.first, nil
	}
	k := fmt.Sprint(idx)
	if m, ok := pf.msgs.Load(k); ok {
		return m.(*protoMessage), nil
	}
	md, err := messageAt(pf.fd, idx)
	if err != nil {
		return nil, err
	}
	m, _ := pf.msgs.LoadOrStore(k, c.matched(md, true))
	return m.(*protoMessage), nil
}

// protoField reads field fd of m as a value of t: absent fields without
// presence are their defaults, absent fields with presence NULL.
func protoField(m protoreflect.Message, fd protoreflect.FieldDescriptor, t types.Type) (any, error) {
	switch {
	case fd.IsList():
		if t.Kind != types.Array {
			return nil, fmt.Errorf("a repeated field does not read as %s", t)
		}
		l := m.Get(fd).List()
		out := make([]any, l.Len())
		for k := range out {
			v, err := protoValue(l.Get(k), fd, *t.Elem)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case fd.IsMap():
		if t.Kind != types.Map {
			return nil, fmt.Errorf("a map field does not read as %s", t)
		}
		mp := m.Get(fd).Map()
		out := make(map[string]any, mp.Len())
		var err error
		mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			var x any
			if x, err = protoValue(v, fd.MapValue(), *t.Elem); err != nil {
				return false
			}
			out[k.String()] = x
			return true
		})
		return out, err
	}
	if !m.Has(fd) && (fd.HasPresence() || fd.Kind() == protoreflect.BytesKind) {
		// Absent with presence is NULL. So are absent bytes, as ksqlDB
		// reads them: an unset proto3 bytes field is no value, not an
		// empty one.
		return nil, nil
	}
	return protoValue(m.Get(fd), fd, t)
}

// protoValue converts one value of a field of fd's kind to t.
func protoValue(v protoreflect.Value, fd protoreflect.FieldDescriptor, t types.Type) (any, error) {
	var x any
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return protoMessageValue(v.Message(), t)
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			x = string(ev.Name())
		} else {
			x = fmt.Sprint(v.Enum())
		}
	case protoreflect.BoolKind:
		x = v.Bool()
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		x = v.Int()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		x = int64(v.Uint())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		x = v.Float()
	case protoreflect.StringKind:
		x = v.String()
	case protoreflect.BytesKind:
		x = v.Bytes()
	}
	return protoScalar(x, t)
}

// protoScalar converts a scalar read from a message (bool, int64,
// float64, string, []byte) to t.
func protoScalar(x any, t types.Type) (any, error) {
	switch t.Kind {
	case types.Boolean:
		if b, ok := x.(bool); ok {
			return b, nil
		}
	case types.Integer, types.Date, types.Time:
		if n, ok := x.(int64); ok {
			return int32(n), nil
		}
	case types.BigInt, types.Timestamp:
		if n, ok := x.(int64); ok {
			return n, nil
		}
	case types.Double:
		switch n := x.(type) {
		case float64:
			return n, nil
		case int64:
			return float64(n), nil
		}
	case types.String:
		switch s := x.(type) {
		case string:
			return s, nil
		case []byte:
			return string(s), nil
		}
	case types.Bytes:
		switch s := x.(type) {
		case []byte:
			return s, nil
		case string:
			return []byte(s), nil
		}
	case types.Decimal:
		switch n := x.(type) {
		case int64:
			return types.FitDecimal(types.DecimalFromInt(n), t.Precision, t.Scale)
		case float64:
			d, err := types.DecimalFromFloat(n)
			if err != nil {
				return nil, err
			}
			return types.FitDecimal(d, t.Precision, t.Scale)
		}
	}
	return nil, fmt.Errorf("PROTOBUF value %T does not read as %s", x, t)
}

// Well-known messages with a SQL type of their own.
const (
	pbTimestamp = "google.protobuf.Timestamp"
	pbDate      = "google.type.Date"
	pbTimeOfDay = "google.type.TimeOfDay"
	pbDecimal   = "confluent.type.Decimal"
)

// isWrapper reports a google.protobuf wrapper message (Int32Value, ...):
// a nullable scalar.
func isWrapper(md protoreflect.MessageDescriptor) bool {
	n := string(md.FullName())
	return strings.HasPrefix(n, "google.protobuf.") && strings.HasSuffix(n, "Value") &&
		md.Fields().Len() == 1 && md.Fields().Get(0).Name() == "value"
}

func protoMessageValue(m protoreflect.Message, t types.Type) (any, error) {
	md := m.Descriptor()
	get := func(name string) protoreflect.Value { return m.Get(md.Fields().ByName(protoreflect.Name(name))) }
	switch string(md.FullName()) {
	case pbTimestamp:
		ms := get("seconds").Int()*1000 + get("nanos").Int()/1e6
		return protoScalar(ms, t)
	case pbDate:
		d := time.Date(int(get("year").Int()), time.Month(get("month").Int()), int(get("day").Int()), 0, 0, 0, 0, time.UTC)
		return protoScalar(d.Unix()/86400, t)
	case pbTimeOfDay:
		ms := ((get("hours").Int()*60+get("minutes").Int())*60+get("seconds").Int())*1000 + get("nanos").Int()/1e6
		return protoScalar(ms, t)
	case pbDecimal:
		if t.Kind != types.Decimal {
			return nil, fmt.Errorf("a Decimal does not read as %s", t)
		}
		return types.FitDecimal(decimalFromTwos(get("value").Bytes(), int32(get("scale").Int())), t.Precision, t.Scale)
	}
	if isWrapper(md) {
		f := md.Fields().Get(0)
		return protoValue(m.Get(f), f, t)
	}
	if t.Kind != types.Struct {
		return nil, fmt.Errorf("message %s does not read as %s", md.FullName(), t)
	}
	out := make([]any, len(t.Fields))
	fields := md.Fields()
	for j := 0; j < fields.Len(); j++ {
		f := fields.Get(j)
		i := structField(t, string(f.Name()))
		if i < 0 {
			continue
		}
		v, err := protoField(m, f, t.Fields[i].Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name(), err)
		}
		out[i] = v
	}
	return out, nil
}

// structField is the index of the field of struct type t named name
// (exactly, else ignoring case), or -1.
func structField(t types.Type, name string) int {
	folded := -1
	for i, f := range t.Fields {
		if f.Name == name {
			return i
		}
		if folded < 0 && strings.EqualFold(f.Name, name) {
			folded = i
		}
	}
	return folded
}

// decimalFromTwos is the decimal of a big-endian two's-complement
// unscaled value and a scale.
func decimalFromTwos(b []byte, scale int32) *apd.Decimal {
	var x big.Int
	x.SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(&x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(&x), -scale)
}

// twosFromDecimal is the big-endian two's-complement unscaled value of d
// at scale.
func twosFromDecimal(d *apd.Decimal, scale int) ([]byte, error) {
	r := decimalRat(d)
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !r.IsInt() {
		return nil, fmt.Errorf("decimal %s has more than %d digits after the point", d, scale)
	}
	x := r.Num()
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b, nil
	}
	n := (x.BitLen() + 8) / 8 // room for the sign bit
	twos := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), x)
	b := twos.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	return b, nil
}

// setProtoField writes v, a value of t, into field fd of m.
func setProtoField(m protoreflect.Message, fd protoreflect.FieldDescriptor, v any, t types.Type) error {
	switch {
	case fd.IsList():
		in, ok := v.([]any)
		if !ok || t.Elem == nil {
			return fmt.Errorf("%T is not an ARRAY", v)
		}
		l := m.Mutable(fd).List()
		for _, e := range in {
			pv, err := toProtoValue(e, fd, *t.Elem, l.NewElement)
			if err != nil {
				return err
			}
			l.Append(pv)
		}
		return nil
	case fd.IsMap():
		in, ok := v.(map[string]any)
		if !ok || t.Elem == nil {
			return fmt.Errorf("%T is not a MAP", v)
		}
		mp := m.Mutable(fd).Map()
		for k, e := range in {
			pv, err := toProtoValue(e, fd.MapValue(), *t.Elem, mp.NewValue)
			if err != nil {
				return err
			}
			key, err := protoMapKey(k, fd.MapKey())
			if err != nil {
				return err
			}
			mp.Set(key, pv)
		}
		return nil
	}
	pv, err := toProtoValue(v, fd, t, func() protoreflect.Value { return m.NewField(fd) })
	if err != nil {
		return err
	}
	m.Set(fd, pv)
	return nil
}

func protoMapKey(k string, fd protoreflect.FieldDescriptor) (protoreflect.MapKey, error) {
	if fd.Kind() != protoreflect.StringKind {
		return protoreflect.MapKey{}, fmt.Errorf("map key of kind %s", fd.Kind())
	}
	return protoreflect.ValueOfString(k).MapKey(), nil
}

// toProtoValue converts v, a value of t, to a value of fd's kind (newMsg
// makes an empty message of fd's message type). A NULL element of a list
// or map is its default: proto3 has no null there.
func toProtoValue(v any, fd protoreflect.FieldDescriptor, t types.Type, newMsg func() protoreflect.Value) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		mv := newMsg()
		if v == nil {
			return mv, nil
		}
		return mv, fillProtoMessage(mv.Message(), v, t)
	case protoreflect.EnumKind:
		s, _ := v.(string)
		ev := fd.Enum().Values().ByName(protoreflect.Name(s))
		if ev == nil {
			if v == nil {
				return protoreflect.ValueOfEnum(0), nil
			}
			return protoreflect.Value{}, fmt.Errorf("%q is not a value of enum %s", s, fd.Enum().FullName())
		}
		return protoreflect.ValueOfEnum(ev.Number()), nil
	}
	if v == nil {
		return fd.Default(), nil
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if b, ok := v.(bool); ok {
			return protoreflect.ValueOfBool(b), nil
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if n, ok := sqlInt(v); ok {
			return protoreflect.ValueOfInt32(int32(n)), nil
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if n, ok := sqlInt(v); ok {
			return protoreflect.ValueOfInt64(n), nil
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if n, ok := sqlInt(v); ok {
			return protoreflect.ValueOfUint32(uint32(n)), nil
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if n, ok := sqlInt(v); ok {
			return protoreflect.ValueOfUint64(uint64(n)), nil
		}
	case protoreflect.FloatKind:
		if f, ok := sqlFloat(v); ok {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
	case protoreflect.DoubleKind:
		if f, ok := sqlFloat(v); ok {
			return protoreflect.ValueOfFloat64(f), nil
		}
	case protoreflect.StringKind:
		switch s := v.(type) {
		case string:
			return protoreflect.ValueOfString(s), nil
		case []byte:
			return protoreflect.ValueOfString(string(s)), nil
		}
	case protoreflect.BytesKind:
		switch s := v.(type) {
		case []byte:
			return protoreflect.ValueOfBytes(s), nil
		case string:
			return protoreflect.ValueOfBytes([]byte(s)), nil
		}
	}
	return protoreflect.Value{}, fmt.Errorf("%s value %T does not write as PROTOBUF %s", t, v, fd.Kind())
}

func sqlInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

func sqlFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	if n, ok := sqlInt(v); ok {
		return float64(n), true
	}
	return 0, false
}

// fillProtoMessage writes v, a non-NULL value of t, into the empty
// message m: a well-known message, a wrapper, or a STRUCT by field name.
func fillProtoMessage(m protoreflect.Message, v any, t types.Type) error {
	md := m.Descriptor()
	field := func(name string) protoreflect.FieldDescriptor { return md.Fields().ByName(protoreflect.Name(name)) }
	setInt := func(name string, n int64) {
		if f := field(name); f != nil && n != 0 {
			if pv, err := toProtoValue(n, f, types.BigIntType, nil); err == nil {
				m.Set(f, pv)
			}
		}
	}
	switch string(md.FullName()) {
	case pbTimestamp:
		ms, ok := sqlInt(v)
		if !ok {
			return fmt.Errorf("%T is not a TIMESTAMP", v)
		}
		sec, rem := ms/1000, ms%1000
		if rem < 0 {
			sec, rem = sec-1, rem+1000
		}
		setInt("seconds", sec)
		setInt("nanos", rem*1e6)
		return nil
	case pbDate:
		days, ok := sqlInt(v)
		if !ok {
			return fmt.Errorf("%T is not a DATE", v)
		}
		d := time.Unix(days*86400, 0).UTC()
		setInt("year", int64(d.Year()))
		setInt("month", int64(d.Month()))
		setInt("day", int64(d.Day()))
		return nil
	case pbTimeOfDay:
		ms, ok := sqlInt(v)
		if !ok {
			return fmt.Errorf("%T is not a TIME", v)
		}
		setInt("hours", ms/3600000)
		setInt("minutes", ms/60000%60)
		setInt("seconds", ms/1000%60)
		setInt("nanos", ms%1000*1e6)
		return nil
	case pbDecimal:
		d, ok := v.(*apd.Decimal)
		if !ok {
			return fmt.Errorf("%T is not a DECIMAL", v)
		}
		b, err := twosFromDecimal(d, t.Scale)
		if err != nil {
			return err
		}
		m.Set(field("value"), protoreflect.ValueOfBytes(b))
		setInt("precision", int64(t.Precision))
		setInt("scale", int64(t.Scale))
		return nil
	}
	if isWrapper(md) {
		f := md.Fields().Get(0)
		pv, err := toProtoValue(v, f, t, nil)
		if err != nil {
			return err
		}
		m.Set(f, pv)
		return nil
	}
	in, ok := v.([]any)
	if t.Kind != types.Struct || !ok {
		return fmt.Errorf("%s value %T does not write as message %s", t, v, md.FullName())
	}
	fields := md.Fields()
	for j := 0; j < fields.Len(); j++ {
		f := fields.Get(j)
		i := structField(t, string(f.Name()))
		if i < 0 || i >= len(in) || in[i] == nil {
			continue
		}
		if err := setProtoField(m, f, in[i], t.Fields[i].Type); err != nil {
			return fmt.Errorf("field %s: %w", f.Name(), err)
		}
	}
	return nil
}

// GenerateProtobufSchema returns the proto3 schema ksqlDB would register
// for columns: a message named fullName (default ConnectDefault1; a
// dotted name's prefix is its package) with a field per column, numbered
// in order, STRUCT columns as nested messages. nullable is
// PROTOBUF_NULLABLE_REPRESENTATION: "" (proto3 defaults), OPTIONAL or
// WRAPPER.
func GenerateProtobufSchema(cols []types.Column, fullName, nullable string) (string, error) {
	for _, col := range cols {
		if err := protoSupports(col.Type); err != nil {
			return "", err
		}
	}
	pkg, name := "", protoDefaultName+"1"
	if fullName != "" {
		name = fullName
		if i := strings.LastIndex(fullName, "."); i >= 0 {
			pkg, name = fullName[:i], fullName[i+1:]
		}
	}
	g := &protoGen{imports: map[string]bool{}, nullable: strings.ToUpper(nullable), next: 2}
	fields := make([]types.Field, len(cols))
	for i, c := range cols {
		fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	var body strings.Builder
	if err := g.message(&body, name, fields, ""); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\n")
	if pkg != "" {
		fmt.Fprintf(&b, "package %s;\n", pkg)
	}
	for _, imp := range []string{"confluent/meta.proto", "confluent/type/decimal.proto", "google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto", "google/type/date.proto", "google/type/timeofday.proto"} {
		if g.imports[imp] {
			fmt.Fprintf(&b, "import %q;\n", imp)
		}
	}
	b.WriteString("\n")
	b.WriteString(body.String())
	return b.String(), nil
}

type protoGen struct {
	imports  map[string]bool
	nullable string
	next     int // the number of the next nested message name
}

func (g *protoGen) message(b *strings.Builder, name string, fields []types.Field, indent string) error {
	fmt.Fprintf(b, "%smessage %s {\n", indent, name)
	for n, f := range fields {
		if !protoIdent(f.Name) {
			return fmt.Errorf("%w: %q is not a PROTOBUF field name", ErrUnsupported, f.Name)
		}
		label, typ := "", ""
		t := f.Type
		if t.Kind == types.Array {
			label, t = "repeated ", *t.Elem
		}
		if t.Kind == types.Map {
			vt, err := g.fieldType(b, *t.Elem, indent+"  ", false)
			if err != nil {
				return err
			}
			typ = "map<string, " + vt + ">"
		} else {
			var err error
			if typ, err = g.fieldType(b, t, indent+"  ", label == ""); err != nil {
				return err
			}
			if label == "" && g.nullable == NullableOptional && protoScalarType(t) != "" {
				label = "optional "
			}
		}
		opts := ""
		if t.Kind == types.Decimal {
			g.imports["confluent/meta.proto"] = true
			opts = fmt.Sprintf(` [(confluent.field_meta) = { params: [{ key: "precision", value: "%d" }, { key: "scale", value: "%d" }] }]`, t.Precision, t.Scale)
		}
		fmt.Fprintf(b, "%s  %s%s %s = %d%s;\n", indent, label, typ, f.Name, n+1, opts)
	}
	fmt.Fprintf(b, "%s}\n", indent)
	return nil
}

// fieldType is the proto type of t, declaring a nested message for a
// STRUCT; single says the field is not repeated (wrappers apply).
func (g *protoGen) fieldType(b *strings.Builder, t types.Type, indent string, single bool) (string, error) {
	switch t.Kind {
	case types.Decimal:
		g.imports["confluent/type/decimal.proto"] = true
		return "confluent.type.Decimal", nil
	case types.Timestamp:
		g.imports["google/protobuf/timestamp.proto"] = true
		return "google.protobuf.Timestamp", nil
	case types.Date:
		g.imports["google/type/date.proto"] = true
		return "google.type.Date", nil
	case types.Time:
		g.imports["google/type/timeofday.proto"] = true
		return "google.type.TimeOfDay", nil
	case types.Struct:
		name := fmt.Sprintf("%s%d", protoDefaultName, g.next)
		g.next++
		if err := g.message(b, name, t.Fields, indent); err != nil {
			return "", err
		}
		return name, nil
	}
	s := protoScalarType(t)
	if s == "" {
		return "", fmt.Errorf("%w: PROTOBUF cannot carry %s", ErrUnsupported, t)
	}
	if single && g.nullable == NullableWrapper {
		g.imports["google/protobuf/wrappers.proto"] = true
		return "google.protobuf." + protoWrapper[s], nil
	}
	return s, nil
}

var protoWrapper = map[string]string{
	"bool": "BoolValue", "int32": "Int32Value", "int64": "Int64Value",
	"double": "DoubleValue", "string": "StringValue", "bytes": "BytesValue",
}

func protoScalarType(t types.Type) string {
	switch t.Kind {
	case types.Boolean:
		return "bool"
	case types.Integer:
		return "int32"
	case types.BigInt:
		return "int64"
	case types.Double:
		return "double"
	case types.String:
		return "string"
	case types.Bytes:
		return "bytes"
	}
	return ""
}

func protoIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ProtobufColumns returns the columns a source declared without a column
// list takes from a .proto schema, as ksqlDB infers them: the fields of
// the message fullName names (default: the first), in order.
func ProtobufColumns(s Schema, fullName string, key bool) ([]types.Column, error) {
	fd, err := CompileProtobuf(s)
	if err != nil {
		return nil, err
	}
	md, err := protoMessageNamed(fd, fullName)
	if err != nil {
		return nil, err
	}
	fields := md.Fields()
	cols := make([]types.Column, 0, fields.Len())
	for j := 0; j < fields.Len(); j++ {
		f := fields.Get(j)
		t, err := protoSQLType(f, 0)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name(), err)
		}
		cols = append(cols, types.Column{Name: string(f.Name()), Type: t, Key: key})
	}
	return cols, nil
}

// protoSQLType is the SQL type of a field.
func protoSQLType(f protoreflect.FieldDescriptor, depth int) (types.Type, error) {
	if depth > 32 {
		return types.Type{}, fmt.Errorf("%w: PROTOBUF message %s nests itself", ErrUnsupported, f.ContainingMessage().FullName())
	}
	if f.IsMap() {
		if f.MapKey().Kind() != protoreflect.StringKind {
			return types.Type{}, fmt.Errorf("%w: PROTOBUF format only supports MAP types with STRING keys", ErrUnsupported)
		}
		v, err := protoElemType(f.MapValue(), depth)
		if err != nil {
			return types.Type{}, err
		}
		return types.MapOf(types.StringType, v), nil
	}
	e, err := protoElemType(f, depth)
	if err != nil {
		return types.Type{}, err
	}
	if f.IsList() {
		return types.ArrayOf(e), nil
	}
	return e, nil
}

// protoElemType is the SQL type of one value of f (not counting repeated).
func protoElemType(f protoreflect.FieldDescriptor, depth int) (types.Type, error) {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return types.BooleanType, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return types.IntegerType, nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return types.BigIntType, nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return types.DoubleType, nil
	case protoreflect.StringKind, protoreflect.EnumKind:
		return types.StringType, nil
	case protoreflect.BytesKind:
		return types.BytesType, nil
	}
	md := f.Message()
	switch string(md.FullName()) {
	case pbTimestamp:
		return types.TimestampType, nil
	case pbDate:
		return types.DateType, nil
	case pbTimeOfDay:
		return types.TimeType, nil
	case pbDecimal:
		return protoDecimalType(f), nil
	}
	if isWrapper(md) {
		return protoElemType(md.Fields().Get(0), depth)
	}
	fields := md.Fields()
	st := types.Type{Kind: types.Struct}
	for j := 0; j < fields.Len(); j++ {
		sf := fields.Get(j)
		t, err := protoSQLType(sf, depth+1)
		if err != nil {
			return types.Type{}, fmt.Errorf("field %s: %w", sf.Name(), err)
		}
		st.Fields = append(st.Fields, types.Field{Name: string(sf.Name()), Type: t})
	}
	return st, nil
}

// protoDecimalType reads a Decimal field's precision and scale from its
// (confluent.field_meta) params, as Confluent's serializers write them.
func protoDecimalType(f protoreflect.FieldDescriptor) types.Type {
	precision, scale := 64, 0
	opts := f.Options()
	if opts != nil {
		opts.ProtoReflect().Range(func(xd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if xd.FullName() != "confluent.field_meta" || xd.Message() == nil {
				return true
			}
			meta := v.Message()
			pf := xd.Message().Fields().ByName("params")
			if pf == nil {
				return true
			}
			meta.Get(pf).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				var n int
				if _, err := fmt.Sscan(v.String(), &n); err == nil {
					switch k.String() {
					case "precision":
						precision = n
					case "scale":
						scale = n
					}
				}
				return true
			})
			return false
		})
	}
	return types.DecimalOf(precision, scale)
}
