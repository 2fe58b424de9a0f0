package planner_test

import (
	"slices"
	"testing"
)

// The magic-timestamps rule rewrites string literals compared with
// ROWTIME into epoch milliseconds before the filter is compiled, and
// says so only when it rewrote one.
func TestMagicTimestampsRule(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql, filter string
		fires       bool
	}{
		{`SELECT item FROM orders WHERE ROWTIME >= '2021-03-04T05:06:07' EMIT CHANGES;`, "filter ROWTIME >= 1614834367000", true},
		{`SELECT item FROM orders WHERE ROWTIME >= 1614834367000 EMIT CHANGES;`, "filter ROWTIME >= 1614834367000", false},
		{`SELECT item FROM orders WHERE item = '2021' EMIT CHANGES;`, "filter ITEM = '2021'", false},
	}
	for _, c := range cases {
		q, rules := fired(t, cat, c.sql)
		if got := slices.Contains(rules, "magic-timestamps"); got != c.fires {
			t.Errorf("%s: fired %t, want %t (rules %q)", c.sql, got, c.fires, rules)
		}
		if f := q.Topology.Subs[0].Nodes[0].Describe(); f != c.filter {
			t.Errorf("%s: first step %q, want %q", c.sql, f, c.filter)
		}
	}
}
