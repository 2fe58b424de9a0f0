package testrunner

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/sluice-sql/sluice/format"
)

// verifyProtoResponse checks a query's answer in protobuf (/query-stream
// with application/vnd.ksql.v1+protobuf) as ksqlDB's REST runner does:
// the header's protoSchema and any final message exactly, and each row's
// protobufBytes read with that schema and printed in protobuf's text
// format, compared with the expected texts (as a sorted list unless
// verifyOrder).
func verifyProtoResponse(path string, payload any, rows []map[string]any, verifyOrder bool) []string {
	exp, ok := payload.([]any)
	if !ok {
		return []string{"invalid case: " + path + " is not an array"}
	}
	if len(rows) != len(exp) {
		return []string{fmt.Sprintf("%s: %d elements, want %d:\n      want %s\n      got  %s", path, len(rows), len(exp), compactJSON(exp), compactJSON(rows))}
	}
	expected := make([]map[string]any, len(exp))
	for i, e := range exp {
		m, ok := e.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("invalid case: %s[%d] is not an object", path, i)}
		}
		expected[i] = m
	}
	find := func(i int, key string) map[string]any {
		if verifyOrder {
			return expected[i]
		}
		for _, e := range expected {
			if _, ok := e[key]; ok {
				return e
			}
		}
		return nil
	}
	var diffs []string
	var msg protoreflect.MessageDescriptor
	var gotRows, wantRows []string
	for i, row := range rows {
		switch {
		case row["header"] != nil:
			hdr, _ := row["header"].(map[string]any)
			schema, _ := hdr["protoSchema"].(string)
			want := find(i, "header")
			var wantSchema any
			if wh, ok := want["header"].(map[string]any); ok {
				wantSchema = wh["protoSchema"]
			}
			if schema != wantSchema {
				diffs = append(diffs, fmt.Sprintf("%s[%d]->header->protoSchema: got %q, want %q", path, i, schema, wantSchema))
			}
			fd, err := format.CompileProtobuf(format.Schema{Type: format.SchemaProtobuf, Text: schema})
			if err != nil {
				return append(diffs, fmt.Sprintf("%s[%d]: %v", path, i, err))
			}
			if fd.Messages().Len() == 0 {
				return append(diffs, fmt.Sprintf("%s[%d]: protoSchema declares no message", path, i))
			}
			msg = fd.Messages().Get(0)
		case row["finalMessage"] != nil:
			want := find(i, "finalMessage")
			if want == nil || canonicalJSON(want) != canonicalJSON(row) {
				diffs = append(diffs, fmt.Sprintf("%s[%d]: got %s, want %s", path, i, compactJSON(row), compactJSON(want)))
			}
		default:
			r, _ := row["row"].(map[string]any)
			enc, _ := r["protobufBytes"].(string)
			if msg == nil {
				return append(diffs, fmt.Sprintf("%s[%d]: a row before the header", path, i))
			}
			b, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return append(diffs, fmt.Sprintf("%s[%d]: protobufBytes: %v", path, i, err))
			}
			m := dynamicpb.NewMessage(msg)
			if err := proto.Unmarshal(b, m); err != nil {
				return append(diffs, fmt.Sprintf("%s[%d]: protobufBytes: %v", path, i, err))
			}
			gotRows = append(gotRows, protoText(m))
		}
	}
	for _, e := range expected {
		if _, ok := e["header"]; ok {
			continue
		}
		if _, ok := e["finalMessage"]; ok {
			continue
		}
		s, _ := e["row"].(string)
		wantRows = append(wantRows, s)
	}
	if !verifyOrder {
		slices.Sort(gotRows)
		slices.Sort(wantRows)
	}
	if !slices.Equal(gotRows, wantRows) {
		diffs = append(diffs, fmt.Sprintf("%s rows:\n      want %q\n      got  %q", path, wantRows, gotRows))
	}
	return diffs
}

// protoText prints a message in protobuf's text format as protobuf-java's
// TextFormat prints it (a message's toString, which ksqlDB's cases
// hold): set fields in field-number order, "name: value" a line, nested
// messages as "name {" … "}" indented by two spaces.
func protoText(m protoreflect.Message) string {
	var b strings.Builder
	writeProtoText(&b, m, "")
	return b.String()
}

func writeProtoText(b *strings.Builder, m protoreflect.Message, indent string) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			for j := 0; j < l.Len(); j++ {
				writeProtoField(b, fd, l.Get(j), indent)
			}
		case fd.IsMap():
			// Maps print as their entry messages, key first.
			var keys []protoreflect.MapKey
			v.Map().Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				keys = append(keys, k)
				return true
			})
			for _, k := range keys {
				fmt.Fprintf(b, "%s%s {\n", indent, fd.Name())
				writeProtoField(b, fd.MapKey(), k.Value(), indent+"  ")
				writeProtoField(b, fd.MapValue(), v.Map().Get(k), indent+"  ")
				fmt.Fprintf(b, "%s}\n", indent)
			}
		default:
			writeProtoField(b, fd, v, indent)
		}
	}
}

func writeProtoField(b *strings.Builder, fd protoreflect.FieldDescriptor, v protoreflect.Value, indent string) {
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		fmt.Fprintf(b, "%s%s {\n", indent, fd.Name())
		writeProtoText(b, v.Message(), indent+"  ")
		fmt.Fprintf(b, "%s}\n", indent)
		return
	}
	fmt.Fprintf(b, "%s%s: %s\n", indent, fd.Name(), protoScalarText(fd, v))
}

func protoScalarText(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return `"` + escapeProtoBytes([]byte(v.String())) + `"`
	case protoreflect.BytesKind:
		return `"` + escapeProtoBytes(v.Bytes()) + `"`
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	case protoreflect.BoolKind:
		return strconv.FormatBool(v.Bool())
	case protoreflect.FloatKind:
		return javaFloat(v.Float(), 32)
	case protoreflect.DoubleKind:
		return javaFloat(v.Float(), 64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10)
	}
	return strconv.FormatInt(v.Int(), 10)
}

// escapeProtoBytes escapes text as protobuf-java's TextFormat does:
// printable ASCII as is, quotes and backslashes escaped, the usual
// control characters by letter, every other byte in octal.
func escapeProtoBytes(bs []byte) string {
	var b strings.Builder
	for _, c := range bs {
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '"':
			b.WriteString(`\"`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "\\%03o", c)
			}
		}
	}
	return b.String()
}

// javaFloat prints a float as Java's Double.toString (Float.toString for
// 32 bits) does: the shortest digits that read back, with at least one
// digit after the point, in scientific notation ("1.0E10") below 10^-3
// and from 10^7 on.
func javaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1.2345E+10
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
