package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// EXPLAIN shows the logical plan and the planner rules that changed it
// before the topology, for a statement and for a running query alike: a
// pull query on a table names its store lookup, a push query whether it
// is scalable, a persistent query its JSON copy or the repartition before
// its aggregate.
func TestExplainShowsLogicalPlanAndRules(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, sql := range []string{
		"CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR, ms BIGINT) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=1);",
		"CREATE SOURCE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='users', VALUE_FORMAT='JSON', PARTITIONS=1);",
		"CREATE STREAM slow AS SELECT user_id, page FROM clicks WHERE ms > 1000;",
	} {
		if _, err := e.Execute(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	cases := []struct{ sql, logical string }{
		{"EXPLAIN SELECT * FROM users WHERE id = 'a';", `Logical plan:
answer (the rows as of now, then the query ends)
└─ project ID, NAME
   └─ filter ID = 'a'
      └─ store lookup USERS (keys [a])
Rules applied: key-lookup
`},
		{"EXPLAIN SELECT page FROM clicks WHERE ROWTIME >= '2026' EMIT CHANGES;", `Logical plan:
subscribe (rows to the client as they come; scalable: servable from the output of the query writing CLICKS)
└─ project PAGE
   └─ filter ROWTIME >= 1767225600000
      └─ source CLICKS (stream, topic clicks, reads PAGE)
Rules applied: magic-timestamps, column-pruning, scalable-push
`},
		// The repartition rule re-keys the clicks by PAGE before the
		// aggregate, and says so.
		{"EXPLAIN CREATE TABLE pages AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page;", `Logical plan:
sink PAGES (table, topic PAGES)
└─ project PAGE, N
   └─ aggregate COUNT(*) by PAGE
      └─ repartition by PAGE
         └─ source CLICKS (stream, topic clicks, reads PAGE)
Rules applied: repartition, column-pruning
`},
		{"EXPLAIN CSAS_SLOW;", `Logical plan:
sink SLOW (stream, topic SLOW)
└─ json copy (1 of 1 value columns copied as text)
   └─ project USER_ID, PAGE
      └─ filter MS > 1000
         └─ source CLICKS (stream, topic clicks)
Rules applied: json-copy
`},
	}
	for _, c := range cases {
		res, err := e.Execute(ctx, c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		text := shown(res[0])
		start := strings.Index(text, "Logical plan:\n")
		end := strings.Index(text, "Physical plan:\n")
		if start < 0 || end < start {
			t.Fatalf("%s: no logical plan before the physical one:\n%s", c.sql, text)
		}
		if got := text[start:end]; got != c.logical {
			t.Errorf("%s: got\n%s\nwant\n%s", c.sql, got, c.logical)
		}
		if !strings.Contains(text[end:], "└─ sub-topology 0\n") {
			t.Errorf("%s: no topology after the logical plan:\n%s", c.sql, text)
		}
	}
}

// EXPLAIN of a pull query on a table shows in its physical plan what the
// engine runs: the chain over rows read from the state store of the
// query keeping the table, by name, a lookup of the keys the WHERE pins
// or a scan of every row, as its logical plan says; a pull query on a
// stream reads the stream's topic.
func TestExplainPullShowsStoreRead(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR, ms BIGINT) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE SOURCE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR, age INT) WITH (KAFKA_TOPIC='users', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE per_page AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page;`)
	cases := []struct{ sql, want string }{
		{"EXPLAIN SELECT * FROM users WHERE id IN ('a', 'b');", `Logical plan:
answer (the rows as of now, then the query ends)
└─ project ID, NAME, AGE
   └─ filter ID IN ('a', 'b')
      └─ store lookup USERS (keys [a], [b])
Rules applied: key-lookup
Physical plan:
Query EXPLAIN
└─ sub-topology 0
   ├─ store lookup USERS (keys [a], [b], from state store CST_USERS-Materialize, as of its last commit)
   ├─ filter ID IN ('a', 'b')  (stateless)
   ├─ project ID, NAME, AGE  (stateless)
   └─ emit to client ID, NAME, AGE  (stateless)
`},
		// A scan decodes no records: no column pruning.
		{"EXPLAIN SELECT name FROM users WHERE name <> 'x';", `Logical plan:
answer (the rows as of now, then the query ends)
└─ project NAME
   └─ filter NAME <> 'x'
      └─ store scan USERS (every row)
Rules applied: none
Physical plan:
Query EXPLAIN
└─ sub-topology 0
   ├─ store scan USERS (every row, from state store CST_USERS-Materialize, as of its last commit)
   ├─ filter NAME <> 'x'  (stateless)
   ├─ project NAME  (stateless)
   └─ emit to client NAME  (stateless)
`},
		// An aggregation's table is read from the aggregation's store.
		{"EXPLAIN SELECT * FROM per_page WHERE page = 'x';", `Logical plan:
answer (the rows as of now, then the query ends)
└─ project PAGE, N
   └─ filter PAGE = 'x'
      └─ store lookup PER_PAGE (keys [x])
Rules applied: key-lookup
Physical plan:
Query EXPLAIN
└─ sub-topology 0
   ├─ store lookup PER_PAGE (keys [x], from state store CTAS_PER_PAGE-Aggregate-Materialize, as of its last commit)
   ├─ filter PAGE = 'x'  (stateless)
   ├─ project PAGE, N  (stateless)
   └─ emit to client PAGE, N  (stateless)
`},
		{"EXPLAIN SELECT page FROM clicks WHERE ms > 3;", `Logical plan:
answer (the rows as of now, then the query ends)
└─ project PAGE
   └─ filter MS > 3
      └─ source CLICKS (stream, topic clicks)
Rules applied: none
Physical plan:
Query EXPLAIN
└─ sub-topology 0
   ├─ source clicks (key KAFKA, value JSON, event time record timestamp)
   ├─ filter MS > 3  (stateless)
   ├─ project PAGE  (stateless)
   └─ emit to client PAGE  (stateless)
`},
	}
	for _, c := range cases {
		res, err := e.Execute(ctx, c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if got := shown(res[0]); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.sql, got, c.want)
		}
	}
}
