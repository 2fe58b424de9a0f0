package planner

import (
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
)

// joinColumnPruningRule narrows what a join input's repartition topic
// carries to the columns the query reads. The rest of the query is
// compiled against the joined layout only after the joins are built, so
// the columns it reads are found here, on the statement: every column
// reference of its SELECT, WHERE, GROUP BY, HAVING, PARTITION BY and
// each join's ON. A reference marks every input column it may name (an
// unqualified name marks that column of every input, so that what was
// ambiguous stays ambiguous); a `*` keeps everything. The key, time and
// pseudo columns of the topic, and the hidden slots of the joins before,
// are always carried.
func (p *planning) joinColumnPruningRule() (bool, error) {
	if p.sel == nil || len(p.sel.Joins) == 0 {
		return false, nil
	}
	for _, it := range p.sel.Items {
		if it.Star {
			return false, nil
		}
	}
	var refs []*parser.ColumnRef
	mark := func(e parser.Expr) {
		if e != nil {
			walkColumns(e, func(r *parser.ColumnRef) { refs = append(refs, r) })
		}
	}
	for _, it := range p.sel.Items {
		mark(it.Expr)
	}
	mark(p.sel.Where)
	mark(p.sel.Having)
	for _, e := range p.sel.GroupBy {
		mark(e)
	}
	for _, e := range p.sel.PartitionBy {
		mark(e)
	}
	for _, j := range p.sel.Joins {
		mark(j.On)
	}
	rels := append([]*parser.Relation{p.sel.From}, func() []*parser.Relation {
		var out []*parser.Relation
		for _, j := range p.sel.Joins {
			out = append(out, j.Right)
		}
		return out
	}()...)
	changed := false
	var err error
	p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
		j, ok := n.(*logical.Join)
		if !ok || err != nil || j.ForeignKey {
			return n
		}
		nj := *j
		did := false
		for side, in := range []*logical.Node{&nj.Left, &nj.Right} {
			r, ok := (*in).(*logical.Repartition)
			if !ok || r.Carries != nil {
				continue
			}
			// The relations whose columns the input holds: the right
			// one's, or those of FROM and the joins before.
			ins := rels[:j.Index+1]
			if side == 1 {
				ins = rels[j.Index+1 : j.Index+2]
			}
			var carries []string
			all := true
			for _, rel := range ins {
				src, e := p.cat.Lookup(rel.Name)
				if e != nil {
					err = posErr(rel.Pos, e)
					return n
				}
				alias := aliasOf(rel)
				for _, c := range src.Schema.Columns {
					if readsColumn(refs, alias, src.Name, c.Name) {
						carries = append(carries, alias+"_"+c.Name)
					} else {
						all = false
					}
				}
			}
			if all {
				continue
			}
			if carries == nil {
				carries = []string{}
			}
			nr := *r
			nr.Carries = carries
			*in = &nr
			did = true
		}
		if !did {
			return n
		}
		changed = true
		return &nj
	})
	return changed, err
}

// readsColumn reports whether one of refs may name column col of the
// input aliased alias (source name name): by its name alone, qualified
// by the alias or the source's name, or by its slot name in the joined
// row (ALIAS_COL).
func readsColumn(refs []*parser.ColumnRef, alias, name, col string) bool {
	slot := alias + "_" + col
	for _, r := range refs {
		if strings.EqualFold(r.Name, slot) {
			return true
		}
		if strings.EqualFold(r.Name, col) && (r.Source == "" || strings.EqualFold(r.Source, alias) || strings.EqualFold(r.Source, name)) {
			return true
		}
	}
	return false
}
