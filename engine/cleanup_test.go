package engine_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// leftoversOf lists, sorted, the topics and consumer groups named after
// a service's persistent queries (`_sluice-<svc>-query-…`).
func leftoversOf(t *testing.T, adm *kadm.Client, svc string) []string {
	t.Helper()
	prefix := "_sluice-" + svc + "-query-"
	var out []string
	topics, err := adm.ListTopics(context.Background())
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, prefix) {
			out = append(out, "topic "+name)
		}
	}
	groups, err := adm.ListGroups(context.Background())
	if err != nil {
		t.Fatalf("list groups: %v", err)
	}
	for _, g := range groups.Groups() {
		if strings.HasPrefix(g, prefix) {
			out = append(out, "group "+g)
		}
	}
	sort.Strings(out)
	return out
}

// TestTerminateCleansUp runs an aggregation through a repartition topic
// on two instances sharing the command topic, terminates it on one: both
// apply the TERMINATE, the query's repartition and changelog topics and
// its consumer group are deleted and no local store of it remains. The
// table dropped and created again by the same name (so the same query
// id) counts from scratch: its totals are those of the whole input, not
// double (old state kept) nor only the new records (old offsets kept).
func TestTerminateCleansUp(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "clicks"), testkafka.Name(t, "per_page"), testkafka.Name(t, "svc")
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	pv := &pageViews{t: t, brokers: brokers, in: in, out: out, want: map[string]float64{}}
	batch, awaitTotals := pv.batch, pv.await
	ctas := fmt.Sprintf(`CREATE TABLE %[2]s AS SELECT page, COUNT(*) AS views FROM %[1]s GROUP BY page;`, in, out)
	qid := "CTAS_" + out
	prefix := "_sluice-" + svc + "-query-" + qid

	e1 := openShared(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e1)
	e2 := openShared(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e2)
	execute(t, e1, fmt.Sprintf(`CREATE STREAM %[1]s (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=4);`, in)+ctas)
	batch(200)
	awaitTotals("first query")

	wantBefore := []string{
		"group " + prefix,
		"topic " + prefix + "-Aggregate-GroupBy-repartition",
		"topic " + prefix + "-Aggregate-Materialize-changelog",
	}
	if diff := cmp.Diff(wantBefore, leftoversOf(t, adm, svc)); diff != "" {
		t.Fatalf("internal topics and groups while running (-want +got):\n%s", diff)
	}

	execute(t, e1, "TERMINATE "+qid+";")
	testkafka.Await(t, 30*time.Second, "the second instance to apply TERMINATE", func() bool {
		return len(e2.Queries()) == 0
	})
	var left []string
	testkafka.Await(t, 30*time.Second, "internal topics and group deleted", func() bool {
		left = leftoversOf(t, adm, svc)
		return len(left) == 0
	})
	for i, e := range []*engine.Engine{e1, e2} {
		ids, err := e.DB().Stores()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if strings.HasPrefix(id.Name, qid) {
				t.Errorf("instance %d still has store %s", i+1, id)
			}
		}
	}

	execute(t, e1, fmt.Sprintf("DROP TABLE %s;", out)+ctas)
	batch(100)
	awaitTotals("same query created again")
}
