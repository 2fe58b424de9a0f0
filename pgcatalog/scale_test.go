package pgcatalog

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/types"
)

// manySources is a catalog of n tables of 10 columns each.
func manySources(n int) Source {
	var rels []Relation
	for i := 0; i < n; i++ {
		r := Relation{Name: fmt.Sprintf("T%04d", i), Kind: "TABLE", Topic: fmt.Sprintf("t%d", i)}
		for j := 0; j < 10; j++ {
			r.Columns = append(r.Columns, Column{Name: fmt.Sprintf("C%d", j), Type: types.BigIntType, Key: j == 0})
		}
		rels = append(rels, r)
	}
	return func() []Relation { return rels }
}

// TestManySources: JDBC's getColumns and psql's \dt stay interactive over
// a catalog of 1,000 tables (10,000 columns).
func TestManySources(t *testing.T) {
	s := NewSession(manySources(1000), "sluice", "sluice")
	for _, file := range []string{"jdbc-getColumns", "psql-dt", "jdbc-getPrimaryKeys"} {
		for _, st := range readCapture(t, "testdata/clients/"+file+".sql") {
			if !s.Claims(st.sql) {
				continue
			}
			start := time.Now()
			res, err := run(s, st.sql, st.paramOIDs, st.params)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("%s: %d rows in %v", file, len(res.Rows), d)
			} else {
				t.Logf("%s: %d rows in %v", file, len(res.Rows), d)
			}
		}
	}
}
