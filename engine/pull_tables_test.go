package engine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

// notQueryableT is ksqlDB's error, word for word, for a pull query on a
// table declared with CREATE TABLE (not SOURCE).
const notQueryableT = "The `T` table isn't queryable. To derive a queryable table, you can do 'CREATE TABLE QUERYABLE_T AS SELECT * FROM T'. See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."

// TestPullTables pulls the tables no aggregation holds: a source table
// (its CST_ query's store), a CTAS projection with a filter, table–table
// inner, left, right and full outer join results, and a two-column key
// (and an aggregation's); by key, by IN, by range, whole, with LIMIT; an
// update replaces a row and a tombstone removes it from every table. A
// plain CREATE TABLE is not queryable.
func TestPullTables(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE TABLE t (id VARCHAR PRIMARY KEY, v INT) WITH (KAFKA_TOPIC='t', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE SOURCE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR, age INT) WITH (KAFKA_TOPIC='users', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE SOURCE TABLE orders (id VARCHAR PRIMARY KEY, amount INT) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE SOURCE TABLE pairs (a VARCHAR PRIMARY KEY, b INT PRIMARY KEY, n INT) WITH (KAFKA_TOPIC='pairs', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE adults AS SELECT id, name, age * 2 AS twice FROM users WHERE age >= 18;
		CREATE TABLE inner_j AS SELECT u.id AS id, u.name AS name, o.amount AS amount FROM users u JOIN orders o ON u.id = o.id;
		CREATE TABLE right_j AS SELECT o.id AS id, u.name AS name, o.amount AS amount FROM users u RIGHT JOIN orders o ON u.id = o.id;
		CREATE TABLE outer_j AS SELECT ROWKEY AS id, u.name AS name, o.amount AS amount FROM users u FULL OUTER JOIN orders o ON u.id = o.id;
		CREATE STREAM visits (id VARCHAR KEY, a VARCHAR, b INT) WITH (KAFKA_TOPIC='visits', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE per_ab WITH (KEY_FORMAT='JSON') AS SELECT a, b, COUNT(*) AS n FROM visits GROUP BY b, a;
		CREATE TABLE left_j AS SELECT u.id AS id, u.name AS name, o.amount AS amount FROM users u LEFT JOIN orders o ON u.id = o.id;`)
	send := func(topic, key, value string, ts int64) {
		t.Helper()
		rec := exec.Record{Topic: topic, Key: []byte(key), Timestamp: ts}
		if value != "" {
			rec.Value = []byte(value)
		}
		if _, err := e.Memory().Send(rec); err != nil {
			t.Fatal(err)
		}
	}
	send("users", "u1", `{"name":"ann","age":30}`, 100)
	send("users", "u2", `{"name":"bob","age":12}`, 200)
	send("users", "u3", `{"name":"cy","age":40}`, 300)
	send("users", "u4", `{"name":"di","age":20}`, 400)
	send("orders", "u1", `{"amount":7}`, 150)
	send("orders", "u3", `{"amount":9}`, 350)
	send("orders", "u9", `{"amount":1}`, 360) // no user: in no join result
	send("users", "u4", "", 500)              // tombstone: u4 leaves every table
	send("users", "u3", `{"name":"cy","age":41}`, 600)
	send("visits", "v1", `{"a":"x","b":1}`, 1)
	send("visits", "v2", `{"a":"x","b":1}`, 2)
	send("visits", "v3", `{"a":"x","b":2}`, 3)
	send("pairs", `{"A":"x","B":1}`, `{"n":10}`, 10)
	send("pairs", `{"A":"x","B":2}`, `{"n":20}`, 20)
	send("pairs", `{"A":"y","B":1}`, `{"n":30}`, 30)

	for _, tt := range []struct{ sql, want string }{
		// The source table: scans, lookups, ranges, pseudo columns.
		{"SELECT * FROM users;", "ID NAME AGE\nu1 ann 30\nu2 bob 12\nu3 cy 41"},
		{"SELECT * FROM users WHERE id = 'u2';", "ID NAME AGE\nu2 bob 12"},
		// Lookups answer in the order of the IN list.
		{"SELECT name FROM users WHERE id IN ('u3', 'u1', 'u4');", "NAME\ncy\nann"},
		{"SELECT id, ROWTIME FROM users WHERE id = 'u3';", "ID ROWTIME\nu3 600"},
		{"SELECT id FROM users WHERE id > 'u1';", "ID\nu2\nu3"},
		{"SELECT id FROM users WHERE id >= 'u2' AND id < 'u3';", "ID\nu2"},
		{"SELECT id FROM users WHERE id <= 'u2';", "ID\nu1\nu2"},
		{"SELECT id FROM users WHERE id BETWEEN 'u2' AND 'u9';", "ID\nu2\nu3"},
		{"SELECT id FROM users WHERE age > 12 AND id > 'u1';", "ID\nu3"},
		{"SELECT * FROM users LIMIT 2;", "ID NAME AGE\nu1 ann 30\nu2 bob 12"},
		{"SELECT * FROM users WHERE id = 'u4';", "ID NAME AGE"},
		// A projection with a filter: bob is too young, di was deleted.
		{"SELECT * FROM adults;", "ID NAME TWICE\nu1 ann 60\nu3 cy 82"},
		{"SELECT * FROM adults WHERE id = 'u3';", "ID NAME TWICE\nu3 cy 82"},
		{"SELECT * FROM adults WHERE id = 'u2';", "ID NAME TWICE"},
		{"SELECT id, ROWTIME FROM adults WHERE id = 'u1';", "ID ROWTIME\nu1 100"},
		// Joins: the result's ROWTIME is the later side's.
		{"SELECT * FROM inner_j;", "ID NAME AMOUNT\nu1 ann 7\nu3 cy 9"},
		{"SELECT *, ROWTIME FROM inner_j WHERE id = 'u1';", "ID NAME AMOUNT ROWTIME\nu1 ann 7 150"},
		{"SELECT * FROM inner_j WHERE id = 'u2';", "ID NAME AMOUNT"},
		{"SELECT * FROM left_j;", "ID NAME AMOUNT\nu1 ann 7\nu2 bob <nil>\nu3 cy 9"},
		{"SELECT * FROM left_j WHERE id = 'u2';", "ID NAME AMOUNT\nu2 bob <nil>"},
		{"SELECT name FROM left_j WHERE amount IS NULL OR amount > 8;", "NAME\nbob\ncy"},
		{"SELECT * FROM left_j WHERE id > 'u1' LIMIT 1;", "ID NAME AMOUNT\nu2 bob <nil>"},
		{"SELECT * FROM right_j;", "ID NAME AMOUNT\nu1 ann 7\nu3 cy 9\nu9 <nil> 1"},
		{"SELECT * FROM right_j WHERE id = 'u9';", "ID NAME AMOUNT\nu9 <nil> 1"},
		{"SELECT * FROM outer_j;", "ID NAME AMOUNT\nu1 ann 7\nu2 bob <nil>\nu3 cy 9\nu9 <nil> 1"},
		{"SELECT * FROM outer_j WHERE id IN ('u2', 'u9', 'u4');", "ID NAME AMOUNT\nu2 bob <nil>\nu9 <nil> 1"},
		// A two-column key: both pinned is a lookup, one a scan.
		{"SELECT * FROM pairs WHERE a = 'x' AND b = 2;", "A B N\nx 2 20"},
		{"SELECT n FROM pairs WHERE a = 'x';", "N\n10\n20"},
		{"SELECT n FROM pairs WHERE b = 1;", "N\n10\n30"},
		// An aggregation's two-column key (in GROUP BY order) looked up.
		{"SELECT * FROM per_ab WHERE a = 'x' AND b = 1;", "B A N\n1 x 2"},
		{"SELECT n FROM per_ab WHERE b = 2 AND a = 'x';", "N\n1"},
	} {
		t.Run(tt.sql, func(t *testing.T) {
			rs := execute(t, e, tt.sql)[0].Rows
			if rs == nil || !rs.Pull {
				t.Fatalf("not a pull query: %+v", rs)
			}
			if got := rowsText(rs); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}

	_, err = e.Execute(ctx, "SELECT * FROM t;")
	if err == nil || err.Error() != notQueryableT || !errors.Is(err, engine.ErrNotQueryable) || !errors.Is(err, planner.ErrInvalid) {
		t.Errorf("pull query on a plain table: err = %v", err)
	}
	// EMIT CHANGES is a push query on any table.
	rs := execute(t, e, "SELECT * FROM t EMIT CHANGES;")[0].Rows
	if rs == nil || rs.Pull {
		t.Errorf("push query on a plain table: %+v", rs)
	} else {
		rs.Close()
	}

	// The source table's query is listed, and goes with the table.
	if ids := queryIDs(execute(t, e, "SHOW QUERIES;")[0]); !slices.Contains(ids, "CST_PAIRS") {
		t.Errorf("SHOW QUERIES lists no CST_PAIRS: %q", ids)
	}
	execute(t, e, "DROP TABLE pairs;")
	if ids := queryIDs(execute(t, e, "SHOW QUERIES;")[0]); slices.Contains(ids, "CST_PAIRS") {
		t.Errorf("CST_PAIRS outlived its table: %q", ids)
	}
}

// queryIDs are the ids SHOW QUERIES lists.
func queryIDs(res *engine.Result) []string {
	var ids []string
	if l, ok := res.Entity.(*engine.QueryList); ok {
		for _, q := range l.Queries {
			ids = append(ids, q.ID)
		}
	}
	return ids
}
