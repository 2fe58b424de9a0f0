package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// TestKeyRanges checks which WHERE clauses of a pull query read a key
// range (the tightest bounds of their conjuncts, after = on the key
// columns before the ranged one), and which scan: a range on a key
// column after an unpinned one, OR of ranges, a windowed table's key
// range, and every range with ksql.query.pull.range.scan.enabled=false.
// A windowed table's WINDOWSTART and WINDOWEND bounds are kept apart.
func TestKeyRanges(t *testing.T) {
	cat := planner.NewCatalog()
	if out := ddl(cat, `CREATE TABLE t (id BIGINT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='t', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE m (a VARCHAR PRIMARY KEY, b INT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='m', FORMAT='JSON', PARTITIONS=1);
CREATE TABLE w (id BIGINT PRIMARY KEY, c BIGINT) WITH (KAFKA_TOPIC='w', VALUE_FORMAT='JSON', PARTITIONS=1, WINDOW_TYPE='Tumbling', WINDOW_SIZE='10 seconds');`); strings.Contains(out, "line ") {
		t.Fatal(out)
	}
	for _, tt := range []struct {
		table, where string
		noRanges     bool
		want         string // the range, "scan" or "lookup"; then the window bounds
	}{
		{"t", "id > 5", false, "key1 in (5, +∞)"},
		{"t", "5 < id AND id <= 9", false, "key1 in (5, 9]"},
		{"t", "id BETWEEN 1 AND 3 AND id < 2 AND id >= 0 AND n = 4", false, "key1 in [1, 2)"},
		{"t", "id >= 2 AND id > 2", false, "key1 in (2, +∞)"},
		{"t", "id < 7", false, "key1 in (-∞, 7)"},
		{"t", "id > 5 OR id < 1", false, "scan"},
		{"t", "n > 5", false, "scan"},
		{"t", "id > n", false, "scan"},
		{"t", "id NOT BETWEEN 1 AND 3", false, "scan"},
		{"t", "id > 5", true, "scan"},
		{"t", "id = 5", false, "lookup"},
		{"m", "a = 'x' AND b > 2", false, "key1 = x, key2 in (2, +∞)"},
		{"m", "a >= 'x' AND a < 'y'", false, "key1 in [x, y)"},
		{"m", "b > 2", false, "scan"},
		{"w", "id > 5", false, "scan"},
		{"w", "id = 5 AND WINDOWSTART >= 10000 AND WINDOWEND < 30000", false, "lookup windows WINDOWSTART >= 10000 and WINDOWEND <= 29999"},
		{"w", "WINDOWSTART BETWEEN 0 AND 20000 AND WINDOWSTART > 5", false, "scan windows 6 <= WINDOWSTART <= 20000"},
		// The magic-timestamps rule makes a text bound its milliseconds.
		{"w", "WINDOWSTART > '2020-01-01T00:00:00'", false, "scan windows WINDOWSTART >= 1577836800001"},
	} {
		t.Run(fmt.Sprint(tt.table, " ", tt.where, " ", tt.noRanges), func(t *testing.T) {
			p, err := parser.ParseOne("SELECT * FROM " + tt.table + " WHERE " + tt.where + ";")
			if err != nil {
				t.Fatal(err)
			}
			q, err := planner.PlanQuery(cat, p.(*parser.Select), nil, "pull", planner.Options{PullRangeScansDisabled: tt.noRanges})
			if err != nil {
				t.Fatal(err)
			}
			read := q.StoreRead()
			if read == nil {
				t.Fatal("the plan reads no store")
			}
			got := "scan"
			switch {
			case read.Keys != nil:
				got = "lookup"
			case read.Range != nil:
				got = read.Range.String()
			}
			if read.Window != nil {
				got += " " + read.Window.String()
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
