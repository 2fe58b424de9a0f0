package planner_test

import (
	"slices"
	"testing"
)

// The column-pruning rule tells the source the value columns the query
// reads (and the event-time column), and fires only when that leaves
// some out; joins read whole rows.
func TestColumnPruningRule(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql    string
		needed []bool // nil: every column decoded
	}{
		{`SELECT item FROM orders WHERE price > 1 EMIT CHANGES;`, []bool{true, false, true}},
		{`SELECT id FROM orders EMIT CHANGES;`, []bool{false, false, false}},
		{`SELECT id, item, qty, price FROM orders EMIT CHANGES;`, nil},
		{`SELECT id FROM timed EMIT CHANGES;`, []bool{true, false}},
		{`SELECT o.id, name FROM orders o JOIN users u ON o.id = u.id EMIT CHANGES;`, nil},
	}
	for _, c := range cases {
		q, rules := fired(t, cat, c.sql)
		if got := slices.Contains(rules, "column-pruning"); got != (c.needed != nil) {
			t.Errorf("%s: fired %t (rules %q)", c.sql, got, rules)
		}
		for _, sub := range q.Topology.Subs {
			if got := sub.Source.Needed; !slices.Equal(got, c.needed) && sub.Source.Topic != "users" {
				t.Errorf("%s: %s needs %v, want %v", c.sql, sub.Source.Topic, got, c.needed)
			}
		}
	}
}

// The rule also tells the source whether the query reads ROWTIME and
// ROWOFFSET, which its decoder otherwise boxes for every record, in any
// clause; joins read whole rows and are told nothing (both read).
func TestColumnPruningPseudoColumns(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql                   string
		timeUnread, offUnread bool
	}{
		{`SELECT item FROM orders WHERE price > 1 EMIT CHANGES;`, true, true},
		{`SELECT id, item, qty, price FROM orders EMIT CHANGES;`, true, true},
		{`SELECT item, ROWTIME AS t FROM orders EMIT CHANGES;`, false, true},
		{`SELECT item FROM orders WHERE ROWOFFSET > 10 EMIT CHANGES;`, true, false},
		{`SELECT item, COUNT(*) FROM orders GROUP BY item HAVING MAX(ROWTIME) > 0 EMIT CHANGES;`, false, true},
		{`SELECT o.id, name FROM orders o JOIN users u ON o.id = u.id EMIT CHANGES;`, false, false},
	}
	for _, c := range cases {
		q, _ := fired(t, cat, c.sql)
		src := q.Topology.Subs[0].Source
		if src.RowTimeUnread != c.timeUnread || src.RowOffsetUnread != c.offUnread {
			t.Errorf("%s: ROWTIME unread %t, ROWOFFSET unread %t; want %t, %t", c.sql, src.RowTimeUnread, src.RowOffsetUnread, c.timeUnread, c.offUnread)
		}
	}
}
