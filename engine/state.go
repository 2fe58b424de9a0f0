package engine

import (
	"fmt"

	"github.com/sluice-sql/sluice/exec"
)

// StoreState is what one state store of a query holds on this instance,
// summed over its partitions: the windows (or keys) it keeps open and the
// approximate bytes of all its entries, as last committed.
type StoreState struct {
	Name, Changelog string
	Windowed        bool
	Entries, Bytes  int64
}

// QueryState reports the state stores of a running query, so users can
// see that windowed state stays bounded (DESCRIBE … EXTENDED shows it).
func (e *Engine) QueryState(queryID string) ([]StoreState, error) {
	q := e.query(queryID)
	if q == nil {
		return nil, fmt.Errorf("no query %s", queryID)
	}
	prefixes := map[string][]byte{}
	entries := map[string]func([]byte) bool{}
	for _, sub := range q.Plan.Topology.Subs {
		for _, n := range sub.Nodes {
			if agg, ok := n.(*exec.AggregateNode); ok {
				prefixes[agg.Store] = agg.EntryPrefix()
				entries[agg.Store] = agg.IsEntry
			}
		}
	}
	ids, err := e.db.Stores()
	if err != nil {
		return nil, fmt.Errorf("state of %s: list stores: %w", queryID, err)
	}
	var out []StoreState
	for _, spec := range q.Plan.Topology.Stores {
		st := StoreState{Name: spec.Name, Changelog: spec.Changelog, Windowed: spec.Windowed}
		for _, id := range ids {
			if id.Name != spec.Name {
				continue
			}
			s := e.db.Store(id.Name, id.Partition)
			n, _, err := s.CommittedStatsOf(prefixes[spec.Name], entries[spec.Name])
			if err != nil {
				return nil, fmt.Errorf("state of %s: %w", queryID, err)
			}
			_, bytes, err := s.CommittedStats(nil)
			if err != nil {
				return nil, fmt.Errorf("state of %s: %w", queryID, err)
			}
			st.Entries += n
			st.Bytes += bytes
		}
		out = append(out, st)
	}
	return out, nil
}
