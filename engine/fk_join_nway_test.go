package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestForeignKeyJoinStartsNWayJoinThroughKafka runs a three-way join whose
// first join is a foreign-key join (orders → customers, partitioned
// differently) and whose second joins the result on the orders' key
// (shipments): the foreign-key join's answers come back partitioned like
// orders, so the second join meets them in the same task. The table the
// query writes is compared key by key (its last record per key) after a
// first run, after a restart on the same data directory with changes made
// while it was down, and after a restart with an empty data directory,
// where a customer that appears finds the order that subscribed to it
// before (the subscription store restored from its changelog).
func TestForeignKeyJoinStartsNWayJoinThroughKafka(t *testing.T) {
	brokers := testkafka.Brokers(t)
	orders, customers, shipments := testkafka.Name(t, "orders"), testkafka.Name(t, "customers"), testkafka.Name(t, "shipments")
	out, svc := testkafka.Name(t, "order_view"), testkafka.Name(t, "svc")
	testkafka.CreateTopic(t, brokers, orders, 2)
	testkafka.CreateTopic(t, brokers, customers, 3)
	testkafka.CreateTopic(t, brokers, shipments, 2)
	sql := fmt.Sprintf(`
		CREATE TABLE %[1]s (id VARCHAR PRIMARY KEY, customer VARCHAR, amount INT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE TABLE %[2]s (id VARCHAR PRIMARY KEY, name VARCHAR)
		  WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', PARTITIONS=3);
		CREATE TABLE %[3]s (order_id VARCHAR PRIMARY KEY, carrier VARCHAR)
		  WITH (KAFKA_TOPIC='%[3]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE TABLE %[4]s AS
		  SELECT o.id, name, amount, carrier
		  FROM %[1]s o JOIN %[2]s c ON o.customer = c.id LEFT JOIN %[3]s s ON o.id = s.order_id;`, orders, customers, shipments, out)
	at := time.Now().Add(-time.Hour).UnixMilli()
	produce := func(topic string, kvs ...string) {
		t.Helper()
		var recs []*kgo.Record
		for i := 0; i < len(kvs); i += 2 {
			r := rec(topic, kvs[i], kvs[i+1], at)
			if kvs[i+1] == "" {
				r.Value = nil // a tombstone
			}
			recs = append(recs, r)
			at++
		}
		testkafka.Produce(t, brokers, recs...)
	}
	// state is the written table: each key's last value ("" deleted).
	state := func() map[string]string {
		m := map[string]string{}
		for _, r := range outputs(t, brokers, out) {
			m[r.Key] = r.Value
		}
		return m
	}
	awaitState := func(stage string, want map[string]string) {
		t.Helper()
		var got map[string]string
		testkafka.Await(t, 90*time.Second, stage, func() bool {
			got = state()
			return cmp.Equal(want, got)
		})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: table (-want +got):\n%s", stage, diff)
		}
	}
	row := func(name string, amount int, carrier string) string {
		c := "null"
		if carrier != "" {
			c = fmt.Sprintf("%q", carrier)
		}
		return fmt.Sprintf(`{"NAME":%q,"AMOUNT":%d,"CARRIER":%s}`, name, amount, c)
	}

	produce(customers, "c1", `{"name":"ann"}`, "c2", `{"name":"bob"}`, "c3", `{"name":"cat"}`)
	produce(shipments, "o1", `{"carrier":"dhl"}`, "o3", `{"carrier":"ups"}`)
	dir := t.TempDir()
	e := openEngine(t, brokers, dir, svc)
	q := execute(t, e, sql)[3].Query
	produce(orders,
		"o1", `{"customer":"c1","amount":10}`,
		"o2", `{"customer":"c2","amount":20}`,
		"o3", `{"customer":"c3","amount":30}`,
		"o4", `{"customer":"c9","amount":40}`, // no such customer yet
		"o5", `{"customer":"c1","amount":50}`)
	want := map[string]string{
		"o1": row("ann", 10, "dhl"),
		"o2": row("bob", 20, ""),
		"o3": row("cat", 30, "ups"),
		"o5": row("ann", 50, ""),
	}
	awaitState("first run", want)
	if err := q.Err(); err != nil {
		t.Fatalf("query failed: %v", err)
	}
	closeEngine(t, e)

	// While the engine is down: a customer renamed, a shipment, an order
	// deleted and one moved to another customer.
	produce(customers, "c1", `{"name":"anna"}`)
	produce(shipments, "o2", `{"carrier":"fedex"}`)
	produce(orders, "o3", "", "o5", `{"customer":"c2","amount":55}`)
	e = openEngine(t, brokers, dir, svc)
	q = execute(t, e, sql)[3].Query
	want["o1"] = row("anna", 10, "dhl")
	want["o2"] = row("bob", 20, "fedex")
	want["o3"] = ""
	want["o5"] = row("bob", 55, "")
	awaitState("after a restart", want)
	if err := q.Err(); err != nil {
		t.Fatalf("query failed: %v", err)
	}
	closeEngine(t, e)

	// An empty data directory: the stores come back from the tables'
	// topics and the changelogs; the customer o4 waits for appears.
	e = openEngine(t, brokers, t.TempDir(), svc)
	q = execute(t, e, sql)[3].Query
	produce(customers, "c9", `{"name":"zed"}`)
	want["o4"] = row("zed", 40, "")
	awaitState("after a restart with an empty data directory", want)
	if err := q.Err(); err != nil {
		t.Fatalf("query failed: %v", err)
	}
	closeEngine(t, e)
}
