package planner

import (
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
)

// A rule on the logical plan changes what runs: a rule added for the
// test rewrites the filter's predicate and a projected column's
// expression, and the topology built compiles the rewritten ones, under
// the names bind gave the columns.
func TestBuilderCompilesThePlan(t *testing.T) {
	cat := NewCatalog()
	st, err := parser.ParseOne(`CREATE STREAM clicks (uid VARCHAR KEY, ms BIGINT) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=1);`)
	if err != nil {
		t.Fatal(err)
	}
	src, err := CreateSource(cat, st.(*parser.CreateSource), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(src, false); err != nil {
		t.Fatal(err)
	}
	parse := func(s string) parser.Expr {
		e, err := parser.ParseExpr(s)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	rewrite := rule{name: "test-rewrite", stage: onLogical, apply: func(p *planning) (bool, error) {
		p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
			switch x := n.(type) {
			case *logical.Filter:
				c := *x
				c.Pred = parse("MS < 10")
				return &c
			case *logical.Project:
				c := *x
				c.Columns = slices.Clone(x.Columns)
				c.Columns[1].Expr = parse("MS * 2")
				return &c
			}
			return n
		})
		return true, nil
	}}
	saved := rules
	rules = append(slices.Clone(rules), rewrite)
	defer func() { rules = saved }()

	sel, err := parser.ParseOne("SELECT uid, ms FROM clicks WHERE ms > 10 EMIT CHANGES;")
	if err != nil {
		t.Fatal(err)
	}
	q, err := PlanQuery(cat, sel.(*parser.Select), nil, "T", Options{})
	if err != nil {
		t.Fatal(err)
	}
	sub := q.Topology.Subs[0]
	schema := sub.Source.RowSchema()
	row := make([]any, len(schema.Columns))
	row[schema.Find("UID")], row[schema.Find("MS")] = "u1", int64(5)
	var filter *exec.FilterNode
	var project *exec.ProjectNode
	for _, n := range sub.Nodes {
		switch x := n.(type) {
		case *exec.FilterNode:
			filter = x
		case *exec.ProjectNode:
			project = x
		}
	}
	if filter == nil || project == nil {
		t.Fatalf("no filter and projection in %q", sub.Nodes)
	}
	if filter.Text != "MS < 10" || filter.Pred(row) != true {
		t.Errorf("filter %s gives %v for MS 5, want the rule's MS < 10, true", filter.Text, filter.Pred(row))
	}
	if got := project.Exprs[1](row); got != int64(10) || !slices.Equal(project.Names, []string{"UID", "MS"}) {
		t.Errorf("projection %q gives %v for MS 5, want UID, MS and the rule's MS * 2, 10", project.Names, got)
	}
	if !slices.Contains(q.Rules, "test-rewrite") {
		t.Errorf("rules %q do not name test-rewrite", q.Rules)
	}
}
