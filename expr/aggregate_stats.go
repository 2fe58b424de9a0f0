package expr

import (
	"fmt"
	"math"

	"github.com/sluice-sql/sluice/types"
)

// Statistical and counting aggregates: HISTOGRAM, STDDEV_SAMP and
// CORRELATION. Their accumulators are plain values (see Aggregate), and
// each can take a row back out (Undo), so they aggregate tables too.

func init() {
	aggregates["HISTOGRAM"] = bindHistogram
	aggregates["STDDEV_SAMP"] = bindStddevSamp
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

// STDDEV_SAMP(col) is the sample standard deviation of a numeric column.
// It keeps [count, sum, sum of squares]; with fewer than two values it is
// 0, as in ksqlDB.
func bindStddevSamp(args []types.Type, _ bool) (*Aggregate, error) {
	if len(args) != 1 || !args[0].IsNumeric() {
		return nil, fmt.Errorf("%w: STDDEV_SAMP takes one numeric argument", ErrType)
	}
	fold := func(acc any, v any, sign float64) any {
		st := acc.([]any)
		x, ok := types.AsFloat(v)
		if !ok {
			return st
		}
		return []any{st[0].(int64) + int64(sign), st[1].(float64) + sign*x, st[2].(float64) + sign*x*x}
	}
	return &Aggregate{
		Name:       "STDDEV_SAMP",
		ResultType: types.DoubleType,
		Init:       func() any { return []any{int64(0), float64(0), float64(0)} },
		Add:        func(acc any, a []any) any { return fold(acc, a[0], 1) },
		Undo:       func(acc any, a []any) any { return fold(acc, a[0], -1) },
		Result: func(acc any) any {
			st := acc.([]any)
			n := float64(st[0].(int64))
			if n < 2 {
				return float64(0)
			}
			sum, sq := st[1].(float64), st[2].(float64)
			return math.Sqrt(math.Max((sq-sum*sum/n)/(n-1), 0))
		},
		Merge: func(a, b any) any {
			x, y := a.([]any), b.([]any)
			return []any{x[0].(int64) + y[0].(int64), x[1].(float64) + y[1].(float64), x[2].(float64) + y[2].(float64)}
		},
	}, nil
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
		Init:       func() any { return []any{int64(0), float64(0), float64(0), float64(0), float64(0), float64(0)} },
		Add:        func(acc any, a []any) any { return fold(acc, a, 1) },
		Undo:       func(acc any, a []any) any { return fold(acc, a, -1) },
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
