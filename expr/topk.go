package expr

import (
	"fmt"

	"github.com/sluice-sql/sluice/types"
)

// TOPK(col, k) keeps the k greatest values of col, greatest first.
// TOPK(col, other…, k) keeps whole entries ordered by col and returns them
// as STRUCTs {sort_col, col0, col1, …}, the field names ksqlDB gives them.
// TOPKDISTINCT(col, k) keeps the k greatest distinct values.
//
// The accumulator is the result list itself (ARRAY values, or STRUCT
// values as []any), so state stores encode it like any other value and
// Result is the identity. k is the last argument and is read from each row:
// it is a literal in every valid query, so it never changes between rows.
func bindTopK(name string, distinct bool) aggBinder {
	return func(args []types.Type, _ bool) (*Aggregate, error) {
		if len(args) < 2 || (distinct && len(args) != 2) {
			if distinct {
				return nil, fmt.Errorf("%w: %s takes a column and k", ErrType, name)
			}
			return nil, fmt.Errorf("%w: %s takes a column, optional further columns, and k", ErrType, name)
		}
		if k := args[len(args)-1]; k.Kind != types.Integer && k.Kind != types.BigInt {
			return nil, fmt.Errorf("%w: %s needs an integer k as its last argument, got %s", ErrType, name, k)
		}
		if !topKSortable(args[0]) {
			return nil, fmt.Errorf("%w: %s does not accept %s", ErrType, name, args[0])
		}
		cols := args[:len(args)-1]
		elem := args[0]
		if len(cols) > 1 {
			elem = types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "sort_col", Type: args[0]}}}
			for i, t := range cols[1:] {
				elem.Fields = append(elem.Fields, types.Field{Name: fmt.Sprintf("col%d", i), Type: t})
			}
		}
		return &Aggregate{
			Name:       name,
			ResultType: types.ArrayOf(elem),
			Init:       func() any { return []any{} },
			Add: func(acc any, a []any) any {
				k, ok := types.AsInt64(a[len(a)-1])
				if !ok || k <= 0 || a[0] == nil {
					return acc // ksqlDB skips NULL sort values
				}
				var entry any = a[0]
				if len(cols) > 1 {
					entry = append([]any(nil), a[:len(cols)]...)
				}
				list, _ := acc.([]any)
				return topKInsert(list, entry, len(cols) > 1, distinct, int(min(k, int64(len(list)+1))))
			},
			Result: identity,
		}, nil
	}
}

// topKSortable reports whether TOPK can order values of t.
func topKSortable(t types.Type) bool {
	switch t.Kind {
	case types.Integer, types.BigInt, types.Double, types.Decimal, types.String, types.Bytes,
		types.Timestamp, types.Date, types.Time:
		return true
	}
	return false
}

// topKInsert returns a new list holding list's entries and entry, greatest
// first, cut to n. An entry goes after those equal to it, so among ties
// the earlier arrival ranks higher, as in ksqlDB. The input list is not
// modified: the caller may still hold it as the previous accumulator.
func topKInsert(list []any, entry any, isStruct, distinct bool, n int) []any {
	sortKey := func(e any) any {
		if isStruct {
			return e.([]any)[0]
		}
		return e
	}
	v := sortKey(entry)
	pos := len(list)
	for i, e := range list {
		c, _ := types.Compare(sortKey(e), v)
		if c == 0 && distinct {
			return list
		}
		if c < 0 {
			pos = i
			break
		}
	}
	if pos >= n {
		return list
	}
	out := make([]any, 0, n)
	out = append(out, list[:pos]...)
	out = append(out, entry)
	for _, e := range list[pos:] {
		if len(out) == n {
			break
		}
		out = append(out, e)
	}
	return out
}
