package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// ErrPartitionUnavailable is returned for a pull query limited (by
// WithPartitions) to a partition this instance does not own, or whose
// state it is still restoring: answering from what it has would give an
// old or empty answer instead of the owner's.
var ErrPartitionUnavailable = errors.New("partition not available on this instance")

// InstanceID names this instance: stable across restarts with the same
// data directory, distinct between instances.
func (e *Engine) InstanceID() string { return e.instanceID }

// Partitions reports the partitions of the query's input topics this
// instance owns and their tasks' states (exec.TaskAssigned when a
// stateless partition has sent nothing yet).
func (q *Query) Partitions() []exec.TaskInfo {
	if q.runner == nil {
		return nil
	}
	return q.runner.Partitions()
}

// servable checks that every one of parts of topic is owned here with a
// running task, so its state is current.
func (q *Query) servable(topic string, parts []int32) error {
	state := map[int32]exec.TaskState{}
	for _, ti := range q.Partitions() {
		if ti.Topic == topic {
			state[ti.Partition] = ti.State
		}
	}
	for _, p := range parts {
		switch st, ok := state[p]; {
		case !ok:
			return fmt.Errorf("%w: partition %d of %s (query %s) is not assigned here", ErrPartitionUnavailable, p, topic, q.ID)
		case st != exec.TaskRunning:
			return fmt.Errorf("%w: partition %d of %s (query %s) is %s", ErrPartitionUnavailable, p, topic, q.ID, st)
		}
	}
	return nil
}

// PullTarget says where the rows of a pull query live: which query's
// state, partitioned like which topic, and which of its partitions the
// query needs.
type PullTarget struct {
	QueryID string
	// Topic is the topic whose partitions the table's state follows;
	// the instance consuming partition p of it in the query's consumer
	// group holds store partition p.
	Topic string
	// Partitions is Topic's partition count.
	Partitions int32
	// Needed are the partitions that hold the rows: those of the keys a
	// WHERE pins (KEY = x, KEY IN (…)), or all of them, ascending.
	Needed []int32
}

// PullTarget reports whether sel is a pull query on a table and, if
// so, where its rows live. It plans the query with ctx's properties
// (WithProperties), so that a query running would refuse is refused here
// with the same error, and reads the partitions it needs from the plan:
// those of the keys its store read looks up (the key-lookup rule), or
// all. A server uses it to send each part of the query to the instance
// owning it.
func (e *Engine) PullTarget(ctx context.Context, sel *parser.Select) (*PullTarget, bool, error) {
	if sel.Emit != parser.EmitNone || len(sel.Joins) > 0 || sel.From == nil {
		return nil, false, nil
	}
	src, err := e.cat.Lookup(sel.From.Name)
	if err != nil || src.Kind != parser.KindTable {
		return nil, false, nil
	}
	plan, err := planner.PlanQuery(e.cat, sel, nil, "pull_target", e.planOptions(e.sessionFor(ctx).snapshot()))
	if err != nil {
		return nil, false, err
	}
	read := plan.StoreRead()
	if read == nil {
		return nil, false, fmt.Errorf("pull query on %s: the plan reads no state store", src.Name)
	}
	q, reader, err := e.tableKeeper(src)
	if err != nil {
		return nil, false, err
	}
	t := &PullTarget{QueryID: q.ID, Topic: reader.Topic(), Partitions: reader.Partitions()}
	if read.Keys != nil {
		needed, err := keyPartitions(reader, read.Keys)
		if err == nil {
			t.Needed = needed
			return t, true, nil
		}
		if !errors.Is(err, exec.ErrNoKeyPartition) {
			return nil, false, err
		}
		// Any partition may hold the keys: read them all.
	}
	for p := int32(0); p < t.Partitions; p++ {
		t.Needed = append(t.Needed, p)
	}
	return t, true, nil
}

// keyPartitions lists, ascending, the store partitions holding keys.
func keyPartitions(reader *exec.TableReader, keys [][]any) ([]int32, error) {
	var out []int32
	for _, k := range keys {
		p, err := reader.KeyPartition(k)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

type partitionsKey struct{}

// WithPartitions returns a context whose pull queries read only the given
// store partitions, each of which must be owned by this instance and
// running (ErrPartitionUnavailable otherwise). A server answering its
// share of a pull query passes the partitions it was asked for this way.
// An empty list reads nothing (the query still yields its columns).
func WithPartitions(ctx context.Context, parts []int32) context.Context {
	return context.WithValue(ctx, partitionsKey{}, append([]int32{}, parts...))
}

func partitionsOf(ctx context.Context) ([]int32, bool) {
	p, ok := ctx.Value(partitionsKey{}).([]int32)
	return p, ok
}
