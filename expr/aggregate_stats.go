package expr

import (
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/types"
)

// Statistical and counting aggregates: HISTOGRAM, STDDEV_SAMP,
// STDDEV_SAMPLE and CORRELATION. Their accumulators are plain values (see
// Aggregate), and each can take a row back out (Undo), so they aggregate
// tables too.

func init() {
	aggregates["HISTOGRAM"] = bindHistogram
	aggregates["STDDEV_SAMP"] = bindStddev("STDDEV_SAMP", true)
	aggregates["STDDEV_SAMPLE"] = bindStddev("STDDEV_SAMPLE", false)
	aggregates["CORRELATION"] = bindCorrelation
}

// histogramLimit bounds the distinct values HISTOGRAM counts, as ksqlDB
// does: values past it are not counted.
const histogramLimit = 1000

// HISTOGRAM(col) counts each distinct value of a STRING column: a MAP
// from value to count. NULLs are not counted.
func bindHistogram(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 1 || (args[0].Kind != types.String && args[0].Kind != types.Unknown) {
		return nil, fmt.Errorf("%w: HISTOGRAM takes one STRING argument", ErrType)
	}
	count := func(acc any, v any, delta int64) any {
		m, _ := acc.(map[string]any)
		s, ok := v.(string)
		if !ok {
			return m
		}
		n, seen := m[s].(int64)
		if !seen && (delta < 0 || len(m) >= histogramLimit) {
			return m
		}
		out := make(map[string]any, len(m)+1)
		for k, c := range m {
			out[k] = c
		}
		if n+delta <= 0 {
			delete(out, s)
		} else {
			out[s] = n + delta
		}
		return out
	}
	return &Aggregate{
		Name:       "HISTOGRAM",
		ResultType: types.Type{Kind: types.Map, Key: &types.StringType, Elem: &types.BigIntType},
		Init:       func() any { return map[string]any{} },
		Add:        func(acc any, a []any) any { return count(acc, a[0], 1) },
		Undo:       func(acc any, a []any) any { return count(acc, a[0], -1) },
		Result:     identity,
		Merge: func(earlier, later any) any {
			acc := earlier
			for k, c := range later.(map[string]any) {
				for i := int64(0); i < c.(int64); i++ {
					acc = count(acc, k, 1)
				}
			}
			return acc
		},
	}, nil
}

// STDDEV_SAMPLE(col) is the sample standard deviation of an INT, BIGINT
// or DOUBLE column; STDDEV_SAMP(col) is what ksqlDB's function of that
// name computes, which ksqlDB keeps for compatibility: the sample
// variance, with no square root taken. With fewer than two values both
// are 0.
//
// Both fold values as ksqlDB's Youngs-Cramer accumulator does, in the
// column's own arithmetic, so the doubles they give are ksqlDB's to the
// last bit: the running sum is kept as an INT, BIGINT or DOUBLE (an INT
// sum wraps as Java's does), and each value's deviation n·x − Σ is
// computed in integers for integer columns. STDDEV_SAMP also counts in
// 32 bits and, merging, takes integer means (its bugs, kept as ksqlDB
// keeps them). The accumulator is [count int64, sum, M2 float64].
func bindStddev(name string, legacy bool) aggBinder {
	return func(args []types.Type, _ bool) (*Aggregate, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%w: %s takes one argument", ErrType, name)
		}
		k := args[0].Kind
		if k != types.Integer && k != types.BigInt && k != types.Double {
			return nil, fmt.Errorf("%w: %s does not accept %s; it takes INT, BIGINT or DOUBLE", ErrType, name, args[0])
		}
		yc := youngsCramer{kind: k, legacy: legacy}
		countType := types.BigIntType
		if legacy {
			countType = types.IntegerType
		}
		return &Aggregate{
			Name:       name,
			ResultType: types.DoubleType,
			StateType: types.Type{Kind: types.Struct, Fields: []types.Field{
				{Name: "SUM", Type: args[0]}, {Name: "COUNT", Type: countType}, {Name: "M2", Type: types.DoubleType}}},
			Init:   func() any { return []any{int64(0), yc.zero(), float64(0)} },
			Add:    func(acc any, a []any) any { return yc.add(acc.([]any), a[0]) },
			Undo:   func(acc any, a []any) any { return yc.undo(acc.([]any), a[0]) },
			Merge:  func(a, b any) any { return yc.merge(a.([]any), b.([]any)) },
			Result: func(acc any) any { return yc.result(acc.([]any)) },
		}, nil
	}
}

// youngsCramer is the running [count, sum, M2] of STDDEV_SAMP and
// STDDEV_SAMPLE, in the arithmetic of the column's kind.
type youngsCramer struct {
	kind   types.Kind
	legacy bool // STDDEV_SAMP: 32-bit counts, integer means when merging
}

func (y youngsCramer) zero() any {
	switch y.kind {
	case types.Integer:
		return int32(0)
	case types.BigInt:
		return int64(0)
	}
	return float64(0)
}

// count narrows a count to 32 bits where ksqlDB keeps it in an int.
func (y youngsCramer) count(n int64) int64 {
	if y.legacy {
		return int64(int32(n))
	}
	return n
}

// sum adds (sign 1) or removes (sign -1) x from the running sum.
func (y youngsCramer) sum(sum, x any, sign int) any {
	switch y.kind {
	case types.Integer:
		return sum.(int32) + int32(sign)*x.(int32)
	case types.BigInt:
		return sum.(int64) + int64(sign)*x.(int64)
	}
	return sum.(float64) + float64(sign)*x.(float64)
}

// delta is x·(n+1) − (Σ+x) for an accumulator of n values summing to Σ.
func (y youngsCramer) delta(n int64, sum, x any) float64 {
	switch y.kind {
	case types.Integer:
		s := sum.(int32) + x.(int32) // an int in Java: it wraps
		if y.legacy {
			return float64(x.(int32)*int32(n+1) - s)
		}
		return float64(int64(x.(int32))*(n+1) - int64(s))
	case types.BigInt:
		return float64(x.(int64)*(n+1) - (sum.(int64) + x.(int64)))
	}
	return x.(float64)*float64(n+1) - (sum.(float64) + x.(float64))
}

// pairs is n·(n−1) in the counting arithmetic.
func (y youngsCramer) pairs(n int64) float64 { return float64(y.count(n * (n - 1))) }

// value reads a column value in the accumulator's kind; ok is false for
// NULL.
func (y youngsCramer) value(v any) (any, bool) {
	switch y.kind {
	case types.Integer:
		x, ok := v.(int32)
		return x, ok
	case types.BigInt:
		x, ok := v.(int64)
		return x, ok
	}
	x, ok := v.(float64)
	return x, ok
}

func (y youngsCramer) add(st []any, v any) any {
	x, ok := y.value(v)
	if !ok {
		return st
	}
	n := st[0].(int64)
	m2 := 0.0
	if n > 0 {
		d := y.delta(n, st[1], x)
		m2 = d * d / y.pairs(y.count(n+1))
	}
	return []any{y.count(n + 1), y.sum(st[1], x, 1), m2 + st[2].(float64)}
}

func (y youngsCramer) undo(st []any, v any) any {
	x, ok := y.value(v)
	if !ok {
		return st
	}
	n := st[0].(int64)
	m2 := 0.0
	if n > 1 {
		d := y.delta(n, st[1], x)
		m2 = d * d / y.pairs(n)
	}
	return []any{y.count(n - 1), y.sum(st[1], x, -1), st[2].(float64) - m2}
}

// mean is Σ/n: in integers for STDDEV_SAMP over an integer column.
func (y youngsCramer) mean(st []any) float64 {
	n := st[0].(int64)
	switch s := st[1].(type) {
	case int32:
		if y.legacy {
			return float64(s / int32(n))
		}
		return float64(s) / float64(n)
	case int64:
		if y.legacy {
			return float64(s / n)
		}
		return float64(s) / float64(n)
	}
	return st[1].(float64) / float64(n)
}

func (y youngsCramer) merge(a, b []any) any {
	na, nb := a[0].(int64), b[0].(int64)
	n := y.count(na + nb)
	m2 := a[2].(float64) + b[2].(float64)
	if na != 0 && nb != 0 {
		inner := y.mean(a) - y.mean(b)
		m2 += float64(y.count(na*nb)) * inner * inner / float64(n)
	}
	var sum any
	switch y.kind {
	case types.Integer:
		sum = a[1].(int32) + b[1].(int32)
	case types.BigInt:
		sum = a[1].(int64) + b[1].(int64)
	default:
		sum = a[1].(float64) + b[1].(float64)
	}
	return []any{n, sum, m2}
}

func (y youngsCramer) result(st []any) any {
	n := st[0].(int64)
	if n < 2 {
		return float64(0)
	}
	v := st[2].(float64) / float64(n-1)
	if y.legacy {
		return v
	}
	return math.Sqrt(v)
}

// CORRELATION(x, y) is Pearson's correlation coefficient of two numeric
// columns over the rows where both are set. It keeps [count, Σx, Σy, Σxy,
// Σx², Σy²]; with fewer than two pairs, or no variance, it is NaN.
func bindCorrelation(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 2 || !args[0].IsNumeric() || !args[1].IsNumeric() {
		return nil, fmt.Errorf("%w: CORRELATION takes two numeric arguments", ErrType)
	}
	fold := func(acc any, a []any, sign float64) any {
		st := acc.([]any)
		x, okx := types.AsFloat(a[0])
		y, oky := types.AsFloat(a[1])
		if !okx || !oky {
			return st
		}
		return []any{st[0].(int64) + int64(sign), st[1].(float64) + sign*x, st[2].(float64) + sign*y,
			st[3].(float64) + sign*x*y, st[4].(float64) + sign*x*x, st[5].(float64) + sign*y*y}
	}
	return &Aggregate{
		Name:       "CORRELATION",
		ResultType: types.DoubleType,
		// ksqlDB keeps its running sums in a STRUCT, so a value format
		// without structs (DELIMITED) cannot hold CORRELATION's state.
		StateType: types.Type{Kind: types.Struct, Fields: []types.Field{
			{Name: "COUNT", Type: types.BigIntType}, {Name: "X_SUM", Type: types.DoubleType}, {Name: "Y_SUM", Type: types.DoubleType},
			{Name: "XY_SUM", Type: types.DoubleType}, {Name: "XX_SUM", Type: types.DoubleType}, {Name: "YY_SUM", Type: types.DoubleType}}},
		Init: func() any { return []any{int64(0), float64(0), float64(0), float64(0), float64(0), float64(0)} },
		Add:  func(acc any, a []any) any { return fold(acc, a, 1) },
		Undo: func(acc any, a []any) any { return fold(acc, a, -1) },
		Result: func(acc any) any {
			st := acc.([]any)
			n := float64(st[0].(int64))
			sx, sy, sxy, sxx, syy := st[1].(float64), st[2].(float64), st[3].(float64), st[4].(float64), st[5].(float64)
			if n < 2 {
				return math.NaN()
			}
			cov := sxy - sx*sy/n
			vx, vy := sxx-sx*sx/n, syy-sy*sy/n
			if vx <= 0 || vy <= 0 {
				return math.NaN()
			}
			return cov / math.Sqrt(vx*vy)
		},
		Merge: func(a, b any) any {
			x, y := a.([]any), b.([]any)
			out := []any{x[0].(int64) + y[0].(int64)}
			for i := 1; i < 6; i++ {
				out = append(out, x[i].(float64)+y[i].(float64))
			}
			return out
		},
	}, nil
}
