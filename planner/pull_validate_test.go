package planner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// TestPullValidation: PlanQuery's validation stage of pull queries
// refuses, with ksqlDB's words, what pull queries cannot do, applies the
// key-lookup rules only with table scans disabled
// (Options.PullKeyLookupsOnly), quotes the WHERE as written (before the
// magic-timestamps rule rewrites it), and leaves push queries alone.
func TestPullValidation(t *testing.T) {
	cat := planner.NewCatalog()
	if out := ddl(cat, `CREATE TABLE agg (id INT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='agg', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE multi (a VARCHAR PRIMARY KEY, b INT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='multi', FORMAT='JSON', PARTITIONS=1);
CREATE STREAM s (id INT KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`); strings.Contains(out, "line ") {
		t.Fatal(out)
	}
	const hint = " See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."
	lookups := planner.Options{PullKeyLookupsOnly: true}
	noLimit := planner.Options{PullLimitDisabled: true}
	noRanges := planner.Options{PullKeyLookupsOnly: true, PullRangeScansDisabled: true}
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
		{"SELECT * FROM multi WHERE a = 'x';", lookups, "not supported: Multi-column sources must specify every key in the WHERE clause. Specified: [`A`] Expected: [`A` STRING KEY, `B` INTEGER KEY]"},
		// One bound on the key is a range of keys, read by a range scan;
		// without range scans it would need a table scan.
		{"SELECT * FROM agg WHERE id > 1;", lookups, ""},
		{"SELECT * FROM agg WHERE id <= 1 AND n > 2;", lookups, ""},
		{"SELECT * FROM agg WHERE id > 1;", noRanges, "not supported: Query requires table scan to be enabled. Table scans can be enabled by setting ksql.query.pull.table.scan.enabled=true"},
		{"SELECT * FROM agg WHERE id BETWEEN 1 AND 5;", lookups, "not supported: A comparison condition on the key column cannot be combined with other comparisons such as an IN predicate"},
		{"SELECT * FROM agg WHERE ROWTIME > '2026-01-01';", lookups, "not supported: WHERE clause missing key column for disjunct: (ROWTIME > '2026-01-01')"},
		// Allowed without scans: the key pinned in every disjunct, other
		// conditions filter.
		{"SELECT * FROM agg WHERE id IN (1, 2) AND n > 1;", lookups, ""},
		{"SELECT * FROM agg WHERE id = 1 OR id = 2;", lookups, ""},
		{"SELECT * FROM multi WHERE a = 'x' AND b = 1;", lookups, ""},
		// Allowed with scans (the default), and on streams.
		{"SELECT * FROM agg WHERE n = 1;", planner.Options{}, ""},
		{"SELECT * FROM s WHERE v <> 1 LIMIT 2;", lookups, ""},
		// Push queries are not checked, and an unknown source is
		// reported where the planner resolves it.
		{"SELECT id, ROWPARTITION FROM agg EMIT CHANGES;", planner.Options{}, ""},
		{"SELECT * FROM nowhere GROUP BY id;", planner.Options{}, "line 1:15: NOWHERE does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st, err := parser.ParseOne(tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if _, err := planner.PlanQuery(cat, st.(*parser.Select), nil, "pull", tt.opts); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("error:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestPullValidationEngineOptions: the validation stage reads what only
// the engine knows. With NoStreamScans a SELECT without EMIT on a stream
// is a push query and goes unchecked; TableStore is asked after the
// checks (their refusal comes first), its error refuses the query and
// its store is the one the plan reads.
func TestPullValidationEngineOptions(t *testing.T) {
	cat := planner.NewCatalog()
	if out := ddl(cat, `CREATE TABLE agg (id INT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='agg', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM s (id INT KEY, v INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`); strings.Contains(out, "line ") {
		t.Fatal(out)
	}
	errNotKept := errors.New("not kept")
	var asked []string
	stores := func(table string) (string, error) {
		asked = append(asked, table)
		if table == "AGG" {
			return "CTAS_AGG-Aggregate-Materialize", nil
		}
		return "", errNotKept
	}
	tests := []struct {
		sql   string
		opts  planner.Options
		want  string
		asked string
		store string
	}{
		{"SELECT id, ROWPARTITION FROM s;", planner.Options{}, "not supported: Pull queries don't support the following columns in SELECT clauses: `ROWPARTITION`", "", ""},
		{"SELECT id, ROWPARTITION FROM s;", planner.Options{NoStreamScans: true}, "", "", ""},
		{"SELECT id, ROWPARTITION FROM agg;", planner.Options{NoStreamScans: true, TableStore: stores}, "not supported: Pull queries don't support the following columns in SELECT clauses: `ROWPARTITION`", "", ""},
		{"SELECT * FROM agg WHERE id = 1;", planner.Options{TableStore: stores}, "", "AGG", "CTAS_AGG-Aggregate-Materialize"},
		{"SELECT * FROM agg WHERE id = 1;", planner.Options{TableStore: func(string) (string, error) { return "", errNotKept }}, "not kept", "", ""},
		{"SELECT * FROM agg EMIT CHANGES;", planner.Options{TableStore: stores}, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			asked = nil
			st, err := parser.ParseOne(tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			q, err := planner.PlanQuery(cat, st.(*parser.Select), nil, "pull", tt.opts)
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("error:\n got %q\nwant %q", got, tt.want)
			}
			if strings.Join(asked, ",") != tt.asked {
				t.Fatalf("TableStore asked for %q, want %q", asked, tt.asked)
			}
			if err != nil || tt.store == "" {
				return
			}
			if read := q.StoreRead(); read == nil || read.Store != tt.store {
				t.Fatalf("store read %+v, want store %q", read, tt.store)
			}
		})
	}
}
