package expr

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// STRUCT values are []any in the order of their type's fields (as the
// codecs in format/ build them), so a field is found by position at
// compile time and read by index per row.

// compileDereference compiles X->FIELD. A null struct gives null.
func compileDereference(x *parser.Dereference, scope Scope) (Compiled, error) {
	inner, err := Compile(x.X, scope)
	if err != nil {
		return Compiled{}, err
	}
	if inner.Type.Kind != types.Struct {
		return Compiled{}, errAt(x, fmt.Errorf("%w: %s is %s, not a STRUCT: -> needs a STRUCT", ErrType, x.X, inner.Type))
	}
	idx := -1
	for i, f := range inner.Type.Fields {
		if f.Name == x.Field {
			idx = i
			break
		}
	}
	if idx < 0 {
		// Unquoted names are upper-cased by the parser; a field declared
		// quoted in lower case is still meant.
		for i, f := range inner.Type.Fields {
			if strings.EqualFold(f.Name, x.Field) {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		return Compiled{}, errAt(x, fmt.Errorf("%w: %s has no field %s", ErrType, x.X, x.Field))
	}
	f := inner.Eval
	return Compiled{Type: inner.Type.Fields[idx].Type, Eval: func(row []any) any {
		s, ok := f(row).([]any)
		if !ok || idx >= len(s) {
			return nil
		}
		return s[idx]
	}}, nil
}

// compileStructCtor compiles STRUCT(name := value, …).
func compileStructCtor(x *parser.StructCtor, scope Scope) (Compiled, error) {
	t := types.Type{Kind: types.Struct}
	evals := make([]Eval, len(x.Values))
	seen := map[string]bool{}
	for _, name := range x.Names {
		if seen[name] {
			return Compiled{}, errAt(x, fmt.Errorf("%w: Duplicate field names found in STRUCT: '%s'", ErrType, name))
		}
		seen[name] = true
	}
	for i, v := range x.Values {
		c, err := Compile(v, scope)
		if err != nil {
			return Compiled{}, err
		}
		if c.Type.Kind == types.Unknown {
			return Compiled{}, errAt(v, fmt.Errorf("%w: %s (STRUCT field %s is a bare NULL)", ErrType, NullTypeMessage, x.Names[i]))
		}
		t.Fields = append(t.Fields, types.Field{Name: x.Names[i], Type: c.Type})
		evals[i] = c.Eval
	}
	return Compiled{Type: t, Eval: func(row []any) any {
		out := make([]any, len(evals))
		for i, e := range evals {
			out[i] = e(row)
		}
		return out
	}}, nil
}

// compileSubscript compiles X[i] on an ARRAY (1-based as in ksqlDB; a
// negative index counts from the end; out of range is NULL) and X[key]
// on a MAP (a missing key is NULL).
func compileSubscript(x *parser.Subscript, scope Scope) (Compiled, error) {
	inner, err := Compile(x.X, scope)
	if err != nil {
		return Compiled{}, err
	}
	idx, err := Compile(x.Index, scope)
	if err != nil {
		return Compiled{}, err
	}
	f, at := inner.Eval, idx.Eval
	switch inner.Type.Kind {
	case types.Array:
		if !idx.Type.IsNumeric() && idx.Type.Kind != types.Unknown {
			return Compiled{}, errAt(x, fmt.Errorf("%w: an ARRAY index must be an integer, not %s", ErrType, idx.Type))
		}
		return Compiled{Type: *inner.Type.Elem, Eval: func(row []any) any {
			list, ok := f(row).([]any)
			i, ok2 := types.AsInt64(at(row))
			if !ok || !ok2 {
				return nil
			}
			switch {
			case i > 0 && i <= int64(len(list)):
				return list[i-1]
			case i < 0 && -i <= int64(len(list)):
				return list[int64(len(list))+i]
			}
			return nil
		}}, nil
	case types.Map:
		return Compiled{Type: *inner.Type.Elem, Eval: func(row []any) any {
			m, ok := f(row).(map[string]any)
			if !ok {
				return nil
			}
			k := at(row)
			if k == nil {
				return nil
			}
			return m[types.FormatValue(k)]
		}}, nil
	}
	return Compiled{}, errAt(x, fmt.Errorf("%w: %s is %s: [ ] needs an ARRAY or a MAP", ErrType, x.X, inner.Type))
}
