package planner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/planner/logical"
)

// TestLookupKeys checks which WHERE clauses of a pull query go straight
// to their keys instead of scanning the table: the keys the plan's store
// read holds.
func TestLookupKeys(t *testing.T) {
	cat := planner.NewCatalog()
	if out := ddl(cat, `CREATE TABLE t (id BIGINT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='t', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE m (a VARCHAR PRIMARY KEY, b BIGINT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='m', FORMAT='JSON', PARTITIONS=1);`); strings.Contains(out, "line ") {
		t.Fatal(out)
	}
	tests := []struct {
		table, where string
		want         string // the keys, decoded; "scan" when there is no lookup
	}{
		{"t", "id = 5", "[[5]]"},
		{"t", "5 = ID", "[[5]]"},
		{"t", "n > 1 AND id IN (1, 2, 3)", "[[1] [2] [3]]"},
		{"t", "id = 5 OR id = 6", "[[5] [6]]"},
		{"t", "id = 5 OR (id IN (6, 5) AND n > 1)", "[[5] [6]]"},
		{"t", "id = 5 OR id > 6", "scan"},
		{"t", "id = 5 OR n = 6", "scan"},
		{"t", "id > 5", "scan"},
		{"t", "id NOT IN (1, 2)", "scan"},
		{"t", "n = 5", "scan"},
		{"t", "id = n", "scan"},
		{"t", "id = CAST(NULL AS BIGINT)", "scan"},
		{"m", "a = 'x' AND b = 2", "[[x 2]]"},
		{"m", "b = 2 AND n > 0 AND 'x' = a", "[[x 2]]"},
		{"m", "a = 'x'", "scan"},
		{"m", "a IN ('x', 'y') AND b = 2", "scan"},
		{"m", "a = 'x' OR b = 2", "scan"},
		{"m", "(a = 'x' AND b = 2) OR (b = 3 AND a = 'y')", "[[x 2] [y 3]]"},
	}
	for _, tt := range tests {
		t.Run(tt.table+" "+tt.where, func(t *testing.T) {
			p, err := parser.ParseOne("SELECT * FROM " + tt.table + " WHERE " + tt.where + ";")
			if err != nil {
				t.Fatal(err)
			}
			q, err := planner.PlanQuery(cat, p.(*parser.Select), nil, "pull", planner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			read := q.StoreRead()
			if read == nil {
				t.Fatal("the plan reads no store")
			}
			got := "scan"
			if read.Keys != nil {
				got = fmt.Sprint(read.Keys)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// The key-lookup rule turns a pull query's store scan into a lookup of
// the keys its WHERE pins, which its store read hands to the engine;
// a push query, a stream, or a WHERE that pins no key keeps its scan. (A
// pull query with a JOIN is refused before it is planned.)
func TestKeyLookupRule(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql, read string // read: the logical plan's leaf
		keys      string // fmt of the store read's keys; "" for nil
	}{
		{`SELECT * FROM users WHERE id = 'a';`, "store lookup USERS (keys [a])", "[[a]]"},
		{`SELECT name FROM users WHERE id IN ('a', 'b') AND name <> 'x';`, "store lookup USERS (keys [a], [b])", "[[a] [b]]"},
		{`SELECT * FROM users WHERE name = 'a';`, "store scan USERS (every row)", ""},
		{`SELECT * FROM users;`, "store scan USERS (every row)", ""},
		{`SELECT * FROM users WHERE id = 'a' EMIT CHANGES;`, "source USERS (table, topic users)", ""},
		{`SELECT * FROM orders WHERE id = 'a';`, "source ORDERS (stream, topic orders)", ""},
	}
	for _, c := range cases {
		q, rules := fired(t, cat, c.sql)
		plan := logical.Print(q.Logical)
		lines := strings.Split(strings.TrimSpace(plan), "\n")
		if leaf := strings.TrimLeft(lines[len(lines)-1], " │└├─"); leaf != c.read {
			t.Errorf("%s: reads %q, want %q\n%s", c.sql, leaf, c.read, plan)
		}
		if reads := q.StoreRead() != nil; reads != strings.HasPrefix(c.read, "store ") {
			t.Errorf("%s: the topology reads a store: %v, the logical plan: %s", c.sql, reads, c.read)
		}
		keys := ""
		if read := q.StoreRead(); read != nil && read.Keys != nil {
			keys = fmt.Sprint(read.Keys)
		}
		if keys != c.keys || slices.Contains(rules, "key-lookup") != (c.keys != "") {
			t.Errorf("%s: keys %q (rules %q), want %q", c.sql, keys, rules, c.keys)
		}
	}
}
