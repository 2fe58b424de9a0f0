package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
)

// cleanupTimeout bounds the Kafka requests that delete a terminated
// query's internal topics and consumer group.
const cleanupTimeout = 30 * time.Second

// leftovers is what a terminated query leaves in Kafka: its repartition
// and changelog topics and its consumer group.
type leftovers struct {
	query  string
	topics []string
	group  string
}

// terminateQuery stops a query for good (TERMINATE, or DROP of the
// source it writes), unlike stopQuery, which a closing engine or CREATE
// OR REPLACE uses and which keeps everything for the query's next run.
// Its local state is wiped and its internal topics and consumer group
// deleted, so a later query with the same id starts from scratch rather
// than from the offsets and state of this one.
//
// Every instance applies the command from the command topic, so each
// deletes what it can and counts "already gone" (or a group another
// instance still has members in; the last to stop deletes it) as done.
// Failures are logged, not returned: the query is already stopped and out
// of the catalog on every instance, and an outcome that differed between
// instances over a broker hiccup would split their catalogs.
func (e *Engine) terminateQuery(ctx context.Context, q *Query) error {
	if err := e.stopQuery(q); err != nil {
		// Its last commit failed, most often because another instance
		// applying the same command already deleted its topics: the
		// output it lost was going to be thrown away with it.
		e.log.Warn("terminated query stopped with an error", "query", q.ID, "err", err)
	}
	e.clu.terminated(ctx, q)
	return nil
}

// removeLeftovers wipes a terminated query's local stores and deletes its
// internal topics and consumer group, or, during the command topic's
// replay, keeps the Kafka part for its end.
func (e *Engine) removeLeftovers(ctx context.Context, q *Query) {
	if err := e.wipeStores(q); err != nil {
		e.log.Warn("terminated query's local state not wiped", "query", q.ID, "err", err)
	}
	lo := leftovers{query: q.ID, group: e.groupOf(q.ID)}
	topo := q.Plan.Topology
	for _, it := range topo.Internal {
		lo.topics = append(lo.topics, it.Name)
	}
	for _, st := range topo.Stores {
		if st.FromSource != nil {
			continue // the changelog is a table's own topic: never the query's to delete
		}
		lo.topics = append(lo.topics, st.Changelog)
	}
	e.mu.Lock()
	replaying := e.deferStarts
	if replaying {
		// A command replayed at Open may be followed by one that creates
		// the same query id again, whose topics would be the ones
		// deleted now: what to delete is decided at the replay's end.
		e.leftovers = append(e.leftovers, lo)
	}
	e.mu.Unlock()
	if !replaying {
		e.deleteLeftovers(ctx, lo)
	}
}

// deleteReplayedLeftovers deletes, at the end of the command topic's
// replay, the leftovers of terminated queries whose id no query running
// now has.
func (e *Engine) deleteReplayedLeftovers(ctx context.Context) {
	e.mu.Lock()
	los := e.leftovers
	e.leftovers = nil
	e.mu.Unlock()
	for _, lo := range los {
		if e.query(lo.query) != nil {
			continue
		}
		e.deleteLeftovers(ctx, lo)
	}
}

func (e *Engine) deleteLeftovers(ctx context.Context, lo leftovers) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for _, t := range lo.topics {
		if err := e.clu.deleteTopic(ctx, t); err != nil {
			e.log.Warn("terminated query's topic not deleted", "query", lo.query, "err", err)
		}
	}
	if err := e.deleteGroup(ctx, lo.group); err != nil {
		e.log.Warn("terminated query's consumer group not deleted", "query", lo.query, "err", err)
	}
}

// deleteGroup deletes a consumer group with its committed offsets. A
// group that is gone, or that still has members (another instance has
// yet to stop the query), counts as done here.
func (e *Engine) deleteGroup(ctx context.Context, group string) error {
	resp, err := e.adm.DeleteGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("delete group %s: %w", group, err)
	}
	if r, ok := resp[group]; ok && r.Err != nil &&
		!errors.Is(r.Err, kerr.GroupIDNotFound) && !errors.Is(r.Err, kerr.NonEmptyGroup) {
		return fmt.Errorf("delete group %s: %w", group, r.Err)
	}
	return nil
}

// deleteOwnGroup deletes the consumer group of a query this instance ran
// alone (a push query's), waiting out its own consumer's leave and the
// coordinator's transient errors: a broker may still count the member
// that has just left (NonEmptyGroup), or be moving the group's
// coordinator, and a group given up on then would stay behind for good.
func (e *Engine) deleteOwnGroup(ctx context.Context, group string) error {
	// A leave takes a round trip; one that never comes (the member is
	// expelled at its session timeout) is not waited for.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	wait := 50 * time.Millisecond
	for {
		resp, err := e.adm.DeleteGroups(ctx, group)
		if err == nil {
			r, ok := resp[group]
			switch {
			case !ok || r.Err == nil || errors.Is(r.Err, kerr.GroupIDNotFound):
				return nil
			case !errors.Is(r.Err, kerr.NonEmptyGroup) && !kerr.IsRetriable(r.Err):
				return fmt.Errorf("delete group %s: %w", group, r.Err)
			}
			err = r.Err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("delete group %s: %w", group, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// wipeStores deletes every partition of the query's state stores from
// the local database: the ones on disk and the ones its tasks opened.
func (e *Engine) wipeStores(q *Query) error {
	names := map[string]int32{}
	for _, st := range q.Plan.Topology.Stores {
		names[st.Name] = st.Partitions
	}
	if len(names) == 0 {
		return nil
	}
	ids, err := e.db.Stores()
	if err != nil {
		return err
	}
	seen := map[state.StoreID]bool{}
	for _, id := range ids {
		if _, ok := names[id.Name]; ok {
			seen[id] = true
		}
	}
	for name, n := range names {
		for p := int32(0); p < n; p++ {
			seen[state.StoreID{Name: name, Partition: p}] = true
		}
	}
	wipe := make([]state.StoreID, 0, len(seen))
	for id := range seen {
		wipe = append(wipe, id)
	}
	sort.Slice(wipe, func(i, j int) bool { return wipe[i].String() < wipe[j].String() })
	var errs []error
	for _, id := range wipe {
		if err := e.db.Store(id.Name, id.Partition).Wipe(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// groupOf is the consumer group of a persistent query.
func (e *Engine) groupOf(queryID string) string {
	return planner.InternalPrefix(e.cfg.ServiceID, queryID)
}
