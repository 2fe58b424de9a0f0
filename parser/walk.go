package parser

import "slices"

// Inspect calls f on every node of e, parents before their children and
// children in source order; when f returns false, the node's children are
// skipped. A lambda's body is visited like any child: callers that tell
// its parameters from columns do so themselves.
func Inspect(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	children(e, false, func(c *Expr) { Inspect(*c, f) })
}

// Rewrite returns e with nodes replaced: f sees a node before its
// children, and a non-nil result replaces the node (its children are not
// visited); nil descends into the children. Every node on the way to a
// replaced one is copied, so e itself is left unchanged.
func Rewrite(e Expr, f func(Expr) Expr) Expr {
	if e == nil {
		return nil
	}
	if r := f(e); r != nil {
		return r
	}
	return children(e, true, func(c *Expr) { *c = Rewrite(*c, f) })
}

// children passes f the address of each child expression of e in source
// order (nil ones included) and returns e; with clone, the addresses are
// those of a shallow copy of e, with its slices copied, which it returns.
// It is the one list of which node holds which expressions: Inspect and
// Rewrite both read it.
func children(e Expr, clone bool, f func(*Expr)) Expr {
	each := func(xs []Expr) {
		for i := range xs {
			f(&xs[i])
		}
	}
	switch x := e.(type) {
	case *Binary:
		if clone {
			c := *x
			x = &c
		}
		f(&x.Left)
		f(&x.Right)
		return x
	case *Unary:
		if clone {
			c := *x
			x = &c
		}
		f(&x.X)
		return x
	case *FuncCall:
		if clone {
			c := *x
			c.Args = slices.Clone(x.Args)
			x = &c
		}
		each(x.Args)
		return x
	case *Case:
		if clone {
			c := *x
			c.Whens = slices.Clone(x.Whens)
			x = &c
		}
		f(&x.Operand)
		for i := range x.Whens {
			f(&x.Whens[i].Cond)
			f(&x.Whens[i].Result)
		}
		f(&x.Else)
		return x
	case *Cast:
		if clone {
			c := *x
			x = &c
		}
		f(&x.X)
		return x
	case *IsNull:
		if clone {
			c := *x
			x = &c
		}
		f(&x.X)
		return x
	case *In:
		if clone {
			c := *x
			c.List = slices.Clone(x.List)
			x = &c
		}
		f(&x.X)
		each(x.List)
		return x
	case *Between:
		if clone {
			c := *x
			x = &c
		}
		f(&x.X)
		f(&x.Lo)
		f(&x.Hi)
		return x
	case *Like:
		if clone {
			c := *x
			x = &c
		}
		f(&x.X)
		f(&x.Pattern)
		return x
	case *Subscript:
		if clone {
			c := *x
			x = &c
		}
		f(&x.X)
		f(&x.Index)
		return x
	case *Dereference:
		if clone {
			c := *x
			x = &c
		}
		f(&x.X)
		return x
	case *ArrayCtor:
		if clone {
			c := *x
			c.Elems = slices.Clone(x.Elems)
			x = &c
		}
		each(x.Elems)
		return x
	case *MapCtor:
		if clone {
			c := *x
			c.Keys, c.Values = slices.Clone(x.Keys), slices.Clone(x.Values)
			x = &c
		}
		each(x.Keys)
		each(x.Values)
		return x
	case *StructCtor:
		if clone {
			c := *x
			c.Values = slices.Clone(x.Values)
			x = &c
		}
		each(x.Values)
		return x
	case *Lambda:
		if clone {
			c := *x
			x = &c
		}
		f(&x.Body)
		return x
	}
	return e
}
