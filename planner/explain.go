package planner

import (
	"strings"

	"github.com/sluice-sql/sluice/planner/logical"
)

// Explain is what EXPLAIN prints of the query: its logical plan, the
// rules that changed it by name, and the physical topology that runs.
func (q *Query) Explain() string {
	var b strings.Builder
	if q.Logical != nil {
		b.WriteString("Logical plan:\n")
		b.WriteString(logical.Print(q.Logical))
		rules := "none"
		if len(q.Rules) > 0 {
			rules = strings.Join(q.Rules, ", ")
		}
		b.WriteString("Rules applied: " + rules + "\n")
		b.WriteString("Physical plan:\n")
	}
	b.WriteString(q.Topology.Explain())
	return b.String()
}
