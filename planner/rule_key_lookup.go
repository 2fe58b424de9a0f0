package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// keyLookupRule makes a pull query on a table whose WHERE pins every key
// column to literals read only those keys from the table's store instead
// of scanning it: the topology's store read (Query.StoreRead) holds them
// and the plan's store scan becomes a store lookup.
func (p *planning) keyLookupRule() (bool, error) {
	read := p.q.StoreRead()
	if read == nil {
		return false, nil
	}
	keys, ok := lookupKeys(p.cl.Where, p.src)
	if !ok {
		return false, nil
	}
	read.Keys = keys
	texts := make([]string, len(keys))
	for i, k := range keys {
		texts[i] = fmt.Sprint(k)
	}
	p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
		if s, ok := n.(*logical.StoreScan); ok {
			return &logical.StoreLookup{Table: s.Table, Keys: texts}
		}
		return n
	})
	return true, nil
}

// lookupKeys finds, in a pull query's WHERE, conjuncts that pin
// the table's key to literals and returns the keys they name, each the
// values of the key columns in order, cast to their types: KEY = x or
// KEY IN (x, y, …) for a one-column key, K1 = x AND K2 = y … (every key
// column) for several; with OR, the keys of every disjunct, when each
// pins the key. The read then goes straight to those keys. The
// WHERE still filters the rows read, so a lookup that finds more than it
// should changes nothing.
func lookupKeys(where parser.Expr, src *Source) ([][]any, bool) {
	if where == nil {
		return nil, false
	}
	// Disjuncts that each pin the key read the keys of all of them, as
	// ksqlDB looks up the keys of K = 1 OR K = 2; one that pins none
	// needs a scan.
	disjuncts := splitOn(where, parser.OpOr)
	if len(disjuncts) > 1 {
		var keys [][]any
		seen := map[string]bool{}
		for _, d := range disjuncts {
			ks, ok := lookupKeys(d, src)
			if !ok {
				return nil, false
			}
			for _, k := range ks {
				if id := fmt.Sprintf("%#v", k); !seen[id] {
					seen[id] = true
					keys = append(keys, k)
				}
			}
		}
		return keys, true
	}
	keyCols := src.Schema.Keys()
	if len(keyCols) == 0 {
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
	values := func(key types.Column, lits []parser.Expr) ([]any, bool) {
		out := make([]any, 0, len(lits))
		for _, l := range lits {
			v, ok := keyLiteral(key, l)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	}
	var conjuncts []parser.Expr
	var split func(parser.Expr)
	split = func(x parser.Expr) {
		if b, ok := x.(*parser.Binary); ok && b.Op == parser.OpAnd {
			split(b.Left)
			split(b.Right)
			return
		}
		conjuncts = append(conjuncts, x)
	}
	split(where)
	// pinned[i] are the values key column i may take, by the first
	// conjunct that pins it.
	pinned := make([][]any, len(keyCols))
	pin := func(i int, lits []parser.Expr) {
		if i < 0 || pinned[i] != nil {
			return
		}
		if vals, ok := values(keyCols[i], lits); ok {
			pinned[i] = vals
		}
	}
	for _, c := range conjuncts {
		switch x := c.(type) {
		case *parser.Binary:
			if x.Op != parser.OpEq {
				continue
			}
			if i := keyOf(x.Left); i >= 0 {
				pin(i, []parser.Expr{x.Right})
			} else if i := keyOf(x.Right); i >= 0 {
				pin(i, []parser.Expr{x.Left})
			}
		case *parser.In:
			// IN names several keys of a one-column key only: several
			// columns' lists would multiply.
			if !x.Not && len(keyCols) == 1 {
				pin(keyOf(x.X), x.List)
			}
		}
	}
	keys := [][]any{{}}
	for _, vals := range pinned {
		if vals == nil {
			return nil, false
		}
		var next [][]any
		for _, k := range keys {
			for _, v := range vals {
				next = append(next, append(append([]any(nil), k...), v))
			}
		}
		keys = next
	}
	return keys, true
}

// keyLiteral is the value of literal l cast to key column key's type;
// false for anything else, or NULL.
func keyLiteral(key types.Column, l parser.Expr) (any, bool) {
	if _, ok := l.(*parser.Literal); !ok {
		return nil, false
	}
	c, err := expr.Compile(l, expr.SchemaScope(types.Schema{}))
	if err != nil {
		return nil, false
	}
	cast, err := expr.CastFunc(c.Type, key.Type)
	if err != nil {
		return nil, false
	}
	v := cast(c.Eval(nil))
	return v, v != nil
}
