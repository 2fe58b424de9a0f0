package expr

import (
	"fmt"

	"github.com/sluice-sql/sluice/types"
)

// ATTR(col) is the one value a group holds, or NULL when it holds more
// than one (or none): it says "every row of this group should agree on
// col". Its state counts each distinct value, NULL being one value too,
// as a list of [value, count] pairs (ksqlDB's ARRAY<STRUCT<VALUE, COUNT>>:
// a group that agrees holds one pair, so a scan of the list is cheap).
// Undo lowers a value's count, never below zero, so a table's row that
// changes its value leaves the group agreeing again.
func bindAttr(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%w: ATTR takes one argument", ErrType)
	}
	return &Aggregate{
		Name:       "ATTR",
		ResultType: args[0],
		StateType: types.ArrayOf(types.Type{Kind: types.Struct, Fields: []types.Field{
			{Name: "VALUE", Type: args[0]}, {Name: "COUNT", Type: types.IntegerType}}}),
		Init: func() any { return []any{} },
		Add:  func(acc any, a []any) any { return attrCount(acc, a[0], 1) },
		Undo: func(acc any, a []any) any { return attrCount(acc, a[0], -1) },
		Merge: func(earlier, later any) any {
			acc := earlier
			for _, e := range attrEntries(later) {
				acc = attrCount(acc, e[0], e[1].(int64))
			}
			return acc
		},
		Result: func(acc any) any {
			var only []any
			for _, e := range attrEntries(acc) {
				if e[1].(int64) <= 0 {
					continue
				}
				if only != nil {
					return nil
				}
				only = e
			}
			if only == nil {
				return nil
			}
			return only[0]
		},
	}, nil
}

// attrEntries reads ATTR's state as its [value, count] pairs.
func attrEntries(acc any) [][]any {
	list, _ := acc.([]any)
	out := make([][]any, 0, len(list))
	for _, x := range list {
		if e, ok := x.([]any); ok && len(e) == 2 {
			if _, ok := e[1].(int64); ok {
				out = append(out, e)
			}
		}
	}
	return out
}

// attrCount returns ATTR's state with v's count moved by n (at least
// zero); a value not yet counted is added only by a positive n.
func attrCount(acc any, v any, n int64) any {
	entries := attrEntries(acc)
	out := make([]any, 0, len(entries)+1)
	found := false
	for _, e := range entries {
		if !found && containsValue([]any{e[0]}, v) {
			found = true
			out = append(out, []any{e[0], max(0, e[1].(int64)+n)})
			continue
		}
		out = append(out, e)
	}
	if !found && n > 0 {
		out = append(out, []any{v, n})
	}
	return out
}
