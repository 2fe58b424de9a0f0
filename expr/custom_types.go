package expr

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// TypeLookup finds a custom type (CREATE TYPE) by name, exactly as the
// parser left it: upper-cased unless it was quoted.
type TypeLookup func(name string) (types.Type, bool)

// ResolveTypeWith is ResolveType that also knows the custom types lookup
// returns, at any depth (ARRAY<ADDRESS>, STRUCT<home ADDRESS>). Built-in
// names win: a custom type cannot take one (see IsBuiltinType).
func ResolveTypeWith(tn *parser.TypeName, lookup TypeLookup) (types.Type, error) {
	if tn == nil {
		return types.Type{}, fmt.Errorf("%w: missing type", ErrType)
	}
	switch strings.ToUpper(tn.Name) {
	case "ARRAY":
		elem, err := ResolveTypeWith(tn.Elem, lookup)
		if err != nil {
			return types.Type{}, err
		}
		return types.ArrayOf(elem), nil
	case "MAP":
		k, err := ResolveTypeWith(tn.Key, lookup)
		if err != nil {
			return types.Type{}, err
		}
		v, err := ResolveTypeWith(tn.Elem, lookup)
		if err != nil {
			return types.Type{}, err
		}
		return types.MapOf(k, v), nil
	case "STRUCT":
		t := types.Type{Kind: types.Struct}
		for _, f := range tn.Fields {
			ft, err := ResolveTypeWith(f.Type, lookup)
			if err != nil {
				return types.Type{}, err
			}
			t.Fields = append(t.Fields, types.Field{Name: f.Name, Type: ft})
		}
		return t, nil
	}
	if IsBuiltinType(tn.Name) || lookup == nil {
		return resolveBuiltin(tn)
	}
	t, ok := lookup(tn.Name)
	if !ok {
		return types.Type{}, fmt.Errorf("%w: unknown type %s", ErrType, tn.Name)
	}
	if len(tn.Params) > 0 {
		return types.Type{}, fmt.Errorf("%w: custom type %s takes no parameters", ErrType, tn.Name)
	}
	return t, nil
}

// IsBuiltinType reports whether name (any case) is one of SQL's own
// types, which no custom type may shadow.
func IsBuiltinType(name string) bool {
	switch strings.ToUpper(name) {
	case "ARRAY", "MAP", "STRUCT", "DECIMAL":
		return true
	}
	_, ok := types.ParseScalar(name)
	return ok
}

// TypeNameOf writes a resolved type back as a type name that resolves to
// it again without any custom type, so that a statement planned with a
// custom type keeps its meaning after a DROP TYPE.
func TypeNameOf(t types.Type) *parser.TypeName {
	switch t.Kind {
	case types.Array:
		return &parser.TypeName{Name: "ARRAY", Elem: TypeNameOf(*t.Elem)}
	case types.Map:
		return &parser.TypeName{Name: "MAP", Key: TypeNameOf(*t.Key), Elem: TypeNameOf(*t.Elem)}
	case types.Struct:
		tn := &parser.TypeName{Name: "STRUCT"}
		for _, f := range t.Fields {
			tn.Fields = append(tn.Fields, parser.StructField{Name: f.Name, Type: TypeNameOf(f.Type)})
		}
		return tn
	case types.Decimal:
		return &parser.TypeName{Name: "DECIMAL", Params: []int{t.Precision, t.Scale}}
	}
	return &parser.TypeName{Name: t.Kind.String()}
}
