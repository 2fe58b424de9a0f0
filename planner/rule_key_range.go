package planner

import (
	"cmp"
	"math"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// keyRangeRule runs after the key-lookup rule. A pull query whose
// WHERE bounds the table's key, and pins no key, reads that range of the
// store by ordered key ranges instead of scanning it (exec.KeyRange):
// the conjuncts of WHERE that pin the leading key columns with = and
// bound the next one with <, <=, >, >= or BETWEEN, each against a
// literal. As in ksqlDB, a windowed table's key range and every range
// with ksql.query.pull.range.scan.enabled=false are table scans; so is
// a WHERE with OR at its top, which is not one range. A windowed
// table's WINDOWSTART and WINDOWEND bounds narrow its lookup or scan
// (windowBoundsRule). The WHERE still filters what is read.
func (p *planning) keyRangeRule() (bool, error) {
	read := p.q.StoreRead()
	if read == nil {
		return false, nil
	}
	windows := p.windowBoundsRule(read)
	if read.Keys != nil || p.opts.PullRangeScansDisabled || p.src.Window != exec.NotWindowed {
		return windows, nil
	}
	rng, ok := keyRange(p.cl.Where, p.src)
	if !ok {
		return windows, nil
	}
	read.Range = rng
	text := rng.String()
	p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
		if s, ok := n.(*logical.StoreScan); ok {
			return &logical.StoreRange{Table: s.Table, Range: text}
		}
		return n
	})
	return true, nil
}

// keyRange finds the key range a pull query's WHERE reads: see
// keyRangeRule. Of several bounds on one side the tightest is kept.
func keyRange(where parser.Expr, src *Source) (*exec.KeyRange, bool) {
	keyCols := src.Schema.Keys()
	if where == nil || len(keyCols) == 0 {
		return nil, false
	}
	keyOf := func(x parser.Expr) int {
		ref, ok := x.(*parser.ColumnRef)
		if !ok {
			return -1
		}
		for i, k := range keyCols {
			if strings.EqualFold(ref.Name, k.Name) {
				return i
			}
		}
		return -1
	}
	type bound struct {
		v    any
		open bool
	}
	eq := make([]any, len(keyCols))
	los := make([]*bound, len(keyCols))
	his := make([]*bound, len(keyCols))
	tighten := func(cur *bound, v any, open, lower bool) *bound {
		if cur == nil {
			return &bound{v, open}
		}
		c, ok := compareKeys(v, cur.v)
		switch {
		case !ok:
			return cur
		case c == 0:
			return &bound{v, open || cur.open}
		case (c > 0) == lower:
			return &bound{v, open}
		}
		return cur
	}
	setBound := func(i int, op parser.BinaryOp, lit parser.Expr) {
		v, ok := keyLiteral(keyCols[i], lit)
		if !ok {
			return
		}
		switch op {
		case parser.OpEq:
			if eq[i] == nil {
				eq[i] = v
			}
		case parser.OpGt, parser.OpGe:
			los[i] = tighten(los[i], v, op == parser.OpGt, true)
		case parser.OpLt, parser.OpLe:
			his[i] = tighten(his[i], v, op == parser.OpLt, false)
		}
	}
	for _, c := range splitOn(where, parser.OpAnd) {
		switch x := c.(type) {
		case *parser.Binary:
			if i := keyOf(x.Left); i >= 0 {
				setBound(i, x.Op, x.Right)
			} else if i := keyOf(x.Right); i >= 0 {
				setBound(i, flipComparison(x.Op), x.Left)
			}
		case *parser.Between:
			if i := keyOf(x.X); i >= 0 && !x.Not {
				setBound(i, parser.OpGe, x.Lo)
				setBound(i, parser.OpLe, x.Hi)
			}
		}
	}
	rng := &exec.KeyRange{NKeys: len(keyCols)}
	for i := range keyCols {
		if eq[i] != nil {
			rng.Eq = append(rng.Eq, eq[i])
			continue
		}
		if los[i] == nil && his[i] == nil {
			return nil, false
		}
		if los[i] != nil {
			rng.Lo, rng.LoOpen = los[i].v, los[i].open
		}
		if his[i] != nil {
			rng.Hi, rng.HiOpen = his[i].v, his[i].open
		}
		return rng, true
	}
	return nil, false // every column pinned: a key lookup's, not a range
}

// flipComparison is the operator of a comparison with its sides swapped
// (5 < K is K > 5).
func flipComparison(op parser.BinaryOp) parser.BinaryOp {
	switch op {
	case parser.OpLt:
		return parser.OpGt
	case parser.OpLe:
		return parser.OpGe
	case parser.OpGt:
		return parser.OpLt
	case parser.OpGe:
		return parser.OpLe
	}
	return op
}

// compareKeys orders two key values of one Go type; false for types it
// does not order, whose first bound is kept.
func compareKeys(a, b any) (int, bool) {
	switch x := a.(type) {
	case int32:
		y, ok := b.(int32)
		return cmp.Compare(x, y), ok
	case int64:
		y, ok := b.(int64)
		return cmp.Compare(x, y), ok
	case float64:
		y, ok := b.(float64)
		return cmp.Compare(x, y), ok
	case string:
		y, ok := b.(string)
		return cmp.Compare(x, y), ok
	case bool:
		y, ok := b.(bool)
		if !ok {
			return 0, false
		}
		switch {
		case x == y:
			return 0, true
		case !x:
			return -1, true
		}
		return 1, true
	}
	return 0, false
}

// windowBoundsRule gives a pull query on a windowed table the bounds its
// WHERE puts on WINDOWSTART and WINDOWEND (=, <, <=, >, >=, BETWEEN
// against integer literals, in conjunction), so that the store read
// skips the windows outside where its layout orders them
// (exec.TableReader.ScanWindows).
func (p *planning) windowBoundsRule(read *exec.StoreRead) bool {
	if p.src.Window == exec.NotWindowed || p.cl.Where == nil {
		return false
	}
	b := &exec.WindowBounds{}
	found := false
	tighten := func(cur **int64, v int64, lower bool) {
		if *cur == nil || (lower && v > **cur) || (!lower && v < **cur) {
			*cur = &v
		}
		found = true
	}
	set := func(name string, op parser.BinaryOp, lit parser.Expr) {
		// Only integers: a text literal is a timestamp to WHERE.
		if l, ok := lit.(*parser.Literal); !ok || l.Kind != parser.LitInteger {
			return
		}
		v, ok := keyLiteral(types.Column{Name: name, Type: types.BigIntType}, lit)
		if !ok {
			return
		}
		n, ok := v.(int64)
		if !ok {
			return
		}
		lo, hi := &b.StartLo, &b.StartHi
		if name == "WINDOWEND" {
			lo, hi = &b.EndLo, &b.EndHi
		}
		switch op {
		case parser.OpEq:
			tighten(lo, n, true)
			tighten(hi, n, false)
		case parser.OpGt:
			if n < math.MaxInt64 {
				tighten(lo, n+1, true)
			}
		case parser.OpGe:
			tighten(lo, n, true)
		case parser.OpLt:
			if n > math.MinInt64 {
				tighten(hi, n-1, false)
			}
		case parser.OpLe:
			tighten(hi, n, false)
		}
	}
	bound := func(x parser.Expr) string {
		if ref, ok := x.(*parser.ColumnRef); ok && isWindowBound(strings.ToUpper(ref.Name)) {
			return strings.ToUpper(ref.Name)
		}
		return ""
	}
	for _, c := range splitOn(p.cl.Where, parser.OpAnd) {
		switch x := c.(type) {
		case *parser.Binary:
			if n := bound(x.Left); n != "" {
				set(n, x.Op, x.Right)
			} else if n := bound(x.Right); n != "" {
				set(n, flipComparison(x.Op), x.Left)
			}
		case *parser.Between:
			if n := bound(x.X); n != "" && !x.Not {
				set(n, parser.OpGe, x.Lo)
				set(n, parser.OpLe, x.Hi)
			}
		}
	}
	if !found {
		return false
	}
	read.Window = b
	return true
}
