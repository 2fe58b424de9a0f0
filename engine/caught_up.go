package engine

import (
	"context"
	"fmt"

	"github.com/sluice-sql/sluice/internal/failover"
	"github.com/twmb/franz-go/pkg/kadm"
)

// CaughtUp reports whether every running persistent query of this engine
// has committed its progress up to the end of each of its input topics
// (its sources and its own repartition topics): all it has been given is
// processed, and what it keeps in state is committed, so a pull query
// sees it. Paused queries are left out, and so are the queries of a
// memory cluster, which have no runner: they process records as they are
// sent, and CaughtUp is always true.
//
// Under exactly-once the end of a topic counts its transaction markers,
// which no consumer commits past: CaughtUp is meant for at-least-once
// queries (test runners waiting for inputs to be processed).
func (e *Engine) CaughtUp(ctx context.Context) (bool, error) {
	adm := e.adm
	for _, q := range e.Queries() {
		if q.runner == nil || q.isPaused() {
			continue
		}
		topics := q.Plan.Topology.SourceTopics()
		ends, err := failover.Offsets(ctx, "list end offsets", func(ctx context.Context) (kadm.ListedOffsets, error) {
			return adm.ListEndOffsets(ctx, topics...)
		})
		if err != nil {
			return false, fmt.Errorf("caught up: end offsets of %v: %w", topics, err)
		}
		committed, err := adm.FetchOffsetsForTopics(ctx, e.groupOf(q.ID), topics...)
		if err != nil {
			return false, fmt.Errorf("caught up: offsets of query %s: %w", q.ID, err)
		}
		behind := false
		ends.Each(func(o kadm.ListedOffset) {
			if o.Offset <= 0 {
				return
			}
			c, ok := committed.Lookup(o.Topic, o.Partition)
			if !ok || c.At < o.Offset {
				behind = true
			}
		})
		if behind {
			return false, nil
		}
	}
	return true, nil
}
