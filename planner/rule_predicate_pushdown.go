package planner

import (
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
)

// predicatePushdownRule moves the parts of a join query's WHERE that read
// one stream input's columns only below the join, onto that input: its
// rows are filtered before they are re-keyed, kept in the join's window
// store or joined, instead of every joined row being built and then
// dropped. `bids JOIN auctions … WHERE a.category = 10` keeps and joins
// the auctions of one category, not all of them.
//
// The WHERE is split at its top-level ANDs; a conjunct moves when
//
//   - every column it reads belongs to the same input, a stream read from
//     its topic (a table's rows are state: a rejected row would have to
//     delete the key, which is not what the WHERE says of a table join),
//     and it reads at least one (a conjunct of literals and calls alone
//     stays where it is);
//   - it reads no pseudo column (ROWTIME, ROWPARTITION, ROWOFFSET) nor a
//     window bound, whose value in the joined row is the join's, not the
//     input's, and calls no function whose result changes from call to
//     call (RANDOM, UUID, a user function not DETERMINISTIC), which below
//     the join would be called once per input row, not per joined row;
//   - no join on the input's way up pads it with NULLs: the input is the
//     left of INNER and LEFT joins and the right of an INNER or RIGHT
//     one. A padded side's rows must reach the join even when they fail,
//     or the other side's rows they would have matched come out padded
//     instead of not at all.
//
// What stays is the filter above the join. The WHERE as written is still
// what the builder checks (its errors are the same); the moved conjuncts
// are compiled against their input's row by the join builder. A query
// planned before plan version 3 keeps its WHERE whole above the join: its
// repartition topics and join stores hold rows this rule would have
// filtered.
func (p *planning) predicatePushdownRule() (bool, error) {
	if p.sel == nil || len(p.sel.Joins) == 0 || len(p.bound) != len(p.sel.Joins) ||
		(p.opts.PlanVersion > 0 && p.opts.PlanVersion < 3) {
		return false, nil
	}
	top := joinNodes(p.q.Logical)
	if len(top) == 0 {
		return false, nil
	}
	where := filterOver(p.q.Logical, top[len(top)-1])
	if where == nil {
		return false, nil
	}
	layout := p.bound[len(p.bound)-1].pre
	// pushed[i] are the conjuncts moved onto base input i (0: FROM, i:
	// the right input of join i-1).
	pushed := map[int][]parser.Expr{}
	var kept []parser.Expr
	for _, c := range conjuncts(where.Pred) {
		if i, ok := p.pushTarget(c, layout, top); ok {
			pushed[i] = append(pushed[i], c)
			continue
		}
		kept = append(kept, c)
	}
	if len(pushed) == 0 {
		return false, nil
	}
	p.whereAll = where.Pred
	rest := conjunction(kept)
	p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
		switch x := n.(type) {
		case *logical.Filter:
			if x.Pred == where.Pred && rest == nil {
				return x.Input
			}
			if x.Pred == where.Pred {
				return &logical.Filter{Pred: rest, Input: x.Input}
			}
		case *logical.Join:
			c := *x
			if x.Index == 0 {
				if preds := pushed[0]; preds != nil {
					c.Left = filterBelow(x.Left, conjunction(preds))
				}
			}
			if preds := pushed[x.Index+1]; preds != nil {
				c.Right = filterBelow(x.Right, conjunction(preds))
			}
			return &c
		}
		return n
	})
	return true, nil
}

// filterOver is the filter of the plan rooted at n whose input is join
// (the WHERE of a join query), or nil.
func filterOver(n logical.Node, join *logical.Join) *logical.Filter {
	if f, ok := n.(*logical.Filter); ok && f.Input == logical.Node(join) {
		return f
	}
	for _, in := range n.Inputs() {
		if f := filterOver(in, join); f != nil {
			return f
		}
	}
	return nil
}

// pushTarget returns the base input (0 the FROM relation, i the right
// input of join i-1) conjunct c may move onto, if any (see
// predicatePushdownRule).
func (p *planning) pushTarget(c parser.Expr, layout *joinLayout, joins []*logical.Join) (int, bool) {
	target, ok := -1, true
	walkColumns(c, func(ref *parser.ColumnRef) {
		if !ok {
			return
		}
		if isPseudo(ref.Name) || isWindowBound(ref.Name) {
			ok = false
			return
		}
		i, _, err := layout.resolve(ref)
		if err != nil || slices.ContainsFunc(pseudoSlots, func(pc string) bool { return strings.HasSuffix(layout.names[i], "_"+pc) }) {
			ok = false
			return
		}
		owner := slices.IndexFunc(layout.inputs, func(in *joinInput) bool { return slices.Contains(in.names, layout.names[i]) })
		if owner < 0 || (target >= 0 && owner != target) {
			ok = false
			return
		}
		target = owner
	})
	if !ok || target < 0 || layout.inputs[target].table || p.containsAggregate(c) || p.callsVolatile(c) {
		return 0, false
	}
	// The input is the left of every join from the one that brings it
	// in up; the right of that one unless it is FROM.
	for idx, j := range joins {
		switch {
		case idx < target-1:
			continue
		case idx == target-1:
			if j.Kind != "INNER" && j.Kind != "RIGHT OUTER" {
				return 0, false
			}
		default:
			if j.Kind != "INNER" && j.Kind != "LEFT OUTER" {
				return 0, false
			}
		}
	}
	return target, true
}

// pseudoSlots are the columns an input's row slot may end with that are
// not the input's own data: named by slot (B_ROWTIME), they stay above
// the join too.
var pseudoSlots = []string{exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset, exec.ColWindowStart, exec.ColWindowEnd}

// callsVolatile reports whether e calls a function whose result changes
// from call to call (RANDOM, UUID) or a user-defined function not declared
// DETERMINISTIC: below the join it would run once per input row instead
// of once per joined row, and a row joining several would pass or fail
// for all of them at once.
func (p *planning) callsVolatile(e parser.Expr) bool {
	found := false
	walkExpr(e, func(x parser.Expr) {
		f, ok := x.(*parser.FuncCall)
		if !ok || found {
			return
		}
		if expr.Volatile(f.Name) {
			found = true
			return
		}
		for _, uf := range p.cat.Functions(f.Name) {
			if !uf.Deterministic {
				found = true
			}
		}
	})
	return found
}

// filterBelow puts a filter of pred on a join input: below its
// repartition, when it is re-keyed, so that rejected rows are not written
// to the repartition topic either.
func filterBelow(in logical.Node, pred parser.Expr) logical.Node {
	if r, ok := in.(*logical.Repartition); ok {
		nr := *r
		nr.Input = &logical.Filter{Pred: pred, Input: r.Input}
		return &nr
	}
	return &logical.Filter{Pred: pred, Input: in}
}

// inputFilter is the predicate the predicate-pushdown rule put on a join
// input (nil if none).
func inputFilter(in logical.Node) parser.Expr {
	if r, ok := in.(*logical.Repartition); ok {
		in = r.Input
	}
	if f, ok := in.(*logical.Filter); ok {
		return f.Pred
	}
	return nil
}

// conjuncts splits e at its top-level ANDs, in order.
func conjuncts(e parser.Expr) []parser.Expr {
	if b, ok := e.(*parser.Binary); ok && b.Op == parser.OpAnd {
		return append(conjuncts(b.Left), conjuncts(b.Right)...)
	}
	return []parser.Expr{e}
}

// conjunction joins es with AND, left to right; nil for none.
func conjunction(es []parser.Expr) parser.Expr {
	if len(es) == 0 {
		return nil
	}
	out := es[0]
	for _, e := range es[1:] {
		out = &parser.Binary{Pos: e.Position(), Op: parser.OpAnd, Left: out, Right: e}
	}
	return out
}
