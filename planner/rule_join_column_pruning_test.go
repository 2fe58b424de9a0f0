package planner_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// The join-column-pruning rule narrows what a join input's repartition
// topic carries to the columns the query reads anywhere (SELECT, WHERE,
// GROUP BY, HAVING, PARTITION BY, every join's ON); a `*` keeps them all.
func TestJoinColumnPruningRule(t *testing.T) {
	cat := keyingCatalog(t)
	if out := ddl(cat, `CREATE STREAM visits (visit_id INT KEY, user_id VARCHAR, page VARCHAR, region VARCHAR, ms BIGINT) WITH (KAFKA_TOPIC='visits', VALUE_FORMAT='JSON', PARTITIONS=2);`); strings.Contains(out, "rror") {
		t.Fatal(out)
	}
	cases := []struct {
		name, sql string
		// carried: each join repartition topic's value columns, in
		// topology order; explain: its lines in the logical plan.
		carried [][]string
		explain []string
	}{
		{name: "stream-stream", sql: `SELECT v.page, o.x FROM views v JOIN odd o WITHIN 1 MINUTE ON v.user_id = o.user_id EMIT CHANGES;`,
			carried: [][]string{{"V_USER_ID", "V_PAGE"}}, explain: []string{"repartition by V.USER_ID (carries V_USER_ID, V_PAGE)"}},
		{name: "stream-table, the stream re-keyed", sql: `SELECT v.user_id, region FROM views v JOIN users u ON v.user_id = u.id EMIT CHANGES;`,
			carried: [][]string{{"V_USER_ID"}}, explain: []string{"repartition by V.USER_ID (carries V_USER_ID)"}},
		{name: "a column read only by WHERE", sql: `SELECT v.user_id, u.region FROM visits v JOIN users u ON v.user_id = u.id WHERE ms > 5 EMIT CHANGES;`,
			carried: [][]string{{"V_USER_ID", "V_MS"}}, explain: []string{"repartition by V.USER_ID (carries V_USER_ID, V_MS)"}},
		{name: "GROUP BY and HAVING", sql: `CREATE TABLE per_page AS SELECT v.page, COUNT(*) AS n FROM visits v JOIN users u ON v.user_id = u.id GROUP BY v.page HAVING MAX(ms) > 1;`,
			carried: [][]string{{"V_USER_ID", "V_PAGE", "V_MS"}}, explain: []string{"repartition by V.PAGE", "repartition by V.USER_ID (carries V_USER_ID, V_PAGE, V_MS)"}},
		{name: "chained joins", sql: `SELECT c.user_id, boss FROM clicks c JOIN users u ON c.user_id = u.id JOIN regions r ON u.region = r.id EMIT CHANGES;`,
			carried: [][]string{{"C_USER_ID", "C_ROWTIME", "C_ROWPARTITION", "C_ROWOFFSET", "U_ID", "U_REGION", "U_ROWTIME", "U_ROWPARTITION", "U_ROWOFFSET",
				"KSQL_INTERNAL_J1_KSQL_INTERNAL_JOINKEY", "KSQL_INTERNAL_J1_ROWTIME", "KSQL_INTERNAL_J1_ROWPARTITION", "KSQL_INTERNAL_J1_ROWOFFSET"}},
			explain: []string{"repartition by U.REGION (carries C_USER_ID, U_ID, U_REGION)"}},
		{name: "a column read only by a later join's ON", sql: `SELECT v.page, boss FROM visits v JOIN users u ON v.user_id = u.id JOIN regions r ON v.region = r.id EMIT CHANGES;`,
			carried: [][]string{{"V_USER_ID", "V_PAGE", "V_REGION"}, {"KSQL_INTERNAL_V-left_JOINKEY", "V_USER_ID", "V_PAGE", "V_REGION", "V_ROWTIME", "V_ROWPARTITION", "V_ROWOFFSET",
				"U_ID", "U_ROWTIME", "U_ROWPARTITION", "U_ROWOFFSET", "KSQL_INTERNAL_J1_KSQL_INTERNAL_JOINKEY", "KSQL_INTERNAL_J1_ROWTIME", "KSQL_INTERNAL_J1_ROWPARTITION", "KSQL_INTERNAL_J1_ROWOFFSET"}},
			explain: []string{"repartition by V.REGION (carries V_USER_ID, V_PAGE, V_REGION, U_ID)", "repartition by V.USER_ID (carries V_USER_ID, V_PAGE, V_REGION)"}},
		{name: "SELECT *", sql: `SELECT * FROM views v JOIN odd o WITHIN 1 MINUTE ON v.user_id = o.user_id EMIT CHANGES;`,
			carried: [][]string{{"V_VIEW_ID", "V_USER_ID", "V_PAGE"}}, explain: []string{"repartition by V.USER_ID"}},
		{name: "every column read", sql: `SELECT v.view_id, v.user_id, v.page, o.x FROM views v JOIN odd o WITHIN 1 MINUTE ON v.user_id = o.user_id EMIT CHANGES;`,
			carried: [][]string{{"V_VIEW_ID", "V_USER_ID", "V_PAGE"}}, explain: []string{"repartition by V.USER_ID"}},
	}
	for _, c := range cases {
		q, rules := fired(t, cat, c.sql)
		pruned := slices.ContainsFunc(c.explain, func(l string) bool { return strings.Contains(l, "carries") })
		if got := slices.Contains(rules, "join-column-pruning"); got != pruned {
			t.Errorf("%s: fired %t (rules %q)", c.name, got, rules)
		}
		var explain []string
		for _, line := range strings.Split(logical.Print(q.Logical), "\n") {
			if i := strings.Index(line, "repartition by"); i >= 0 {
				explain = append(explain, line[i:])
			}
		}
		if !slices.Equal(explain, c.explain) {
			t.Errorf("%s: repartitions %q, want %q", c.name, explain, c.explain)
		}
		var carried [][]string
		for _, tp := range q.Topology.Internal {
			if !strings.Contains(tp.Name, "-Join") || !strings.HasSuffix(tp.Name, "-repartition") {
				continue
			}
			var written, read []string
			for _, sub := range q.Topology.Subs {
				for _, n := range sub.Nodes {
					if s, ok := n.(*exec.SinkNode); ok && s.Topic == tp.Name {
						written = columnNames(s.ValueCols)
						if len(s.ValueIdx) != len(s.ValueCols) {
							t.Errorf("%s: %s writes %d columns from %d slots", c.name, tp.Name, len(s.ValueCols), len(s.ValueIdx))
						}
					}
				}
				specs := []*exec.SourceSpec{sub.Source}
				for _, side := range sub.Sides {
					specs = append(specs, side.Source)
				}
				for _, spec := range specs {
					if spec.Topic == tp.Name {
						read = columnNames(spec.ValueCols)
					}
				}
			}
			if !slices.Equal(written, read) {
				t.Errorf("%s: %s written with %q, read with %q", c.name, tp.Name, written, read)
			}
			carried = append(carried, written)
		}
		if !slices.EqualFunc(carried, c.carried, slices.Equal[[]string]) {
			t.Errorf("%s: repartition topics carry %q, want %q", c.name, carried, c.carried)
		}
	}
}

func columnNames(cols []types.Column) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name)
	}
	return out
}

// TestJoinColumnPruningKnowsTheUnprunedLayout: what a pruned plan hands
// its readers as the layout of an older Sluice's plan (a repartition
// topic's RowsLegacy, a join side's LegacyColumns) is exactly what the
// same query planned without the rule writes and keeps, so that a query
// started before the rule reads its old records and store rows by name.
func TestJoinColumnPruningKnowsTheUnprunedLayout(t *testing.T) {
	cat := keyingCatalog(t)
	if out := ddl(cat, `CREATE STREAM visits (visit_id INT KEY, user_id VARCHAR, page VARCHAR, region VARCHAR, ms BIGINT) WITH (KAFKA_TOPIC='visits', VALUE_FORMAT='JSON', PARTITIONS=2);`); strings.Contains(out, "rror") {
		t.Fatal(out)
	}
	for _, sql := range []string{
		`SELECT v.page, o.x FROM views v JOIN odd o WITHIN 1 MINUTE ON v.user_id = o.user_id EMIT CHANGES;`,
		`SELECT v.page, o.x FROM views v FULL OUTER JOIN odd o WITHIN 1 MINUTE GRACE PERIOD 1 MINUTE ON v.user_id = o.user_id EMIT CHANGES;`,
		`SELECT v.user_id, region FROM views v JOIN users u ON v.user_id = u.id EMIT CHANGES;`,
		`SELECT c.user_id, boss FROM clicks c JOIN users u ON c.user_id = u.id JOIN regions r ON u.region = r.id EMIT CHANGES;`,
		`SELECT v.page, boss FROM visits v JOIN users u ON v.user_id = u.id JOIN regions r ON v.region = r.id EMIT CHANGES;`,
		`SELECT v.page, o.x, w.ms FROM views v JOIN odd o WITHIN 1 MINUTE ON v.user_id = o.user_id JOIN visits w WITHIN 1 MINUTE ON v.user_id = w.user_id EMIT CHANGES;`,
		`SELECT v.page, w.ms FROM views v JOIN odd o WITHIN 1 MINUTE ON v.user_id = o.user_id JOIN visits w WITHIN 1 MINUTE ON v.page = w.page EMIT CHANGES;`,
	} {
		pruned, err := planQuery(t, cat, sql, planner.Options{ServiceID: "test"})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if !slices.Contains(pruned.Rules, "join-column-pruning") {
			t.Errorf("%s: the rule did not fire (rules %q)", sql, pruned.Rules)
		}
		old, err := planQuery(t, cat, sql, planner.Options{ServiceID: "test", SkipRules: []string{"join-column-pruning"}})
		if err != nil {
			t.Fatalf("%s, unpruned: %v", sql, err)
		}
		newSides, newSpecs := joinLayouts(pruned.Topology)
		oldSides, oldSpecs := joinLayouts(old.Topology)
		if len(newSides) != len(oldSides) || len(newSpecs) != len(oldSpecs) {
			t.Fatalf("%s: %d join sides and %d repartition readers, unpruned %d and %d", sql, len(newSides), len(newSpecs), len(oldSides), len(oldSpecs))
		}
		legacies := 0
		for i, s := range newSides {
			if s.LegacyColumns != nil {
				legacies++
			}
			legacy := s.LegacyColumns
			if legacy == nil {
				legacy = s.Columns
			}
			if o := oldSides[i]; !slices.Equal(legacy, o.Columns) || len(o.Columns) != o.Width || len(s.Columns) != s.Width {
				t.Errorf("%s: join side %s: legacy layout %q (columns %q, width %d), unpruned %q (width %d)", sql, s.Name, legacy, s.Columns, s.Width, o.Columns, o.Width)
			}
		}
		for i, spec := range newSpecs {
			if spec.ValueProps.RowsLegacy != nil {
				legacies++
			}
			legacy := spec.ValueProps.RowsLegacy
			if legacy == nil {
				legacy = spec.ValueCols
			}
			if o := oldSpecs[i]; !cmp.Equal(legacy, o.ValueCols) {
				t.Errorf("%s: %s read with legacy layout %v, unpruned %v", sql, spec.Topic, legacy, o.ValueCols)
			}
		}
		if legacies == 0 {
			t.Errorf("%s: no join side or repartition reader knows a legacy layout", sql)
		}
	}
}

// joinLayouts lists a topology's join sides and the readers of its join
// repartition topics, in topology order.
func joinLayouts(top *exec.Topology) (sides []exec.JoinSide, specs []*exec.SourceSpec) {
	for _, sub := range top.Subs {
		for _, n := range sub.Nodes {
			if j, ok := n.(*exec.JoinNode); ok {
				sides = append(sides, j.Left, j.Right)
			}
		}
		for _, spec := range append([]*exec.SourceSpec{sub.Source}, func() []*exec.SourceSpec {
			var out []*exec.SourceSpec
			for _, side := range sub.Sides {
				out = append(out, side.Source)
			}
			return out
		}()...) {
			if strings.Contains(spec.Topic, "-Join") && strings.HasSuffix(spec.Topic, "-repartition") {
				specs = append(specs, spec)
			}
		}
	}
	return sides, specs
}
