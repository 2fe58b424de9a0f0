package format

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/types"
)

// ProtobufResponseSchema is the proto3 schema of a query's rows that
// ksqlDB's REST API sends in the header of a protobuf answer
// (application/vnd.ksql.v1+protobuf): a message ConnectDefault1 with a
// field per column, laid out as the Schema Registry's canonical form
// prints it — a message's fields first, then, after a blank line, the
// messages it declares — and a MAP as a repeated entry message
// (ConnectDefaultNEntry with fields key and value), as Connect's
// protobuf converter writes maps. Its wire form is that of the schema
// GenerateProtobufSchema gives for the same columns, so the
// PROTOBUF_NOSR codec writes the rows.
func ProtobufResponseSchema(cols []types.Column) (string, error) {
	for _, col := range cols {
		if err := protoSupports(col.Type); err != nil {
			return "", err
		}
	}
	g := &responseGen{protoGen: protoGen{imports: map[string]bool{}, next: 2}}
	fields := make([]types.Field, len(cols))
	for i, c := range cols {
		fields[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	body, err := g.message(protoDefaultName+"1", fields, "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\n")
	for _, imp := range []string{"confluent/meta.proto", "confluent/type/decimal.proto", "google/protobuf/timestamp.proto", "google/type/date.proto", "google/type/timeofday.proto"} {
		if g.imports[imp] {
			fmt.Fprintf(&b, "import %q;\n", imp)
		}
	}
	b.WriteString("\n")
	b.WriteString(body)
	return b.String(), nil
}

type responseGen struct {
	protoGen
}

func (g *responseGen) message(name string, fields []types.Field, indent string) (string, error) {
	var b, nested strings.Builder
	fmt.Fprintf(&b, "%smessage %s {\n", indent, name)
	for n, f := range fields {
		if !protoIdent(f.Name) {
			return "", fmt.Errorf("%w: %q is not a PROTOBUF field name", ErrUnsupported, f.Name)
		}
		label, t := "", f.Type
		if t.Kind == types.Array {
			label, t = "repeated ", *t.Elem
		}
		var typ string
		switch t.Kind {
		case types.Map:
			if label != "" {
				return "", fmt.Errorf("%w: PROTOBUF cannot carry an ARRAY of MAP", ErrUnsupported)
			}
			label = "repeated "
			typ = fmt.Sprintf("%s%dEntry", protoDefaultName, g.next)
			g.next++
			entry := []types.Field{{Name: "key", Type: types.Type{Kind: types.String}}, {Name: "value", Type: *t.Elem}}
			m, err := g.message(typ, entry, indent+"  ")
			if err != nil {
				return "", err
			}
			nested.WriteString(m)
		case types.Struct:
			typ = fmt.Sprintf("%s%d", protoDefaultName, g.next)
			g.next++
			m, err := g.message(typ, t.Fields, indent+"  ")
			if err != nil {
				return "", err
			}
			nested.WriteString(m)
		default:
			var discard strings.Builder
			var err error
			if typ, err = g.fieldType(&discard, t, indent+"  ", false); err != nil {
				return "", err
			}
		}
		opts := ""
		if t.Kind == types.Decimal {
			g.imports["confluent/meta.proto"] = true
			opts = fmt.Sprintf(` [(confluent.field_meta) = { params: [{ key: "precision", value: "%d" }, { key: "scale", value: "%d" }] }]`, t.Precision, t.Scale)
		}
		fmt.Fprintf(&b, "%s  %s%s %s = %d%s;\n", indent, label, typ, f.Name, n+1, opts)
	}
	if nested.Len() > 0 {
		b.WriteString("\n")
		b.WriteString(nested.String())
	}
	fmt.Fprintf(&b, "%s}\n", indent)
	return b.String(), nil
}
