package format

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Compiling registered schemas to descriptors, their serialized form,
// and finding a message in them.

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
