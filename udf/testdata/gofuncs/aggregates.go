package main

// Aggregate functions: each is <name>_init, _accumulate, _merge, _result
// (and _undo where it can), the state passed in and returned by every
// call (see package udf).

import (
	"strconv"

	"github.com/sluice-sql/sluice/internal/wasmguest"
)

// sumsq: the sum of squares of a BIGINT, with a BIGINT state. NULLs add
// nothing; 13 traps (a Go panic ends the instance), so that a test can
// see a failing accumulate leave the state as it was.

//go:wasmexport sumsq_init
func sumsqInit(nulls int64) int64 { return 0 }

//go:wasmexport sumsq_accumulate
func sumsqAccumulate(nulls int64, state, x int64) int64 {
	if wasmguest.IsNull(nulls, 1) {
		return state
	}
	if x == 13 {
		panic("unlucky")
	}
	return state + x*x
}

//go:wasmexport sumsq_undo
func sumsqUndo(nulls int64, state, x int64) int64 {
	if wasmguest.IsNull(nulls, 1) {
		return state
	}
	return state - x*x
}

//go:wasmexport sumsq_merge
func sumsqMerge(nulls int64, a, b int64) int64 { return a + b }

//go:wasmexport sumsq_result
func sumsqResult(nulls int64, state int64) int64 { return state }

// trail: the STRING arguments in the order they came, joined by ","; a
// merge joins the earlier and the later session's trails by "|", so a
// test sees where MERGE ran. NULLs appear as "~". No undo: a table
// aggregation is refused.

//go:wasmexport trail_init
func trailInit(nulls int64) int64 { return wasmguest.Return(nil) }

//go:wasmexport trail_accumulate
func trailAccumulate(nulls int64, sp, sn, xp, xn int32) int64 {
	out := append([]byte(nil), wasmguest.Bytes(sp, sn)...)
	if len(out) > 0 {
		out = append(out, ',')
	}
	if wasmguest.IsNull(nulls, 1) {
		out = append(out, '~')
	} else {
		out = append(out, wasmguest.Bytes(xp, xn)...)
	}
	return wasmguest.Return(out)
}

//go:wasmexport trail_merge
func trailMerge(nulls int64, ap, an, bp, bn int32) int64 {
	out := append(append(append([]byte(nil), wasmguest.Bytes(ap, an)...), '|'), wasmguest.Bytes(bp, bn)...)
	return wasmguest.Return(out)
}

//go:wasmexport trail_result
func trailResult(nulls int64, sp, sn int32) int64 { return wasmguest.Return(wasmguest.Bytes(sp, sn)) }

// mean: the mean of a BIGINT with the state STRUCT<SUM BIGINT, N BIGINT>,
// which travels as JSON ({"SUM":…,"N":…}); NULL when it has seen no
// value.

type meanState struct{ sum, n int64 }

func (s meanState) json() []byte {
	b := append([]byte(nil), `{"SUM":`...)
	b = strconv.AppendInt(b, s.sum, 10)
	b = append(b, `,"N":`...)
	b = strconv.AppendInt(b, s.n, 10)
	return append(b, '}')
}

// parseMean reads the two fields of the state's JSON, in any order.
func parseMean(b []byte) meanState {
	var s meanState
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(b) && b[j] != '"' {
			j++
		}
		key := string(b[i+1 : j])
		k := j + 2 // past `":`
		e := k
		for e < len(b) && (b[e] == '-' || (b[e] >= '0' && b[e] <= '9')) {
			e++
		}
		v, _ := strconv.ParseInt(string(b[k:e]), 10, 64)
		switch key {
		case "SUM":
			s.sum = v
		case "N":
			s.n = v
		}
		i = e
	}
	return s
}

//go:wasmexport mean_init
func meanInit(nulls int64) int64 { return wasmguest.Return(meanState{}.json()) }

//go:wasmexport mean_accumulate
func meanAccumulate(nulls int64, sp, sn int32, x int64) int64 {
	s := parseMean(wasmguest.Bytes(sp, sn))
	if !wasmguest.IsNull(nulls, 1) {
		s.sum, s.n = s.sum+x, s.n+1
	}
	return wasmguest.Return(s.json())
}

//go:wasmexport mean_undo
func meanUndo(nulls int64, sp, sn int32, x int64) int64 {
	s := parseMean(wasmguest.Bytes(sp, sn))
	if !wasmguest.IsNull(nulls, 1) {
		s.sum, s.n = s.sum-x, s.n-1
	}
	return wasmguest.Return(s.json())
}

//go:wasmexport mean_merge
func meanMerge(nulls int64, ap, an, bp, bn int32) int64 {
	a, b := parseMean(wasmguest.Bytes(ap, an)), parseMean(wasmguest.Bytes(bp, bn))
	return wasmguest.Return(meanState{a.sum + b.sum, a.n + b.n}.json())
}

//go:wasmexport mean_result
func meanResult(nulls int64, sp, sn int32) float64 {
	s := parseMean(wasmguest.Bytes(sp, sn))
	if s.n == 0 {
		wasmguest.Null()
		return 0
	}
	return float64(s.sum) / float64(s.n)
}

// bad_state_accumulate returns a state that is not the declared STRUCT's
// JSON: a bad return.

//go:wasmexport bad_state_accumulate
func badStateAccumulate(nulls int64, sp, sn int32, x int64) int64 {
	return wasmguest.Return([]byte("not json"))
}
