package exec

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/sluice-sql/sluice/state"
)

// standbyExpiryEvery is how often, at most, a standby partition drops
// the expired state its catch-ups restored.
const standbyExpiryEvery = 10 * time.Second

// expiresRestored reports whether node's operator, opening at a known
// stream time, drops the state past retention a restore brought back:
// windowed aggregations and stream-stream joins, whose expiry writes no
// changelog tombstones (state.Store.Expire). A session aggregation with
// EMIT FINAL deletes with tombstones, and its open expires nothing.
func expiresRestored(n Node) bool {
	switch n := n.(type) {
	case *AggregateNode:
		return n.Window != nil && !(n.Window.Kind == Session && n.EmitFinal)
	case *JoinNode:
		return n.streams()
	}
	return false
}

// expireRestored drops from partition's stores of sub, restored from
// their changelogs but run by no task here (a standby's), the state their
// owner expired without tombstones: each operator that does so as it
// opens (expiresRestored) opens over the stores at the stream time of
// their checkpoint and closes again, and the stores keep what it dropped
// as a local commit at the same checkpoint, so the next catch-up goes on
// from there. Without that a standby would keep every window its owner
// ever expired, and a pull query reading it would see them. An operator
// whose open also writes what the changelog must take (a store of an
// older layout, rewritten) leaves its stores as they were: the owner's
// rewrite reaches them through the changelog. It returns how many
// windows and sessions went.
func expireRestored(topo *Topology, sub *SubTopology, db *state.DB, partition int32, log *slog.Logger) (int64, error) {
	var dropped int64
	for _, n := range sub.Nodes {
		if !expiresRestored(n) {
			continue
		}
		stores := map[string]*state.Store{}
		streamTime := int64(math.MinInt64)
		cps := map[string]state.Checkpoint{}
		for _, name := range n.StoreNames() {
			s := db.Store(name, partition)
			cp, err := s.Checkpoint()
			if err != nil {
				return dropped, err
			}
			if st, ok := cp.SourceOffsets[streamTimeKey]; ok {
				streamTime = max(streamTime, st)
			}
			stores[name], cps[name] = s, cp
		}
		if streamTime == math.MinInt64 {
			continue // nothing committed with a stream time yet
		}
		op, err := n.New(nil)
		if err != nil {
			return dropped, err
		}
		tc := &TaskContext{QueryID: topo.QueryID, Partition: partition, StreamTime: streamTime, Metrics: &Metrics{}, Log: log, stores: stores}
		openErr := op.Open(tc)
		if err := op.Close(); err != nil && openErr == nil {
			openErr = err
		}
		for name, s := range stores {
			if openErr != nil || len(s.Pending()) > 0 {
				s.Discard()
				continue
			}
			if err := s.Commit(cps[name]); err != nil {
				return dropped, fmt.Errorf("expire restored state of %s/%d: %w", name, partition, err)
			}
		}
		if openErr != nil {
			return dropped, fmt.Errorf("expire restored state of %s: %w", n.Describe(), openErr)
		}
		dropped += tc.Metrics.Expired.Load()
	}
	return dropped, nil
}
