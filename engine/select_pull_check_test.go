package engine_test

import (
	"context"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// TestPullQueryRules: the planner's pull-query checks (the validation
// stage of planner.PlanQuery, tested case by case in planner) run on
// every SELECT without EMIT, with the session's properties, before the
// table's state is looked for: a refusal comes with ksqlDB's words even
// on a table no query keeps; the key-lookup rules apply only with table scans disabled
// (ksql.query.pull.table.scan.enabled=false) and LIMIT is refused only
// with ksql.query.pull.limit.clause.enabled=false. An offline engine runs
// a SELECT without EMIT on a stream as a push query, unchecked.
func TestPullQueryRules(t *testing.T) {
	ctx := context.Background()
	e := pullRulesEngine(t)
	noScan := "SET 'ksql.query.pull.table.scan.enabled'='false';\n"
	noLimit := "SET 'ksql.query.pull.limit.clause.enabled'='false';\n"
	noRange := "SET 'ksql.query.pull.range.scan.enabled'='false';\n"
	tests := []struct{ sql, want string }{
		{"SELECT * FROM agg WHERE id = 1 GROUP BY id;", "not supported: Pull queries don't support GROUP BY clauses." + pullHint},
		{"SELECT * FROM plain a JOIN plain b ON a.id = b.id;", "not supported: Pull queries don't support JOIN clauses." + pullHint},
		{"SELECT id, ROWPARTITION FROM plain;", "not supported: Pull queries don't support the following columns in SELECT clauses: `ROWPARTITION`"},
		// A CDC table's store keeps rows, not the changes that made them.
		{"SELECT id, CDC_OP, CDC_SOURCE['lsn'] FROM cdc;", "not supported: Pull queries don't support the following columns in SELECT clauses: `CDC_OP`, `CDC_SOURCE`"},
		{"SELECT * FROM cdc WHERE CDC_TS_MS > 0;", "not supported: Pull queries don't support the following columns in WHERE clauses: `CDC_TS_MS`"},
		{"SELECT * FROM cdc WHERE id = 1;", ""},
		// A column of that name on a table without an envelope is a column.
		{"SELECT id, cdc_op FROM plain_cdc_named;", ""},
		{"SELECT * FROM plain WHERE id = 1;", "The `PLAIN` table isn't queryable. To derive a queryable table, you can do 'CREATE TABLE QUERYABLE_PLAIN AS SELECT * FROM PLAIN'." + pullHint},
		{"SELECT * FROM agg WHERE id IN (NULL);", "invalid statement: Primary key columns can not be NULL: (ID = null)"},
		{noScan + "SELECT * FROM agg WHERE n = 1;", "not supported: WHERE clause missing key column for disjunct: (N = 1)"},
		{noScan + "SELECT * FROM agg WHERE id <> 1;", "not supported: Bound on key columns '[`ID` INTEGER KEY]' must currently be '='. "},
		// One bound on the key: a range scan, unless range scans are off
		// too, when it would take the table scan that is off.
		{noScan + "SELECT * FROM agg WHERE id > 1;", ""},
		{noScan + noRange + "SELECT * FROM agg WHERE id > 1;", "not supported: Query requires table scan to be enabled. Table scans can be enabled by setting ksql.query.pull.table.scan.enabled=true"},
		{noLimit + "SELECT * FROM agg LIMIT 1;", "not supported: LIMIT clause in pull queries is currently disabled. You can enable them by setting ksql.query.pull.limit.clause.enabled=true." + pullHint},
		// Allowed without scans: the key pinned, other conditions filter.
		{noScan + "SELECT * FROM agg WHERE id IN (1, 2) AND n > 1;", ""},
		// Allowed with scans and LIMIT (the defaults).
		{"SELECT * FROM agg WHERE n = 1 LIMIT 1;", ""},
		// A push query on this offline engine.
		{"SELECT id, ROWPARTITION FROM s LIMIT 0;", ""},
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
			execute(t, e, "UNSET 'ksql.query.pull.table.scan.enabled';\nUNSET 'ksql.query.pull.limit.clause.enabled';\nUNSET 'ksql.query.pull.range.scan.enabled';")
		})
	}
}

// TestExplainPullRefusedAsRun: EXPLAIN of a pull query that running
// would refuse fails with the same error, one shape of each family of
// refusals: a clause, a LIMIT, a pseudo column, a value selected twice,
// window bounds on a table without windows, a key value, a WHERE that
// pins no key without table scans, and a table no query keeps.
func TestExplainPullRefusedAsRun(t *testing.T) {
	ctx := context.Background()
	e := pullRulesEngine(t)
	tests := []struct{ set, sql, want string }{
		{"", "SELECT * FROM agg WHERE id = 1 GROUP BY id;", "not supported: Pull queries don't support GROUP BY clauses." + pullHint},
		{"", "SELECT * FROM agg LIMIT -1;", "not supported: Pull queries don't support negative integers in the LIMIT clause." + pullHint},
		{"", "SELECT id, ROWOFFSET FROM agg;", "not supported: Pull queries don't support the following columns in SELECT clauses: `ROWOFFSET`"},
		{"", "SELECT n, n FROM agg WHERE id = 1;", "invalid statement: Duplicate value columns found in schema: `N` BIGINT"},
		{"", "SELECT * FROM agg WHERE WINDOWSTART = 10;", "invalid statement: WHERE column 'WINDOWSTART' cannot be resolved"},
		{"", "SELECT * FROM agg WHERE id IN (NULL);", "invalid statement: Primary key columns can not be NULL: (ID = null)"},
		{"SET 'ksql.query.pull.table.scan.enabled'='false';", "SELECT * FROM agg WHERE n = 1;", "not supported: WHERE clause missing key column for disjunct: (N = 1)"},
		{"", "SELECT * FROM plain;", "The `PLAIN` table isn't queryable. To derive a queryable table, you can do 'CREATE TABLE QUERYABLE_PLAIN AS SELECT * FROM PLAIN'." + pullHint},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			if tt.set != "" {
				execute(t, e, tt.set)
				defer execute(t, e, "UNSET 'ksql.query.pull.table.scan.enabled';")
			}
			for _, sql := range []string{tt.sql, "EXPLAIN " + tt.sql} {
				res, err := e.Execute(ctx, sql)
				for _, r := range res {
					if r.Rows != nil {
						r.Rows.Close()
					}
				}
				if err == nil {
					t.Fatalf("%s: no error, want %q", sql, tt.want)
				}
				if got := err.Error(); got != tt.want {
					t.Fatalf("%s: error:\n got %q\nwant %q", sql, got, tt.want)
				}
			}
		})
	}
}

// pullRulesEngine is an in-memory engine with a stream S, a table AGG a
// query keeps, and a table PLAIN none keeps.
func pullRulesEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := engine.Open(context.Background(), engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	execute(t, e, `
		CREATE STREAM s (id INT KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE agg AS SELECT id, COUNT(*) AS n FROM s GROUP BY id;
		CREATE TABLE plain (id INT PRIMARY KEY, n INT) WITH (KAFKA_TOPIC='plain', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE SOURCE TABLE cdc (id INT PRIMARY KEY, n INT) WITH (KAFKA_TOPIC='cdc', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM', PARTITIONS=1);
		CREATE SOURCE TABLE plain_cdc_named (id INT PRIMARY KEY, cdc_op STRING) WITH (KAFKA_TOPIC='named', VALUE_FORMAT='JSON', PARTITIONS=1);`)
	return e
}

// pullHint is what ksqlDB adds to a pull query's refusal.
const pullHint = " See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."
