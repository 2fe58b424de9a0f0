package planner

// The resolve pass: column references against a source's row (scope)
// and the SELECT list expanded into named items.

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// scope resolves column references against one source's row.
type scope struct {
	src    *Source
	alias  string
	schema types.Schema
	// join, when set, names the columns of a joined row instead.
	join *joinLayout
	// used records the row positions expressions read, so the source
	// decodes only those value columns.
	used map[int]bool
}

func (s *scope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	if s.join != nil {
		return s.join.resolve(ref)
	}
	if ref.Source != "" && !strings.EqualFold(ref.Source, s.src.Name) && !strings.EqualFold(ref.Source, s.alias) {
		return 0, types.Type{}, fmt.Errorf("%w %s.%s: no source named %s in FROM", expr.ErrUnknownColumn, ref.Source, ref.Name, ref.Source)
	}
	if i := s.schema.Find(ref.Name); i >= 0 {
		if s.used == nil {
			s.used = map[int]bool{}
		}
		s.used[i] = true
		return i, s.schema.Columns[i].Type, nil
	}
	names := visibleNames(s.schema)
	if near := parser.Closest(ref.Name, names); near != "" {
		return 0, types.Type{}, fmt.Errorf("%w %s: did you mean %s? %s has columns %s", expr.ErrUnknownColumn, ref.Name, near, s.src.Name, strings.Join(names, ", "))
	}
	return 0, types.Type{}, fmt.Errorf("%w %s: %s has columns %s", expr.ErrUnknownColumn, ref.Name, s.src.Name, strings.Join(names, ", "))
}

// unknownDetail is what a scope said about an unknown column, without
// the kind prefix ("unknown column X: "), as a hint after ksqlDB's words.
func unknownDetail(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, expr.ErrUnknownColumn.Error()) {
		return after
	}
	return msg
}

// visibleNames lists the columns a user can name, without internal ones.
func visibleNames(s types.Schema) []string {
	var out []string
	for _, n := range s.Names() {
		if !strings.HasPrefix(n, "KSQL_INTERNAL_") {
			out = append(out, n)
		}
	}
	return out
}

// itemList collects a SELECT's output columns, refusing a name twice.
type itemList struct {
	items []item
	seen  map[string]bool
	// scope types an item named twice, for the error.
	scope expr.Scope
}

// add appends it, refusing a name already taken as ksqlDB's schema
// builder does: "Duplicate value columns found in schema: `COUNT`
// BIGINT", the column named twice with the type of its second use.
func (l *itemList) add(it item) error {
	key := strings.ToUpper(it.name)
	if l.seen[key] {
		column := fmt.Sprintf("`%s`", it.name)
		if t, ok := itemType(it.expr, l.scope); ok {
			column += " " + t.String()
		}
		return posErr(it.pos, fmt.Errorf("%w: Duplicate value columns found in schema: %s (give one of them another alias)", ErrInvalid, column))
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[key] = true
	l.items = append(l.items, it)
	return nil
}

// itemType is the type of a SELECT item's expression, aggregate calls
// included, when it can be told before planning; false when it cannot.
func itemType(e parser.Expr, sc expr.Scope) (types.Type, bool) {
	if sc == nil || e == nil {
		return types.Type{}, false
	}
	if call, ok := e.(*parser.FuncCall); ok && expr.IsAggregate(call.Name) {
		args := make([]types.Type, 0, len(call.Args))
		for _, a := range call.Args {
			c, err := expr.Compile(a, sc)
			if err != nil {
				return types.Type{}, false
			}
			args = append(args, c.Type)
		}
		agg, err := expr.BindAggregate(call.Name, args, call.Star)
		if err != nil {
			return types.Type{}, false
		}
		return agg.ResultType, true
	}
	c, err := expr.Compile(e, sc)
	if err != nil {
		return types.Type{}, false
	}
	return c.Type, true
}

// item is one output column of a SELECT before planning.
type item struct {
	expr parser.Expr
	name string
	pos  parser.Pos
	// star marks items a * expanded to, and oldKey those of them that
	// are key columns of the source: PARTITION BY moves them to the value.
	star, oldKey bool
}

// expandItems lists the SELECT's output columns, expanding *. A windowed
// source's window bounds are part of * only in transient queries, as in
// ksqlDB: a persistent query writes them in the windowed key of its sink,
// not again in the value.
func expandItems(sel *parser.Select, sc *scope, persistent bool) ([]item, error) {
	l := itemList{scope: sc}
	add := l.add
	aliases := newAliasGenerator(sc.src.Schema.Columns)
	for _, si := range sel.Items {
		if si.Star {
			if si.StarSource != "" && !strings.EqualFold(si.StarSource, sc.src.Name) && !strings.EqualFold(si.StarSource, sc.alias) {
				return nil, posErr(si.Pos, fmt.Errorf("%w: %s.* names no source in FROM", ErrInvalid, si.StarSource))
			}
			cols := sc.src.Schema.Keys()
			nkeys := len(cols)
			if sc.src.Window != exec.NotWindowed && !persistent {
				cols = append(cols, types.Column{Name: exec.ColWindowStart}, types.Column{Name: exec.ColWindowEnd})
			}
			cols = append(append(cols, sc.src.Schema.Values()...), sc.src.Schema.Headers()...)
			for i, c := range cols {
				if err := add(item{expr: &parser.ColumnRef{Pos: si.Pos, Name: c.Name}, name: c.Name, pos: si.Pos, star: true, oldKey: i < nkeys}); err != nil {
					return nil, err
				}
			}
			continue
		}
		if si.AllFields {
			if err := addStructFields(si, sc, add); err != nil {
				return nil, err
			}
			continue
		}
		name := si.Alias
		if name == "" {
			switch x := si.Expr.(type) {
			case *parser.ColumnRef:
				name = x.Name
			case *parser.Dereference:
				name = aliases.field(x.Field)
			default:
				name = aliases.expression()
			}
		}
		if err := checkOutputName(si, name, persistent); err != nil {
			return nil, err
		}
		if err := add(item{expr: si.Expr, name: name, pos: si.Pos}); err != nil {
			return nil, err
		}
	}
	return l.items, nil
}

// addStructFields adds the items a `s->*` select item expands to.
func addStructFields(si parser.SelectItem, sc expr.Scope, add func(item) error) error {
	fields, err := structFieldItems(si, sc)
	if err != nil {
		return err
	}
	for _, it := range fields {
		if err := add(it); err != nil {
			return err
		}
	}
	return nil
}

// structFieldItems expands x->*: an item per field of the struct x, in
// the struct's order, named after the field as declared.
func structFieldItems(si parser.SelectItem, sc expr.Scope) ([]item, error) {
	c, err := expr.Compile(si.Expr, sc)
	if err != nil {
		return nil, err
	}
	if c.Type.Kind != types.Struct {
		return nil, posErr(si.Pos, fmt.Errorf("%w: %s->* needs a STRUCT, and %s is %s", ErrInvalid, si.Expr, si.Expr, c.Type))
	}
	items := make([]item, len(c.Type.Fields))
	for i, f := range c.Type.Fields {
		items[i] = item{expr: &parser.Dereference{Pos: si.Pos, X: si.Expr, Field: f.Name}, name: f.Name, pos: si.Pos}
	}
	return items, nil
}
