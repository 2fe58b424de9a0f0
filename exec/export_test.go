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

// RestoreStandby applies what a MemoryRunner's stores of topo committed
// to their changelogs to partition 0 of the same stores in db, with the
// checkpoint a restore leaves, as a standby's catch-up does, and then
// drops the state past retention as the standby does after a catch-up.
// It returns how many windows and sessions went.
func RestoreStandby(m *MemoryRunner, topo *Topology, db *state.DB) (int64, error) {
	for _, spec := range topo.Stores {
		s := db.Store(spec.Name, 0)
		log := m.changelogs[spec.Changelog]
		if log == nil {
			continue
		}
		for _, c := range log.changes {
			if c.Delete {
				s.Delete(c.Key)
			} else {
				s.Put(c.Key, c.Value)
			}
		}
		if err := s.Commit(state.Checkpoint{ChangelogOffset: int64(len(log.changes)), SourceOffsets: log.src}); err != nil {
			return 0, err
		}
	}
	return expireRestored(topo, topo.Subs[0], db, 0, m.Log)
}
