package planner_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// TestCheckPull refuses, with ksqlDB's words, what pull queries cannot
// do, applies the key-lookup rules only with table scans disabled
// (Options.PullKeyLookupsOnly), and leaves push queries alone.
func TestCheckPull(t *testing.T) {
	cat := planner.NewCatalog()
	if out := ddl(cat, `CREATE TABLE agg (id INT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='agg', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE multi (a VARCHAR PRIMARY KEY, b INT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='multi', FORMAT='JSON', PARTITIONS=1);
CREATE STREAM s (id INT KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`); strings.Contains(out, "line ") {
		t.Fatal(out)
	}
	const hint = " See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."
	lookups := planner.Options{PullKeyLookupsOnly: true}
	noLimit := planner.Options{PullLimitDisabled: true}
	tests := []struct {
		sql  string
		opts planner.Options
		want string
	}{
		{"SELECT * FROM agg WHERE id = 1 GROUP BY id;", planner.Options{}, "not supported: Pull queries don't support GROUP BY clauses." + hint},
		{"SELECT * FROM agg WINDOW TUMBLING (SIZE 1 SECOND) WHERE id = 1;", planner.Options{}, "not supported: Pull queries don't support WINDOW clauses." + hint},
		{"SELECT * FROM agg a JOIN agg b ON a.id = b.id;", planner.Options{}, "not supported: Pull queries don't support JOIN clauses." + hint},
		{"SELECT * FROM agg PARTITION BY n;", planner.Options{}, "not supported: Pull queries don't support PARTITION BY clauses." + hint},
		{"SELECT * FROM s WHERE id = 1 HAVING COUNT(*) > 1;", planner.Options{}, "not supported: Pull queries don't support HAVING clauses." + hint},
		{"SELECT id, ROWPARTITION FROM agg;", planner.Options{}, "not supported: Pull queries don't support the following columns in SELECT clauses: `ROWPARTITION`"},
		{"SELECT id FROM s WHERE ROWOFFSET > 1 AND ROWPARTITION = 0;", planner.Options{}, "not supported: Pull queries don't support the following columns in WHERE clauses: `ROWOFFSET`, `ROWPARTITION`"},
		{"SELECT * FROM agg LIMIT -1;", planner.Options{}, "not supported: Pull queries don't support negative integers in the LIMIT clause." + hint},
		{"SELECT * FROM agg LIMIT 1;", noLimit, "not supported: LIMIT clause in pull queries is currently disabled. You can enable them by setting ksql.query.pull.limit.clause.enabled=true." + hint},
		{"SELECT * FROM agg WHERE id IN ('1', 2);", planner.Options{}, "type error: '1' can not be converted to the type of the key column: ID INTEGER KEY"},
		{"SELECT * FROM agg WHERE id IN (NULL);", planner.Options{}, "invalid statement: Primary key columns can not be NULL: (ID = null)"},
		{"SELECT * FROM agg WHERE id = 1 AND WINDOWSTART = 10;", planner.Options{}, "invalid statement: WHERE column 'WINDOWSTART' cannot be resolved"},
		{"SELECT n, n FROM agg WHERE id = 1;", planner.Options{}, "invalid statement: Duplicate value columns found in schema: `N` BIGINT"},
		{"SELECT * FROM agg WHERE n = 1;", lookups, "not supported: WHERE clause missing key column for disjunct: (N = 1)"},
		{"SELECT * FROM agg WHERE id <> 1;", lookups, "not supported: Bound on key columns '[`ID` INTEGER KEY]' must currently be '='. "},
		{"SELECT * FROM agg WHERE 0 < id AND id < 9;", lookups, "not supported: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate"},
		{"SELECT * FROM agg WHERE id = 1 AND id IN (1, 2);", lookups, "not supported: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate"},
		{"SELECT * FROM agg WHERE id + 1 = 2;", lookups, "not supported: A comparison must directly reference a key column."},
		{"SELECT * FROM agg WHERE id = n;", lookups, "not supported: A comparison must be between a key column and a resolvable expression."},
		{"SELECT * FROM multi WHERE a = 'x';", lookups, "not supported: Multi-column sources must specify every key in the WHERE clause"},
		// Allowed without scans: the key pinned in every disjunct, other
		// conditions filter.
		{"SELECT * FROM agg WHERE id IN (1, 2) AND n > 1;", lookups, ""},
		{"SELECT * FROM agg WHERE id = 1 OR id = 2;", lookups, ""},
		{"SELECT * FROM multi WHERE a = 'x' AND b = 1;", lookups, ""},
		// Allowed with scans (the default), and on streams.
		{"SELECT * FROM agg WHERE n = 1;", planner.Options{}, ""},
		{"SELECT * FROM s WHERE v <> 1 LIMIT 2;", lookups, ""},
		// Push queries and unknown sources are not checked here.
		{"SELECT id, ROWPARTITION FROM agg EMIT CHANGES;", planner.Options{}, ""},
		{"SELECT * FROM nowhere GROUP BY id;", planner.Options{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st, err := parser.ParseOne(tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if err := planner.CheckPull(cat, st.(*parser.Select), tt.opts); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("error:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
