package planner

import (
	"fmt"
	"sort"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// CustomType is a type CREATE TYPE registered.
type CustomType struct {
	Name string
	Type types.Type
}

// LookupType finds a custom type by name as the parser left it:
// upper-cased unless quoted, like source names.
func (c *Catalog) LookupType(name string) (types.Type, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.customTypes[name]
	return t, ok
}

// Types lists the custom types sorted by name.
func (c *Catalog) Types() []CustomType {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]CustomType, 0, len(c.customTypes))
	for n, t := range c.customTypes {
		out = append(out, CustomType{Name: n, Type: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// RegisterType adds or replaces a custom type; CreateType checks first.
func (c *Catalog) RegisterType(name string, t types.Type) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.customTypes == nil {
		c.customTypes = map[string]types.Type{}
	}
	c.customTypes[name] = t
}

// DropType removes a custom type and reports whether it was there.
func (c *Catalog) DropType(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.customTypes[name]
	delete(c.customTypes, name)
	return ok
}

func (c *Catalog) hasTypes() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.customTypes) > 0
}

// CreateType plans CREATE TYPE: the type its definition resolves to now,
// custom types in it expanded. exists is set when IF NOT EXISTS meets a
// registered name; the statement then changes nothing.
func CreateType(cat *Catalog, st *parser.CreateType) (t types.Type, exists bool, err error) {
	if expr.IsBuiltinType(st.Name) {
		return types.Type{}, false, posErr(st.Pos, fmt.Errorf("%w: Cannot register custom type '%s': it is the name of a built-in type", ErrInvalid, st.Name))
	}
	if old, ok := cat.LookupType(st.Name); ok {
		if st.IfNotExists {
			return old, true, nil
		}
		return types.Type{}, false, posErr(st.Pos, &kindError{kind: ErrExists,
			msg: fmt.Sprintf("Cannot register custom type '%s' since it is already registered with type: %s", st.Name, old)})
	}
	r := typeResolver{cat: cat}
	t, err = expr.ResolveTypeWith(st.Type, cat.LookupType)
	if err != nil {
		return types.Type{}, false, posErr(r.culprit(st.Type).Pos, err)
	}
	return t, false, nil
}

// CheckDropType validates DROP TYPE. exists is false when IF EXISTS
// names no type; the statement then changes nothing.
func CheckDropType(cat *Catalog, st *parser.DropType) (exists bool, err error) {
	if _, ok := cat.LookupType(st.Name); ok {
		return true, nil
	}
	if st.IfExists {
		return false, nil
	}
	return false, posErr(st.Pos, fmt.Errorf("Type %s %w.", st.Name, ErrNotFound))
}

// ResolveTypes returns st with every custom type name it uses (column
// types, CAST targets) replaced by the type it names now, so that the
// planner, and any later re-planning from the printed statement, sees
// only built-in types: a later DROP TYPE changes nothing already planned.
// An unknown name is an error at its position.
func ResolveTypes(cat *Catalog, st parser.Statement) (parser.Statement, error) {
	if !cat.hasTypes() {
		return st, nil
	}
	r := typeResolver{cat: cat}
	out := r.statement(st)
	return out, r.err
}

type typeResolver struct {
	cat *Catalog
	err error
}

func (r *typeResolver) typeName(tn *parser.TypeName) *parser.TypeName {
	if tn == nil || r.err != nil {
		return tn
	}
	t, err := expr.ResolveTypeWith(tn, r.cat.LookupType)
	if err != nil {
		r.err = posErr(r.culprit(tn).Pos, err)
		return tn
	}
	out := expr.TypeNameOf(t)
	out.Pos = tn.Pos
	return out
}

// culprit finds the innermost part of tn that does not resolve, to put
// the error's caret under it rather than under the whole type.
func (r *typeResolver) culprit(tn *parser.TypeName) *parser.TypeName {
	parts := []*parser.TypeName{tn.Key, tn.Elem}
	for _, f := range tn.Fields {
		parts = append(parts, f.Type)
	}
	for _, p := range parts {
		if p == nil {
			continue
		}
		if _, err := expr.ResolveTypeWith(p, r.cat.LookupType); err != nil {
			return r.culprit(p)
		}
	}
	return tn
}

func (r *typeResolver) columns(cols []parser.ColumnDef) []parser.ColumnDef {
	out := make([]parser.ColumnDef, len(cols))
	for i, c := range cols {
		c.Type = r.typeName(c.Type)
		out[i] = c
	}
	return out
}

func (r *typeResolver) expr(e parser.Expr) parser.Expr {
	var f func(parser.Expr) parser.Expr
	f = func(x parser.Expr) parser.Expr {
		c, ok := x.(*parser.Cast)
		if !ok {
			return nil
		}
		out := *c
		out.X = parser.Rewrite(c.X, f)
		out.Type = r.typeName(c.Type)
		return &out
	}
	return parser.Rewrite(e, f)
}

func (r *typeResolver) exprs(xs []parser.Expr) []parser.Expr {
	if xs == nil {
		return nil
	}
	out := make([]parser.Expr, len(xs))
	for i, x := range xs {
		out[i] = r.expr(x)
	}
	return out
}

func (r *typeResolver) query(s *parser.Select) *parser.Select {
	if s == nil {
		return nil
	}
	out := *s
	out.Items = make([]parser.SelectItem, len(s.Items))
	for i, it := range s.Items {
		it.Expr = r.expr(it.Expr)
		out.Items[i] = it
	}
	out.Joins = make([]*parser.Join, len(s.Joins))
	for i, j := range s.Joins {
		jc := *j
		jc.On = r.expr(j.On)
		out.Joins[i] = &jc
	}
	if s.Joins == nil {
		out.Joins = nil
	}
	out.Where, out.Having = r.expr(s.Where), r.expr(s.Having)
	out.GroupBy, out.PartitionBy = r.exprs(s.GroupBy), r.exprs(s.PartitionBy)
	return &out
}

func (r *typeResolver) statement(st parser.Statement) parser.Statement {
	switch s := st.(type) {
	case *parser.CreateSource:
		out := *s
		if s.Columns != nil {
			out.Columns = r.columns(s.Columns)
		}
		out.Query = r.query(s.Query)
		return &out
	case *parser.AlterSource:
		out := *s
		out.Columns = r.columns(s.Columns)
		return &out
	case *parser.InsertValues:
		out := *s
		out.Values = r.exprs(s.Values)
		return &out
	case *parser.InsertSelect:
		out := *s
		out.Query = r.query(s.Query)
		return &out
	case *parser.Select:
		return r.query(s)
	case *parser.Explain:
		if s.Statement == nil {
			return s
		}
		out := *s
		out.Statement = r.statement(s.Statement)
		return &out
	}
	return st
}

// kindError is an error of a kind (errors.Is) whose text is ksqlDB's
// message alone.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }
