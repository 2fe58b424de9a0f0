package engine

import (
	"github.com/sluice-sql/sluice/exec"
)

// StallTimeoutProperty is how long a query's input partition may have
// records to read without committed progress before the query counts as
// stalled: a WARN naming the query, sub-topology, partition and what it
// waits on, STALLED in SHOW QUERIES and DESCRIBE EXTENDED, and
// sluice_query_stalled{query} 1 in /metrics. A duration ('30s', '2m') or
// milliseconds ('30000'); default 30 s.
const StallTimeoutProperty = "sluice.stall.timeout"

// QueryStalled is the state of a running query with a stalled partition.
const QueryStalled = "STALLED"

// Stalls reports the partitions of the query on this instance that have
// input but made no committed progress for the stall timeout.
func (q *Query) Stalls() []exec.Stall {
	if q.runner == nil {
		return nil
	}
	return q.runner.Stalls()
}

// RegistryWait reports whether the query's records wait for the Schema
// Registry (it cannot give their schema now; they are read again after a
// backoff), and since when.
func (q *Query) RegistryWait() (exec.RegistryWaitState, bool) {
	if q.runner == nil {
		return exec.RegistryWaitState{}, false
	}
	return q.runner.RegistryWait()
}

// isPaused reports whether PAUSE stopped the query.
func (q *Query) isPaused() bool {
	if q.runner != nil {
		return q.runner.Paused()
	}
	return q.paused
}
