package expr

import (
	"fmt"
	"reflect"

	"github.com/sluice-sql/sluice/types"
)

// collectLimit caps the values COLLECT_LIST and COLLECT_SET keep, as
// ksqlDB's ksql.functions.collect_list.limit does by default: an
// aggregate's state is one stored value, and an unbounded list would
// grow it without end.
const collectLimit = 1000

// COLLECT_LIST(col) keeps every value in arrival order, NULLs included;
// COLLECT_SET(col) keeps each distinct value once, in order of first
// arrival, NULL being one value too, as in ksqlDB. Both return
// ARRAY<type of col>.
func bindCollect(name string, distinct bool) aggBinder {
	return collector(name, distinct, false)
}

// collector is COLLECT_LIST / COLLECT_SET; skipNull leaves NULLs out (the
// set COUNT_DISTINCT counts).
func collector(name string, distinct, skipNull bool) aggBinder {
	return func(args []types.Type, _ bool) (*Aggregate, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%w: %s takes one argument", ErrType, name)
		}
		add := func(acc any, v any) any {
			list, _ := acc.([]any)
			if len(list) >= collectLimit || (v == nil && skipNull) || (distinct && containsValue(list, v)) {
				return list
			}
			return append(append(make([]any, 0, len(list)+1), list...), v)
		}
		return &Aggregate{
			Name:       name,
			ResultType: types.ArrayOf(args[0]),
			Init:       func() any { return []any{} },
			Add:        func(acc any, a []any) any { return add(acc, a[0]) },
			Result:     identity,
			Merge: func(earlier, later any) any {
				acc := earlier
				for _, v := range later.([]any) {
					acc = add(acc, v)
				}
				return acc
			},
			// Undo removes the first equal element (a table row's old
			// value), as ksqlDB does.
			Undo: func(acc any, a []any) any {
				list, _ := acc.([]any)
				for i, x := range list {
					if sameElement(x, a[0]) {
						return append(append(make([]any, 0, len(list)-1), list[:i]...), list[i+1:]...)
					}
				}
				return list
			},
		}, nil
	}
}

// COUNT_DISTINCT(col) counts the distinct non-NULL values; its state is
// the set of values seen.
func bindCountDistinct(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%w: COUNT_DISTINCT takes one argument", ErrType)
	}
	set, err := collector("COUNT_DISTINCT", true, true)(args, false)
	if err != nil {
		return nil, err
	}
	set.ResultType = types.BigIntType
	set.Result = func(acc any) any { return int64(len(acc.([]any))) }
	set.Undo = nil // another row may still hold the value
	return set, nil
}

func containsValue(list []any, v any) bool {
	for _, x := range list {
		if x == nil || v == nil {
			if x == nil && v == nil {
				return true
			}
			continue
		}
		if c, ok := types.Compare(x, v); ok {
			if c == 0 {
				return true
			}
			continue
		}
		if reflect.DeepEqual(x, v) { // arrays, maps, structs
			return true
		}
	}
	return false
}

// sameElement reports whether two collected values are equal, NULLs
// included.
func sameElement(x, v any) bool {
	if x == nil || v == nil {
		return x == nil && v == nil
	}
	c, ok := types.Compare(x, v)
	return ok && c == 0
}
