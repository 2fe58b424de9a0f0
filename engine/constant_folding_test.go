package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// The constant-folding rule rewrites the logical plan's filter and
// projection, and the query runs what the plan says: EXPLAIN's logical
// and physical plans show the folded expressions, the output columns
// keep the names ksqlDB gives the expressions as written, and the
// records are those the expressions as written give.
func TestConstantFoldingRuns(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "clicks"), testkafka.Name(t, "slow")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	const query = `SELECT uid, ms / (60 * 1000) AS minutes, 'p-' + 'x' AS tag, price * (1 + 1) AS double_price, 2 * 3
		FROM %[1]s WHERE ms >= 60 * 1000 AND page <> 'a' + 'b'`
	execute(t, e, fmt.Sprintf(`CREATE STREAM %[1]s (uid VARCHAR KEY, page VARCHAR, ms BIGINT, price DECIMAL(4, 2))
		WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, in))
	explained := shown(execute(t, e, fmt.Sprintf("EXPLAIN CREATE STREAM %[2]s AS "+query+";", in, out))[0])
	upIn, upOut := strings.ToUpper(in), strings.ToUpper(out)
	wantLogical := fmt.Sprintf(`Logical plan:
sink %[2]s (stream, topic %[2]s)
└─ project UID, MINUTES, TAG, DOUBLE_PRICE, KSQL_COL_0
   └─ filter MS >= 60000 AND PAGE <> 'a' + 'b'
      └─ source %[1]s (stream, topic %[3]s)
Rules applied: constant-folding
`, upIn, upOut, in)
	start, end := strings.Index(explained, "Logical plan:\n"), strings.Index(explained, "Physical plan:\n")
	if start < 0 || end < start {
		t.Fatalf("no logical plan before the physical one:\n%s", explained)
	}
	if got := explained[start:end]; got != wantLogical {
		t.Errorf("logical plan\n%s\nwant\n%s", got, wantLogical)
	}
	for _, step := range []string{
		"├─ filter MS >= 60000 AND PAGE <> 'a' + 'b'  (stateless)\n",
		"├─ project UID, MINUTES, TAG, DOUBLE_PRICE, KSQL_COL_0  (stateless)\n",
	} {
		if !strings.Contains(explained[end:], step) {
			t.Errorf("the physical plan has no step %q:\n%s", step, explained[end:])
		}
	}

	res := execute(t, e, fmt.Sprintf("CREATE STREAM %[2]s AS "+query+";", in, out))
	q := res[0].Query
	testkafka.Produce(t, brokers,
		rec(in, "u1", `{"page":"home","ms":59999,"price":1.25}`, 1000),
		rec(in, "u2", `{"page":"home","ms":60000,"price":1.25}`, 2000),
		rec(in, "u3", `{"page":"ab","ms":120000,"price":2.50}`, 3000),
		rec(in, "u4", `{"page":"cart","ms":150000,"price":10.01}`, 4000),
	)
	testkafka.Await(t, 30*time.Second, "2 results", func() bool { return q.Metrics.RecordsOut.Load() >= 2 })
	closeEngine(t, e) // flushes outputs
	type kv struct{ Key, Value string }
	var got []kv
	for _, r := range testkafka.ReadAll(t, brokers, out) {
		got = append(got, kv{string(r.Key), string(r.Value)})
	}
	want := []kv{
		{"u2", `{"MINUTES":1,"TAG":"p-x","DOUBLE_PRICE":2.50,"KSQL_COL_0":6}`},
		{"u4", `{"MINUTES":2,"TAG":"p-x","DOUBLE_PRICE":20.02,"KSQL_COL_0":6}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if q.Err() != nil {
		t.Errorf("query failed: %v", q.Err())
	}
}
