package planner

import "github.com/sluice-sql/sluice/exec"

// readStore marks the sub-topology reading spec as reading table from
// store, the state store that keeps it ("" when unknown): a pull query
// on a table runs its chain over the store's rows, not over records of
// the table's topic.
func readStore(t *exec.Topology, spec *exec.SourceSpec, table, store string) {
	for _, sub := range t.Subs {
		if sub.Source == spec {
			sub.Read = &exec.StoreRead{Table: table, Store: store}
		}
	}
}

// StoreRead is how a pull query on a table reads it (every row, or the
// keys its WHERE pins), nil for a query that reads topics.
func (q *Query) StoreRead() *exec.StoreRead {
	for _, sub := range q.Topology.Subs {
		if sub.Read != nil {
			return sub.Read
		}
	}
	return nil
}
