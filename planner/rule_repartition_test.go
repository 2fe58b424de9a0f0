package planner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/planner/logical"
)

// keyingCatalog has inputs keyed and partitioned in different ways: by
// the join column or not, in KAFKA or JSON keys, over 2 or 3 partitions,
// windowed or not.
func keyingCatalog(t *testing.T) *planner.Catalog {
	t.Helper()
	cat := planner.NewCatalog()
	out := ddl(cat, `CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE STREAM clicks_json (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='clicks_json', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE STREAM views (view_id INT KEY, user_id VARCHAR, page VARCHAR) WITH (KAFKA_TOPIC='views', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE STREAM odd (user_id VARCHAR KEY, x INT) WITH (KAFKA_TOPIC='odd', VALUE_FORMAT='JSON', PARTITIONS=3);
CREATE STREAM tumbled (user_id VARCHAR KEY, x INT) WITH (KAFKA_TOPIC='tumbled', VALUE_FORMAT='JSON', PARTITIONS=2, WINDOW_TYPE='Tumbling', WINDOW_SIZE='30 seconds');
CREATE STREAM tumbled2 (user_id VARCHAR KEY, x INT) WITH (KAFKA_TOPIC='tumbled2', VALUE_FORMAT='JSON', PARTITIONS=2, WINDOW_TYPE='Tumbling', WINDOW_SIZE='30 seconds');
CREATE TABLE users (id VARCHAR PRIMARY KEY, region VARCHAR) WITH (KAFKA_TOPIC='users', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE TABLE accounts (id VARCHAR PRIMARY KEY, balance INT) WITH (KAFKA_TOPIC='accounts', VALUE_FORMAT='JSON', PARTITIONS=2);
CREATE TABLE regions (id VARCHAR PRIMARY KEY, boss VARCHAR) WITH (KAFKA_TOPIC='regions', VALUE_FORMAT='JSON', PARTITIONS=2);`)
	if strings.Contains(out, "rror") {
		t.Fatal(out)
	}
	return cat
}

// repartitionTopics lists the query's repartition topics, each with the
// key format the sub-topology reading it decodes.
func repartitionTopics(q *planner.Query) []string {
	var out []string
	for _, tp := range q.Topology.Internal {
		if !strings.HasSuffix(tp.Name, "-repartition") {
			continue
		}
		for _, sub := range q.Topology.Subs {
			reads := []*exec.SourceSpec{sub.Source}
			for _, side := range sub.Sides {
				reads = append(reads, side.Source)
			}
			for _, spec := range reads {
				if spec.Topic == tp.Name {
					out = append(out, fmt.Sprintf("%s (key %s, %d partitions)", strings.TrimPrefix(tp.Name, "_sluice-test-query-"), spec.KeyFormat, tp.Partitions))
				}
			}
		}
	}
	return out
}

// The repartition rule re-keys an aggregate's input unless it is keyed by
// the GROUP BY, a join input unless it is keyed by its side of ON in the
// key format the other side is read in, and a persistent PARTITION BY's
// rows; Rules names it when it inserted a repartition, and the builder
// makes a repartition topic for each one it put before an aggregate or a
// join input (PARTITION BY's sink re-keys by itself).
func TestRepartitionRule(t *testing.T) {
	cat := keyingCatalog(t)
	cases := []struct {
		sql    string
		plan   string
		fired  bool
		topics []string
	}{
		// Aggregates: keyed by the GROUP BY already, or re-keyed below
		// the window, after the filter; two grouping columns key in JSON.
		{sql: `CREATE TABLE by_user AS SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id;`, plan: `sink BY_USER (table, topic BY_USER)
└─ project USER_ID, N
   └─ aggregate COUNT(*) by USER_ID
      └─ source CLICKS (stream, topic clicks, reads no value columns)
`},
		{sql: `CREATE TABLE by_page AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page;`, plan: `sink BY_PAGE (table, topic BY_PAGE)
└─ project PAGE, N
   └─ aggregate COUNT(*) by PAGE
      └─ repartition by PAGE
         └─ source CLICKS (stream, topic clicks)
`, fired: true, topics: []string{"Q-Aggregate-GroupBy-repartition (key KAFKA, 2 partitions)"}},
		{sql: `SELECT page, COUNT(*) AS n FROM clicks WINDOW TUMBLING (SIZE 1 MINUTE) WHERE page <> 'x' GROUP BY page EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project PAGE, N
   └─ aggregate COUNT(*) by PAGE
      └─ window TUMBLING (SIZE 1 MINUTE)
         └─ repartition by PAGE
            └─ filter PAGE <> 'x'
               └─ source CLICKS (stream, topic clicks)
`, fired: true, topics: []string{"T-Aggregate-GroupBy-repartition (key KAFKA, 2 partitions)"}},
		{sql: `SELECT COUNT(*) AS n FROM clicks GROUP BY user_id, page EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project N
   └─ aggregate COUNT(*) by USER_ID, PAGE
      └─ repartition by USER_ID, PAGE
         └─ source CLICKS (stream, topic clicks)
`, fired: true, topics: []string{"T-Aggregate-GroupBy-repartition (key JSON, 2 partitions)"}},
		// Joins: a stream keyed by its join column is read as it is; one
		// keyed otherwise, or keyed in JSON where the table's key is
		// KAFKA, is re-keyed in the other input's key format, over its
		// partitions.
		{sql: `SELECT c.user_id, page, region FROM clicks c JOIN users u ON c.user_id = u.id EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project USER_ID, PAGE, REGION
   └─ join INNER ON C.USER_ID = U.ID
      ├─ source CLICKS (stream, topic clicks)
      └─ source USERS (table, topic users)
`},
		{sql: `SELECT v.user_id, page, region FROM views v JOIN users u ON v.user_id = u.id EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project USER_ID, PAGE, REGION
   └─ join INNER ON V.USER_ID = U.ID
      ├─ repartition by V.USER_ID (carries V_USER_ID, V_PAGE)
      │  └─ source VIEWS (stream, topic views)
      └─ source USERS (table, topic users)
`, fired: true, topics: []string{"T-Join-left-repartition (key KAFKA, 2 partitions)"}},
		{sql: `SELECT c.user_id, page, region FROM clicks_json c JOIN users u ON c.user_id = u.id EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project USER_ID, PAGE, REGION
   └─ join INNER ON C.USER_ID = U.ID
      ├─ repartition by C.USER_ID
      │  └─ source CLICKS_JSON (stream, topic clicks_json)
      └─ source USERS (table, topic users)
`, fired: true, topics: []string{"T-Join-left-repartition (key KAFKA, 2 partitions)"}},
		{sql: `SELECT c.user_id, c.page, j.page FROM clicks c JOIN clicks_json j WITHIN 1 MINUTE ON c.user_id = j.user_id EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project C_USER_ID, C_PAGE, J_PAGE
   └─ join INNER ON C.USER_ID = J.USER_ID
      ├─ source CLICKS (stream, topic clicks)
      └─ repartition by J.USER_ID
         └─ source CLICKS_JSON (stream, topic clicks_json)
`, fired: true, topics: []string{"T-Join-right-repartition (key KAFKA, 2 partitions)"}},
		{sql: `SELECT v.page, o.x FROM views v JOIN odd o WITHIN 1 MINUTE ON v.user_id = o.user_id EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project PAGE, X
   └─ join INNER ON V.USER_ID = O.USER_ID
      ├─ repartition by V.USER_ID (carries V_USER_ID, V_PAGE)
      │  └─ source VIEWS (stream, topic views)
      └─ source ODD (stream, topic odd)
`, fired: true, topics: []string{"T-Join-left-repartition (key KAFKA, 3 partitions)"}},
		// Joins after joins: on a column holding the key of the joins
		// before, nothing is re-keyed; on another, their result is.
		{sql: `SELECT c.user_id, region, balance FROM clicks c JOIN users u ON c.user_id = u.id JOIN accounts a ON u.id = a.id EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project USER_ID, REGION, BALANCE
   └─ join INNER ON U.ID = A.ID
      ├─ join INNER ON C.USER_ID = U.ID
      │  ├─ source CLICKS (stream, topic clicks)
      │  └─ source USERS (table, topic users)
      └─ source ACCOUNTS (table, topic accounts)
`},
		{sql: `SELECT c.user_id, region, boss FROM clicks c JOIN users u ON c.user_id = u.id JOIN regions r ON u.region = r.id EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project USER_ID, REGION, BOSS
   └─ join INNER ON U.REGION = R.ID
      ├─ repartition by U.REGION (carries C_USER_ID, U_ID, U_REGION)
      │  └─ join INNER ON C.USER_ID = U.ID
      │     ├─ source CLICKS (stream, topic clicks)
      │     └─ source USERS (table, topic users)
      └─ source REGIONS (table, topic regions)
`, fired: true, topics: []string{"T-Join2-left-repartition (key KAFKA, 2 partitions)"}},
		// An aggregate of a join: keyed by the join key, not by REGION.
		{sql: `CREATE TABLE per_region AS SELECT region, COUNT(*) AS n FROM clicks c JOIN users u ON c.user_id = u.id GROUP BY region;`, plan: `sink PER_REGION (table, topic PER_REGION)
└─ project REGION, N
   └─ aggregate COUNT(*) by REGION
      └─ repartition by REGION
         └─ join INNER ON C.USER_ID = U.ID
            ├─ source CLICKS (stream, topic clicks)
            └─ source USERS (table, topic users)
`, fired: true, topics: []string{"Q-Aggregate-GroupBy-repartition (key KAFKA, 2 partitions)"}},
		// PARTITION BY: the sink re-keys, no topic of its own; a push
		// query's rows go to the client, not to partitions.
		{sql: `CREATE STREAM by_page_s AS SELECT * FROM clicks PARTITION BY page;`, plan: `sink BY_PAGE_S (stream, topic BY_PAGE_S)
└─ project PAGE, USER_ID
   └─ repartition by PAGE
      └─ source CLICKS (stream, topic clicks)
`, fired: true},
		{sql: `SELECT * FROM clicks PARTITION BY page EMIT CHANGES;`, plan: `subscribe (rows to the client as they come)
└─ project PAGE, USER_ID
   └─ source CLICKS (stream, topic clicks)
`},
		// A foreign-key join re-keys nothing (its subscription topics are
		// its own).
		{sql: `CREATE TABLE user_boss AS SELECT u.id, boss FROM users u JOIN regions r ON u.region = r.id;`, plan: `sink USER_BOSS (table, topic USER_BOSS)
└─ project U_ID, BOSS
   └─ join INNER ON U.REGION = R.ID
      ├─ source USERS (table, topic users)
      └─ source REGIONS (table, topic regions)
`},
	}
	for _, c := range cases {
		q, rules := fired(t, cat, c.sql)
		if got := logical.Print(q.Logical); got != c.plan {
			t.Errorf("%s: plan\n%s\nwant\n%s", c.sql, got, c.plan)
		}
		if got := slices.Contains(rules, "repartition"); got != c.fired {
			t.Errorf("%s: fired %t (rules %q)", c.sql, got, rules)
		}
		if got := repartitionTopics(q); !slices.Equal(got, c.topics) {
			t.Errorf("%s: repartition topics %q, want %q", c.sql, got, c.topics)
		}
	}
}
