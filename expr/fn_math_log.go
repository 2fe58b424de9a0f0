package expr

import "math"

// numLog is the natural logarithm rounded as ksqlDB's LN gets it from
// Java's Math.log (a nearly correctly rounded intrinsic on HotSpot). Go's
// math.Log can be an ulp away: ln 3 gives 1.0986122886681096 where ksqlDB
// gives 1.0986122886681098. The reduction is x = 2^k·m with m in
// [√2/2, √2), ln m = 2·atanh(s) with s = (m-1)/(m+1); s and its cube
// are carried in double-double so the sum is off by far less than an ulp.
func numLog(x float64) float64 {
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
	h, l := numLogDD(x)
	return h + l
}

// numLogDD is ln x as a double-double h + l, for finite x > 0.
func numLogDD(x float64) (h, l float64) {
	const (
		ln2Hi = 6.93147180369123816490e-01 // ln 2 in 33 bits: k·ln2Hi is exact
		ln2Lo = 1.90821492927058770002e-10
	)
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
	h, l = numTwoSum(dk*ln2Hi, 2*sh)
	h, l2 := numTwoSum(h, 2*t3h)
	l += l2 + 2*(sl+t3l+tail) + dk*ln2Lo
	return numTwoSum(h, l)
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

// numExp is e^x rounded as ksqlDB's EXP gets it from Java's Math.exp (a
// nearly correctly rounded intrinsic); Go's math.Exp is an ulp away for
// about one argument in ten. x = k·ln2 + r, and e^r sums its Taylor
// series with the first terms in double-double. Results that overflow,
// underflow or are subnormal come from math.Exp.
func numExp(x float64) float64 {
	switch {
	case x > 709.782712893384: // ln of the largest double
		return math.Inf(1)
	case math.IsNaN(x) || x < -708:
		return math.Exp(x)
	}
	return numExpDD(x, 0)
}

// numExpDD is e^(x+xl) for a double-double x + xl in [-708, ln MaxFloat64].
func numExpDD(x, xl float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
	)
	k := math.Round(x / math.Ln2)
	rh, rl := numTwoSum(x, -k*ln2Hi) // k·ln2Hi is exact
	p, pe := numTwoProd(k, ln2Lo)
	rh, e := numTwoSum(rh, -p)
	rl += e - pe + xl
	rh, rl = numTwoSum(rh, rl)
	// r²/2 and r³/6 in double-double.
	s2h, s2l := numTwoProd(rh, rh)
	s2l += 2 * rh * rl
	q, qe := numTwoProd(s2h, rh)
	qe += s2h*rl + s2l*rh
	t3h := q / 6
	t3l := (math.FMA(-t3h, 6, q) + qe) / 6
	// r⁴/4! + r⁵/5! + … in plain double.
	poly := 0.0
	for i := len(numExpCoef) - 1; i >= 0; i-- {
		poly = numExpCoef[i] + rh*poly
	}
	tail := s2h * s2h * poly
	h, l := numTwoSum(1, rh)
	h, l2 := numTwoSum(h, s2h/2)
	h, l3 := numTwoSum(h, t3h)
	l += l2 + l3 + rl + s2l/2 + t3l + tail
	return math.Ldexp(h+l, int(k))
}

// numExpCoef holds 1/4!, 1/5!, … 1/19!.
var numExpCoef = func() []float64 {
	var out []float64
	fact := 1.0
	for n := 1; n <= 19; n++ {
		fact *= float64(n)
		if n >= 4 {
			out = append(out, 1/fact)
		}
	}
	return out
}()

// numPow is Java's Math.pow: its special cases, and otherwise
// e^(y·ln|x|) with the logarithm and the product in double-double, so the
// result is nearly always correctly rounded as Java's intrinsic is. (Go's
// math.Pow multiplies out integer powers and is often an ulp off.)
func numPow(x, y float64) float64 {
	switch {
	case y == 0:
		return 1
	case math.IsNaN(x) || math.IsNaN(y):
		return math.NaN()
	case math.IsInf(y, 0) && (x == 1 || x == -1):
		return math.NaN()
	case x == 1:
		return 1
	case x == 0 || math.IsInf(x, 0) || math.IsInf(y, 0):
		return math.Pow(x, y)
	}
	sign := 1.0
	if x < 0 {
		switch {
		case y != math.Trunc(y):
			return math.NaN()
		case math.Abs(y) < 1<<53 && math.Mod(y, 2) != 0:
			sign = -1
		}
		x = -x
	}
	lh, ll := numLogDD(x)
	ph, pe := numTwoProd(y, lh)
	pl := pe + y*ll
	ph, pl = numTwoSum(ph, pl)
	switch {
	case ph > 709.79:
		return sign * math.Inf(1)
	case ph < -708:
		return sign * math.Pow(x, y) // subnormal or zero
	}
	return sign * numExpDD(ph, pl)
}
