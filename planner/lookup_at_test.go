package planner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// TestLookupAt: a source a statement names that does not exist is
// reported at its position in ksqlDB's words, while its statement is
// prepared, followed by Sluice's hint; the error stays ErrNotFound.
func TestLookupAt(t *testing.T) {
	cat := planner.NewCatalog()
	if out := ddl(cat, `CREATE STREAM orders (id INT KEY, v INT) WITH (KAFKA_TOPIC='orders', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE STREAM "Mixed" (id INT KEY, v INT) WITH (KAFKA_TOPIC='mixed', VALUE_FORMAT='JSON', PARTITIONS=1);`); strings.Contains(out, "line ") {
		t.Fatal(out)
	}
	at := parser.Pos{Line: 2, Column: 13}
	for _, tc := range []struct{ name, want string }{
		{"ORDERS", ""},
		{"UNKNOWN", "Exception while preparing statement: Line: 2, Col: 13: Source `UNKNOWN` does not exist."},
		{"ORDER", "Exception while preparing statement: Line: 2, Col: 13: Source `ORDER` does not exist. Did you mean ORDERS?"},
		{"MIXED", "Exception while preparing statement: Line: 2, Col: 13: Source `MIXED` does not exist. Did you mean \"Mixed\"? Hint: wrap the source name in double quotes to make it case-sensitive."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cat.LookupAt(tc.name, at)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, planner.ErrNotFound) {
					t.Errorf("%v is not ErrNotFound", err)
				}
			}
			if got != tc.want {
				t.Fatalf("error:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
