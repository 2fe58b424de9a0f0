package engine_test

import (
	"context"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// TestPullQueryRules refuses, with ksqlDB's words, what pull queries
// cannot do, and applies the key-lookup rules only with table scans
// disabled (ksql.query.pull.table.scan.enabled=false).
func TestPullQueryRules(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE STREAM s (id INT KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE agg AS SELECT id, COUNT(*) AS n FROM s GROUP BY id;`)
	const hint = " See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."
	noScan := "SET 'ksql.query.pull.table.scan.enabled'='false';\n"
	tests := []struct{ sql, want string }{
		{"SELECT * FROM agg WHERE id = 1 GROUP BY id;", "not supported: Pull queries don't support GROUP BY clauses." + hint},
		{"SELECT * FROM agg WINDOW TUMBLING (SIZE 1 SECOND) WHERE id = 1;", "not supported: Pull queries don't support WINDOW clauses." + hint},
		{"SELECT * FROM agg a JOIN agg b ON a.id = b.id;", "not supported: Pull queries don't support JOIN clauses." + hint},
		{"SELECT id, ROWPARTITION FROM agg;", "not supported: Pull queries don't support the following columns in SELECT clauses: `ROWPARTITION`"},
		{"SELECT id FROM agg WHERE ROWOFFSET > 1;", "not supported: Pull queries don't support the following columns in WHERE clauses: `ROWOFFSET`"},
		{"SELECT * FROM agg LIMIT -1;", "not supported: Pull queries don't support negative integers in the LIMIT clause." + hint},
		{"SELECT * FROM agg WHERE id IN ('1', 2);", "type error: '1' can not be converted to the type of the key column: ID INTEGER KEY"},
		{"SELECT * FROM agg WHERE id IN (NULL);", "invalid statement: Primary key columns can not be NULL: (ID = null)"},
		{"SELECT * FROM agg WHERE id = 1 AND WINDOWSTART = 10;", "invalid statement: WHERE column 'WINDOWSTART' cannot be resolved"},
		{"SELECT n, n FROM agg WHERE id = 1;", "invalid statement: Duplicate value columns found in schema: `N` BIGINT"},
		{noScan + "SELECT * FROM agg WHERE n = 1;", "not supported: WHERE clause missing key column for disjunct: (N = 1)"},
		{noScan + "SELECT * FROM agg WHERE id <> 1;", "not supported: Bound on key columns '[`ID` INTEGER KEY]' must currently be '='. "},
		{noScan + "SELECT * FROM agg WHERE 0 < id AND id < 9;", "not supported: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate"},
		{noScan + "SELECT * FROM agg WHERE id + 1 = 2;", "not supported: A comparison must directly reference a key column."},
		{noScan + "SELECT * FROM agg WHERE id = n;", "not supported: A comparison must be between a key column and a resolvable expression."},
		// Allowed without scans: the key pinned, other conditions filter.
		{noScan + "SELECT * FROM agg WHERE id IN (1, 2) AND n > 1;", ""},
		// Allowed with scans (the default).
		{"SELECT * FROM agg WHERE n = 1;", ""},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			res, err := e.Execute(ctx, tt.sql)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("error:\n got %q\nwant %q", got, tt.want)
			}
			for _, r := range res {
				if r.Rows != nil {
					r.Rows.Close()
				}
			}
			execute(t, e, "UNSET 'ksql.query.pull.table.scan.enabled';")
		})
	}
}
