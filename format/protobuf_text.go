package format

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// ProtobufText writes a FileDescriptorProto back as .proto source: what
// Confluent's registry answers for a Protobuf schema a client registered
// serialized. Type references are fully qualified (".pkg.Msg"), which
// resolve the same wherever they stand. Options are written when they are
// the descriptor options' own fields; custom options (extensions) are not,
// so a caller that needs the text to mean exactly the descriptor compiles
// it and compares (the registry does). Editions syntax, groups and
// extension fields are refused.
func ProtobufText(fdp *descriptorpb.FileDescriptorProto) (string, error) {
	syntax := fdp.GetSyntax()
	switch syntax {
	case "":
		syntax = "proto2"
	case "proto2", "proto3":
	default:
		return "", fmt.Errorf("%w: PROTOBUF schema: syntax %q cannot be written as text", ErrUnsupported, syntax)
	}
	if len(fdp.GetExtension()) > 0 {
		return "", fmt.Errorf("%w: PROTOBUF schema: extensions cannot be written as text", ErrUnsupported)
	}
	p := &protoPrinter{proto3: syntax == "proto3"}
	p.line("", "syntax = %s;", strconv.Quote(syntax))
	if fdp.Package != nil {
		p.line("", "package %s;", fdp.GetPackage())
	}
	public, weak := map[int32]bool{}, map[int32]bool{}
	for _, i := range fdp.GetPublicDependency() {
		public[i] = true
	}
	for _, i := range fdp.GetWeakDependency() {
		weak[i] = true
	}
	if len(fdp.GetDependency()) > 0 {
		p.b.WriteString("\n")
	}
	for i, dep := range fdp.GetDependency() {
		kind := ""
		switch {
		case public[int32(i)]:
			kind = "public "
		case weak[int32(i)]:
			kind = "weak "
		}
		p.line("", "import %s%s;", kind, strconv.Quote(dep))
	}
	if opts := protoOptions(fdp.GetOptions()); len(opts) > 0 {
		p.b.WriteString("\n")
		for _, o := range opts {
			p.line("", "option %s;", o)
		}
	}
	scope := ""
	if fdp.GetPackage() != "" {
		scope = "." + fdp.GetPackage()
	}
	for _, m := range fdp.GetMessageType() {
		p.b.WriteString("\n")
		if err := p.message(m, "", scope); err != nil {
			return "", err
		}
	}
	for _, e := range fdp.GetEnumType() {
		p.b.WriteString("\n")
		p.enum(e, "")
	}
	for _, s := range fdp.GetService() {
		p.b.WriteString("\n")
		p.service(s)
	}
	return p.b.String(), nil
}

type protoPrinter struct {
	b      strings.Builder
	proto3 bool
}

func (p *protoPrinter) line(indent, format string, args ...any) {
	p.b.WriteString(indent)
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteString("\n")
}

// message writes m, whose enclosing package or message is scope (".pkg",
// ".pkg.Outer", or "" for a file without a package).
func (p *protoPrinter) message(m *descriptorpb.DescriptorProto, indent, scope string) error {
	if len(m.GetExtension()) > 0 {
		return fmt.Errorf("%w: PROTOBUF schema: extensions in message %s cannot be written as text", ErrUnsupported, m.GetName())
	}
	in := indent + "  "
	p.line(indent, "message %s {", m.GetName())
	for _, o := range protoOptions(m.GetOptions()) {
		p.line(in, "option %s;", o)
	}
	// Map fields name their entry message, by its full name, which the
	// map syntax makes.
	full := scope + "." + m.GetName()
	entries := map[string]*descriptorpb.DescriptorProto{}
	for _, n := range m.GetNestedType() {
		if n.GetOptions().GetMapEntry() {
			entries[full+"."+n.GetName()] = n
		}
	}
	oneofDone := map[int32]bool{}
	for _, f := range m.GetField() {
		if f.OneofIndex != nil && !f.GetProto3Optional() {
			i := f.GetOneofIndex()
			if oneofDone[i] {
				continue
			}
			oneofDone[i] = true
			if int(i) >= len(m.GetOneofDecl()) {
				return fmt.Errorf("%w: PROTOBUF schema: field %s.%s names oneof %d of %d", ErrUnsupported, m.GetName(), f.GetName(), i, len(m.GetOneofDecl()))
			}
			od := m.GetOneofDecl()[i]
			p.line(in, "oneof %s {", od.GetName())
			for _, o := range protoOptions(od.GetOptions()) {
				p.line(in+"  ", "option %s;", o)
			}
			for _, of := range m.GetField() {
				if of.OneofIndex != nil && of.GetOneofIndex() == i {
					if err := p.field(of, in+"  ", true, entries); err != nil {
						return err
					}
				}
			}
			p.line(in, "}")
			continue
		}
		if err := p.field(f, in, false, entries); err != nil {
			return err
		}
	}
	for _, n := range m.GetNestedType() {
		if entries[full+"."+n.GetName()] != nil {
			continue
		}
		if err := p.message(n, in, full); err != nil {
			return err
		}
	}
	for _, e := range m.GetEnumType() {
		p.enum(e, in)
	}
	for _, r := range m.GetExtensionRange() {
		p.line(in, "extensions %s;", protoRange(r.GetStart(), r.GetEnd()-1))
	}
	var reserved []string
	for _, r := range m.GetReservedRange() {
		reserved = append(reserved, protoRange(r.GetStart(), r.GetEnd()-1))
	}
	p.reserved(in, reserved, m.GetReservedName())
	p.line(indent, "}")
	return nil
}

func (p *protoPrinter) field(f *descriptorpb.FieldDescriptorProto, indent string, inOneof bool, entries map[string]*descriptorpb.DescriptorProto) error {
	if f.GetType() == descriptorpb.FieldDescriptorProto_TYPE_GROUP {
		return fmt.Errorf("%w: PROTOBUF schema: group %s cannot be written as text", ErrUnsupported, f.GetName())
	}
	typ := protoTypeName(f)
	label := ""
	if entry := entries[f.GetTypeName()]; entry != nil && f.GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REPEATED && f.GetType() == descriptorpb.FieldDescriptorProto_TYPE_MESSAGE {
		var k, v *descriptorpb.FieldDescriptorProto
		for _, ef := range entry.GetField() {
			switch ef.GetNumber() {
			case 1:
				k = ef
			case 2:
				v = ef
			}
		}
		if k == nil || v == nil {
			return fmt.Errorf("%w: PROTOBUF schema: map entry %s lacks its key or value", ErrUnsupported, entry.GetName())
		}
		typ = fmt.Sprintf("map<%s, %s>", protoTypeName(k), protoTypeName(v))
	} else if !inOneof {
		switch {
		case f.GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REPEATED:
			label = "repeated "
		case f.GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REQUIRED:
			label = "required "
		case !p.proto3 || f.GetProto3Optional():
			label = "optional "
		}
	}
	var opts []string
	if f.DefaultValue != nil {
		opts = append(opts, "default = "+protoDefault(f))
	}
	if f.JsonName != nil && f.GetJsonName() != jsonCamelCase(f.GetName()) {
		opts = append(opts, "json_name = "+strconv.Quote(f.GetJsonName()))
	}
	opts = append(opts, protoOptions(f.GetOptions())...)
	suffix := ""
	if len(opts) > 0 {
		suffix = " [" + strings.Join(opts, ", ") + "]"
	}
	p.line(indent, "%s%s %s = %d%s;", label, typ, f.GetName(), f.GetNumber(), suffix)
	return nil
}

func (p *protoPrinter) enum(e *descriptorpb.EnumDescriptorProto, indent string) {
	in := indent + "  "
	p.line(indent, "enum %s {", e.GetName())
	for _, o := range protoOptions(e.GetOptions()) {
		p.line(in, "option %s;", o)
	}
	for _, v := range e.GetValue() {
		suffix := ""
		if opts := protoOptions(v.GetOptions()); len(opts) > 0 {
			suffix = " [" + strings.Join(opts, ", ") + "]"
		}
		p.line(in, "%s = %d%s;", v.GetName(), v.GetNumber(), suffix)
	}
	var reserved []string
	for _, r := range e.GetReservedRange() {
		reserved = append(reserved, protoRange(r.GetStart(), r.GetEnd())) // an enum's end is inclusive
	}
	p.reserved(in, reserved, e.GetReservedName())
	p.line(indent, "}")
}

func (p *protoPrinter) reserved(indent string, ranges, names []string) {
	if len(ranges) > 0 {
		p.line(indent, "reserved %s;", strings.Join(ranges, ", "))
	}
	if len(names) > 0 {
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = strconv.Quote(n)
		}
		p.line(indent, "reserved %s;", strings.Join(quoted, ", "))
	}
}

func (p *protoPrinter) service(s *descriptorpb.ServiceDescriptorProto) {
	p.line("", "service %s {", s.GetName())
	for _, o := range protoOptions(s.GetOptions()) {
		p.line("  ", "option %s;", o)
	}
	for _, m := range s.GetMethod() {
		stream := func(on bool) string {
			if on {
				return "stream "
			}
			return ""
		}
		opts := protoOptions(m.GetOptions())
		if len(opts) == 0 {
			p.line("  ", "rpc %s (%s%s) returns (%s%s);", m.GetName(), stream(m.GetClientStreaming()), m.GetInputType(), stream(m.GetServerStreaming()), m.GetOutputType())
			continue
		}
		p.line("  ", "rpc %s (%s%s) returns (%s%s) {", m.GetName(), stream(m.GetClientStreaming()), m.GetInputType(), stream(m.GetServerStreaming()), m.GetOutputType())
		for _, o := range opts {
			p.line("    ", "option %s;", o)
		}
		p.line("  ", "}")
	}
	p.line("", "}")
}

// protoRange is a reserved or extension range, both ends inclusive.
func protoRange(start, end int32) string {
	switch {
	case end == start:
		return strconv.Itoa(int(start))
	case end >= 536870911: // the largest field number
		return fmt.Sprintf("%d to max", start)
	default:
		return fmt.Sprintf("%d to %d", start, end)
	}
}

// protoTypeName is a field's type as .proto source names it.
func protoTypeName(f *descriptorpb.FieldDescriptorProto) string {
	switch f.GetType() {
	case descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, descriptorpb.FieldDescriptorProto_TYPE_ENUM:
		return f.GetTypeName()
	}
	return strings.ToLower(strings.TrimPrefix(f.GetType().String(), "TYPE_"))
}

// protoDefault is a proto2 field's default as .proto source writes it.
func protoDefault(f *descriptorpb.FieldDescriptorProto) string {
	switch f.GetType() {
	case descriptorpb.FieldDescriptorProto_TYPE_STRING:
		return strconv.Quote(f.GetDefaultValue())
	case descriptorpb.FieldDescriptorProto_TYPE_BYTES:
		// The descriptor keeps bytes C-escaped already.
		return `"` + f.GetDefaultValue() + `"`
	}
	return f.GetDefaultValue()
}

// protoOptions are the set fields of a descriptor's options message as
// "name = value", in field number order; uninterpreted and custom
// options are left out.
func protoOptions(opts proto.Message) []string {
	if opts == nil {
		return nil
	}
	m := opts.ProtoReflect()
	if !m.IsValid() {
		return nil
	}
	type opt struct {
		num  protoreflect.FieldNumber
		text string
	}
	var out []opt
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsExtension() || fd.Cardinality() == protoreflect.Repeated || fd.Kind() == protoreflect.MessageKind {
			return true
		}
		var text string
		switch fd.Kind() {
		case protoreflect.StringKind:
			text = strconv.Quote(v.String())
		case protoreflect.EnumKind:
			ev := fd.Enum().Values().ByNumber(v.Enum())
			if ev == nil {
				return true
			}
			text = string(ev.Name())
		default:
			text = v.String()
		}
		out = append(out, opt{fd.Number(), string(fd.Name()) + " = " + text})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].num < out[j].num })
	texts := make([]string, len(out))
	for i, o := range out {
		texts[i] = o.text
	}
	return texts
}
