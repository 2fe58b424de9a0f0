package logical_test

import (
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
)

// Print draws each step's inputs below it, the last with └─ and the
// others with ├─, continuing a non-last branch's line with │.
func TestPrint(t *testing.T) {
	where, err := parser.ParseExpr("A > 1")
	if err != nil {
		t.Fatal(err)
	}
	plan := &logical.Sink{Name: "OUT", Topic: "out", Input: &logical.Project{Columns: []logical.Column{{Name: "A"}, {Name: "N"}},
		Input: &logical.Join{Kind: "LEFT OUTER", On: "S.A = T.A",
			Left:  &logical.Repartition{By: []string{"S.A"}, Input: &logical.Filter{Pred: where, Input: &logical.Source{Name: "S", Topic: "s", Reads: []string{"A"}}}},
			Right: &logical.Source{Name: "T", Table: true, Topic: "t"}}}}
	want := `sink OUT (stream, topic out)
└─ project A, N
   └─ join LEFT OUTER ON S.A = T.A
      ├─ repartition by S.A
      │  └─ filter A > 1
      │     └─ source S (stream, topic s, reads A)
      └─ source T (table, topic t)
`
	if got := logical.Print(plan); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
