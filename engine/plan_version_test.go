package engine_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestPlanVersionReplay: a command issued before commands carried a plan
// version is replayed as it was planned then, so its GROUP BY repartition
// keeps the key names its state was partitioned by; a command issued now
// carries the current version and names them as ksqlDB does.
func TestPlanVersionReplay(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, svc := testkafka.Name(t, "pv_in"), testkafka.Name(t, "svc")
	testkafka.CreateTopic(t, brokers, in, 2)
	create := fmt.Sprintf(`CREATE STREAM s (id VARCHAR KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON')`, in)
	oldName, newName := testkafka.Name(t, "pv_old"), testkafka.Name(t, "pv_new")
	old := fmt.Sprintf(`CREATE TABLE %s WITH (KEY_FORMAT='JSON') AS SELECT item, qty, COUNT(*) AS n FROM s GROUP BY item, qty`, oldName)
	var recs []*kgo.Record
	for _, st := range []string{create, old} {
		recs = append(recs, &kgo.Record{Topic: engine.CommandTopicName(svc), Partition: 0,
			Value: fmt.Appendf(nil, `{"version":1,"statement":%q,"properties":{"auto.offset.reset":"earliest"}}`, st)})
	}
	testkafka.CreateTopic(t, brokers, engine.CommandTopicName(svc), 1)
	testkafka.Produce(t, brokers, recs...)
	e := openShared(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`CREATE TABLE %s WITH (KEY_FORMAT='JSON') AS SELECT item, qty, COUNT(*) AS n FROM s GROUP BY item, qty;`, newName))
	got := map[string][]string{}
	for _, q := range e.Queries() {
		var names []string
		for _, sub := range q.Plan.Topology.Subs {
			for _, n := range sub.Nodes {
				if s, ok := n.(*exec.SinkNode); ok && s.Internal {
					for _, k := range s.KeyCols {
						names = append(names, k.Name)
					}
				}
			}
		}
		got[q.ID] = names
	}
	want := map[string][]string{
		"CTAS_" + strings.ToUpper(oldName): {"KSQL_INTERNAL_GROUP_0", "KSQL_INTERNAL_GROUP_1"},
		"CTAS_" + strings.ToUpper(newName): {"ITEM", "QTY"},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("repartition keys of the replayed and the new query %q, want %q", got, want)
	}
}

// TestPlanVersionReplayKeepsJoinWhere: a join command issued under plan
// version 2 is replayed with its WHERE whole above the join (its
// repartition topic and join stores hold unfiltered rows); the same
// statement issued now filters the stream input before the join
// (predicate pushdown, plan version 3).
func TestPlanVersionReplayKeepsJoinWhere(t *testing.T) {
	brokers := testkafka.Brokers(t)
	orders, users, svc := testkafka.Name(t, "pv_orders"), testkafka.Name(t, "pv_users"), testkafka.Name(t, "svc")
	testkafka.CreateTopic(t, brokers, orders, 2)
	testkafka.CreateTopic(t, brokers, users, 2)
	oldName, newName := testkafka.Name(t, "pv_old"), testkafka.Name(t, "pv_new")
	query := `CREATE STREAM %s AS SELECT o.item, o.qty, u.name FROM orders o JOIN users u ON o.item = u.id WHERE o.qty > 10 AND u.name <> 'x'`
	var recs []*kgo.Record
	for _, st := range []string{
		fmt.Sprintf(`CREATE STREAM orders (id VARCHAR KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON')`, orders),
		fmt.Sprintf(`CREATE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON')`, users),
		fmt.Sprintf(query, oldName),
	} {
		recs = append(recs, &kgo.Record{Topic: engine.CommandTopicName(svc), Partition: 0,
			Value: fmt.Appendf(nil, `{"version":1,"statement":%q,"properties":{"auto.offset.reset":"earliest","sluice.plan.version":"2"}}`, st)})
	}
	testkafka.CreateTopic(t, brokers, engine.CommandTopicName(svc), 1)
	testkafka.Produce(t, brokers, recs...)
	e := openShared(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(query+";", newName))
	got := map[string][]string{}
	for _, q := range e.Queries() {
		var filters []string
		for _, sub := range q.Plan.Topology.Subs {
			for _, n := range sub.Nodes {
				if f, ok := n.(*exec.FilterNode); ok {
					filters = append(filters, f.Text)
				}
			}
		}
		got[q.ID] = filters
	}
	want := map[string][]string{
		"CSAS_" + strings.ToUpper(oldName): {"O.QTY > 10 AND U.NAME <> 'x'"},
		"CSAS_" + strings.ToUpper(newName): {"O.QTY > 10", "U.NAME <> 'x'"},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("filters of the replayed and the new query %q, want %q", got, want)
	}
}
