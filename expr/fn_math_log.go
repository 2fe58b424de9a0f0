package expr

import "math"

// numLog is the natural logarithm rounded as ksqlDB's LN gets it from
// Java's Math.log (a nearly correctly rounded intrinsic on HotSpot). Go's
// math.Log can be an ulp away: ln 3 gives 1.0986122886681096 where ksqlDB
// gives 1.0986122886681098. The reduction is x = 2^k·m with m in
// [√2/2, √2), ln m = 2·atanh(s) with s = (m-1)/(m+1); s and its cube
// are carried in double-double so the sum is off by far less than an ulp.
func numLog(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 // ln 2 in 33 bits: k·ln2Hi is exact
		ln2Lo = 1.90821492927058770002e-10
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case x == 1:
		return 0
	}
	m, k := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m *= 2
		k--
	}
	f := m - 1 // exact
	dh, dl := numTwoSum(m, 1)
	// s = f / (m+1) in double-double.
	sh := f / dh
	sl := (math.FMA(-sh, dh, f) - sh*dl) / dh
	// s³/3 in double-double.
	p, pe := numTwoProd(sh, sh)
	pe += 2 * sh * sl
	q, qe := numTwoProd(p, sh)
	qe += p*sl + pe*sh
	t3h := q / 3
	t3l := (math.FMA(-t3h, 3, q) + qe) / 3
	// s⁵/5 + s⁷/7 + … in plain double: it is below 2^-12 of s.
	z := sh * sh
	poly := 0.0
	for j := 31; j >= 5; j -= 2 {
		poly = 1/float64(j) + z*poly
	}
	tail := z * z * sh * poly
	dk := float64(k)
	h, l := numTwoSum(dk*ln2Hi, 2*sh)
	h, l2 := numTwoSum(h, 2*t3h)
	l += l2 + 2*(sl+t3l+tail) + dk*ln2Lo
	return h + l
}

func numTwoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

func numTwoProd(a, b float64) (p, e float64) {
	p = a * b
	return p, math.FMA(a, b, -p)
}
