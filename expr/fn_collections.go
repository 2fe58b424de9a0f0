package expr

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// Collection functions (ARRAY_*, MAP_*, SLICE, ENTRIES, AS_MAP) and the
// ARRAY[…] and MAP(k := v, …) constructors, after ksqlDB's UDFs in
// io.confluent.ksql.function.udf.array and .map.
//
// Go maps have no order, so every function that lists a map's entries
// (MAP_KEYS, MAP_VALUES, ENTRIES) lists them sorted by key: ksqlDB's
// order there is a HashMap's, which nobody can rely on.

// collUnify returns the type two element types share: NULL takes the
// other type, numbers widen (INT < BIGINT < DOUBLE), arrays unify their
// elements, anything else must be equal.
func collUnify(a, b types.Type) (types.Type, bool) { return unifyTypes(a, b, false) }

// unifyTypes is collUnify; with structs set, two STRUCTs also unify, to
// the union of their fields (first seen first), a field in both taking
// the two types' common type. This is ksqlDB's rule that a STRUCT
// coerces to any STRUCT whose shared fields coerce; it needs values
// converted with collConvertFrom, which knows each value's own fields.
func unifyTypes(a, b types.Type, structs bool) (types.Type, bool) {
	switch {
	case a.Kind == types.Unknown:
		return b, true
	case b.Kind == types.Unknown:
		return a, true
	case a.Equal(b):
		return a, true
	case a.IsNumeric() && b.IsNumeric():
		return widen(a, b), true
	case a.Kind == types.Array && b.Kind == types.Array:
		e, ok := unifyTypes(*a.Elem, *b.Elem, structs)
		return types.ArrayOf(e), ok
	case a.Kind == types.Map && b.Kind == types.Map:
		k, ok := unifyTypes(*a.Key, *b.Key, structs)
		e, ok2 := unifyTypes(*a.Elem, *b.Elem, structs)
		return types.MapOf(k, e), ok && ok2
	case structs && a.Kind == types.Struct && b.Kind == types.Struct:
		out := types.Type{Kind: types.Struct, Fields: slices.Clone(a.Fields)}
		for _, f := range b.Fields {
			i := slices.IndexFunc(out.Fields, func(g types.Field) bool { return g.Name == f.Name })
			if i < 0 {
				out.Fields = append(out.Fields, f)
				continue
			}
			t, ok := unifyTypes(out.Fields[i].Type, f.Type, structs)
			if !ok {
				return a, false
			}
			out.Fields[i].Type = t
		}
		return out, true
	}
	return a, a.Equal(b)
}

// collConvertFrom converts a value of type src to dst, a type src
// unified into with unifyTypes: numbers widen, and a STRUCT takes dst's
// fields, by name, NULL for those src lacks.
func collConvertFrom(src, dst types.Type) func(any) any {
	switch {
	case src.Kind == types.Struct && dst.Kind == types.Struct:
		idx := make([]int, len(dst.Fields))
		convs := make([]func(any) any, len(dst.Fields))
		for i, f := range dst.Fields {
			idx[i] = slices.IndexFunc(src.Fields, func(g types.Field) bool { return g.Name == f.Name })
			if idx[i] >= 0 {
				convs[i] = collConvertFrom(src.Fields[idx[i]].Type, f.Type)
			}
		}
		return func(v any) any {
			fields, ok := v.([]any)
			if !ok {
				return v
			}
			out := make([]any, len(idx))
			for i, j := range idx {
				if j >= 0 && j < len(fields) {
					out[i] = convs[i](fields[j])
				}
			}
			return out
		}
	case src.Kind == types.Array && dst.Kind == types.Array:
		ec := collConvertFrom(*src.Elem, *dst.Elem)
		return func(v any) any {
			list, ok := v.([]any)
			if !ok {
				return v
			}
			out := make([]any, len(list))
			for i, x := range list {
				out[i] = ec(x)
			}
			return out
		}
	case src.Kind == types.Map && dst.Kind == types.Map:
		ec := collConvertFrom(*src.Elem, *dst.Elem)
		return func(v any) any {
			m, ok := v.(map[string]any)
			if !ok {
				return v
			}
			out := make(map[string]any, len(m))
			for k, x := range m {
				out[k] = ec(x)
			}
			return out
		}
	}
	return collConverter(dst)
}

// collConverter converts a value of a type that unified into t to t's Go
// representation (INT elements of an ARRAY<DOUBLE> become float64).
func collConverter(t types.Type) func(any) any {
	switch t.Kind {
	case types.BigInt, types.Double, types.Decimal:
		return converter(t)
	case types.Array:
		ec := collConverter(*t.Elem)
		return func(v any) any {
			list, ok := v.([]any)
			if !ok {
				return v
			}
			out := make([]any, len(list))
			for i, x := range list {
				out[i] = ec(x)
			}
			return out
		}
	case types.Map:
		ec := collConverter(*t.Elem)
		return func(v any) any {
			m, ok := v.(map[string]any)
			if !ok {
				return v
			}
			out := make(map[string]any, len(m))
			for k, x := range m {
				out[k] = ec(x)
			}
			return out
		}
	}
	return func(v any) any { return v }
}

// collEqual is Java's Objects.equals on SQL values: NULL equals NULL,
// numbers compare by value, nested values deeply.
func collEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if c, ok := types.Compare(a, b); ok {
		return c == 0
	}
	return reflect.DeepEqual(a, b)
}

func collIndex(list []any, v any) int {
	for i, x := range list {
		if collEqual(x, v) {
			return i
		}
	}
	return -1
}

// collDistinct keeps the first of equal elements, in order (ksqlDB's
// LinkedHashSet).
func collDistinct(list []any) []any {
	out := make([]any, 0, len(list))
	for _, x := range list {
		if collIndex(out, x) < 0 {
			out = append(out, x)
		}
	}
	return out
}

// collOrderable reports whether elements of t have a natural order
// (ksqlDB's Comparable element types).
func collOrderable(t types.Type) bool {
	switch t.Kind {
	case types.Array, types.Map, types.Struct:
		return false
	}
	return true
}

func collArrayArg(name string, t types.Type) error {
	if t.Kind != types.Array && t.Kind != types.Unknown {
		return fmt.Errorf("%w: function %s needs an ARRAY, not %s", ErrType, name, t)
	}
	return nil
}

func collMapArg(name string, t types.Type) error {
	if t.Kind != types.Map && t.Kind != types.Unknown {
		return fmt.Errorf("%w: function %s needs a MAP, not %s", ErrType, name, t)
	}
	return nil
}

// collElem is an array type's element type (UNKNOWN for a bare NULL).
func collElem(t types.Type) types.Type {
	if t.Kind == types.Array {
		return *t.Elem
	}
	return types.UnknownType
}

// collArrayType is ARRAY<elem>, with a bare NULL argument still typed as
// an array.
func collArrayType(t types.Type) types.Type {
	if t.Kind == types.Array {
		return t
	}
	return types.ArrayOf(types.UnknownType)
}

// collTwoArrays binds a function of two arrays of one element type
// (ARRAY_EXCEPT, ARRAY_INTERSECT, ARRAY_UNION, ARRAY_CONCAT); f gets
// both arrays converted to the shared type, nil for NULLs.
func collTwoArrays(name string, f func(a, b []any, aNull, bNull bool) any) func([]types.Type) (types.Type, func([]any) any, error) {
	return func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount(name, args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		for _, t := range args {
			if err := collArrayArg(name, t); err != nil {
				return types.Type{}, nil, err
			}
		}
		elem, ok := collUnify(collElem(args[0]), collElem(args[1]))
		if !ok {
			return types.Type{}, nil, fmt.Errorf("%w: function %s needs arrays of one type, not %s and %s", ErrType, name, args[0], args[1])
		}
		t := types.ArrayOf(elem)
		conv := collConverter(t)
		return t, func(a []any) any {
			l, lok := conv(a[0]).([]any)
			r, rok := conv(a[1]).([]any)
			return f(l, r, !lok, !rok)
		}, nil
	}
}

// collSort sorts a copy of list in natural order, NULLs last either way.
func collSort(list []any, desc bool) []any {
	out := slices.Clone(list)
	sort.SliceStable(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x == nil || y == nil {
			return x != nil
		}
		c, _ := types.Compare(x, y)
		if desc {
			return c > 0
		}
		return c < 0
	})
	return out
}

// collExtreme is ARRAY_MAX (sign 1) or ARRAY_MIN (sign -1): NULL
// elements are skipped; an empty or all-NULL array gives NULL.
func collExtreme(name string, sign int) *scalar {
	return &scalar{name: name, bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount(name, args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		if err := collArrayArg(name, args[0]); err != nil {
			return types.Type{}, nil, err
		}
		elem := collElem(args[0])
		if !collOrderable(elem) {
			return types.Type{}, nil, fmt.Errorf("%w: function %s cannot order elements of type %s", ErrType, name, elem)
		}
		return elem, func(a []any) any {
			list, _ := a[0].([]any)
			var best any
			for _, x := range list {
				if x == nil {
					continue
				}
				if best == nil {
					best = x
					continue
				}
				if c, _ := types.Compare(x, best); c*sign > 0 {
					best = x
				}
			}
			return best
		}, nil
	}}
}

// collSortedKeys lists a map's keys in order.
func collSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// collJoinText renders one ARRAY_JOIN element as Java's toString does;
// a DECIMAL (a float64 for now) shows its scale's digits, as BigDecimal.
func collJoinText(v any, t types.Type) string {
	if v == nil {
		return "null"
	}
	if f, ok := v.(float64); ok && t.Kind == types.Decimal {
		return strconv.FormatFloat(f, 'f', t.Scale, 64)
	}
	return types.FormatValue(v)
}

func init() {
	// ARRAY_LENGTH(array) is the number of elements, NULL for NULL.
	register(&scalar{name: "ARRAY_LENGTH", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("ARRAY_LENGTH", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		if err := collArrayArg("ARRAY_LENGTH", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		return types.IntegerType, func(a []any) any {
			list, ok := a[0].([]any)
			if !ok {
				return nil
			}
			return int32(len(list))
		}, nil
	}})
	// ARRAY_CONTAINS(array, value): a NULL array contains nothing (false,
	// not NULL); a NULL value matches a NULL element.
	register(&scalar{name: "ARRAY_CONTAINS", decimalArgs: true, bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("ARRAY_CONTAINS", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		if err := collArrayArg("ARRAY_CONTAINS", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		if _, ok := collUnify(collElem(args[0]), args[1]); !ok {
			return types.Type{}, nil, fmt.Errorf("%w: function ARRAY_CONTAINS cannot look for %s in %s", ErrType, args[1], args[0])
		}
		return types.BooleanType, func(a []any) any {
			list, _ := a[0].([]any)
			return collIndex(list, a[1]) >= 0
		}, nil
	}})
	// ARRAY_JOIN(array [, delimiter]) joins primitive elements as text
	// (NULLs as "null"), ',' by default; a NULL delimiter joins with "".
	register(&scalar{name: "ARRAY_JOIN", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("ARRAY_JOIN", args, 1, 2); err != nil {
			return types.Type{}, nil, err
		}
		if err := collArrayArg("ARRAY_JOIN", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		switch collElem(args[0]).Kind {
		case types.Array, types.Map, types.Struct, types.Bytes, types.Timestamp, types.Date, types.Time:
			return types.Type{}, nil, fmt.Errorf("%w: function ARRAY_JOIN joins arrays of primitive types, not %s", ErrType, args[0])
		}
		if len(args) == 2 && args[1].Kind != types.String && args[1].Kind != types.Unknown {
			return types.Type{}, nil, fmt.Errorf("%w: the ARRAY_JOIN delimiter must be a STRING, not %s", ErrType, args[1])
		}
		elem := collElem(args[0])
		return types.StringType, func(a []any) any {
			list, ok := a[0].([]any)
			if !ok {
				return nil
			}
			sep := ","
			if len(a) == 2 {
				sep, _ = a[1].(string)
			}
			parts := make([]string, len(list))
			for i, x := range list {
				parts[i] = collJoinText(x, elem)
			}
			return strings.Join(parts, sep)
		}, nil
	}})
	// ARRAY_DISTINCT keeps the first of equal elements, in order; NULL
	// is an element like any other.
	register(&scalar{name: "ARRAY_DISTINCT", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("ARRAY_DISTINCT", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		if err := collArrayArg("ARRAY_DISTINCT", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		return collArrayType(args[0]), func(a []any) any {
			list, ok := a[0].([]any)
			if !ok {
				return nil
			}
			return collDistinct(list)
		}, nil
	}})
	// ARRAY_EXCEPT, ARRAY_INTERSECT and ARRAY_UNION are set operations:
	// distinct results in first-seen order, NULL if either array is NULL.
	register(&scalar{name: "ARRAY_EXCEPT", bind: collTwoArrays("ARRAY_EXCEPT", func(l, r []any, ln, rn bool) any {
		if ln || rn {
			return nil
		}
		out := []any{}
		for _, x := range collDistinct(l) {
			if collIndex(r, x) < 0 {
				out = append(out, x)
			}
		}
		return out
	})})
	register(&scalar{name: "ARRAY_INTERSECT", bind: collTwoArrays("ARRAY_INTERSECT", func(l, r []any, ln, rn bool) any {
		if ln || rn {
			return nil
		}
		out := []any{}
		for _, x := range collDistinct(l) {
			if collIndex(r, x) >= 0 {
				out = append(out, x)
			}
		}
		return out
	})})
	register(&scalar{name: "ARRAY_UNION", bind: collTwoArrays("ARRAY_UNION", func(l, r []any, ln, rn bool) any {
		if ln || rn {
			return nil
		}
		return collDistinct(append(slices.Clone(l), r...))
	})})
	// ARRAY_CONCAT keeps duplicates; a NULL array counts as empty unless
	// both are NULL.
	register(&scalar{name: "ARRAY_CONCAT", bind: collTwoArrays("ARRAY_CONCAT", func(l, r []any, ln, rn bool) any {
		if ln && rn {
			return nil
		}
		return append(append([]any{}, l...), r...)
	})})
	register(collExtreme("ARRAY_MAX", 1))
	register(collExtreme("ARRAY_MIN", -1))
	// ARRAY_REMOVE(array, victim) drops every element equal to victim
	// (NULL removes the NULLs).
	register(&scalar{name: "ARRAY_REMOVE", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("ARRAY_REMOVE", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		if err := collArrayArg("ARRAY_REMOVE", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		if _, ok := collUnify(collElem(args[0]), args[1]); !ok {
			return types.Type{}, nil, fmt.Errorf("%w: function ARRAY_REMOVE cannot remove %s from %s", ErrType, args[1], args[0])
		}
		return collArrayType(args[0]), func(a []any) any {
			list, ok := a[0].([]any)
			if !ok {
				return nil
			}
			out := []any{}
			for _, x := range list {
				if !collEqual(x, a[1]) {
					out = append(out, x)
				}
			}
			return out
		}, nil
	}})
	// ARRAY_SORT(array [, 'ASC'|'ASCENDING'|'DESC'|'DESCENDING']) sorts
	// in natural order with NULLs last; another direction (or NULL) gives
	// NULL.
	register(&scalar{name: "ARRAY_SORT", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("ARRAY_SORT", args, 1, 2); err != nil {
			return types.Type{}, nil, err
		}
		if err := collArrayArg("ARRAY_SORT", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		if !collOrderable(collElem(args[0])) {
			return types.Type{}, nil, fmt.Errorf("%w: function ARRAY_SORT cannot order elements of type %s", ErrType, collElem(args[0]))
		}
		if len(args) == 2 && args[1].Kind != types.String && args[1].Kind != types.Unknown {
			return types.Type{}, nil, fmt.Errorf("%w: the ARRAY_SORT direction must be a STRING, not %s", ErrType, args[1])
		}
		return collArrayType(args[0]), func(a []any) any {
			list, ok := a[0].([]any)
			if !ok {
				return nil
			}
			desc := false
			if len(a) == 2 {
				dir, _ := a[1].(string)
				switch strings.ToUpper(dir) {
				case "ASC", "ASCENDING":
				case "DESC", "DESCENDING":
					desc = true
				default:
					return nil
				}
			}
			return collSort(list, desc)
		}, nil
	}})
	// SLICE(array, from, to) is elements from..to, 1-based and inclusive;
	// a NULL bound is the array's start or end; bounds outside the array
	// give NULL, as ksqlDB's List.subList failing.
	register(&scalar{name: "SLICE", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("SLICE", args, 3, 3); err != nil {
			return types.Type{}, nil, err
		}
		if err := collArrayArg("SLICE", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		for _, t := range args[1:] {
			if t.Kind != types.Integer && t.Kind != types.BigInt && t.Kind != types.Unknown {
				return types.Type{}, nil, fmt.Errorf("%w: SLICE bounds must be integers, not %s", ErrType, t)
			}
		}
		return collArrayType(args[0]), func(a []any) any {
			list, ok := a[0].([]any)
			if !ok {
				return nil
			}
			start, end := int64(0), int64(len(list))
			if from, ok := types.AsInt64(a[1]); ok {
				start = from - 1
			}
			if to, ok := types.AsInt64(a[2]); ok {
				end = to
			}
			if start < 0 || end > int64(len(list)) || start > end {
				return nil
			}
			return slices.Clone(list[start:end])
		}, nil
	}})
	// MAP_KEYS and MAP_VALUES list a map's keys and values, by key.
	register(&scalar{name: "MAP_KEYS", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("MAP_KEYS", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		if err := collMapArg("MAP_KEYS", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		return types.ArrayOf(types.StringType), func(a []any) any {
			m, ok := a[0].(map[string]any)
			if !ok {
				return nil
			}
			out := []any{}
			for _, k := range collSortedKeys(m) {
				out = append(out, k)
			}
			return out
		}, nil
	}})
	register(&scalar{name: "MAP_VALUES", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("MAP_VALUES", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		if err := collMapArg("MAP_VALUES", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		elem := types.UnknownType
		if args[0].Kind == types.Map {
			elem = *args[0].Elem
		}
		return types.ArrayOf(elem), func(a []any) any {
			m, ok := a[0].(map[string]any)
			if !ok {
				return nil
			}
			out := []any{}
			for _, k := range collSortedKeys(m) {
				out = append(out, m[k])
			}
			return out
		}, nil
	}})
	// MAP_UNION(m1, m2): m2's value wins for a key in both; NULL only
	// when both maps are NULL.
	register(&scalar{name: "MAP_UNION", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("MAP_UNION", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		for _, t := range args {
			if err := collMapArg("MAP_UNION", t); err != nil {
				return types.Type{}, nil, err
			}
		}
		t, ok := collUnify(args[0], args[1])
		if !ok {
			return types.Type{}, nil, fmt.Errorf("%w: function MAP_UNION needs maps of one type, not %s and %s", ErrType, args[0], args[1])
		}
		if t.Kind == types.Unknown {
			t = types.MapOf(types.StringType, types.UnknownType)
		}
		conv := collConverter(t)
		return t, func(a []any) any {
			m1, ok1 := a[0].(map[string]any)
			m2, ok2 := a[1].(map[string]any)
			if !ok1 && !ok2 {
				return nil
			}
			out := map[string]any{}
			for _, m := range []map[string]any{m1, m2} {
				for k, v := range conv(m).(map[string]any) {
					out[k] = v
				}
			}
			return out
		}, nil
	}})
	// ENTRIES(map, sorted) is ARRAY<STRUCT<K STRING, V …>>. Entries are
	// always sorted by key here (see the top of this file).
	register(&scalar{name: "ENTRIES", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("ENTRIES", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		if err := collMapArg("ENTRIES", args[0]); err != nil {
			return types.Type{}, nil, err
		}
		if args[1].Kind != types.Boolean && args[1].Kind != types.Unknown {
			return types.Type{}, nil, fmt.Errorf("%w: the ENTRIES sorted flag must be a BOOLEAN, not %s", ErrType, args[1])
		}
		v := types.UnknownType
		if args[0].Kind == types.Map {
			v = *args[0].Elem
		}
		entry := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "K", Type: types.StringType}, {Name: "V", Type: v}}}
		return types.ArrayOf(entry), func(a []any) any {
			m, ok := a[0].(map[string]any)
			if !ok || a[1] == nil { // ksqlDB's boolean parameter cannot take NULL
				return nil
			}
			out := make([]any, 0, len(m))
			for _, k := range collSortedKeys(m) {
				out = append(out, []any{k, m[k]})
			}
			return out
		}, nil
	}})
	// AS_MAP(keys, values) pairs keys with values by position: missing
	// values are NULL, extra values are dropped, a later key wins. NULL
	// keys are skipped (a MAP cannot hold them).
	register(&scalar{name: "AS_MAP", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("AS_MAP", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		for _, t := range args {
			if err := collArrayArg("AS_MAP", t); err != nil {
				return types.Type{}, nil, err
			}
		}
		if k := collElem(args[0]); k.Kind != types.String && k.Kind != types.Unknown {
			return types.Type{}, nil, fmt.Errorf("%w: AS_MAP keys must be an ARRAY<STRING>, not %s", ErrType, args[0])
		}
		return types.MapOf(types.StringType, collElem(args[1])), func(a []any) any {
			keys, ok := a[0].([]any)
			vals, ok2 := a[1].([]any)
			if !ok || !ok2 {
				return nil
			}
			out := make(map[string]any, len(keys))
			for i, k := range keys {
				ks, ok := k.(string)
				if !ok {
					continue
				}
				var v any
				if i < len(vals) {
					v = vals[i]
				}
				out[ks] = v
			}
			return out
		}, nil
	}})
}

// emptyCtorIssue is the ksqlDB issue its constructor errors point to:
// an empty or all-NULL ARRAY[…] or MAP(…) has no element type to infer.
const emptyCtorIssue = "https://github.com/confluentinc/ksql/issues/4239"

// compileArrayCtor compiles ARRAY[e, …]: the elements share a type
// (numbers widen); a NULL element is NULL.
func compileArrayCtor(x *parser.ArrayCtor, scope Scope) (Compiled, error) {
	cs := make([]Compiled, len(x.Elems))
	for i, e := range x.Elems {
		c, err := Compile(e, scope)
		if err != nil {
			return Compiled{}, err
		}
		cs[i] = c
	}
	elem, err := unifyLiterals(x.Elems, cs, func(i int, a, b types.Type) error {
		return errAt(x.Elems[i], fmt.Errorf("%w: invalid array constructor: elements of types %s and %s", ErrType, a, b))
	})
	if err != nil {
		return Compiled{}, err
	}
	evals := make([]Eval, len(cs))
	allConst := true
	for i, c := range cs {
		evals[i], allConst = c.Eval, allConst && c.Const
	}
	if len(x.Elems) == 0 {
		return Compiled{}, errAt(x, fmt.Errorf("%w: Array constructor cannot be empty. Please supply at least one element (see %s).", ErrType, emptyCtorIssue))
	}
	if elem.Kind == types.Unknown {
		return Compiled{}, errAt(x, fmt.Errorf("%w: Cannot construct an array with all NULL elements (see %s). As a workaround, you may cast a NULL value to the desired type.", ErrType, emptyCtorIssue))
	}
	convs := make([]func(any) any, len(cs))
	for i, c := range cs {
		convs[i] = collConvertFrom(c.Type, elem)
	}
	return fold(Compiled{Type: types.ArrayOf(elem), Const: allConst, Eval: func(row []any) any {
		out := make([]any, len(evals))
		for i, e := range evals {
			out[i] = convs[i](e(row))
		}
		return out
	}}), nil
}

// compileMapCtor compiles MAP(k := v, …). Keys are stored as text (the
// Go value of every MAP); a NULL key drops its entry; a later equal key
// wins.
// nullMapKey is the key a map's NULL key is kept under.
const nullMapKey = "null"

func compileMapCtor(x *parser.MapCtor, scope Scope) (Compiled, error) {
	kcs := make([]Compiled, len(x.Keys))
	vcs := make([]Compiled, len(x.Values))
	for i := range x.Keys {
		k, err := Compile(x.Keys[i], scope)
		if err != nil {
			return Compiled{}, err
		}
		v, err := Compile(x.Values[i], scope)
		if err != nil {
			return Compiled{}, err
		}
		kcs[i], vcs[i] = k, v
	}
	kt, err := unifyLiterals(x.Keys, kcs, func(i int, a, b types.Type) error {
		return errAt(x.Keys[i], fmt.Errorf("%w: invalid map constructor: keys of types %s and %s", ErrType, a, b))
	})
	if err != nil {
		return Compiled{}, err
	}
	vt, err := unifyLiterals(x.Values, vcs, func(i int, a, b types.Type) error {
		return errAt(x.Values[i], fmt.Errorf("%w: invalid map constructor: values of types %s and %s", ErrType, a, b))
	})
	if err != nil {
		return Compiled{}, err
	}
	keys := make([]Eval, len(kcs))
	vals := make([]Eval, len(vcs))
	allConst := true
	for i := range kcs {
		keys[i], vals[i] = kcs[i].Eval, vcs[i].Eval
		allConst = allConst && kcs[i].Const && vcs[i].Const
	}
	switch {
	case len(x.Keys) == 0:
		return Compiled{}, errAt(x, fmt.Errorf("%w: Map constructor cannot be empty. Please supply at least one key value pair (see %s).", ErrType, emptyCtorIssue))
	case kt.Kind == types.Unknown:
		return Compiled{}, errAt(x, fmt.Errorf("%w: Cannot construct a map with all NULL keys (see %s). As a workaround, you may cast a NULL key to the desired type.", ErrType, emptyCtorIssue))
	case vt.Kind == types.Unknown:
		return Compiled{}, errAt(x, fmt.Errorf("%w: Cannot construct a map with all NULL values (see %s). As a workaround, you may cast a NULL value to the desired type.", ErrType, emptyCtorIssue))
	}
	if !collOrderable(kt) {
		return Compiled{}, errAt(x, fmt.Errorf("%w: MAP keys must be a primitive type, not %s", ErrType, kt))
	}
	convs := make([]func(any) any, len(vcs))
	for i, c := range vcs {
		convs[i] = collConvertFrom(c.Type, vt)
	}
	return fold(Compiled{Type: types.MapOf(kt, vt), Const: allConst, Eval: func(row []any) any {
		out := make(map[string]any, len(keys))
		for i := range keys {
			// A NULL key is kept, as ksqlDB's maps keep it, under the
			// text its JSON serialiser writes for it: "null". Maps hold
			// their keys as text, so it then reads as the STRING 'null'.
			key := nullMapKey
			if k := keys[i](row); k != nil {
				key = types.FormatValue(k)
			}
			out[key] = convs[i](vals[i](row))
		}
		return out
	}}), nil
}
