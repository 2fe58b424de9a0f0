package testrunner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// Restart says whether, and how, a case's queries are stopped and
// started again halfway through its inputs. Every mode must give the same
// outputs: state lives in stores, not in operators' memory.
type Restart int

const (
	// NoRestart runs the inputs straight through.
	NoRestart Restart = iota
	// RestartLocal stops the tasks and reopens them on their local state.
	RestartLocal
	// RestartWiped stops the tasks, wipes their state and rebuilds it
	// from the changelog records the stores committed.
	RestartWiped
)

func (r Restart) String() string {
	return [...]string{"straight", "restarted on local state", "restarted from the changelog"}[r]
}

// RunCase runs one case on a fresh in-memory engine (real planner,
// operators and Badger state; no broker) and reports the outcome.
func RunCase(file string, c *Case) Result { return RunCaseWith(file, c, NoRestart) }

// RunCaseWith runs a case, restarting its queries halfway as mode says.
func RunCaseWith(file string, c *Case, mode Restart) Result {
	res := Result{File: file, Case: c.Name}
	if mode != NoRestart {
		res.Case += " (" + mode.String() + ")"
	}
	if c.Skip != "" {
		res.Status, res.Reason = Skipped, c.Skip
		return res
	}
	actual, err := runCase(c, mode)
	if c.ExpectedError != nil {
		switch {
		case err == nil:
			res.Status, res.Reason = Failed, fmt.Sprintf("expected an error containing %q, but every statement succeeded", c.ExpectedError.Message)
		case !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.ExpectedError.Message)):
			res.Status, res.Reason = Failed, fmt.Sprintf("expected an error containing %q, got: %v", c.ExpectedError.Message, err)
		default:
			res.Status = Passed
		}
		return res
	}
	if err != nil {
		res.Status, res.Reason = Failed, err.Error()
		return res
	}
	if diff := CompareOutputs(c.Outputs, actual); len(diff) > 0 {
		res.Status, res.Diff = Failed, diff
		return res
	}
	res.Status = Passed
	return res
}

func runCase(c *Case, mode Restart) (out []Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("engine panicked: %v", p)
		}
	}()
	ctx := context.Background()
	reg, schemas, err := caseRegistry(c)
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Properties: c.Properties, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SchemaRegistry: schemas, UDFDir: UDFDir})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	// The statements run as one script, one per line, as ksqlDB's test
	// runner joins them: a parse error anywhere stops all of them, and its
	// position counts lines from the first statement.
	if _, err := e.Execute(ctx, strings.Join(c.Statements, "\n")); err != nil {
		return nil, err
	}
	mem := e.Memory()
	for i, in := range c.Inputs {
		if mode != NoRestart && i == len(c.Inputs)/2 {
			if err := mem.Restart(mode == RestartWiped); err != nil {
				return nil, fmt.Errorf("restart before input %d: %w", i, err)
			}
		}
		rec, err := encodeInput(e.Catalog(), in)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		if _, err := mem.Send(rec); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	for _, r := range mem.Produced() {
		if strings.HasPrefix(r.Topic, "_sluice-") {
			continue
		}
		rec, err := decodeOutput(e.Catalog(), r)
		if err != nil {
			return nil, fmt.Errorf("output on %s: %w", r.Topic, err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// sourceFor finds the stream or table over a topic, preferring one
// declared with columns over a query's sink.
func sourceFor(cat *planner.Catalog, topic string) *planner.Source {
	var fromQuery *planner.Source
	for _, kind := range []parser.SourceKind{parser.KindStream, parser.KindTable} {
		for _, s := range cat.Sources(kind) {
			if s.Topic != topic {
				continue
			}
			if s.QueryID == "" {
				return s
			}
			if fromQuery == nil {
				fromQuery = s
			}
		}
	}
	return fromQuery
}

func encodeInput(cat *planner.Catalog, in Record) (exec.Record, error) {
	rec := exec.Record{Topic: in.Topic}
	if len(in.Headers) > 0 && string(in.Headers) != "null" {
		// [{"KEY": "k", "VALUE": "<base64>"}], as ksqlDB's cases give them.
		var hs []struct {
			Key   string `json:"KEY"`
			Value []byte `json:"VALUE"`
		}
		if err := json.Unmarshal(in.Headers, &hs); err != nil {
			return rec, fmt.Errorf("headers: %w", err)
		}
		for _, h := range hs {
			rec.Headers = append(rec.Headers, exec.Header{Key: h.Key, Value: h.Value})
		}
	}
	if in.Timestamp != nil {
		rec.Timestamp = *in.Timestamp
	}
	src := sourceFor(cat, in.Topic)
	if src == nil {
		return rec, fmt.Errorf("no stream or table reads topic %s", in.Topic)
	}
	key, err := encodeSide(in.Key, src.KeyFormat, src.Schema.Keys(), src.KeyProps, true)
	if err != nil {
		return rec, fmt.Errorf("key: %w", err)
	}
	if in.Window != nil {
		if in.Window.Type == "session" {
			key = format.EncodeSessionWindowedKey(key, in.Window.Start, in.Window.End)
		} else {
			key = format.EncodeTimeWindowedKey(key, in.Window.Start)
		}
	}
	rec.Key = key
	if in.Value != nil {
		if in.ValueText != nil && strings.EqualFold(src.ValueFormat, format.JSON) {
			rec.Value = append([]byte(nil), in.ValueText...)
			return rec, nil
		}
		if rec.Value, err = encodeSide(in.Value, src.ValueFormat, src.Schema.Values(), src.ValueProps, false); err != nil {
			return rec, fmt.Errorf("value: %w", err)
		}
		if rec.Value == nil {
			rec.Value = []byte{}
		}
	}
	return rec, nil
}

// encodeSide turns a JSON-shaped key or value into the bytes a producer
// of that format would write. JSON passes through as JSON text; other
// formats go through their codec.
func encodeSide(v any, formatName string, cols []types.Column, props format.Props, key bool) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	switch strings.ToUpper(formatName) {
	case format.JSON:
		return json.Marshal(v)
	case format.Delimited:
		if s, ok := v.(string); ok {
			return []byte(s), nil
		}
	}
	cols = writerTypes(formatName, cols, props, key)
	codec, err := codecFor(formatName, cols, props, key)
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	if bareSingle(formatName, cols, props, key) {
		if vals[0], err = format.FromJSON(v, cols[0].Type); err != nil {
			return nil, err
		}
	} else if m, ok := v.(map[string]any); ok {
		for i, c := range cols {
			for k, x := range m {
				if strings.EqualFold(k, c.Name) {
					if vals[i], err = format.FromJSON(x, c.Type); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return codec.Encode(vals)
}

func decodeOutput(cat *planner.Catalog, r *exec.Record) (Record, error) {
	ts := r.Timestamp
	out := Record{Topic: r.Topic, Timestamp: &ts}
	src := sourceFor(cat, r.Topic)
	if src == nil {
		return out, fmt.Errorf("no stream or table writes topic %s", r.Topic)
	}
	key := r.Key
	switch src.Window {
	case exec.TimeWindowed:
		k, start, err := format.DecodeTimeWindowedKey(key)
		if err != nil {
			return out, err
		}
		key, out.Window = k, &Window{Start: start, End: start + src.WindowSize, Type: "time"}
	case exec.SessionWindowed:
		k, start, end, err := format.DecodeSessionWindowedKey(key)
		if err != nil {
			return out, err
		}
		key, out.Window = k, &Window{Start: start, End: end, Type: "session"}
	}
	var err error
	if out.Key, err = decodeSide(key, src.KeyFormat, src.Schema.Keys(), src.KeyProps, true); err != nil {
		return out, fmt.Errorf("key: %w", err)
	}
	if r.Value != nil {
		if out.Value, err = decodeSide(r.Value, src.ValueFormat, writerColumns(src), src.ValueProps, false); err != nil {
			return out, fmt.Errorf("value: %w", err)
		}
	}
	return out, nil
}

// writerColumns are the columns an output value is read back with, as
// ksqlDB's test runner reads it through the schema it was written with:
// the sink's value columns, or, where the sink writes with a schema of
// the user's (VALUE_SCHEMA_ID) that has fields the query does not write
// (filled with their defaults), that schema's fields.
func writerColumns(src *planner.Source) []types.Column {
	values := src.Schema.Values()
	p := src.ValueProps
	if !format.UsesRegistry(src.ValueFormat) || p.SchemaID <= 0 || p.Schema == "" {
		return values
	}
	cols, err := format.SchemaColumns(src.ValueFormat, format.Schema{Type: format.RegistryType(src.ValueFormat), Text: p.Schema, References: p.References}, p.FullName, false, p.WrapSingleValue != nil && !*p.WrapSingleValue)
	if err != nil || len(cols) <= len(values) {
		return values
	}
	for _, v := range values {
		if !slices.ContainsFunc(cols, func(c types.Column) bool { return strings.EqualFold(c.Name, v.Name) }) {
			return values
		}
	}
	return cols
}

// writerTypes are the types an input record is written with: ksqlDB's
// test runner writes a case's inputs with the topic's registered schema,
// which may differ from the columns the source declares where ksqlDB
// reads one into the other (an Avro int into a STRING column reads
// "10"). The columns keep their names; a column takes the schema's type
// only where ksqlDB would read that type into it, else the declared
// types are the writer's.
func writerTypes(formatName string, cols []types.Column, props format.Props, key bool) []types.Column {
	if !format.UsesRegistry(formatName) || isProtobuf(formatName) || props.Schema == "" {
		return cols
	}
	single := bareSingle(formatName, cols, props, key)
	sch := format.Schema{Type: format.RegistryType(formatName), Text: props.Schema, References: props.References}
	written, err := format.SchemaColumns(formatName, sch, props.FullName, key, single && !key)
	if err != nil || len(written) != len(cols) {
		return cols
	}
	out := slices.Clone(cols)
	for i, c := range cols {
		w := written[i]
		if !single {
			j := slices.IndexFunc(written, func(w types.Column) bool { return strings.EqualFold(w.Name, c.Name) })
			if j < 0 {
				return cols
			}
			w = written[j]
		}
		if !readsInto(w.Type, c.Type) {
			return cols
		}
		out[i].Type = w.Type
	}
	return out
}

// readsInto says whether ksqlDB reads a value written as type w into a
// column of type t: the same type, a narrower integer, or, into a
// STRING, any number or boolean; arrays and maps by their elements.
func readsInto(w, t types.Type) bool {
	switch {
	case t.Kind == types.String:
		switch w.Kind {
		case types.String, types.Integer, types.BigInt, types.Double, types.Boolean:
			return true
		}
		return false
	case t.Kind == types.BigInt && w.Kind == types.Integer:
		return true
	case w.Kind != t.Kind:
		return false
	case t.Kind == types.Array || t.Kind == types.Map:
		return readsInto(*w.Elem, *t.Elem)
	case t.Kind == types.Struct:
		return w.Equal(t)
	}
	return true
}

func decodeSide(b []byte, formatName string, cols []types.Column, props format.Props, key bool) (any, error) {
	if b == nil {
		return nil, nil
	}
	switch strings.ToUpper(formatName) {
	case format.JSON:
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		return decimalsAsText(v, cols), nil
	case format.Delimited:
		return string(b), nil
	}
	codec, err := codecFor(formatName, cols, props, key)
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	if err := codec.Decode(b, vals); err != nil {
		return nil, err
	}
	if bareSingle(formatName, cols, props, key) {
		return decimalText(format.ToJSON(vals[0], cols[0].Type), cols[0].Type), nil
	}
	m := map[string]any{}
	for i, c := range cols {
		m[c.Name] = decimalText(format.ToJSON(vals[i], c.Type), c.Type)
	}
	if isProtobuf(formatName) {
		// ksqlDB's cases name Protobuf fields in any case ({"i": 0} for
		// a column I): its test harness reads them back through a
		// Connect schema. Compare their names ignoring case.
		return foldNames(m), nil
	}
	return m, nil
}

// decimalsAsText marks the DECIMAL numbers of a decoded JSON key or value
// as decimalNumber, which compares equal to an expected number of the same
// value and to an expected string of the same text: ksqlDB's test cases
// spell decimals both ways (3.4 and "3.40"). cols are the side's
// columns; a single column may be unwrapped.
func decimalsAsText(v any, cols []types.Column) any {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			for _, c := range cols {
				if strings.EqualFold(k, c.Name) {
					m[k] = decimalText(x, c.Type)
					break
				}
			}
		}
		return m
	}
	if len(cols) == 1 {
		return decimalText(v, cols[0].Type)
	}
	return v
}

// decimalText marks the JSON numbers of type t (deeply) as decimalNumber.
func decimalText(v any, t types.Type) any {
	if !t.ContainsDecimal() {
		return v
	}
	switch x := v.(type) {
	case json.Number:
		if t.Kind == types.Decimal {
			return decimalNumber(x)
		}
	case []any:
		if t.Elem != nil {
			for i := range x {
				x[i] = decimalText(x[i], *t.Elem)
			}
		}
	case map[string]any:
		if t.Kind == types.Struct {
			for k, e := range x {
				for _, f := range t.Fields {
					if strings.EqualFold(k, f.Name) {
						x[k] = decimalText(e, f.Type)
						break
					}
				}
			}
		} else if t.Elem != nil {
			for k, e := range x {
				x[k] = decimalText(e, *t.Elem)
			}
		}
	}
	return v
}

// bareSingle says whether a side's one column is written bare rather
// than in a record: always for KAFKA, by WRAP_SINGLE_VALUE's rule for
// AVRO (format.Unwrapped).
func bareSingle(formatName string, cols []types.Column, props format.Props, key bool) bool {
	if len(cols) != 1 || isProtobuf(formatName) {
		return false // Protobuf always writes a message
	}
	if format.UsesRegistry(formatName) {
		return format.Unwrapped(cols, props, key)
	}
	return true
}

func codecFor(formatName string, cols []types.Column, props format.Props, key bool) (format.Codec, error) {
	if key {
		return format.NewKeyCodec(formatName, cols, props)
	}
	return format.NewValueCodec(formatName, cols, props)
}

func isProtobuf(formatName string) bool {
	f := strings.ToUpper(formatName)
	return f == format.Protobuf || f == format.ProtobufNoSR
}
