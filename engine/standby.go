package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
)

// StandbyReplicasProperty is how many instances besides the owner keep a
// warm copy of each stateful partition of a persistent query (default 0),
// as a session property in force when the query was created; ksqlDB's
// ksql.streams.num.standby.replicas is read too. Which instances do is
// decided by the instance registry (package cluster), which knows who is
// alive and owns what; the engine only keeps what it is told.
const StandbyReplicasProperty = "num.standby.replicas"

// StandbyReplicas is the query's num.standby.replicas: 0 when unset or
// not a number.
func (q *Query) StandbyReplicas() int {
	return standbyReplicas(q.props)
}

// SetStandbys replaces the input partitions (topic → partitions) whose
// state this instance keeps warm for the query (see
// exec.KafkaRunner.SetStandbys). A query not running here ignores it.
func (q *Query) SetStandbys(parts map[string][]int32) {
	if q.runner != nil {
		q.runner.SetStandbys(parts)
	}
}

// Standbys lists the partitions this instance keeps standby state for,
// with state exec.TaskStandby. They are never owned here: Partitions and
// ordinary pull queries do not see them; standby reads
// (WithStandbyPartitions) do.
func (q *Query) Standbys() []exec.TaskInfo {
	if q.runner == nil {
		return nil
	}
	return q.runner.Standbys()
}

// Properties of pull queries answered from standby state, as ksqlDB
// names them.
const (
	// PullStandbyReadsProperty, when 'true', lets a pull query read a
	// partition from an instance keeping a standby of it when its owner
	// is not alive or does not answer (default false: such a query fails
	// with ErrPartitionUnavailable). The server routes; the engine reads
	// standby state only for partitions passed with
	// WithStandbyPartitions.
	PullStandbyReadsProperty = "ksql.query.pull.enable.standby.reads"
	// PullMaxOffsetLagProperty bounds how many offsets a standby's store
	// may lag its changelog's end and still be read (default: no bound).
	PullMaxOffsetLagProperty = "ksql.query.pull.max.allowed.offset.lag"
)

// StandbyReads reports whether PullStandbyReadsProperty is 'true' for a
// statement run with ctx (Property).
func (e *Engine) StandbyReads(ctx context.Context) bool {
	return propBool(e.sessionFor(ctx).snapshot(), propStandbyReads)
}

// Property is the session property name in force for a statement run
// with ctx: the request's (WithProperties) over the engine's session.
// A server reads pull query properties it routes by this way.
// A declared property's value is the one its readers use (LookupProperty).
func (e *Engine) Property(ctx context.Context, name string) string {
	props := e.sessionFor(ctx).snapshot()
	if p, ok := LookupProperty(name); ok {
		return p.value(props)
	}
	return props[strings.ToLower(name)]
}

type standbyPartitionsKey struct{}

// WithStandbyPartitions returns a context whose pull queries read only
// the given store partitions, from this instance's standby state: each
// must be a standby here that caught up with its changelog, within
// PullMaxOffsetLagProperty (ErrPartitionUnavailable otherwise). A server
// answering another instance's standby read passes them this way. It
// takes the place of WithPartitions.
func WithStandbyPartitions(ctx context.Context, parts []int32) context.Context {
	return context.WithValue(ctx, standbyPartitionsKey{}, append([]int32{}, parts...))
}

func standbyPartitionsOf(ctx context.Context) ([]int32, bool) {
	p, ok := ctx.Value(standbyPartitionsKey{}).([]int32)
	return p, ok
}

// standbyServable checks that every one of parts of topic may be read
// from this instance's standby state under props.
func (q *Query) standbyServable(ctx context.Context, topic string, parts []int32, props map[string]string) error {
	maxLag, err := maxOffsetLag(props)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if q.runner == nil {
			return fmt.Errorf("%w: partition %d of %s (query %s): the query does not run here", ErrPartitionUnavailable, p, topic, q.ID)
		}
		if q.assignedHere(topic, p) {
			// The partition moved here while the asking instance still
			// took this one for its standby (its owner was cut off). A
			// running task's state is newer than a standby's; a restoring
			// one's is the standby's plus part of the changelog's tail, a
			// committed prefix as a standby's is (a restore from nothing
			// answers ErrRestoring instead).
			continue
		}
		if err := q.runner.StandbyReadable(ctx, topic, p, maxLag); err != nil {
			if errors.Is(err, exec.ErrStandbyUnavailable) {
				return fmt.Errorf("%w: %w", ErrPartitionUnavailable, err)
			}
			return err
		}
	}
	return nil
}

// assignedHere reports whether partition p of topic is owned here, its
// task running or restoring.
func (q *Query) assignedHere(topic string, p int32) bool {
	for _, ti := range q.Partitions() {
		if ti.Topic == topic && ti.Partition == p {
			return ti.State == exec.TaskRunning || ti.State == exec.TaskRestoring
		}
	}
	return false
}
