package format

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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
//
// This file holds the codec and the message indexes a PROTOBUF record
// carries; protobuf_descriptor.go compiles registered schemas,
// protobuf_decode.go and protobuf_encode.go turn fields into SQL values
// and back, protobuf_generate.go writes the schema ksqlDB would register,
// protobuf_columns.go takes columns from a registered schema,
// protobuf_text.go prints a descriptor as .proto source and
// protobuf_response.go is the /query-stream protobuf media type.

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
