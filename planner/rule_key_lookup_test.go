package planner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// TestLookupKeys checks which WHERE clauses of a pull query go straight
// to their keys instead of scanning the table.
func TestLookupKeys(t *testing.T) {
	src := &planner.Source{Name: "T", Schema: types.Schema{Columns: []types.Column{
		{Name: "ID", Type: types.BigIntType, Key: true}, {Name: "N", Type: types.BigIntType},
	}}}
	tests := []struct {
		where string
		want  string // the keys, decoded; "scan" when there is no lookup
	}{
		{"id = 5", "[[5]]"},
		{"5 = ID", "[[5]]"},
		{"n > 1 AND id IN (1, 2, 3)", "[[1] [2] [3]]"},
		{"id = 5 OR id = 6", "scan"},
		{"id > 5", "scan"},
		{"id NOT IN (1, 2)", "scan"},
		{"n = 5", "scan"},
		{"id = n", "scan"},
		{"id = NULL", "scan"},
	}
	multi := &planner.Source{Name: "M", Schema: types.Schema{Columns: []types.Column{
		{Name: "A", Type: types.StringType, Key: true}, {Name: "B", Type: types.BigIntType, Key: true}, {Name: "N", Type: types.BigIntType},
	}}}
	for _, tt := range []struct{ where, want string }{
		{"a = 'x' AND b = 2", "[[x 2]]"},
		{"b = 2 AND n > 0 AND 'x' = a", "[[x 2]]"},
		{"a = 'x'", "scan"},
		{"a IN ('x', 'y') AND b = 2", "scan"},
		{"a = 'x' OR b = 2", "scan"},
	} {
		p, err := parser.ParseOne("SELECT * FROM m WHERE " + tt.where + ";")
		if err != nil {
			t.Fatal(err)
		}
		got := "scan"
		if keys, ok := planner.LookupKeys(p.(*parser.Select).Where, multi); ok {
			got = fmt.Sprint(keys)
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.where, got, tt.want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			p, err := parser.ParseOne("SELECT * FROM t WHERE " + tt.where + ";")
			if err != nil {
				t.Fatal(err)
			}
			keys, ok := planner.LookupKeys(p.(*parser.Select).Where, src)
			got := "scan"
			if ok {
				got = fmt.Sprint(keys)
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
