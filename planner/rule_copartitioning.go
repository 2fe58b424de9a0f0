package planner

import (
	"fmt"

	"github.com/sluice-sql/sluice/planner/logical"
)

// coPartitioningRule checks, after the repartition rule, that the inputs
// of every join meet in one task: an input that needed re-keying is a
// stream that is not windowed (a table's changes and a window's keys
// cannot be re-keyed; a table-table join keys by the right table's
// primary key), and two inputs read as they are hash into the same
// number of partitions. It refuses with ksqlDB's words and changes
// nothing.
func (p *planning) coPartitioningRule() (bool, error) {
	for _, j := range joinNodes(p.q.Logical) {
		if j.ForeignKey {
			continue
		}
		if err := checkCoPartitioned(j, p.bound[j.Index]); err != nil {
			return false, err
		}
	}
	return false, nil
}

// checkCoPartitioned checks one join (not a foreign-key join).
func checkCoPartitioned(j *logical.Join, b *boundJoin) error {
	pj := b.join
	if b.table[0] && b.table[1] && !j.Keyed[1] {
		return posErr(pj.On.Position(), fmt.Errorf("%w: Invalid join condition: table-table joins require to join on the primary key of the right input table. Got %s.", ErrInvalid, onText(b.eq, b.pre)))
	}
	for side := range j.Keyed {
		if b.table[side] && !j.Keyed[side] {
			return posErr(pj.On.Position(), fmt.Errorf("%w: Invalid join condition: %s joins require to join on the table's primary key. Got %s.", ErrInvalid, joinKind(b.table[0], b.table[1]), onText(b.eq, b.pre)))
		}
		if !j.Keyed[side] && b.windowed[side] {
			return posErr(pj.On.Position(), fmt.Errorf("%w: Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385.", ErrUnsupported))
		}
	}
	if rekeyed(j.Left) || rekeyed(j.Right) {
		return nil
	}
	left, right := logical.KeyingOf(j.Left).Partitions, logical.KeyingOf(j.Right).Partitions
	if left != right && left > 0 && right > 0 {
		return posErr(pj.Pos, fmt.Errorf("%w: Can't join `%s` with `%s` since the number of partitions don't match. `%s` partitions = %d; `%s` partitions = %d. Please repartition either one so that the number of partitions match.",
			ErrInvalid, b.labels[0], b.labels[1], b.labels[0], left, b.labels[1], right))
	}
	return nil
}
