package engine

import (
	"strconv"

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
	v := prop(q.props, StandbyReplicasProperty, prop(q.props, "ksql.streams."+StandbyReplicasProperty, "0"))
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return n
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
// pull queries do not see them.
func (q *Query) Standbys() []exec.TaskInfo {
	if q.runner == nil {
		return nil
	}
	return q.runner.Standbys()
}
