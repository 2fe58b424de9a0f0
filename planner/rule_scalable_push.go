package planner

import (
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
)

// scalablePushRule marks a push query that a persistent query's output
// can serve as it is produced (ksqlDB's scalable push queries, KLIP-52):
// one source, no JOIN, WINDOW, GROUP BY, HAVING or PARTITION BY, and a
// plan of one stateless chain. With sluice.compat=ksqldb, ROWPARTITION or
// ROWOFFSET in SELECT or WHERE disqualify it too, as in ksqlDB (Sluice's
// registry keeps the partition and offset of each output record, so it
// can serve them). Query.ScalablePush says so; whether it is
// served that way is the engine's to decide when it runs, by its
// properties (ksql.query.push.v2.enabled, auto.offset.reset) and by which
// running query writes the source.
func (p *planning) scalablePushRule() (bool, error) {
	cl, topo := p.cl, p.q.Topology
	if p.target != nil || p.sel.Emit != parser.EmitChanges || len(cl.Joins) > 0 || cl.Window != nil ||
		len(cl.GroupBy) > 0 || cl.Having != nil || len(cl.PartitionBy) > 0 {
		return false, nil
	}
	if p.opts.Compat == CompatKsqlDB && readsPseudo(p.sel, pullPseudoColumns) {
		return false, nil
	}
	if len(topo.Subs) != 1 || len(topo.Internal) > 0 || len(topo.Stores) > 0 || p.q.Collect == nil || len(topo.Subs[0].Sides) > 0 {
		return false, nil
	}
	for _, n := range topo.Subs[0].Nodes {
		if n.Stateful() {
			return false, nil
		}
	}
	p.q.ScalablePush = true
	p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
		if s, ok := n.(*logical.Subscribe); ok {
			return &logical.Subscribe{Input: s.Input, ScalableFrom: p.src.Name}
		}
		return n
	})
	return true, nil
}

// readsPseudo reports whether sel's SELECT or WHERE reads one of the
// pseudo columns named.
func readsPseudo(sel *parser.Select, names []string) bool {
	es := selectExprs(sel)
	if sel.Where != nil {
		es = append(es, sel.Where)
	}
	return len(pseudoIn(names, es...)) > 0
}
