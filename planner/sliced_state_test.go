package planner_test

import (
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

// TestSlicedWindows: which aggregations keep their state per slice of
// the advance. A command issued before plan version 4, whose store
// holds windows, keeps windows; so does sluice.compat=ksqldb, whose EMIT
// FINAL drops windows by the newest window start.
func TestSlicedWindows(t *testing.T) {
	cat := rulesCatalog(t)
	const hop = ` FROM orders WINDOW HOPPING (SIZE 10 SECONDS, ADVANCE BY 2 SECONDS) GROUP BY item`
	for _, c := range []struct {
		name, sql string
		opts      planner.Options
		sliced    bool
	}{
		{"count, sum and min of integers", `SELECT item, COUNT(*), SUM(qty), MIN(qty), MAX(id)` + hop + ` EMIT FINAL`, planner.Options{}, true},
		{"current plan version", `SELECT item, COUNT(*)` + hop + ` EMIT FINAL`, planner.Options{PlanVersion: planner.CurrentPlanVersion}, true},
		{"plan version 3", `SELECT item, COUNT(*)` + hop + ` EMIT FINAL`, planner.Options{PlanVersion: 3}, false},
		{"ksqldb compat", `SELECT item, COUNT(*)` + hop + ` EMIT FINAL`, planner.Options{Compat: planner.CompatKsqlDB}, false},
		{"emit changes", `SELECT item, COUNT(*)` + hop + ` EMIT CHANGES`, planner.Options{}, false},
		{"sum of doubles", `SELECT item, SUM(price)` + hop + ` EMIT FINAL`, planner.Options{}, false},
		{"average", `SELECT item, AVG(qty)` + hop + ` EMIT FINAL`, planner.Options{}, false},
		{"order-dependent", `SELECT item, LATEST_BY_OFFSET(qty)` + hop + ` EMIT FINAL`, planner.Options{}, false},
		{"count distinct", `SELECT item, COUNT_DISTINCT(qty)` + hop + ` EMIT FINAL`, planner.Options{}, false},
		{"size not a multiple of the advance", `SELECT item, COUNT(*) FROM orders WINDOW HOPPING (SIZE 10 SECONDS, ADVANCE BY 3 SECONDS) GROUP BY item EMIT FINAL`, planner.Options{}, false},
		{"tumbling", `SELECT item, COUNT(*) FROM orders WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY item EMIT FINAL`, planner.Options{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.ServiceID = "test"
			q, err := planQuery(t, cat, `CREATE TABLE t AS `+c.sql+`;`, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			agg, ok := q.Topology.Table.(*exec.AggregateNode)
			if !ok {
				t.Fatalf("table is %T, not an aggregation", q.Topology.Table)
			}
			if agg.Sliced != c.sliced {
				t.Errorf("sliced %v, want %v: %s", agg.Sliced, c.sliced, agg.Describe())
			}
		})
	}
}
