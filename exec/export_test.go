package exec

import "github.com/sluice-sql/sluice/state"

// ExpiryVisited exposes how many time-index entries expiry scans read.
func ExpiryVisited(m *Metrics) int64 { return m.expiryVisited.Load() }

// ChangelogRecords returns what a MemoryRunner's store committed to the
// changelog topic, in order.
func ChangelogRecords(m *MemoryRunner, topic string) []state.Change {
	if log := m.changelogs[topic]; log != nil {
		return log.changes
	}
	return nil
}
