package planner_test

import (
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

// TestPredicatePushdownPlanVersion: a join's WHERE part that reads one
// stream input filters that input (here the stream of a stream-table
// join, before its repartition) under the current plan version; a
// command issued under plan version 2, whose repartition topic and
// stores hold unfiltered rows, keeps the whole WHERE above the join.
// The rows the filters pass are checked by evaluating them.
func TestPredicatePushdownPlanVersion(t *testing.T) {
	cat := rulesCatalog(t)
	const sql = `CREATE STREAM big WITH (KAFKA_TOPIC='big') AS SELECT o.item, o.qty, u.name FROM orders o JOIN users u ON o.item = u.id WHERE o.qty > 10 AND u.name <> 'x';`
	for _, c := range []struct {
		version int
		pushed  bool
	}{{0, true}, {planner.CurrentPlanVersion, true}, {2, false}, {1, false}} {
		q, err := planQuery(t, cat, sql, planner.Options{ServiceID: "test", PlanVersion: c.version})
		if err != nil {
			t.Fatalf("plan version %d: %v", c.version, err)
		}
		if got := slices.Contains(q.Rules, "predicate-pushdown"); got != c.pushed {
			t.Errorf("plan version %d: rules %v, predicate-pushdown applied %v, want %v", c.version, q.Rules, got, c.pushed)
		}
		// The filters of the sub-topology writing the repartition topic
		// (before it) and of the join's (after the join).
		var before, after []string
		for _, sub := range q.Topology.Subs {
			joined := false
			for _, n := range sub.Nodes {
				switch x := n.(type) {
				case *exec.JoinNode:
					joined = true
				case *exec.FilterNode:
					if joined {
						after = append(after, x.Text)
					} else {
						before = append(before, x.Text)
					}
					// The predicate at work on rows of its side: the stream's
					// row as read ([ID, ITEM, QTY, PRICE, ROWTIME, …]) before
					// the join, the joined row after.
					if !joined {
						row := []any{"o1", "i1", int32(11), 1.0, int64(0), int32(0), int64(0)}
						if pass, _ := x.Pred(row).(bool); !pass {
							t.Errorf("plan version %d: %s rejects qty 11", c.version, x.Text)
						}
						row[2] = int32(10)
						if pass, _ := x.Pred(row).(bool); pass {
							t.Errorf("plan version %d: %s passes qty 10", c.version, x.Text)
						}
					}
				}
			}
		}
		wantBefore, wantAfter := []string{"O.QTY > 10"}, []string{"U.NAME <> 'x'"}
		if !c.pushed {
			wantBefore, wantAfter = nil, []string{"O.QTY > 10 AND U.NAME <> 'x'"}
		}
		if !slices.Equal(before, wantBefore) || !slices.Equal(after, wantAfter) {
			t.Errorf("plan version %d: filters before the join %q, after %q; want %q, %q", c.version, before, after, wantBefore, wantAfter)
		}
	}
}
