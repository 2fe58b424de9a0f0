package planner_test

import (
	"slices"
	"testing"

	"github.com/sluice-sql/sluice/planner"
)

// The co-partitioning rule refuses, with ksqlDB's words and positions, a
// join whose inputs cannot meet in one task: two inputs read as they are
// over different numbers of partitions (also after joins before), a
// table not joined on its primary key (the right one of two tables), a
// windowed input that would need re-keying. An input re-keyed by the
// repartition rule takes the other's partitions, so counts may differ
// then. The rule checks and never changes the plan.
func TestCoPartitioningRule(t *testing.T) {
	cat := keyingCatalog(t)
	cases := []struct{ sql, err string }{
		{`SELECT c.page, o.x FROM clicks c JOIN odd o WITHIN 1 MINUTE ON c.user_id = o.user_id EMIT CHANGES;`,
			"line 1:34: invalid statement: Can't join `CLICKS` with `ODD` since the number of partitions don't match. `CLICKS` partitions = 2; `ODD` partitions = 3. Please repartition either one so that the number of partitions match."},
		{`SELECT c.user_id, o.x, region FROM clicks c JOIN users u ON c.user_id = u.id JOIN odd o WITHIN 1 MINUTE ON u.id = o.user_id EMIT CHANGES;`,
			"line 1:78: invalid statement: Can't join `CLICKS` with `ODD` since the number of partitions don't match. `CLICKS` partitions = 2; `ODD` partitions = 3. Please repartition either one so that the number of partitions match."},
		{`SELECT c.page, region FROM clicks c JOIN users u ON c.page = u.region EMIT CHANGES;`,
			"line 1:53: invalid statement: Invalid join condition: stream-table joins require to join on the table's primary key. Got C.PAGE = U.REGION."},
		{`SELECT c.user_id, region, boss FROM clicks c JOIN users u ON c.user_id = u.id JOIN regions r ON u.region = r.boss EMIT CHANGES;`,
			"line 1:97: invalid statement: Invalid join condition: stream-table joins require to join on the table's primary key. Got U.REGION = R.BOSS."},
		{`SELECT u.id, boss FROM users u JOIN regions r ON u.id = r.boss EMIT CHANGES;`,
			"line 1:50: invalid statement: Invalid join condition: table-table joins require to join on the primary key of the right input table. Got U.ID = R.BOSS."},
		{`SELECT t.x FROM tumbled t JOIN tumbled2 u WITHIN 1 MINUTE ON t.x = u.x EMIT CHANGES;`,
			"line 1:62: not supported: Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385."},
		// Accepted: VIEWS is re-keyed into ODD's 3 partitions; windowed
		// inputs keyed by the join column; a foreign-key join.
		{`SELECT v.page, o.x FROM views v JOIN odd o WITHIN 1 MINUTE ON v.user_id = o.user_id EMIT CHANGES;`, ""},
		{`SELECT t.x FROM tumbled t JOIN tumbled2 u WITHIN 1 MINUTE ON t.user_id = u.user_id EMIT CHANGES;`, ""},
		{`SELECT u.id, boss FROM users u JOIN regions r ON u.region = r.id EMIT CHANGES;`, ""},
	}
	for _, c := range cases {
		q, err := planQuery(t, cat, c.sql, planner.Options{ServiceID: "test"})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("%s:\ngot  %q\nwant %q", c.sql, got, c.err)
		}
		if err == nil && slices.Contains(q.Rules, "co-partitioning") {
			t.Errorf("%s: co-partitioning named as changing the plan: %q", c.sql, q.Rules)
		}
	}
}
