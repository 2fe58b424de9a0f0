package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
)

// TestPullQueries reads materialized tables by key, by several keys, by
// window bounds and whole, from committed state, with HAVING, projection
// and LIMIT applied; a SELECT without EMIT on a stream stays a push query.
func TestPullQueries(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE STREAM orders (id VARCHAR KEY, amount INT) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON');
		CREATE TABLE totals AS SELECT id, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY id HAVING SUM(amount) > 5;
		CREATE TABLE hourly AS SELECT id, SUM(amount) AS total FROM orders WINDOW TUMBLING (SIZE 1 HOUR) GROUP BY id;
		CREATE TABLE visits AS SELECT id, COUNT(*) AS n FROM orders WINDOW SESSION (30 MINUTES) GROUP BY id;`)
	const h = 3_600_000
	for _, o := range []struct {
		id     string
		amount int
		ts     int64
	}{{"a", 10, 0}, {"b", 2, 1000}, {"c", 7, 2000}, {"a", 5, h + 10}, {"c", 1, 2*h + 5}, {"d", 3, 2*h + 6}, {"d", 4, 2*h + 7}} {
		rec := exec.Record{Topic: "orders", Key: []byte(o.id), Value: fmt.Appendf(nil, `{"amount":%d}`, o.amount), Timestamp: o.ts}
		if _, err := e.Memory().Send(rec); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		sql  string
		want string // header, then one line per row
	}{
		{"SELECT * FROM totals WHERE id = 'a';", "ID N TOTAL\na 2 15"},
		// b's total (2) fails HAVING: not in the table.
		{"SELECT * FROM totals WHERE id = 'b';", "ID N TOTAL"},
		{"SELECT id, total * 2 AS twice FROM totals WHERE id IN ('a', 'c');", "ID TWICE\na 30\nc 16"},
		{"SELECT * FROM totals;", "ID N TOTAL\na 2 15\nc 2 8\nd 2 7"},
		{"SELECT * FROM totals LIMIT 2;", "ID N TOTAL\na 2 15\nc 2 8"},
		{"SELECT id, total FROM totals WHERE total < 10;", "ID TOTAL\nc 8\nd 7"},
		{"SELECT * FROM hourly WHERE id = 'a';", "ID WINDOWSTART WINDOWEND TOTAL\na 0 3600000 10\na 3600000 7200000 5"},
		{"SELECT id, total FROM hourly WHERE WINDOWSTART >= 7200000;", "ID TOTAL\nc 1\nd 7"},
		// c's records are two hours apart: two sessions.
		{"SELECT id, WINDOWSTART, WINDOWEND, n FROM visits WHERE id = 'c';", "ID WINDOWSTART WINDOWEND N\nc 2000 2000 1\nc 7200005 7200005 1"},
		{"SELECT * FROM visits WHERE id = 'd';", "ID WINDOWSTART WINDOWEND N\nd 7200006 7200007 2"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			res := execute(t, e, tt.sql)
			rs := res[0].Rows
			if rs == nil || !rs.Pull {
				t.Fatalf("not a pull query: %+v", res[0])
			}
			if got := rowsText(rs); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	// A SELECT on a stream stays a push query; one that aggregates a
	// table cannot be pulled.
	if rs := execute(t, e, "SELECT * FROM orders;")[0].Rows; rs == nil || rs.Pull {
		t.Errorf("SELECT on a stream: %+v", rs)
	} else {
		rs.Close()
	}
	if _, err := e.Execute(ctx, "SELECT id, COUNT(*) FROM totals GROUP BY id;"); err == nil || !strings.Contains(err.Error(), "Pull queries don't support GROUP BY clauses.") {
		t.Errorf("aggregating pull query: err = %v", err)
	}
}

func rowsText(rs *engine.RowStream) string {
	var lines []string
	var header []string
	for _, c := range rs.Columns.Columns {
		header = append(header, c.Name)
	}
	lines = append(lines, strings.Join(header, " "))
	for row := range rs.C {
		var cells []string
		for _, v := range row.Cols {
			cells = append(cells, fmt.Sprint(v))
		}
		lines = append(lines, strings.Join(cells, " "))
	}
	return strings.Join(lines, "\n")
}
