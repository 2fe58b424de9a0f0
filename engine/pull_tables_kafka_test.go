package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// TestPullTablesKafka pulls a 4-partition source table and a left join
// of it over a real broker and Badger: PullTarget names the partition of
// a key (murmur2 over the table's topic, which both stores follow),
// WithPartitions reads only it, a tombstone deletes, and the rows are
// the same after a restart on the same state and after one on wiped
// state (restored from the topic and from the join result's changelog).
func TestPullTablesKafka(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	users, orders := testkafka.Name(t, "users"), testkafka.Name(t, "orders")
	testkafka.CreateTopic(t, brokers, users, 4)
	testkafka.CreateTopic(t, brokers, orders, 4)
	rec := func(topic, key, value string) *kgo.Record {
		r := &kgo.Record{Topic: topic, Key: []byte(key)}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}
	testkafka.Produce(t, brokers,
		rec(users, "u1", `{"name":"ann"}`), rec(users, "u2", `{"name":"bob"}`), rec(users, "u3", `{"name":"cy"}`),
		rec(users, "u4", `{"name":"di"}`), rec(orders, "u1", `{"amount":7}`), rec(orders, "u3", `{"amount":9}`),
		rec(users, "u4", ""))
	dir := t.TempDir()
	e := openEngine(t, brokers, dir, svc)
	execute(t, e, fmt.Sprintf(`
		CREATE SOURCE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE TABLE orders (id VARCHAR PRIMARY KEY, amount INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
		CREATE TABLE j AS SELECT u.id AS id, u.name AS name, o.amount AS amount FROM users u LEFT JOIN orders o ON u.id = o.id;`, users, orders))

	pull := func(e *engine.Engine, ctx context.Context, sql string) (string, error) {
		res, err := e.Execute(ctx, sql)
		if err != nil {
			return "", err
		}
		lines := strings.Split(rowsText(res[0].Rows), "\n")
		slices.Sort(lines[1:]) // rows come store partition by store partition
		return strings.Join(lines, "\n"), nil
	}
	const wantUsers, wantJ = "ID NAME\nu1 ann\nu2 bob\nu3 cy", "ID NAME AMOUNT\nu1 ann 7\nu2 bob <nil>\nu3 cy 9"
	caughtUp := func(e *engine.Engine) {
		t.Helper()
		testkafka.Await(t, 30*time.Second, "tables", func() bool {
			u, err1 := pull(e, context.Background(), "SELECT * FROM users;")
			j, err2 := pull(e, context.Background(), "SELECT * FROM j;")
			return err1 == nil && err2 == nil && u == wantUsers && j == wantJ
		})
	}
	caughtUp(e)

	u2 := exec.KeyPartition(users, []byte("u2"), 4)
	for _, tt := range []struct{ sql, want string }{
		{"SELECT * FROM users WHERE id = 'u2';", fmt.Sprintf("CST_USERS %s 4 [%d]", users, u2)},
		{"SELECT * FROM j WHERE id = 'u2';", fmt.Sprintf("CTAS_J %s 4 [%d]", users, u2)},
		{"SELECT * FROM j WHERE id > 'u1';", fmt.Sprintf("CTAS_J %s 4 [0 1 2 3]", users)},
	} {
		p, err := parser.ParseOne(tt.sql)
		if err != nil {
			t.Fatal(err)
		}
		tg, ok, err := e.PullTarget(context.Background(), p.(*parser.Select))
		if err != nil || !ok {
			t.Fatalf("%s: not a pull target: %v", tt.sql, err)
		}
		if got := fmt.Sprintf("%s %s %d %v", tg.QueryID, tg.Topic, tg.Partitions, tg.Needed); got != tt.want {
			t.Errorf("%s: target %s, want %s", tt.sql, got, tt.want)
		}
	}
	for _, tt := range []struct {
		parts []int32
		sql   string
		want  string
	}{
		{[]int32{u2}, "SELECT * FROM j WHERE id = 'u2';", "ID NAME AMOUNT\nu2 bob <nil>"},
		{[]int32{(u2 + 1) % 4}, "SELECT * FROM j WHERE id = 'u2';", "ID NAME AMOUNT"},
		{[]int32{u2}, "SELECT name FROM users WHERE id = 'u2';", "NAME\nbob"},
		{[]int32{0, 1, 2, 3}, "SELECT id FROM j WHERE id BETWEEN 'u2' AND 'u3' LIMIT 5;", "ID\nu2\nu3"},
	} {
		got, err := pull(e, engine.WithPartitions(context.Background(), tt.parts), tt.sql)
		if err != nil {
			t.Fatalf("%v %s: %v", tt.parts, tt.sql, err)
		}
		if got != tt.want {
			t.Errorf("%v %s: got %q, want %q", tt.parts, tt.sql, got, tt.want)
		}
	}
	closeEngine(t, e)
	// The join result's store has a changelog of its own; the source
	// table's has none (its topic is its changelog).
	last := map[string]bool{}
	for _, r := range testkafka.ReadAll(t, brokers, "_sluice-"+svc+"-query-CTAS_J-Materialize-changelog") {
		k, _, err := types.DecodeValue(r.Key)
		if err != nil {
			t.Fatalf("changelog key %q: %v", r.Key, err)
		}
		last[fmt.Sprint(k)] = r.Value != nil
	}
	if !last["u1"] || !last["u2"] || !last["u3"] || last["u4"] {
		t.Errorf("changelog of CTAS_J-Materialize: live keys %v, want u1 u2 u3", last)
	}

	// The same state reopened, then state wiped and rebuilt.
	for _, d := range []string{dir, t.TempDir()} {
		e := openEngine(t, brokers, d, svc)
		execute(t, e, fmt.Sprintf(`
			CREATE SOURCE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
			CREATE TABLE orders (id VARCHAR PRIMARY KEY, amount INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
			CREATE TABLE j AS SELECT u.id AS id, u.name AS name, o.amount AS amount FROM users u LEFT JOIN orders o ON u.id = o.id;`, users, orders))
		caughtUp(e)
		closeEngine(t, e)
	}
}
