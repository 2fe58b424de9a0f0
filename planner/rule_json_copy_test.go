package planner_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/planner/logical"
)

// The json-copy rule gives a stream query that only filters and projects
// JSON into JSON an exec.JSONCopy: which value columns are copied as
// text, which computed, whether the key's bytes carry over, and (in
// Evaluated) the only source columns the filter and the computed columns
// read. Any other shape keeps its chain alone.
func TestJSONCopyRule(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql string
		// from is the copy's From (nil: no copy), evaluated the source's
		// Evaluated, key whether the key is copied.
		from      []int
		evaluated []bool
		key       bool
		tsCol     int
	}{
		{sql: `CREATE STREAM c1 AS SELECT * FROM orders;`, from: []int{0, 1, 2}, key: true, tsCol: -1},
		{sql: `CREATE STREAM c2 AS SELECT id, price AS p, item FROM orders WHERE qty > 2;`, from: []int{2, 0}, evaluated: []bool{false, true, false}, key: true, tsCol: -1},
		{sql: `CREATE STREAM c3 AS SELECT id, UCASE(item) AS u, qty FROM orders;`, from: []int{-1, 1}, evaluated: []bool{true, false, false}, key: true, tsCol: -1},
		{sql: `CREATE STREAM c4 AS SELECT * FROM timed;`, from: []int{0, 1}, key: true, tsCol: 0},
		// Not JSON, a table, a re-key, a flat-map, an aggregate: the chain.
		{sql: `CREATE STREAM n1 AS SELECT * FROM orders_csv;`},
		{sql: `CREATE TABLE n2 AS SELECT * FROM users;`},
		{sql: `CREATE STREAM n3 AS SELECT * FROM orders PARTITION BY item;`},
		{sql: `CREATE STREAM n4 AS SELECT id, EXPLODE(ARRAY[qty]) AS q FROM orders;`},
		{sql: `CREATE TABLE n5 AS SELECT item, COUNT(*) AS n FROM orders GROUP BY item;`},
		{sql: `CREATE STREAM n6 WITH (VALUE_FORMAT='DELIMITED') AS SELECT * FROM orders;`},
	}
	for _, c := range cases {
		q, rules := fired(t, cat, c.sql)
		if got := slices.Contains(rules, "json-copy"); got != (c.from != nil) {
			t.Errorf("%s: fired %t (rules %q)", c.sql, got, rules)
		}
		var copied bool
		for _, sub := range q.Topology.Subs {
			if sub.Copy == nil {
				continue
			}
			copied = true
			if !slices.Equal(sub.Copy.From, c.from) || (sub.Copy.KeyType != nil) != c.key || sub.Copy.TsCol != c.tsCol {
				t.Errorf("%s: copy from %v key %t ts %d, want %v %t %d", c.sql, sub.Copy.From, sub.Copy.KeyType != nil, sub.Copy.TsCol, c.from, c.key, c.tsCol)
			}
			if !slices.Equal(sub.Source.Evaluated, c.evaluated) {
				t.Errorf("%s: evaluated %v, want %v", c.sql, sub.Source.Evaluated, c.evaluated)
			}
		}
		if copied != (c.from != nil) {
			t.Errorf("%s: copy set %t", c.sql, copied)
		}
		// The logical plan names the copy above the chain it stands for.
		if got := strings.Contains(logical.Print(q.Logical), "json copy ("); got != (c.from != nil) {
			t.Errorf("%s: logical plan names the copy: %t\n%s", c.sql, got, logical.Print(q.Logical))
		}
	}
}
