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
