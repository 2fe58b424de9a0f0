package planner

import (
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner/logical"
)

// columnPruningRule tells the source which value columns the query
// reads, so that its decoder can leave the others alone (a JSON record's
// unused fields are skipped, not converted), and whether it reads ROWTIME
// and ROWOFFSET, which the decoder otherwise boxes for every record. Joins read whole rows, and
// a pull query on a table decodes no records: it reads the table's store.
func (p *planning) columnPruningRule() (bool, error) {
	if p.join != nil || p.sc == nil || p.spec == nil || p.q.StoreRead() != nil {
		return false, nil
	}
	nk := len(p.spec.KeyCols)
	p.spec.RowTimeUnread = !p.sc.used[p.sc.schema.Find(exec.ColRowTime)]
	p.spec.RowOffsetUnread = !p.sc.used[p.sc.schema.Find(exec.ColRowOffset)]
	needed := make([]bool, len(p.spec.ValueCols))
	var reads []string
	all := true
	for j := range needed {
		needed[j] = p.sc.used[nk+j] || p.spec.TimestampCol == nk+j
		all = all && needed[j]
		if needed[j] {
			reads = append(reads, p.spec.ValueCols[j].Name)
		}
	}
	if all {
		return false, nil
	}
	p.spec.Needed = needed
	if src := p.logicalSource(); src != nil {
		src.Reads = append([]string{}, reads...)
		if src.Reads == nil {
			src.Reads = []string{}
		}
	}
	return true, nil
}

// logicalSource is the one source of a query without joins in its
// logical plan, nil with joins.
func (p *planning) logicalSource() *logical.Source {
	var found *logical.Source
	count := 0
	var walk func(n logical.Node)
	walk = func(n logical.Node) {
		if s, ok := n.(*logical.Source); ok {
			found = s
			count++
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	if p.q.Logical != nil {
		walk(p.q.Logical)
	}
	if count != 1 {
		return nil
	}
	return found
}
