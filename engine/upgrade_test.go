package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestCreateOrReplaceUpgrade upgrades a running query in place: a new
// filter and an added column resume from the committed offsets (no
// record twice); changes the query's state or sink could not carry are
// refused with the reason.
func TestCreateOrReplaceUpgrade(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "upg_in"), testkafka.Name(t, "upg_out")
	testkafka.CreateTopic(t, brokers, in, 1)
	rec := func(k string, v int) *kgo.Record { return vRecord(in, k, v) }
	testkafka.Produce(t, brokers, rec("a", 1), rec("b", 2))
	e := openConfig(t, testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet))
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM s (k VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE STREAM o WITH (KAFKA_TOPIC='%s') AS SELECT k, v FROM s WHERE v > 0;
		CREATE TABLE c AS SELECT k, COUNT(*) AS n FROM s GROUP BY k;`, in, out))
	q := res[1].Query
	testkafka.Await(t, 30*time.Second, "2 results", func() bool { return q.Metrics.RecordsOut.Load() >= 2 })

	up := execute(t, e, "CREATE OR REPLACE STREAM o AS SELECT k, v, v * 10 AS v10 FROM s WHERE v > 2;")[0]
	if up.Query == nil || up.Query.ID != q.ID {
		t.Fatalf("upgrade gave query %v, want %s again", up.Query, q.ID)
	}
	testkafka.Produce(t, brokers, rec("c", 3), rec("d", 1), rec("e", 4))
	testkafka.Await(t, 30*time.Second, "2 results of the upgrade", func() bool { return up.Query.Metrics.RecordsOut.Load() >= 2 })

	refused := []struct{ sql, want string }{
		{"CREATE OR REPLACE STREAM o AS SELECT k, v * 10 AS v10 FROM s;",
			"Cannot upgrade data source: DataSource '`O`' has schema = `K` STRING KEY, `V` INTEGER, `V10` INTEGER which is not upgrade compatible with `K` STRING KEY, `V10` INTEGER. The following columns are changed, missing or reordered: [`V` INTEGER, `V10` INTEGER]"},
		{"CREATE OR REPLACE TABLE c AS SELECT k, COUNT(*) AS n, SUM(v) AS total FROM s GROUP BY k;",
			"Cannot upgrade query CTAS_C in place: its stateful steps change"},
	}
	for _, r := range refused {
		_, err := e.Execute(t.Context(), r.sql)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s\n error %v\n want it to contain %q", r.sql, err, r.want)
		}
	}
	closeEngine(t, e)
	var got []string
	for _, r := range testkafka.ReadAll(t, brokers, out) {
		got = append(got, string(r.Key)+" "+string(r.Value))
	}
	want := []string{`a {"V":1}`, `b {"V":2}`, `c {"V":3,"V10":30}`, `e {"V":4,"V10":40}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sink records (-want +got):\n%s", diff)
	}
}
