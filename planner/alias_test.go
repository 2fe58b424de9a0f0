package planner

import (
	"testing"

	"github.com/sluice-sql/sluice/types"
)

// Unaliased items are named as ksqlDB's alias generator names them: the
// source's column names, split into stem and number, are taken.
func TestAliasGenerator(t *testing.T) {
	cols := func(names ...string) []types.Column {
		var out []types.Column
		for _, n := range names {
			out = append(out, types.Column{Name: n})
		}
		return out
	}
	tests := []struct {
		name  string
		src   []types.Column
		calls []string // "f:NAME" a struct field, "e" an expression
		want  []string
	}{
		{"fields clash with a column", cols("ROWKEY", "B", "A", "C"), []string{"f:B", "f:B"}, []string{"B_1", "B_2"}},
		{"field free", cols("K", "A"), []string{"f:B", "f:B"}, []string{"B", "B_1"}},
		{"field numbered like a column", cols("ITEMID_1"), []string{"f:ITEMID", "f:ITEMID"}, []string{"ITEMID", "ITEMID_2"}},
		{"numbered field takes its stem", cols("X"), []string{"f:B_7"}, []string{"B"}},
		{"expressions", cols("K"), []string{"e", "e", "f:K"}, []string{"KSQL_COL_0", "KSQL_COL_1", "K_1"}},
		{"expressions skip the source's", cols("KSQL_COL_0", "KSQL_COL_2"), []string{"e", "e", "e"}, []string{"KSQL_COL_1", "KSQL_COL_3", "KSQL_COL_4"}},
	}
	for _, tc := range tests {
		g := newAliasGenerator(tc.src)
		for i, c := range tc.calls {
			var got string
			if c == "e" {
				got = g.expression()
			} else {
				got = g.field(c[2:])
			}
			if got != tc.want[i] {
				t.Errorf("%s: call %d (%s) = %s, want %s", tc.name, i, c, got, tc.want[i])
			}
		}
	}
}
