package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/parser"
)

// TestPullPartitions: PullTarget names the state partitions a pull query
// needs (the key's murmur2 partition of the aggregation's input, or all),
// and WithPartitions reads only those, refusing a partition this instance
// does not own.
func TestPullPartitions(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc, topic := testkafka.Name(t, "svc"), testkafka.Name(t, "orders")
	e := openEngine(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e)
	execute(t, e, `CREATE STREAM orders (id VARCHAR KEY, item VARCHAR) WITH (KAFKA_TOPIC='`+topic+`', VALUE_FORMAT='JSON', PARTITIONS=4);
		CREATE TABLE per_item AS SELECT item, COUNT(*) AS n FROM orders GROUP BY item;
		INSERT INTO orders VALUES ('o1', 'apple'); INSERT INTO orders VALUES ('o2', 'pear'); INSERT INTO orders VALUES ('o3', 'apple');`)
	repart := "_sluice-" + svc + "-query-CTAS_PER_ITEM-Aggregate-GroupBy-repartition"
	apple, pear := exec.KeyPartition(repart, []byte("apple"), 4), exec.KeyPartition(repart, []byte("pear"), 4)

	target := func(sql string) string {
		p, err := parser.ParseOne(sql)
		if err != nil {
			t.Fatal(err)
		}
		tg, ok, err := e.PullTarget(context.Background(), p.(*parser.Select))
		if err != nil || !ok {
			return fmt.Sprintf("not a pull query (%v)", err)
		}
		return fmt.Sprintf("%s %s %d %v", tg.QueryID, tg.Topic, tg.Partitions, tg.Needed)
	}
	sorted := func(ps ...int32) []int32 {
		slices.Sort(ps)
		return slices.Compact(ps)
	}
	for _, tt := range []struct{ sql, want string }{
		{"SELECT * FROM per_item WHERE item = 'apple';", fmt.Sprintf("CTAS_PER_ITEM %s 4 %v", repart, []int32{apple})},
		{"SELECT * FROM per_item WHERE item IN ('pear', 'apple');", fmt.Sprintf("CTAS_PER_ITEM %s 4 %v", repart, sorted(apple, pear))},
		{"SELECT * FROM per_item;", fmt.Sprintf("CTAS_PER_ITEM %s 4 [0 1 2 3]", repart)},
		{"SELECT * FROM orders;", "not a pull query (<nil>)"},
		// What running the query would refuse, planning it refuses.
		{"SELECT * FROM per_item GROUP BY item;", "not a pull query (not supported: Pull queries don't support GROUP BY clauses. See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query.)"},
	} {
		if got := target(tt.sql); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.sql, got, tt.want)
		}
	}

	pull := func(parts []int32, sql string) (string, error) {
		res, err := e.Execute(engine.WithPartitions(context.Background(), parts), sql)
		if err != nil {
			return "", err
		}
		return rowsText(res[0].Rows), nil
	}
	// Wait until this only instance owns and has committed both keys.
	testkafka.Await(t, 30*time.Second, "counts", func() bool {
		got, err := pull([]int32{0, 1, 2, 3}, "SELECT * FROM per_item;")
		return err == nil && (got == "ITEM N\napple 2\npear 1" || got == "ITEM N\npear 1\napple 2")
	})
	for _, tt := range []struct {
		parts []int32
		sql   string
		want  string // rows, or "unavailable"
	}{
		{[]int32{apple}, "SELECT * FROM per_item WHERE item = 'apple';", "ITEM N\napple 2"},
		// The partition of the key is not among those asked for: no row.
		{[]int32{(apple + 1) % 4}, "SELECT * FROM per_item WHERE item = 'apple';", "ITEM N"},
		{[]int32{}, "SELECT * FROM per_item;", "ITEM N"},
		{[]int32{4}, "SELECT * FROM per_item;", "unavailable"},
	} {
		got, err := pull(tt.parts, tt.sql)
		if errors.Is(err, engine.ErrPartitionUnavailable) {
			got = "unavailable"
		} else if err != nil {
			t.Fatalf("%v %s: %v", tt.parts, tt.sql, err)
		}
		if got != tt.want {
			t.Errorf("%v %s: got %q, want %q", tt.parts, tt.sql, got, tt.want)
		}
	}
}
