package engine

import (
	"fmt"

	"github.com/sluice-sql/sluice/planner"
)

// QuerySummaries reports every persistent query as SHOW QUERIES does:
// state, error, sources, sinks and owning instances. The server's web
// console reads it instead of parsing SHOW QUERIES text.
func (e *Engine) QuerySummaries() []QuerySummary {
	return e.queryList().Queries
}

// Warnings are the scaling warnings EXPLAIN prints for a running query:
// more instances than input partitions, and keys hot enough to bound
// parallelism (with the query's own properties).
func (e *Engine) Warnings(queryID string) ([]string, error) {
	q := e.query(queryID)
	if q == nil {
		return nil, fmt.Errorf("query %s %w", queryID, planner.ErrNotFound)
	}
	w, err := e.scaleWarnings(q, q.props)
	if err != nil {
		return nil, fmt.Errorf("warnings of %s: %w", queryID, err)
	}
	return w, nil
}
