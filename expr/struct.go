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
	for i, v := range x.Values {
		c, err := Compile(v, scope)
		if err != nil {
			return Compiled{}, err
		}
		if c.Type.Kind == types.Unknown {
			return Compiled{}, errAt(v, fmt.Errorf("%w: cannot infer the type of STRUCT field %s (a bare NULL); use CAST", ErrType, x.Names[i]))
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
