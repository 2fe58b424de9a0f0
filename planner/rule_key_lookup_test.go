package engine

import (
	"fmt"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// TestLookupKeys checks which WHERE clauses of a pull query go straight
// to their keys instead of scanning the table.
func TestLookupKeys(t *testing.T) {
	src := &planner.Source{Name: "T", Schema: types.Schema{Columns: []types.Column{
		{Name: "ID", Type: types.BigIntType, Key: true}, {Name: "N", Type: types.BigIntType},
	}}}
	tests := []struct {
		where string
		want  string // the keys, decoded; "scan" when there is no lookup
	}{
		{"id = 5", "[[5]]"},
		{"5 = ID", "[[5]]"},
		{"n > 1 AND id IN (1, 2, 3)", "[[1] [2] [3]]"},
		{"id = 5 OR id = 6", "scan"},
		{"id > 5", "scan"},
		{"id NOT IN (1, 2)", "scan"},
		{"n = 5", "scan"},
		{"id = n", "scan"},
		{"id = NULL", "scan"},
	}
	multi := &planner.Source{Name: "M", Schema: types.Schema{Columns: []types.Column{
		{Name: "A", Type: types.StringType, Key: true}, {Name: "B", Type: types.BigIntType, Key: true}, {Name: "N", Type: types.BigIntType},
	}}}
	for _, tt := range []struct{ where, want string }{
		{"a = 'x' AND b = 2", "[[x 2]]"},
		{"b = 2 AND n > 0 AND 'x' = a", "[[x 2]]"},
		{"a = 'x'", "scan"},
		{"a IN ('x', 'y') AND b = 2", "scan"},
		{"a = 'x' OR b = 2", "scan"},
	} {
		p, err := parser.ParseOne("SELECT * FROM m WHERE " + tt.where + ";")
		if err != nil {
			t.Fatal(err)
		}
		got := "scan"
		if keys, ok := lookupKeyValues(p.(*parser.Select), multi); ok {
			got = fmt.Sprint(keys)
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.where, got, tt.want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			p, err := parser.ParseOne("SELECT * FROM t WHERE " + tt.where + ";")
			if err != nil {
				t.Fatal(err)
			}
			keys, ok := lookupKeyValues(p.(*parser.Select), src)
			got := "scan"
			if ok {
				got = fmt.Sprint(keys)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
