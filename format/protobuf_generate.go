package format

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/types"
)

// Generating the proto3 schema ksqlDB registers for columns.

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
