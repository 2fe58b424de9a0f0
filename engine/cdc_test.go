package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
)

// debezium is a Debezium change event of the items table as
// JsonConverter writes it without schemas: before and after are row
// images (nil: null), lsn the source position.
func debezium(op string, before, after map[string]any, tsMs int64, lsn int64) string {
	ev := map[string]any{
		"before": before, "after": after, "op": op, "ts_ms": tsMs + 5, "transaction": nil,
		"source": map[string]any{"version": "3.6.1.Final", "connector": "postgresql", "name": "inv", "ts_ms": tsMs,
			"snapshot": map[bool]string{true: "true", false: "false"}[op == "r"], "db": "shop", "schema": "public", "table": "items",
			"txId": 700 + lsn, "lsn": lsn, "xmin": nil},
	}
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func item(id int, name string, qty int) map[string]any {
	return map[string]any{"id": id, "name": name, "qty": qty}
}

// debeziumKey is the record key Debezium writes: a struct of the primary
// key's columns.
func debeziumKey(id int) []byte { return []byte(fmt.Sprintf(`{"id":%d}`, id)) }

// cdcStatements declare a Debezium table, an aggregation and a copy of
// it, and the same topic read as a stream of changes with the envelope's
// pseudo columns.
const cdcStatements = `
	CREATE TABLE items (id INT PRIMARY KEY, name STRING, qty BIGINT)
	  WITH (KAFKA_TOPIC='inv.public.items', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM');
	CREATE TABLE by_name AS SELECT name, COUNT(*) AS n, SUM(qty) AS total FROM items GROUP BY name;
	CREATE TABLE items_copy AS SELECT * FROM items;
	CREATE STREAM item_changes (id INT KEY, name STRING, qty BIGINT)
	  WITH (KAFKA_TOPIC='inv.public.items', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='debezium');
	CREATE STREAM changes AS SELECT id, name, qty, CDC_OP AS op, CDC_TS_MS AS ts, CDC_BEFORE->qty AS old_qty,
	  CDC_SOURCE['lsn'] AS lsn, CDC_SOURCE['snapshot'] AS snap FROM item_changes;`

// TestDebeziumTableChanges feeds a Debezium table the events of a
// snapshot, inserts, updates (one of the primary key), deletes, the
// tombstones after deletes, events re-sent as Connect does after a task
// restart, and malformed events; each record gives exactly the expected
// changes of the aggregation, the copy and the change stream.
func TestDebeziumTableChanges(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res := execute(t, e, cdcStatements)
	mem := e.Memory()
	ts := int64(1000)
	send := func(key []byte, value string) []string {
		t.Helper()
		ts++
		r := exec.Record{Topic: "inv.public.items", Key: key, Timestamp: ts}
		if value != "" {
			r.Value = []byte(value)
		}
		out, err := mem.Send(r)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range out {
			switch r.Topic {
			case "BY_NAME", "ITEMS_COPY", "CHANGES":
				v := "<tombstone>"
				if r.Value != nil {
					v = string(r.Value)
				}
				got = append(got, r.Topic+" "+string(r.Key)+" "+v)
			}
		}
		// The aggregation's results come through its repartition topic,
		// after the other queries': the order across topics is routing.
		sort.Strings(got)
		return got
	}
	steps := []struct {
		what  string
		key   []byte
		value string
		want  []string
	}{
		{"snapshot of row 1", debeziumKey(1), debezium("r", nil, item(1, "anvil", 3), 100, 10), []string{
			`BY_NAME "anvil" {"N":1,"TOTAL":3}`,
			`ITEMS_COPY 1 {"NAME":"anvil","QTY":3}`,
			`CHANGES 1 {"NAME":"anvil","QTY":3,"OP":"r","TS":100,"OLD_QTY":null,"LSN":"10","SNAP":"true"}`,
		}},
		{"insert of row 2", debeziumKey(2), debezium("c", nil, item(2, "anvil", 4), 200, 20), []string{
			`BY_NAME "anvil" {"N":2,"TOTAL":7}`,
			`ITEMS_COPY 2 {"NAME":"anvil","QTY":4}`,
			`CHANGES 2 {"NAME":"anvil","QTY":4,"OP":"c","TS":200,"OLD_QTY":null,"LSN":"20","SNAP":"false"}`,
		}},
		{"snapshot of row 1 again", debeziumKey(1), debezium("r", nil, item(1, "anvil", 3), 100, 10), []string{
			`CHANGES 1 {"NAME":"anvil","QTY":3,"OP":"r","TS":100,"OLD_QTY":null,"LSN":"10","SNAP":"true"}`,
		}},
		{"update of row 1", debeziumKey(1), debezium("u", item(1, "anvil", 3), item(1, "anvil", 5), 300, 30), []string{
			`BY_NAME "anvil" {"N":2,"TOTAL":9}`,
			`ITEMS_COPY 1 {"NAME":"anvil","QTY":5}`,
			`CHANGES 1 {"NAME":"anvil","QTY":5,"OP":"u","TS":300,"OLD_QTY":3,"LSN":"30","SNAP":"false"}`,
		}},
		{"update of row 1 re-sent", debeziumKey(1), debezium("u", item(1, "anvil", 3), item(1, "anvil", 5), 300, 30), []string{
			`CHANGES 1 {"NAME":"anvil","QTY":5,"OP":"u","TS":300,"OLD_QTY":3,"LSN":"30","SNAP":"false"}`,
		}},
		{"primary key 2 becomes 3: delete", debeziumKey(2), debezium("d", item(2, "anvil", 4), nil, 400, 40), []string{
			`BY_NAME "anvil" {"N":1,"TOTAL":5}`,
			`ITEMS_COPY 2 <tombstone>`,
			`CHANGES 2 {"NAME":"anvil","QTY":4,"OP":"d","TS":400,"OLD_QTY":4,"LSN":"40","SNAP":"false"}`,
		}},
		{"primary key 2 becomes 3: tombstone", debeziumKey(2), "", nil},
		{"primary key 2 becomes 3: create", debeziumKey(3), debezium("c", nil, item(3, "anvil", 4), 400, 41), []string{
			`BY_NAME "anvil" {"N":2,"TOTAL":9}`,
			`ITEMS_COPY 3 {"NAME":"anvil","QTY":4}`,
			`CHANGES 3 {"NAME":"anvil","QTY":4,"OP":"c","TS":400,"OLD_QTY":null,"LSN":"41","SNAP":"false"}`,
		}},
		{"row 1 moves to another group", debeziumKey(1), debezium("u", item(1, "anvil", 5), item(1, "bolt", 5), 500, 50), []string{
			`BY_NAME "anvil" {"N":1,"TOTAL":4}`,
			`BY_NAME "bolt" {"N":1,"TOTAL":5}`,
			`ITEMS_COPY 1 {"NAME":"bolt","QTY":5}`,
			`CHANGES 1 {"NAME":"bolt","QTY":5,"OP":"u","TS":500,"OLD_QTY":5,"LSN":"50","SNAP":"false"}`,
		}},
		{"delete of row 1", debeziumKey(1), debezium("d", item(1, "bolt", 5), nil, 600, 60), []string{
			`BY_NAME "bolt" {"N":0,"TOTAL":0}`,
			`ITEMS_COPY 1 <tombstone>`,
			`CHANGES 1 {"NAME":"bolt","QTY":5,"OP":"d","TS":600,"OLD_QTY":5,"LSN":"60","SNAP":"false"}`,
		}},
		{"tombstone of row 1", debeziumKey(1), "", nil},
		{"delete of row 1 re-sent", debeziumKey(1), debezium("d", item(1, "bolt", 5), nil, 600, 60), []string{
			`CHANGES 1 {"NAME":"bolt","QTY":5,"OP":"d","TS":600,"OLD_QTY":5,"LSN":"60","SNAP":"false"}`,
		}},
		{"no op", debeziumKey(4), `{"before":null,"after":{"id":4,"name":"x","qty":1}}`, nil},
		{"unknown op", debeziumKey(4), `{"before":null,"after":{"id":4,"name":"x","qty":1},"op":"x"}`, nil},
		{"create without after", debeziumKey(4), `{"before":null,"after":null,"op":"c"}`, nil},
		{"not JSON", debeziumKey(4), `not json`, nil},
		{"insert of row 4", debeziumKey(4), debezium("c", nil, item(4, "bolt", 1), 700, 70), []string{
			`BY_NAME "bolt" {"N":1,"TOTAL":1}`,
			`ITEMS_COPY 4 {"NAME":"bolt","QTY":1}`,
			`CHANGES 4 {"NAME":"bolt","QTY":1,"OP":"c","TS":700,"OLD_QTY":null,"LSN":"70","SNAP":"false"}`,
		}},
	}
	for _, s := range steps {
		got := send(s.key, s.value)
		sort.Strings(s.want)
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.what, diff)
		}
	}
	// Every query reading the topic counts the four malformed events.
	for _, r := range res {
		if q := r.Query; q != nil {
			if n := q.Metrics.Errors()["deserialize"]; n != 4 {
				t.Errorf("%s: deserialize errors = %d, want 4", q.ID, n)
			}
		}
	}
}

// TestDebeziumSink writes a CDC table's copy and an aggregation over it
// as Debezium change events, reads the copy back as a Debezium table,
// and checks every record: c for a new key, u with the old row as
// before, d with the old row followed by a tombstone, nothing for a
// re-sent change; the table read back is the table written.
func TestDebeziumSink(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet, ServiceID: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
	CREATE TABLE items (id INT PRIMARY KEY, name STRING, qty BIGINT)
	  WITH (KAFKA_TOPIC='inv.public.items', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM');
	CREATE TABLE items_cdc WITH (VALUE_ENVELOPE='DEBEZIUM') AS SELECT * FROM items WHERE qty > 0;
	CREATE TABLE by_name_cdc WITH (KAFKA_TOPIC='by_name_cdc', VALUE_ENVELOPE='DEBEZIUM') AS
	  SELECT name, COUNT(*) AS n, SUM(qty) AS total FROM items GROUP BY name HAVING SUM(qty) > 3;
	CREATE TABLE items_back (id INT PRIMARY KEY, name STRING, qty BIGINT)
	  WITH (KAFKA_TOPIC='ITEMS_CDC', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM');
	CREATE TABLE back_copy AS SELECT * FROM items_back;
	CREATE TABLE items_copy AS SELECT * FROM items WHERE qty > 0;`)
	mem := e.Memory()
	ts := int64(1000)
	var copied, back []string
	send := func(key []byte, value string) []string {
		t.Helper()
		ts++
		r := exec.Record{Topic: "inv.public.items", Key: key, Timestamp: ts}
		if value != "" {
			r.Value = []byte(value)
		}
		out, err := mem.Send(r)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range out {
			v := "<tombstone>"
			if r.Value != nil {
				v = string(r.Value)
			}
			line := fmt.Sprintf("%s %s %s @%d", r.Topic, r.Key, v, r.Timestamp)
			switch r.Topic {
			case "ITEMS_CDC", "by_name_cdc":
				got = append(got, line)
			case "ITEMS_COPY":
				copied = append(copied, fmt.Sprintf("%s %s", r.Key, v))
			case "BACK_COPY":
				back = append(back, fmt.Sprintf("%s %s", r.Key, v))
			}
		}
		sort.Strings(got)
		return got
	}
	src := func(ts int64) string {
		return fmt.Sprintf(`"source":{"version":"sluice-1","connector":"sluice","name":"shop","ts_ms":%d,"snapshot":"false","db":"shop","table":"%%s"}`, ts)
	}
	ev := func(table, before, after, op string, ts int64) string {
		return fmt.Sprintf(`{"before":%s,"after":%s,`+fmt.Sprintf(src(ts), table)+`,"op":"%s","ts_ms":%d}`, before, after, op, ts)
	}
	steps := []struct {
		what  string
		key   []byte
		value string
		want  []string
	}{
		{"insert of row 1", debeziumKey(1), debezium("c", nil, item(1, "anvil", 3), 100, 10), []string{
			`ITEMS_CDC 1 ` + ev("ITEMS_CDC", `null`, `{"ID":1,"NAME":"anvil","QTY":3}`, "c", 1001) + ` @1001`,
		}},
		{"insert of row 2", debeziumKey(2), debezium("c", nil, item(2, "anvil", 4), 200, 20), []string{
			`ITEMS_CDC 2 ` + ev("ITEMS_CDC", `null`, `{"ID":2,"NAME":"anvil","QTY":4}`, "c", 1002) + ` @1002`,
			`by_name_cdc "anvil" ` + ev("BY_NAME_CDC", `null`, `{"NAME":"anvil","N":2,"TOTAL":7}`, "c", 1002) + ` @1002`,
		}},
		{"update of row 1", debeziumKey(1), debezium("u", item(1, "anvil", 3), item(1, "anvil", 5), 300, 30), []string{
			`ITEMS_CDC 1 ` + ev("ITEMS_CDC", `{"ID":1,"NAME":"anvil","QTY":3}`, `{"ID":1,"NAME":"anvil","QTY":5}`, "u", 1003) + ` @1003`,
			`by_name_cdc "anvil" ` + ev("BY_NAME_CDC", `{"NAME":"anvil","N":2,"TOTAL":7}`, `{"NAME":"anvil","N":2,"TOTAL":9}`, "u", 1003) + ` @1003`,
		}},
		{"update of row 1 re-sent", debeziumKey(1), debezium("u", item(1, "anvil", 3), item(1, "anvil", 5), 300, 30), nil},
		{"row 2 filtered out", debeziumKey(2), debezium("u", item(2, "anvil", 4), item(2, "anvil", 0), 350, 35), []string{
			`ITEMS_CDC 2 ` + ev("ITEMS_CDC", `{"ID":2,"NAME":"anvil","QTY":4}`, `null`, "d", 1005) + ` @1005`,
			`ITEMS_CDC 2 <tombstone> @1005`,
			`by_name_cdc "anvil" ` + ev("BY_NAME_CDC", `{"NAME":"anvil","N":2,"TOTAL":9}`, `{"NAME":"anvil","N":2,"TOTAL":5}`, "u", 1005) + ` @1005`,
		}},
		{"delete of row 1", debeziumKey(1), debezium("d", item(1, "anvil", 5), nil, 400, 40), []string{
			`ITEMS_CDC 1 ` + ev("ITEMS_CDC", `{"ID":1,"NAME":"anvil","QTY":5}`, `null`, "d", 1006) + ` @1006`,
			`ITEMS_CDC 1 <tombstone> @1006`,
			`by_name_cdc "anvil" ` + ev("BY_NAME_CDC", `{"NAME":"anvil","N":2,"TOTAL":5}`, `null`, "d", 1006) + ` @1006`,
			`by_name_cdc "anvil" <tombstone> @1006`,
		}},
		{"row 2 back", debeziumKey(2), debezium("u", item(2, "anvil", 0), item(2, "anvil", 6), 500, 50), []string{
			`ITEMS_CDC 2 ` + ev("ITEMS_CDC", `null`, `{"ID":2,"NAME":"anvil","QTY":6}`, "c", 1007) + ` @1007`,
			`by_name_cdc "anvil" ` + ev("BY_NAME_CDC", `null`, `{"NAME":"anvil","N":1,"TOTAL":6}`, "c", 1007) + ` @1007`,
		}},
	}
	for _, s := range steps {
		got := send(s.key, s.value)
		sort.Strings(s.want)
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.what, diff)
		}
	}
	// Read back as a Debezium table, the sink is the table it wrote.
	if diff := cmp.Diff(copied, back); diff != "" {
		t.Errorf("table read back from the change events (-written +read):\n%s", diff)
	}
	if len(copied) != 6 {
		t.Errorf("copy wrote %d records, want 6: %v", len(copied), copied)
	}
}
