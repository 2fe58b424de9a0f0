package expr

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

// Aggregate is a bound aggregate function. Its accumulator is a plain
// value (see package types) so that state stores can encode it without
// knowing the function.
type Aggregate struct {
	Name       string
	ResultType types.Type
	// Init returns the empty accumulator.
	Init func() any
	// Add folds one row's argument values into the accumulator.
	Add func(acc any, args []any) any
	// Result turns the accumulator into the output value.
	Result func(acc any) any
	// Merge combines two accumulators, earlier (in event time) first, as
	// session windows need when a record bridges two sessions. Nil when
	// the function cannot merge: such functions are refused for SESSION
	// windows at plan time.
	Merge func(earlier, later any) any
	// Undo takes one row's argument values back out of the accumulator:
	// aggregating a TABLE subtracts a row's old values when it changes or
	// is deleted. Nil when the function cannot undo (MIN, MAX, …): such
	// functions are refused over tables, as in ksqlDB.
	Undo func(acc any, args []any) any
	// Member, when set, says the accumulator is a set whose result
	// depends on its size alone, so an operator may keep it as one state
	// entry per member beside a count instead of one value holding the
	// set (a fold then reads and writes one small entry, never the set):
	// Member appends to buf the encoding of the member a row's argument
	// values add, equal members encoding to equal bytes, and reports
	// false when the row adds none (NULL). Result must then take the
	// count, an int64, as the accumulator; Init and Add still keep the
	// set for operators that keep accumulators whole (session windows).
	Member func(buf []byte, args []any) ([]byte, bool)
	// Members lists, as Member encodes them, the members of a whole
	// accumulator (what Init and Add keep, an earlier version's stored
	// state included), so that a set kept whole can move to entries.
	Members func(acc any) [][]byte
	// StateType is the type ksqlDB declares for the accumulator when it
	// differs from ResultType (AVG keeps a STRUCT of sum and count). Sluice
	// encodes accumulators its own way, but the planner checks this type
	// against the value format, so that a query ksqlDB rejects is rejected
	// here too. The zero Type means ResultType.
	StateType types.Type
	// Fallible says Init, Add, Merge, Undo or Result may fail (a
	// user-defined aggregate's call panics with a *FunctionError): an
	// operator then keeps a group's accumulators as they were before a
	// row whose fold fails.
	Fallible bool
	// Sliceable says the function's accumulators may be kept per slice
	// of a group's rows and merged: Merge of the accumulators of two
	// disjoint parts gives exactly the accumulator of all their rows,
	// whatever order the rows came in, and changes neither argument
	// (integer COUNT and SUM, MIN and MAX of an exactly ordered type).
	// A hopping window's aggregation may then fold each row once, into
	// the slice of the advance holding it, instead of into every window
	// holding it (exec.AggregateNode.Sliced). Order-dependent functions
	// (LATEST_BY_OFFSET, COLLECT_LIST) and floating-point sums, whose
	// rounding depends on the order of the additions, are not.
	Sliceable bool
}

type aggBinder func(args []types.Type, star bool) (*Aggregate, error)

// FunctionConfig holds the properties that configure functions, by their
// full names: ksqlDB hands each function the properties named
// ksql.functions.<function>.* and ksql.functions._global_.*
// (FunctionPropertyPrefix), whatever the session, the server or a
// persistent query's command set.
type FunctionConfig map[string]string

// FunctionPropertyPrefix starts the name of every property FunctionConfig
// holds.
const FunctionPropertyPrefix = "ksql.functions."

// configuredAggBinder is an aggBinder that reads its function's
// properties (COLLECT_LIST's cap).
type configuredAggBinder func(args []types.Type, star bool, cfg FunctionConfig) (*Aggregate, error)

// configuredAggregates are the aggregates that read properties; each is
// also in aggregates, bound there with none set.
var configuredAggregates = map[string]configuredAggBinder{
	"COLLECT_LIST": bindCollect("COLLECT_LIST", false),
	"COLLECT_SET":  bindCollect("COLLECT_SET", true),
}

// unconfigured binds a configured aggregate with no property set.
func unconfigured(name string) aggBinder {
	return func(args []types.Type, star bool) (*Aggregate, error) {
		return configuredAggregates[name](args, star, nil)
	}
}

var aggregates = map[string]aggBinder{
	"COUNT":              bindCount,
	"SUM":                bindSum,
	"AVG":                bindAvg,
	"MIN":                bindMinMax("MIN", -1),
	"MAX":                bindMinMax("MAX", 1),
	"LATEST_BY_OFFSET":   bindByOffset("LATEST_BY_OFFSET", true),
	"EARLIEST_BY_OFFSET": bindByOffset("EARLIEST_BY_OFFSET", false),
	"TOPK":               bindTopK("TOPK", false),
	"COLLECT_LIST":       unconfigured("COLLECT_LIST"),
	"COLLECT_SET":        unconfigured("COLLECT_SET"),
	"ATTR":               bindAttr,
	"COUNT_DISTINCT":     bindCountDistinct,
	"SUM_LIST":           bindSumList,
	"TOPKDISTINCT":       bindTopK("TOPKDISTINCT", true),
}

// IsAggregate reports whether name (upper-case) is an aggregate function.
func IsAggregate(name string) bool {
	_, ok := aggregates[strings.ToUpper(name)]
	return ok
}

// AggregateColumnArgs is how many leading arguments of a call of
// aggregate name (upper-case) with nargs arguments are read from each
// row. ksqlDB requires the rest, which configure the aggregate once
// (TOPK's k, EARLIEST_BY_OFFSET's n and ignoreNulls), to be literal
// constants.
func AggregateColumnArgs(name string, nargs int) int {
	switch strings.ToUpper(name) {
	case "CORRELATION":
		return 2
	case "TOPK":
		// TOPK(col, other columns…, k): only k is fixed.
		return max(nargs-1, 1)
	}
	return 1
}

// BindAggregate resolves an aggregate for the given argument types.
// star is set for COUNT(*).
func BindAggregate(name string, args []types.Type, star bool) (*Aggregate, error) {
	b, ok := aggregates[strings.ToUpper(name)]
	if !ok {
		return nil, fmt.Errorf("%w: %s is not an aggregate function", ErrUnknownFunction, name)
	}
	return b(args, star)
}

// BindAggregateConfigured is BindAggregate for a query run with cfg: the
// aggregates that read properties see them.
func BindAggregateConfigured(name string, args []types.Type, star bool, cfg FunctionConfig) (*Aggregate, error) {
	if b, ok := configuredAggregates[strings.ToUpper(name)]; ok {
		return b(args, star, cfg)
	}
	return BindAggregate(name, args, star)
}

func identity(acc any) any { return acc }

func bindCount(args []types.Type, star bool) (*Aggregate, error) {
	if !star && len(args) > 1 {
		return nil, fmt.Errorf("%w: COUNT takes one argument", ErrType)
	}
	countAll := star || len(args) == 0
	return &Aggregate{
		Name:       "COUNT",
		ResultType: types.BigIntType,
		Init:       func() any { return int64(0) },
		Add: func(acc any, a []any) any {
			n := acc.(int64)
			if countAll || a[0] != nil {
				n++
			}
			return n
		},
		Result:    identity,
		Merge:     func(a, b any) any { return a.(int64) + b.(int64) },
		Sliceable: true,
		Undo: func(acc any, a []any) any {
			n := acc.(int64)
			if countAll || a[0] != nil {
				n--
			}
			return n
		},
	}, nil
}

func bindSum(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%w: SUM takes one argument", ErrType)
	}
	switch args[0].Kind {
	case types.Integer:
		return &Aggregate{Name: "SUM", ResultType: types.IntegerType, Init: func() any { return int32(0) }, Result: identity,
			Add: func(acc any, a []any) any {
				if v, ok := a[0].(int32); ok {
					return acc.(int32) + v
				}
				return acc
			},
			Merge:     func(a, b any) any { return a.(int32) + b.(int32) },
			Sliceable: true,
			Undo: func(acc any, a []any) any {
				if v, ok := a[0].(int32); ok {
					return acc.(int32) - v
				}
				return acc
			}}, nil
	case types.BigInt:
		return &Aggregate{Name: "SUM", ResultType: types.BigIntType, Init: func() any { return int64(0) }, Result: identity,
			Add: func(acc any, a []any) any {
				if v, ok := types.AsInt64(a[0]); ok {
					return acc.(int64) + v
				}
				return acc
			},
			Merge:     func(a, b any) any { return a.(int64) + b.(int64) },
			Sliceable: true,
			Undo: func(acc any, a []any) any {
				if v, ok := types.AsInt64(a[0]); ok {
					return acc.(int64) - v
				}
				return acc
			}}, nil
	case types.Decimal:
		return bindDecimalSum(args[0]), nil
	case types.Double:
		return &Aggregate{Name: "SUM", ResultType: types.DoubleType, Init: func() any { return float64(0) }, Result: identity,
			Add: func(acc any, a []any) any {
				if v, ok := types.AsFloat(a[0]); ok {
					return acc.(float64) + v
				}
				return acc
			},
			Merge: func(a, b any) any { return a.(float64) + b.(float64) },
			Undo: func(acc any, a []any) any {
				if v, ok := types.AsFloat(a[0]); ok {
					return acc.(float64) - v
				}
				return acc
			}}, nil
	}
	return nil, fmt.Errorf("%w: SUM does not accept %s", ErrType, args[0])
}

// bindDecimalSum is SUM over DECIMAL(p, s): exact, and of the same type
// as its argument, as ksqlDB's DecimalSumKudaf. A row that would take the
// sum past p digits fails: ksqlDB fails it with "Numeric field overflow";
// here it is a bad record (counted, logged, dead-lettered) and the sum
// stays as it was, which is why the aggregate is Fallible (its task folds
// a record in two passes, so that no group or window changes when a row
// fails).
func bindDecimalSum(t types.Type) *Aggregate {
	ctx := types.DecimalContext()
	step := func(acc any, v any, neg bool) any {
		x, ok := v.(*apd.Decimal)
		sum, _ := acc.(*apd.Decimal)
		if !ok || sum == nil {
			return acc
		}
		var d apd.Decimal
		var err error
		if neg {
			_, err = ctx.Sub(&d, sum, x)
		} else {
			_, err = ctx.Add(&d, sum, x)
		}
		if err == nil {
			var out *apd.Decimal
			if out, err = types.FitDecimal(&d, t.Precision, t.Scale); err == nil {
				return out
			}
		}
		panic(&FunctionError{Function: "SUM", Err: fmt.Errorf("Numeric field overflow: %s %s %s does not fit %s", sum, map[bool]string{false: "+", true: "-"}[neg], x, t)})
	}
	return &Aggregate{
		Name:       "SUM",
		ResultType: t,
		Init:       func() any { return apd.New(0, int32(-t.Scale)) },
		Result:     identity,
		Add:        func(acc any, a []any) any { return step(acc, a[0], false) },
		Merge:      func(a, b any) any { return step(a, b, false) },
		Undo:       func(acc any, a []any) any { return step(acc, a[0], true) },
		Fallible:   true,
	}
}

// bindSumList is ksqlDB's SUM_LIST: the sum of every element of an
// ARRAY column over a group's rows, NULL elements and NULL arrays left
// out, of the element type (INT, BIGINT or DOUBLE), with SUM's rules for
// each element.
func bindSumList(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 1 || args[0].Kind != types.Array || args[0].Elem == nil {
		return nil, fmt.Errorf("%w: SUM_LIST takes one ARRAY<INT>, ARRAY<BIGINT> or ARRAY<DOUBLE>", ErrType)
	}
	switch args[0].Elem.Kind {
	case types.Integer, types.BigInt, types.Double:
	default:
		return nil, fmt.Errorf("%w: SUM_LIST does not accept %s", ErrType, args[0])
	}
	elem, err := bindSum([]types.Type{*args[0].Elem}, false)
	if err != nil {
		return nil, err
	}
	fold := func(step func(any, []any) any) func(any, []any) any {
		return func(acc any, a []any) any {
			list, _ := a[0].([]any)
			for _, v := range list {
				acc = step(acc, []any{v})
			}
			return acc
		}
	}
	return &Aggregate{Name: "SUM_LIST", ResultType: elem.ResultType, Init: elem.Init, Result: identity,
		Add: fold(elem.Add), Merge: elem.Merge, Undo: fold(elem.Undo)}, nil
}

// AVG keeps [sum, count]; integers sum exactly as BIGINT.
func bindAvg(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 1 || !args[0].IsNumeric() {
		return nil, fmt.Errorf("%w: AVG takes one numeric argument", ErrType)
	}
	return &Aggregate{
		Name:       "AVG",
		ResultType: types.DoubleType,
		StateType: types.Type{Kind: types.Struct, Fields: []types.Field{
			{Name: "SUM", Type: args[0]}, {Name: "COUNT", Type: types.BigIntType}}},
		Init: func() any { return []any{float64(0), int64(0)} },
		Add: func(acc any, a []any) any {
			st := acc.([]any)
			v, ok := types.AsFloat(a[0])
			if !ok {
				return st
			}
			return []any{st[0].(float64) + v, st[1].(int64) + 1}
		},
		Result: func(acc any) any {
			st := acc.([]any)
			n := st[1].(int64)
			if n == 0 {
				return float64(0)
			}
			return st[0].(float64) / float64(n)
		},
		Merge: func(a, b any) any {
			x, y := a.([]any), b.([]any)
			return []any{x[0].(float64) + y[0].(float64), x[1].(int64) + y[1].(int64)}
		},
		Undo: func(acc any, a []any) any {
			st := acc.([]any)
			v, ok := types.AsFloat(a[0])
			if !ok {
				return st
			}
			return []any{st[0].(float64) - v, st[1].(int64) - 1}
		},
	}, nil
}

func bindMinMax(name string, sign int) aggBinder {
	return func(args []types.Type, _ bool) (*Aggregate, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%w: %s takes one argument", ErrType, name)
		}
		agg := &Aggregate{
			Name:       name,
			ResultType: args[0],
			Init:       func() any { return nil },
			Add: func(acc any, a []any) any {
				v := a[0]
				if v == nil {
					return acc
				}
				if acc == nil {
					return v
				}
				if c, ok := types.Compare(v, acc); ok && c*sign > 0 {
					return v
				}
				return acc
			},
			Result: identity,
		}
		agg.Merge = func(a, b any) any { return agg.Add(a, []any{b}) }
		// A tie keeps the value seen first, and -0.0 and 0.0 tie: only
		// a floating-point extreme can depend on the rows' order.
		agg.Sliceable = args[0].Kind != types.Double
		return agg, nil
	}
}

// bindByOffsetN is LATEST_BY_OFFSET(col, n [, ignoreNulls]) and its
// EARLIEST twin: the last (first) n values in arrival order, as an ARRAY.
// n is read from each row, like TOPK's k.
func bindByOffsetN(name string, latest bool, args []types.Type) (*Aggregate, error) {
	if !args[1].IsNumeric() || (len(args) == 3 && args[2].Kind != types.Boolean) {
		return nil, fmt.Errorf("%w: %s(col, n [, ignoreNulls]) takes an integer n and a BOOLEAN ignoreNulls", ErrType, name)
	}
	keep := func(list []any, n int) []any {
		if len(list) <= n {
			return list
		}
		if latest {
			return list[len(list)-n:]
		}
		return list[:n]
	}
	// The accumulator is [n, values]: merging two sessions' lists needs
	// the n they were kept for.
	return &Aggregate{
		Name:       name,
		ResultType: types.ArrayOf(args[0]),
		Init:       func() any { return []any{int64(0), []any{}} },
		Add: func(acc any, a []any) any {
			n, ok := types.AsInt64(a[1])
			if !ok || n <= 0 {
				return acc
			}
			ignoreNulls := true
			if len(a) == 3 {
				if b, ok := a[2].(bool); ok {
					ignoreNulls = b
				}
			}
			list, _ := acc.([]any)[1].([]any)
			if (a[0] == nil && ignoreNulls) || (!latest && int64(len(list)) >= n) {
				return []any{n, list}
			}
			return []any{n, keep(append(append(make([]any, 0, len(list)+1), list...), a[0]), int(n))}
		},
		Result: func(acc any) any { return acc.([]any)[1] },
		// Offsets are not kept: merged sessions order by event time.
		Merge: func(earlier, later any) any {
			x, y := earlier.([]any), later.([]any)
			n := max(x[0].(int64), y[0].(int64))
			xs, ys := x[1].([]any), y[1].([]any)
			return []any{n, keep(append(append(make([]any, 0, len(xs)+len(ys)), xs...), ys...), int(n))}
		},
	}, nil
}

func bindByOffset(name string, latest bool) aggBinder {
	return func(args []types.Type, _ bool) (*Aggregate, error) {
		if len(args) < 1 || len(args) > 3 {
			return nil, fmt.Errorf("%w: %s takes one to three arguments", ErrType, name)
		}
		if len(args) == 3 || (len(args) == 2 && args[1].Kind != types.Boolean) {
			return bindByOffsetN(name, latest, args)
		}
		// The optional second argument (ignoreNulls) defaults to true. The
		// accumulator is [seen, value], so that a NULL kept on purpose is
		// not mistaken for "nothing seen yet".
		return &Aggregate{
			Name:       name,
			ResultType: args[0],
			Init:       func() any { return []any{false, nil} },
			Add: func(acc any, a []any) any {
				ignoreNulls := true
				if len(a) == 2 {
					if b, ok := a[1].(bool); ok {
						ignoreNulls = b
					}
				}
				if a[0] == nil && ignoreNulls {
					return acc
				}
				if seen, _ := acc.([]any)[0].(bool); seen && !latest {
					return acc
				}
				return []any{true, a[0]}
			},
			Result: func(acc any) any { return acc.([]any)[1] },
			// Offsets are not kept, so merged sessions order by event
			// time: the later session's value is the latest.
			Merge: func(earlier, later any) any {
				first, last := earlier, later
				if !latest {
					first, last = later, earlier
				}
				if seen, _ := last.([]any)[0].(bool); seen {
					return last
				}
				return first
			},
		}, nil
	}
}
