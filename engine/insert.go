package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// noColumns is the scope of INSERT … VALUES: values are constants.
type noColumns struct{}

func (noColumns) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	if ref.Source != "" {
		return 0, types.Type{}, fmt.Errorf("%w %s.%s: Failed to prepare statement: '%s' is not a valid stream/table name or alias.", expr.ErrUnknownColumn, ref.Source, ref.Name, ref.Source)
	}
	return 0, types.Type{}, fmt.Errorf("%w %s: INSERT … VALUES takes constant values", expr.ErrUnknownColumn, ref.Name)
}

func (e *Engine) insertValues(ctx context.Context, st *parser.InsertValues) error {
	src, err := e.cat.Lookup(st.Target)
	if err != nil {
		// ksqlDB's words, with the quoting hint Lookup gives.
		msg := err.Error()
		hint := ""
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			hint = msg[i:]
		}
		return fmt.Errorf("%w: Cannot insert values into an unknown stream/table: `%s`%s", planner.ErrNotFound, st.Target, hint)
	}
	if err := planner.CheckWritable(src, true); err != nil {
		return err
	}
	if src.Window != exec.NotWindowed {
		return fmt.Errorf("%w: cannot insert into windowed %s", planner.ErrInvalid, src.Name)
	}
	names := st.Columns
	if len(names) == 0 {
		names = src.Schema.Names()
	}
	if len(names) != len(st.Values) {
		return fmt.Errorf("%w: Failed to prepare statement: Expected number columns and values to match: %d, %d (columns %s)", planner.ErrInvalid, len(names), len(st.Values), strings.Join(names, ", "))
	}
	var headers []string
	for _, name := range names {
		if i := src.Schema.Find(name); i >= 0 && src.Schema.Columns[i].Header {
			headers = append(headers, src.Schema.Columns[i].Name)
		}
	}
	if len(headers) > 0 {
		// Header columns are read from records, never written.
		return fmt.Errorf("%w: Cannot insert into HEADER columns: %s", planner.ErrInvalid, strings.Join(headers, ", "))
	}
	for _, name := range names {
		for _, p := range []string{exec.ColRowPartition, exec.ColRowOffset} {
			if strings.EqualFold(name, p) {
				return fmt.Errorf("%w: Inserting into column `%s` is not allowed.", planner.ErrInvalid, p)
			}
		}
	}
	row := make([]any, len(src.Schema.Columns))
	ts := time.Now().UnixMilli()
	for i, name := range names {
		c, err := expr.Compile(st.Values[i], noColumns{})
		if err != nil {
			return err
		}
		v := c.Eval(nil)
		if strings.EqualFold(name, exec.ColRowTime) {
			n, ok := types.AsInt64(v)
			if !ok {
				return fmt.Errorf("%w: ROWTIME must be a BIGINT, got %s", planner.ErrInvalid, c.Type)
			}
			ts = n
			continue
		}
		idx := src.Schema.Find(name)
		if idx < 0 {
			return fmt.Errorf("%w: column %s does not exist in %s; columns are %s", expr.ErrUnknownColumn, name, src.Name, strings.Join(src.Schema.Names(), ", "))
		}
		col := src.Schema.Columns[idx]
		if v != nil {
			if v, err = coerce(v, c.Type, col); err != nil {
				return err
			}
		}
		row[idx] = v
	}
	return e.insertRow(ctx, src, row, ts)
}

// InsertJSON writes one row given as a JSON object (column name → JSON
// value, names matched ignoring case; ROWTIME sets the record timestamp)
// into a stream or table, as /inserts-stream receives rows. Values are
// converted as the JSON format reads them; unknown columns are an error.
func (e *Engine) InsertJSON(ctx context.Context, target string, obj map[string]any) error {
	src, err := e.cat.LookupFold(target)
	if err != nil {
		return err
	}
	if err := planner.CheckWritable(src, true); err != nil {
		return err
	}
	if src.Window != exec.NotWindowed {
		return fmt.Errorf("%w: cannot insert into windowed %s", planner.ErrInvalid, src.Name)
	}
	row := make([]any, len(src.Schema.Columns))
	ts := time.Now().UnixMilli()
	for name, jv := range obj {
		if strings.EqualFold(name, exec.ColRowTime) {
			v, err := format.FromJSON(jv, types.BigIntType)
			if err != nil || v == nil {
				return fmt.Errorf("%w: ROWTIME must be a BIGINT, got %v", planner.ErrInvalid, jv)
			}
			ts = v.(int64)
			continue
		}
		idx := src.Schema.Find(name)
		if idx < 0 {
			return fmt.Errorf("%w %s: %s has columns %s", expr.ErrUnknownColumn, name, src.Name, strings.Join(src.Schema.Names(), ", "))
		}
		col := src.Schema.Columns[idx]
		v, err := format.FromJSON(jv, col.Type)
		if err != nil {
			return fmt.Errorf("column %s: %w", col.Name, err)
		}
		row[idx] = v
	}
	return e.insertRow(ctx, src, row, ts)
}

// insertRow encodes a row (key columns first) with the source's formats
// and produces it.
func (e *Engine) insertRow(ctx context.Context, src *planner.Source, row []any, ts int64) error {
	nk := len(src.Schema.Keys())
	kc, err := format.NewKeyCodec(src.KeyFormat, src.Schema.Keys(), src.KeyProps)
	if err != nil {
		return err
	}
	vc, err := format.NewValueCodec(src.ValueFormat, src.Schema.Values(), src.ValueProps)
	if err != nil {
		return err
	}
	key, err := kc.Encode(row[:nk])
	if err != nil {
		return fmt.Errorf("encode key: %w", err)
	}
	value, err := vc.Encode(row[nk : nk+len(src.Schema.Values())])
	if err != nil {
		return fmt.Errorf("encode value: %w", err)
	}
	if value == nil {
		value = []byte{}
	}
	return e.clu.produce(ctx, &exec.Record{Topic: src.Topic, Key: key, Value: value, Timestamp: ts})
}

// coerce converts an inserted value to its column's type, widening
// numbers as SQL allows and refusing anything else.
func coerce(v any, from types.Type, col types.Column) (any, error) {
	out, ok, err := coerceValue(v, from, col.Type)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: expected type %s for column %s but got %s", expr.ErrType, col.Type, col.Name, from)
	}
	return out, nil
}

// coerceValue converts an INSERT … VALUES value of type from to type to
// as ksqlDB does: numbers widen (also inside arrays, maps and structs), a
// struct's fields are matched by name ignoring case — those the value
// lacks are NULL, those the column lacks are dropped — and a BIGINT or
// text becomes a TIMESTAMP. ok is false when the types do not match.
func coerceValue(v any, from, to types.Type) (any, bool, error) {
	if v == nil || from.Equal(to) {
		return v, true, nil
	}
	switch {
	case from.IsNumeric() && to.IsNumeric(), to.Kind == types.Timestamp && from.Kind == types.BigInt,
		to.Kind == types.Timestamp && from.Kind == types.String:
		conv, err := expr.CastFunc(from, to)
		if err != nil {
			return nil, false, err
		}
		return conv(v), true, nil
	case from.Kind == types.Array && to.Kind == types.Array && from.Elem != nil && to.Elem != nil:
		in, ok := v.([]any)
		if !ok {
			return nil, false, nil
		}
		out := make([]any, len(in))
		for i, e := range in {
			c, ok, err := coerceValue(e, *from.Elem, *to.Elem)
			if err != nil || !ok {
				return nil, ok, err
			}
			out[i] = c
		}
		return out, true, nil
	case from.Kind == types.Map && to.Kind == types.Map && from.Elem != nil && to.Elem != nil:
		in, ok := v.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		out := make(map[string]any, len(in))
		for k, e := range in {
			c, ok, err := coerceValue(e, *from.Elem, *to.Elem)
			if err != nil || !ok {
				return nil, ok, err
			}
			out[k] = c
		}
		return out, true, nil
	case from.Kind == types.Struct && to.Kind == types.Struct:
		in, ok := v.([]any)
		if !ok {
			return nil, false, nil
		}
		out := make([]any, len(to.Fields))
		for i, tf := range to.Fields {
			for j, ff := range from.Fields {
				if j >= len(in) || !strings.EqualFold(ff.Name, tf.Name) {
					continue
				}
				c, ok, err := coerceValue(in[j], ff.Type, tf.Type)
				if err != nil || !ok {
					return nil, ok, err
				}
				out[i] = c
				break
			}
		}
		return out, true, nil
	case from.Kind == types.Unknown:
		return nil, true, nil
	}
	return nil, false, nil
}

// insertValuesStatement is INSERT … VALUES: one record produced.
type insertValuesStatement struct{}

func (insertValuesStatement) execute(ctx context.Context, e *Engine, st *parser.InsertValues, c call, _ *session) (*Result, error) {
	if err := e.insertValues(ctx, st); err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Message: "1 row inserted"}, nil
}
