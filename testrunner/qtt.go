package testrunner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/planner"
)

// File is one query-validation-test (QTT) file after format expansion.
type File struct {
	Path  string
	Cases []Case
}

// Case is one test case: statements to run in order, input records to
// produce, and either the output records expected on the sink topics or
// the error a statement must raise.
type Case struct {
	Name       string
	Statements []string
	Inputs     []Record
	Outputs    []Record
	// ExpectedError is set for negative cases: some statement must fail
	// with Message as a substring (compare loosely: ksqlDB's wording).
	ExpectedError *ExpectedError
	// Properties are the case's config overrides, values as text.
	Properties map[string]string
	// Format is the format this expansion of a `format: [...]` case runs
	// with ("" when the case has no format list).
	Format string
	// Skip, when not empty, says why the case cannot run here.
	Skip string
	// Topics declares topics up front (partitions, schemas), kept raw.
	Topics json.RawMessage
	// Post holds post-conditions on sources and topics, kept raw.
	Post json.RawMessage
}

// Record is one Kafka record of a case. Key and Value are JSON-shaped
// (nil, bool, json.Number, string, []any, map[string]any): numbers stay
// json.Number so that large BIGINTs compare exactly.
type Record struct {
	Topic string
	Key   any
	Value any
	// ValueText is an input's object or array value as the case file
	// writes it (compacted): a JSON input is produced as written, fields
	// in the file's order, as ksqlDB's test runner produces it. Nil for
	// outputs and for values of other kinds.
	ValueText json.RawMessage
	// Timestamp is the record time. Inputs without one get 0; outputs
	// without one are not checked on time (nil).
	Timestamp *int64
	Window    *Window
	Headers   json.RawMessage
}

// Window is the window of a windowed key.
type Window struct {
	Start int64
	End   int64
	Type  string // "time" or "session", lower-cased
}

// ExpectedError is the failure a negative case expects.
type ExpectedError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// RunnableFormats are the data formats our engine implements.
var RunnableFormats = []string{"JSON", "DELIMITED", "KAFKA", "NONE", "AVRO", "PROTOBUF", "PROTOBUF_NOSR", "JSON_SR"}

type rawFile struct {
	Tests []rawCase `json:"tests"`
}

type rawCase struct {
	Name              string          `json:"name"`
	Format            []string        `json:"format"`
	Enabled           *bool           `json:"enabled"`
	Statements        []string        `json:"statements"`
	Inputs            []rawRecord     `json:"inputs"`
	Outputs           []rawRecord     `json:"outputs"`
	ExpectedException *ExpectedError  `json:"expectedException"`
	Properties        map[string]any  `json:"properties"`
	Topics            json.RawMessage `json:"topics"`
	Post              json.RawMessage `json:"post"`
}

type rawRecord struct {
	Topic     string          `json:"topic"`
	Key       any             `json:"key"`
	Value     json.RawMessage `json:"value"`
	Timestamp *json.Number    `json:"timestamp"`
	Window    *rawWindow      `json:"window"`
	Headers   json.RawMessage `json:"headers"`
}

type rawWindow struct {
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Type  string `json:"type"`
}

// LoadQTT reads a QTT file and expands it: a case with `format: [A, B]`
// becomes the cases "name - A" and "name - B" with {FORMAT} replaced in
// statements and topics. Cases we cannot run are kept with Skip set:
// disabled ones, variants in formats other than RunnableFormats, and cases
// whose statements use a Schema Registry or otherwise unsupported format.
func LoadQTT(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw rawFile
	if err := decodeStrict(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &File{Path: path}
	for i, rc := range raw.Tests {
		base, err := rc.toCase()
		if err != nil {
			return nil, fmt.Errorf("%s: test %d (%q): %w", path, i, rc.Name, err)
		}
		for _, v := range formatVariants(base.Name, rc.Format, base.Statements, base.Topics) {
			c := base
			c.Name, c.Format, c.Statements, c.Topics = v.name, v.format, v.statements, v.topics
			c.Skip = skipReason(rc.Enabled, v.format, c.Statements)
			f.Cases = append(f.Cases, c)
		}
	}
	return f, nil
}

// formatVariant is one expansion of a case with `format: [...]`.
type formatVariant struct {
	name, format string
	statements   []string
	topics       json.RawMessage
}

// formatVariants expands a case over its format list: "name - F" with
// {FORMAT} replaced by F in statements and topics, one per format; a case
// without a list is its one variant, format "".
func formatVariants(name string, formats, statements []string, topics json.RawMessage) []formatVariant {
	if len(formats) == 0 {
		return []formatVariant{{name: name, statements: statements, topics: topics}}
	}
	out := make([]formatVariant, 0, len(formats))
	for _, format := range formats {
		v := formatVariant{name: name + " - " + format, format: format, statements: make([]string, len(statements))}
		for j, s := range statements {
			v.statements[j] = strings.ReplaceAll(s, "{FORMAT}", format)
		}
		if topics != nil {
			v.topics = bytes.ReplaceAll(topics, []byte("{FORMAT}"), []byte(format))
		}
		out = append(out, v)
	}
	return out
}

// decodeStrict decodes JSON keeping numbers as json.Number. Comments
// (// to the end of the line, /* … */) are allowed, as ksqlDB's reader of
// these files allows them.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(stripJSONComments(data)))
	dec.UseNumber()
	return dec.Decode(v)
}

// stripJSONComments blanks the comments of JSON text, outside strings,
// keeping line breaks so that decoding errors keep their offsets' lines.
func stripJSONComments(data []byte) []byte {
	if !bytes.Contains(data, []byte("/")) {
		return data
	}
	out := append([]byte(nil), data...)
	inString, escaped := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	return out
}

func (rc rawCase) toCase() (Case, error) {
	c := Case{
		Name:          rc.Name,
		Statements:    rc.Statements,
		ExpectedError: rc.ExpectedException,
		Topics:        rc.Topics,
		Post:          rc.Post,
	}
	// ksqlDB's own tests expect ksqlDB's behaviour where Sluice
	// deliberately differs (see planner.CompatProperty); a case may
	// still set the property itself.
	c.Properties = map[string]string{planner.CompatProperty: planner.CompatKsqlDB}
	for k, v := range rc.Properties {
		c.Properties[k] = propertyText(v)
	}
	var err error
	if c.Inputs, err = toRecords(rc.Inputs, true); err != nil {
		return c, fmt.Errorf("inputs: %w", err)
	}
	if c.Outputs, err = toRecords(rc.Outputs, false); err != nil {
		return c, fmt.Errorf("outputs: %w", err)
	}
	return c, nil
}

func propertyText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case json.Number:
		return x.String()
	case bool:
		return fmt.Sprint(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// toRecords converts raw records; inputs get timestamp 0 when it is missing.
func toRecords(raw []rawRecord, input bool) ([]Record, error) {
	if raw == nil {
		return nil, nil
	}
	out := make([]Record, len(raw))
	for i, r := range raw {
		rec := Record{Topic: r.Topic, Key: r.Key, Headers: r.Headers}
		if len(r.Value) > 0 {
			if err := decodeStrict(r.Value, &rec.Value); err != nil {
				return nil, fmt.Errorf("record %d: value: %w", i, err)
			}
			var text bytes.Buffer
			if trimmed := bytes.TrimSpace(r.Value); input && len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Compact(&text, trimmed) == nil {
				rec.ValueText = text.Bytes()
			}
		}
		switch {
		case r.Timestamp != nil:
			ts, err := r.Timestamp.Int64()
			if err != nil {
				return nil, fmt.Errorf("record %d: timestamp %s is not an integer", i, *r.Timestamp)
			}
			rec.Timestamp = &ts
		case input:
			rec.Timestamp = new(int64)
		}
		if r.Window != nil {
			rec.Window = &Window{Start: r.Window.Start, End: r.Window.End, Type: strings.ToLower(r.Window.Type)}
		}
		out[i] = rec
	}
	return out, nil
}

// skipReason says why a case cannot run, or "" when it can: disabled
// upstream, or a format variant the engine does not implement. (A
// statement naming an unknown format is run: the engine must refuse it.)
func skipReason(enabled *bool, format string, _ []string) string {
	if enabled != nil && !*enabled {
		return "disabled upstream (enabled: false)"
	}
	if format != "" && !slices.Contains(RunnableFormats, strings.ToUpper(format)) {
		return "format " + strings.ToUpper(format) + " is not supported"
	}
	return ""
}
