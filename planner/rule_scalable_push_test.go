package planner_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/planner/logical"
)

// The scalable-push rule marks the push queries of one stateless chain
// over one source, which a persistent query's output can serve, and only
// those.
func TestScalablePushRule(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql      string
		compat   string
		scalable bool
	}{
		{`SELECT * FROM orders EMIT CHANGES;`, "", true},
		{`SELECT id, qty * 2 AS q FROM orders WHERE item = 'x' EMIT CHANGES;`, "", true},
		{`SELECT * FROM users EMIT CHANGES;`, "", true},
		{`SELECT * FROM orders;`, "", false}, // a pull query
		{`SELECT item, COUNT(*) AS n FROM orders GROUP BY item EMIT CHANGES;`, "", false},
		{`SELECT * FROM orders PARTITION BY item EMIT CHANGES;`, "", false},
		{`SELECT o.id, name FROM orders o JOIN users u ON o.id = u.id EMIT CHANGES;`, "", false},
		{`CREATE STREAM s1 AS SELECT * FROM orders;`, "", false},
		// ROWPARTITION and ROWOFFSET: Sluice's registry serves them;
		// ksqlDB runs such a query as an ordinary push query.
		{`SELECT id, ROWOFFSET AS o FROM orders EMIT CHANGES;`, "", true},
		{`SELECT id, ROWOFFSET AS o FROM orders EMIT CHANGES;`, planner.CompatKsqlDB, false},
		{`SELECT id FROM orders WHERE ROWPARTITION = 0 EMIT CHANGES;`, planner.CompatKsqlDB, false},
		{`SELECT id, ROWTIME FROM orders EMIT CHANGES;`, planner.CompatKsqlDB, true},
	}
	for _, c := range cases {
		q, err := planQuery(t, cat, c.sql, planner.Options{ServiceID: "test", Compat: c.compat})
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		rules := q.Rules
		if q.ScalablePush != c.scalable || slices.Contains(rules, "scalable-push") != c.scalable {
			t.Errorf("%s: scalable %t (rules %q), want %t", c.sql, q.ScalablePush, rules, c.scalable)
		}
		root := strings.SplitN(logical.Print(q.Logical), "\n", 2)[0]
		if got := strings.Contains(root, "scalable: servable from the output of the query writing "); got != c.scalable {
			t.Errorf("%s: root %q", c.sql, root)
		}
	}
}
