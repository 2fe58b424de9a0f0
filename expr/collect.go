package expr

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/sluice-sql/sluice/types"
)

// collectLimit caps the values COLLECT_LIST and COLLECT_SET keep when
// no ksql.functions.collect_list.limit / collect_set.limit says otherwise:
// an aggregate's state is one stored value, and an unbounded list would
// grow it without end (ksqlDB's own default is no cap).
const collectLimit = 1000

// CollectListLimitProperty and CollectSetLimitProperty name ksqlDB's
// properties capping COLLECT_LIST's and COLLECT_SET's arrays: values past
// the cap are silently left out; a negative cap means none.
const (
	CollectListLimitProperty = "ksql.functions.collect_list.limit"
	CollectSetLimitProperty  = "ksql.functions.collect_set.limit"
)

// collectLimitOf reads a COLLECT_* cap from cfg as ksqlDB's functions
// configure themselves: a whole number, negative for no cap; anything else
// (or nothing) leaves the default.
func collectLimitOf(cfg FunctionConfig, property string) int {
	v, ok := cfg[property]
	if !ok {
		return collectLimit
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	switch {
	case err != nil:
		return collectLimit
	case n < 0:
		return math.MaxInt32
	}
	return int(n)
}

// COLLECT_LIST(col) keeps every value in arrival order, NULLs included;
// COLLECT_SET(col) keeps each distinct value once, in order of first
// arrival, NULL being one value too, as in ksqlDB. Both return
// ARRAY<type of col>, at most the configured cap long.
func bindCollect(name string, distinct bool) configuredAggBinder {
	property := CollectListLimitProperty
	if distinct {
		property = CollectSetLimitProperty
	}
	return func(args []types.Type, _ bool, cfg FunctionConfig) (*Aggregate, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%w: %s takes one argument", ErrType, name)
		}
		limit := collectLimitOf(cfg, property)
		add := func(acc any, v any) any {
			list, _ := acc.([]any)
			if len(list) >= limit || (distinct && containsValue(list, v)) {
				return list
			}
			return append(append(make([]any, 0, len(list)+1), list...), v)
		}
		agg := &Aggregate{
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
		}
		if distinct {
			// ksqlDB's COLLECT_SET cannot take a value back (its
			// aggregate is a stream-only one), so it is refused over a
			// table as ksqlDB refuses it.
			return agg, nil
		}
		// Undo removes the last equal element (a table row's old value),
		// as ksqlDB does; a value the cap kept out is not there to remove.
		agg.Undo = func(acc any, a []any) any {
			list, _ := acc.([]any)
			for i := len(list) - 1; i >= 0; i-- {
				if sameElement(list[i], a[0]) {
					return append(append(make([]any, 0, len(list)-1), list[:i]...), list[i+1:]...)
				}
			}
			return list
		}
		return agg, nil
	}
}

// COUNT_DISTINCT(col) counts the distinct non-NULL values, exactly (ksqlDB
// estimates them with a HyperLogLog; the two agree on small sets, and the
// Nexmark queries' count(distinct …) is exact). Its state is the set of
// values seen, a MAP from each value's encoding to NULL: a lookup per row
// rather than a scan, and no cap (COLLECT_SET's thousand values would cap
// the count). A set written by an earlier version, a list of the values,
// becomes a MAP when next added to. It declares Member, so the time-window
// and unwindowed aggregations keep each value as a state entry of its own
// and the count as the accumulator, which Result takes too.
func bindCountDistinct(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%w: COUNT_DISTINCT takes one argument", ErrType)
	}
	return &Aggregate{
		Name:       "COUNT_DISTINCT",
		ResultType: types.BigIntType,
		Init:       func() any { return map[string]any{} },
		Add: func(acc any, a []any) any {
			set := distinctSet(acc)
			if a[0] != nil {
				set[distinctKey(a[0])] = nil
			}
			return set
		},
		Result: func(acc any) any {
			if n, ok := acc.(int64); ok {
				return n // the count beside per-value entries (Member)
			}
			return int64(len(distinctSet(acc)))
		},
		Member: func(buf []byte, a []any) ([]byte, bool) {
			if a[0] == nil {
				return buf, false
			}
			return appendDistinct(buf, a[0]), true
		},
		Members: func(acc any) [][]byte {
			set := distinctSet(acc)
			out := make([][]byte, 0, len(set))
			for _, k := range slices.Sorted(maps.Keys(set)) {
				out = append(out, []byte(k))
			}
			return out
		},
		Merge: func(earlier, later any) any {
			set := distinctSet(earlier)
			for k := range distinctSet(later) {
				set[k] = nil
			}
			return set
		},
		// No Undo: another row may still hold the value.
	}, nil
}

// distinctSet is COUNT_DISTINCT's accumulator as a set, the list of
// values an earlier version kept converted.
func distinctSet(acc any) map[string]any {
	switch acc := acc.(type) {
	case map[string]any:
		return acc
	case []any:
		set := make(map[string]any, len(acc))
		for _, v := range acc {
			if v != nil {
				set[distinctKey(v)] = nil
			}
		}
		return set
	}
	return map[string]any{}
}

// distinctKey is the set's key for a value: its encoding, a DECIMAL's
// without trailing zeros (1.0 and 1.00 are one value) and a DOUBLE's
// zero without its sign, as comparison has them equal.
func distinctKey(v any) string {
	return string(appendDistinct(nil, v))
}

// appendDistinct appends distinctKey's bytes for v to buf.
func appendDistinct(buf []byte, v any) []byte {
	switch x := v.(type) {
	case *apd.Decimal:
		var r apd.Decimal
		r.Reduce(x)
		v = &r
	case float64:
		if x == 0 {
			v = float64(0)
		}
	}
	return types.AppendValue(buf, v)
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
