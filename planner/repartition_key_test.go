package planner_test

import (
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

// A GROUP BY's repartition topic names its key fields as ksqlDB does (the
// grouped column, or a generated alias), so that a JSON key's bytes, and
// with them its partition, are ksqlDB's; a query whose command predates
// plan version 2 keeps the internal names its state was partitioned by.
func TestRepartitionKeyNames(t *testing.T) {
	cat := rulesCatalog(t)
	cases := []struct {
		sql     string
		version int
		want    []string
	}{
		{`CREATE TABLE a WITH (KEY_FORMAT='JSON') AS SELECT item, qty, COUNT(*) AS n FROM orders GROUP BY item, qty;`, 0, []string{"ITEM", "QTY"}},
		{`CREATE TABLE b WITH (KEY_FORMAT='JSON') AS SELECT item, qty, COUNT(*) AS n FROM orders GROUP BY item, qty;`, planner.CurrentPlanVersion, []string{"ITEM", "QTY"}},
		{`CREATE TABLE c WITH (KEY_FORMAT='JSON') AS SELECT UCASE(item) AS u, qty, COUNT(*) AS n FROM orders GROUP BY UCASE(item), qty;`, 0, []string{"KSQL_COL_0", "QTY"}},
		{`CREATE TABLE d WITH (KEY_FORMAT='JSON') AS SELECT item, qty, COUNT(*) AS n FROM orders GROUP BY item, qty;`, 1, []string{"KSQL_INTERNAL_GROUP_0", "KSQL_INTERNAL_GROUP_1"}},
	}
	for _, c := range cases {
		q, err := planQuery(t, cat, c.sql, planner.Options{ServiceID: "test", PlanVersion: c.version})
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		var got []string
		for _, sub := range q.Topology.Subs {
			for _, n := range sub.Nodes {
				if s, ok := n.(*exec.SinkNode); ok && s.Internal {
					for _, k := range s.KeyCols {
						got = append(got, k.Name)
					}
				}
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s (plan version %d): repartition key %q, want %q", c.sql, c.version, got, c.want)
		}
	}
}
