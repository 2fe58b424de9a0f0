package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	sexec "github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestServerClusterPullTables runs two `sluice server` processes of one
// service over 4-partition topics and pulls what no aggregation holds:
// a table–table LEFT JOIN result (CTAS_J, its rows kept by key on the
// instance owning the input partition), the source table it reads
// (CST_USERS_T) and a stream (a scan of its topic). A pull query by key
// sent to either instance gives the exact row, forwarded to the owner
// of the key's partition when that is the other instance (the response
// names it); full scans give every row once on both; a pull query on
// the plain CREATE TABLE gets ksqlDB's not-queryable error; the stream's
// scan gives the same full rows on both.
func TestServerClusterPullTables(t *testing.T) {
	start := time.Now()
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	users, orders, clicks := testkafka.Name(t, "users"), testkafka.Name(t, "orders"), testkafka.Name(t, "clicks")
	const parts = 4
	for _, topic := range []string{users, orders, clicks} {
		testkafka.CreateTopic(t, brokers, topic, parts)
	}
	// Three users per partition; every other one has an order.
	ids := keysPerPartition(users, "u%02d", parts, 3)
	partitionOf := func(id string) int32 { return sexec.KeyPartition(users, []byte(id), parts) }
	var recs []*kgo.Record
	userRow, joinRow := map[string]string{}, map[string]string{}
	for i, id := range ids {
		name := "name-" + id
		recs = append(recs, &kgo.Record{Topic: users, Key: []byte(id), Value: fmt.Appendf(nil, `{"NAME":%q}`, name)})
		userRow[id] = fmt.Sprintf(`[%q,%q]`, id, name)
		joinRow[id] = fmt.Sprintf(`[%q,%q,null]`, id, name)
		if i%2 == 0 {
			recs = append(recs, &kgo.Record{Topic: orders, Key: []byte(id), Value: fmt.Appendf(nil, `{"AMOUNT":%d}`, 10*i)})
			joinRow[id] = fmt.Sprintf(`[%q,%q,%d]`, id, name, 10*i)
		}
	}
	var clickRows []string
	for i := range 10 {
		user := ids[i%len(ids)]
		recs = append(recs, &kgo.Record{Topic: clicks, Key: []byte(user), Value: fmt.Appendf(nil, `{"URL":"/p/%d"}`, i)})
		clickRows = append(clickRows, fmt.Sprintf(`[%q,"/p/%d"]`, user, i))
	}
	testkafka.Produce(t, brokers, recs...)
	all := func(m map[string]string) []string {
		var out []string
		for _, r := range m {
			out = append(out, r)
		}
		sort.Strings(out)
		return out
	}
	sort.Strings(clickRows)

	args := serverArgs(t, brokers, svc)
	withPG := func() []string { return append(args(), "--pg-listen", "127.0.0.1:0") }
	a := startServer(t, withPG()...)
	defer a.stop(t, 30*time.Second)
	b := startServer(t, withPG()...)
	defer b.stop(t, 30*time.Second)
	live := []*serverProc{a, b}
	defer func() {
		if t.Failed() {
			for _, s := range live {
				t.Logf("%s stderr (tail):\n%s", s.base, tail(s.stderr.String(), 30))
			}
		}
	}()

	ksql := fmt.Sprintf("CREATE SOURCE TABLE users_t (id STRING PRIMARY KEY, name STRING) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON'); "+
		"CREATE TABLE orders_t (id STRING PRIMARY KEY, amount INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON'); "+
		"CREATE STREAM clicks_s (user STRING KEY, url STRING) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON'); "+
		"CREATE TABLE j AS SELECT u.id AS id, u.name AS name, o.amount AS amount FROM users_t u LEFT JOIN orders_t o ON u.id = o.id;",
		users, orders, clicks)
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"`+ksql+`","streamsProperties":{"auto.offset.reset":"earliest"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}

	forwarded := 0
	for _, tc := range []struct {
		query, table string
		topics       []string
		rows         map[string]string
	}{
		{"CTAS_J", "j", []string{users, orders}, joinRow},
		{"CST_USERS_T", "users_t", []string{users}, userRow},
	} {
		// Both instances agree on who owns each partition of the store.
		owner := a.owners(t, tc.query, tc.topics, parts, live)
		if o := b.owners(t, tc.query, tc.topics, parts, live); fmt.Sprint(o) != fmt.Sprint(owner) {
			t.Fatalf("%s: %s sees owners %v, %s sees %v", tc.query, a.base, owner, b.base, o)
		}
		for _, s := range live {
			s.pullRows(t, "SELECT * FROM "+tc.table+";", all(tc.rows))
			for _, id := range ids {
				hdr := s.pullRows(t, "SELECT * FROM "+tc.table+" WHERE id = '"+id+"';", []string{tc.rows[id]})
				want := ""
				if o := owner[partitionOf(id)]; o != s.base {
					want = o
					forwarded++
				}
				if got := hdr.Get("X-Sluice-Forwarded-To"); got != want {
					t.Errorf("%s on %s, id %s (partition %d): forwarded to %q, want %q", tc.table, s.base, id, partitionOf(id), got, want)
				}
			}
		}
	}
	if forwarded == 0 {
		t.Errorf("no pull query was forwarded")
	}
	// The same key lookups over the Postgres protocol, routed alike:
	// each instance answers every key, half of them from the other's
	// state.
	for _, s := range live {
		conn := s.pgConnect(t)
		for _, id := range ids {
			var gotID, name string
			if err := conn.QueryRow(context.Background(), "SELECT * FROM users_t WHERE id = $1", id).Scan(&gotID, &name); err != nil || gotID != id || name != "name-"+id {
				t.Errorf("postgres pull on %s, id %s: %q %q, %v", s.base, id, gotID, name, err)
			}
		}
	}
	// A plain CREATE TABLE keeps no state: ksqlDB's error, on both.
	const notQueryable = "The `ORDERS_T` table isn't queryable. To derive a queryable table, you can do 'CREATE TABLE QUERYABLE_ORDERS_T AS SELECT * FROM ORDERS_T'. See https://cnfl.io/queries for more info.\nAdd EMIT CHANGES if you intended to issue a push query."
	for _, s := range live {
		code, _, body := s.authed(t, "POST", "/query-stream", `{"sql":"SELECT * FROM orders_t WHERE id = 'u00';"}`)
		var eb struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal([]byte(body), &eb); err != nil || code != 400 || eb.Code != 40001 || eb.Message != notQueryable {
			t.Errorf("pull on a plain table at %s: %d %s", s.base, code, body)
		}
	}
	// A stream's pull query scans its topic: the same rows everywhere.
	for _, s := range live {
		s.pullRows(t, "SELECT * FROM clicks_s;", clickRows)
		s.pullRows(t, "SELECT url FROM clicks_s WHERE user = '"+ids[0]+"';", []string{`["/p/0"]`})
	}
	t.Logf("%d of %d key lookups forwarded; %s", forwarded, 2*2*len(ids), time.Since(start).Round(time.Millisecond))
}
