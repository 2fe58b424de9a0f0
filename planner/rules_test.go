package planner_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/planner"
)

// rulesCatalog is the catalog the rule tests plan against.
func rulesCatalog(t *testing.T) *planner.Catalog {
	t.Helper()
	cat := planner.NewCatalog()
	out := ddl(cat, `CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, qty INT, price DOUBLE) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE STREAM orders_csv (id VARCHAR KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='orders_csv', VALUE_FORMAT='DELIMITED', PARTITIONS=2);
CREATE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='users', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE TABLE accounts (id VARCHAR PRIMARY KEY, balance INT) WITH (KAFKA_TOPIC='accounts', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE STREAM timed (id BIGINT KEY, ts BIGINT, v VARCHAR) WITH (KAFKA_TOPIC='timed', VALUE_FORMAT='JSON', TIMESTAMP='ts', PARTITIONS=2);`)
	if strings.Contains(out, "rror") {
		t.Fatal(out)
	}
	return cat
}

// fired plans sql and returns the query and the rules that changed it.
func fired(t *testing.T, cat *planner.Catalog, sql string) (*planner.Query, []string) {
	t.Helper()
	q, err := planQuery(t, cat, sql, planner.Options{ServiceID: "test"})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return q, q.Rules
}

// TestRulesRunInOrder checks that Query.Rules lists the rules that
// changed a plan in the order the rule list runs them, and only those.
func TestRulesRunInOrder(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql  string
		want []string
	}{
		{`CREATE STREAM a AS SELECT id, item FROM orders WHERE ROWTIME > '2020';`, []string{"magic-timestamps", "column-pruning", "json-copy"}},
		{`CREATE STREAM b AS SELECT * FROM orders;`, []string{"json-copy"}},
		{`CREATE STREAM c AS SELECT id, item FROM orders WHERE ROWTIME > '2020' AND qty > 2 * 5;`, []string{"magic-timestamps", "constant-folding", "column-pruning", "json-copy"}},
		{`SELECT * FROM users EMIT CHANGES;`, []string{"scalable-push"}},
		{`SELECT item, COUNT(*) FROM orders GROUP BY item EMIT CHANGES;`, []string{"repartition", "column-pruning"}},
	}
	for _, c := range cases {
		if _, got := fired(t, cat, c.sql); !slices.Equal(got, c.want) {
			t.Errorf("%s: rules %q, want %q", c.sql, got, c.want)
		}
	}
}
