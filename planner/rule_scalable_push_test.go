package planner_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/planner/logical"
)

// The scalable-push rule marks the push queries of one stateless chain
// over one source, which a persistent query's output can serve, and only
// those.
func TestScalablePushRule(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql      string
		scalable bool
	}{
		{`SELECT * FROM orders EMIT CHANGES;`, true},
		{`SELECT id, qty * 2 AS q FROM orders WHERE item = 'x' EMIT CHANGES;`, true},
		{`SELECT * FROM users EMIT CHANGES;`, true},
		{`SELECT * FROM orders;`, false}, // a pull query
		{`SELECT item, COUNT(*) AS n FROM orders GROUP BY item EMIT CHANGES;`, false},
		{`SELECT * FROM orders PARTITION BY item EMIT CHANGES;`, false},
		{`SELECT o.id, name FROM orders o JOIN users u ON o.id = u.id EMIT CHANGES;`, false},
		{`CREATE STREAM s1 AS SELECT * FROM orders;`, false},
	}
	for _, c := range cases {
		q, rules := fired(t, cat, c.sql)
		if q.ScalablePush != c.scalable || slices.Contains(rules, "scalable-push") != c.scalable {
			t.Errorf("%s: scalable %t (rules %q), want %t", c.sql, q.ScalablePush, rules, c.scalable)
		}
		root := strings.SplitN(logical.Print(q.Logical), "\n", 2)[0]
		if got := strings.Contains(root, "scalable: servable from the output of the query writing "); got != c.scalable {
			t.Errorf("%s: root %q", c.sql, root)
		}
	}
}
