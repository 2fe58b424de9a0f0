package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
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

// sluiceEvent is the change event a Sluice sink of service svc writes.
func sluiceEvent(svc, table, before, after, op string, ts int64) string {
	return fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"sluice-1","connector":"sluice","name":"%s","ts_ms":%d,"snapshot":"false","db":"%s","table":"%s"},"op":"%s","ts_ms":%d}`,
		before, after, svc, ts, svc, table, op, ts)
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
	  CDC_SOURCE['lsn'] AS lsn, CDC_SOURCE['snapshot'] AS snap FROM item_changes;
	CREATE STREAM befores AS SELECT id, CDC_BEFORE AS b FROM item_changes WHERE CDC_OP = 'u';`

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
		var got []string
		for _, r := range sendChange(t, mem, key, value, ts) {
			switch r.Topic {
			case "BY_NAME", "ITEMS_COPY", "CHANGES", "BEFORES":
				got = append(got, r.Topic+" "+string(r.Key)+" "+recordValue(r))
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
			`BEFORES 1 {"B":{"ID":1,"NAME":"anvil","QTY":3}}`,
		}},
		{"update of row 1 re-sent", debeziumKey(1), debezium("u", item(1, "anvil", 3), item(1, "anvil", 5), 300, 30), []string{
			`CHANGES 1 {"NAME":"anvil","QTY":5,"OP":"u","TS":300,"OLD_QTY":3,"LSN":"30","SNAP":"false"}`,
			`BEFORES 1 {"B":{"ID":1,"NAME":"anvil","QTY":3}}`,
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
			`BEFORES 1 {"B":{"ID":1,"NAME":"anvil","QTY":5}}`,
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
		{"no primary key in the image", debeziumKey(4), `{"before":null,"after":{"ident":4,"name":"x","qty":1},"op":"c"}`, []string{
			`CHANGES  {"NAME":"x","QTY":1,"OP":"c","TS":null,"OLD_QTY":null,"LSN":null,"SNAP":null}`,
		}},
		{"insert of row 4", debeziumKey(4), debezium("c", nil, item(4, "bolt", 1), 700, 70), []string{
			`BY_NAME "bolt" {"N":1,"TOTAL":1}`,
			`ITEMS_COPY 4 {"NAME":"bolt","QTY":1}`,
			`CHANGES 4 {"NAME":"bolt","QTY":1,"OP":"c","TS":700,"OLD_QTY":null,"LSN":"70","SNAP":"false"}`,
		}},
		// A table without a primary key in the database has null record
		// keys; the declared key comes from the row image all the same.
		{"insert with a null record key", nil, debezium("c", nil, item(5, "cog", 2), 800, 80), []string{
			`BY_NAME "cog" {"N":1,"TOTAL":2}`,
			`ITEMS_COPY 5 {"NAME":"cog","QTY":2}`,
			`CHANGES 5 {"NAME":"cog","QTY":2,"OP":"c","TS":800,"OLD_QTY":null,"LSN":"80","SNAP":"false"}`,
		}},
	}
	for _, s := range steps {
		got := send(s.key, s.value)
		sort.Strings(s.want)
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.what, diff)
		}
	}
	// Every query reading the topic counts the four malformed events; a
	// table's, also the event without its key.
	for _, r := range res {
		if q := r.Query; q != nil {
			want := int64(5)
			if q.ID == "CSAS_CHANGES" || q.ID == "CSAS_BEFORES" {
				want = 4
			}
			if n := q.Metrics.Errors()["deserialize"]; n != want {
				t.Errorf("%s: deserialize errors = %d, want %d", q.ID, n, want)
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
		var got []string
		for _, r := range sendChange(t, mem, key, value, ts) {
			v := recordValue(r)
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
	ev := func(table, before, after, op string, ts int64) string {
		return sluiceEvent("shop", table, before, after, op, ts)
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

// TestDebeziumTableRestart runs, at least once and exactly once, a
// Debezium table of two partitions, an aggregation over it and a sink of
// its changes on a broker and Badger, restarts the engine on the same
// state, re-sends the last events as Connect does after a task restart
// and goes on: pull queries answer the
// exact table and aggregate, the aggregate's topic holds one record per
// change and none for the re-sent events, and the change-event sink
// holds each key's exact changes.
func TestDebeziumTableRestart(t *testing.T) {
	for _, guarantee := range []string{"at_least_once", "exactly_once"} {
		t.Run(guarantee, func(t *testing.T) { debeziumTableRestart(t, guarantee) })
	}
}

func debeziumTableRestart(t *testing.T, guarantee string) {
	brokers := testkafka.Brokers(t)
	svc, topic := testkafka.Name(t, "svc"), testkafka.Name(t, "items")
	byName, itemsCDC := testkafka.Name(t, "by_name"), testkafka.Name(t, "items_cdc")
	testkafka.CreateTopic(t, brokers, topic, 2)
	dir := t.TempDir()
	// Records of this hour: the sinks' topics are compacted, and a broker
	// rolls (and so compacts) a segment whose records are older than
	// segment.ms as soon as a transaction marker of today lands in it.
	base := time.Now().Add(-time.Hour).UnixMilli()
	e := openEngineLog(t, brokers, dir, svc, quiet, "processing.guarantee", guarantee)
	statements := fmt.Sprintf(`
		CREATE SOURCE TABLE items (id INT PRIMARY KEY, name STRING, qty BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM');
		CREATE TABLE by_name WITH (KAFKA_TOPIC='%[2]s') AS SELECT name, COUNT(*) AS n, SUM(qty) AS total FROM items GROUP BY name;
		CREATE TABLE items_cdc WITH (KAFKA_TOPIC='%[3]s', VALUE_ENVELOPE='DEBEZIUM') AS SELECT * FROM items;`, topic, byName, itemsCDC)
	execute(t, e, statements)
	change := func(id int, value string, ts int64) *kgo.Record {
		r := &kgo.Record{Topic: topic, Key: debeziumKey(id), Timestamp: time.UnixMilli(ts)}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}
	before := func() []*kgo.Record {
		return []*kgo.Record{
			change(1, debezium("r", nil, item(1, "anvil", 3), 100, 10), base+1001),
			change(2, debezium("c", nil, item(2, "anvil", 4), 200, 20), base+1002),
			change(1, debezium("u", item(1, "anvil", 3), item(1, "anvil", 5), 300, 30), base+1003),
			change(2, debezium("d", item(2, "anvil", 4), nil, 400, 40), base+1004),
			change(2, "", base+1004),
			change(3, debezium("c", nil, item(3, "anvil", 4), 400, 41), base+1005),
			change(4, debezium("c", nil, item(4, "bolt", 1), 500, 50), base+1006),
		}
	}
	testkafka.Produce(t, brokers, before()...)
	pull := func(e *engine.Engine, sql string) string {
		res, err := e.Execute(context.Background(), sql)
		if err != nil {
			return err.Error()
		}
		lines := strings.Split(rowsText(res[0].Rows), "\n")
		slices.Sort(lines[1:]) // rows come store partition by store partition
		return strings.Join(lines, "\n")
	}
	awaitPulls := func(e *engine.Engine, want map[string]string) {
		t.Helper()
		got := map[string]string{}
		defer func() {
			if t.Failed() {
				t.Logf("pull queries (-want +got):\n%s", cmp.Diff(want, got))
			}
		}()
		testkafka.Await(t, 30*time.Second, "pull queries", func() bool {
			for sql := range want {
				got[sql] = pull(e, sql)
			}
			return cmp.Equal(want, got)
		})
	}
	awaitPulls(e, map[string]string{
		"SELECT * FROM items;":            "ID NAME QTY\n1 anvil 5\n3 anvil 4\n4 bolt 1",
		"SELECT * FROM items WHERE id=3;": "ID NAME QTY\n3 anvil 4",
		"SELECT * FROM by_name;":          "NAME N TOTAL\nanvil 2 9\nbolt 1 1",
		"SELECT * FROM items_cdc;":        "ID NAME QTY\n1 anvil 5\n3 anvil 4\n4 bolt 1",
	})
	closeEngine(t, e)

	// The same statements resume the queries on their state.
	e = openEngineLog(t, brokers, dir, svc, quiet, "processing.guarantee", guarantee)
	execute(t, e, statements)
	// Connect re-sends what follows its last committed offset: here the
	// primary key change and the last insert, all already applied.
	testkafka.Produce(t, brokers, before()[3:]...)
	testkafka.Produce(t, brokers,
		change(3, debezium("u", item(3, "anvil", 4), item(3, "bolt", 4), 600, 60), base+1007),
		change(4, debezium("d", item(4, "bolt", 1), nil, 700, 70), base+1008),
		change(4, "", base+1008),
	)
	awaitPulls(e, map[string]string{
		"SELECT * FROM items;":            "ID NAME QTY\n1 anvil 5\n3 bolt 4",
		"SELECT * FROM items WHERE id=4;": "ID NAME QTY",
		"SELECT * FROM by_name;":          "NAME N TOTAL\nanvil 1 5\nbolt 1 4",
		"SELECT * FROM items_cdc;":        "ID NAME QTY\n1 anvil 5\n3 bolt 4",
	})
	// The aggregate's records: one per change of a group, whatever the
	// order the two partitions' changes met in; none for the re-sent.
	byKey := map[string][]string{}
	defer func() {
		if t.Failed() {
			t.Logf("aggregate records by key: %v", byKey)
		}
	}()
	testkafka.Await(t, 30*time.Second, "aggregate records", func() bool {
		byKey = map[string][]string{}
		for _, r := range testkafka.ReadAll(t, brokers, byName) {
			byKey[string(r.Key)] = append(byKey[string(r.Key)], string(r.Value))
		}
		return len(byKey[`"anvil"`]) >= 6 && len(byKey[`"bolt"`]) >= 3
	})
	if n := len(byKey[`"anvil"`]); n != 6 || byKey[`"anvil"`][5] != `{"N":1,"TOTAL":5}` {
		t.Errorf("anvil: %d records, want 6 ending in N 1, TOTAL 5: %v", n, byKey[`"anvil"`])
	}
	if n := len(byKey[`"bolt"`]); n != 3 || byKey[`"bolt"`][2] != `{"N":1,"TOTAL":4}` {
		t.Errorf("bolt: %d records, want 3 ending in N 1, TOTAL 4: %v", n, byKey[`"bolt"`])
	}
	// The change events, key by key (a key's changes are in order).
	img := func(id int, name string, qty int) string {
		return fmt.Sprintf(`{"ID":%d,"NAME":"%s","QTY":%d}`, id, name, qty)
	}
	ev := func(before, after, op string, ts int64) string {
		return sluiceEvent(svc, "ITEMS_CDC", before, after, op, ts) // source.table is the table's name
	}
	want := map[string][]string{
		"1": {ev("null", img(1, "anvil", 3), "c", base+1001), ev(img(1, "anvil", 3), img(1, "anvil", 5), "u", base+1003)},
		"2": {ev("null", img(2, "anvil", 4), "c", base+1002), ev(img(2, "anvil", 4), "null", "d", base+1004), "<tombstone>"},
		"3": {ev("null", img(3, "anvil", 4), "c", base+1005), ev(img(3, "anvil", 4), img(3, "bolt", 4), "u", base+1007)},
		"4": {ev("null", img(4, "bolt", 1), "c", base+1006), ev(img(4, "bolt", 1), "null", "d", base+1008), "<tombstone>"},
	}
	got := map[string][]string{}
	testkafka.Await(t, 30*time.Second, "change events", func() bool {
		got = map[string][]string{}
		for _, r := range testkafka.ReadAll(t, brokers, itemsCDC) {
			v := "<tombstone>"
			if r.Value != nil {
				v = string(r.Value)
			}
			got[string(r.Key)] = append(got[string(r.Key)], v)
		}
		return len(got["4"]) >= 3
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("change events (-want +got):\n%s", diff)
	}

	// On wiped state the stores are rebuilt from the table's topic and
	// the changelogs: the same tables, and an update of a row restored
	// from the topic retracts exactly.
	closeEngine(t, e)
	e = openEngineLog(t, brokers, t.TempDir(), svc, quiet, "processing.guarantee", guarantee)
	defer closeEngine(t, e)
	execute(t, e, statements)
	testkafka.Produce(t, brokers, change(1, debezium("u", item(1, "anvil", 5), item(1, "bolt", 2), 800, 80), base+1009))
	awaitPulls(e, map[string]string{
		"SELECT * FROM items;":     "ID NAME QTY\n1 bolt 2\n3 bolt 4",
		"SELECT * FROM by_name;":   "NAME N TOTAL\nanvil 0 0\nbolt 2 6",
		"SELECT * FROM items_cdc;": "ID NAME QTY\n1 bolt 2\n3 bolt 4",
	})
}

// TestDebeziumSinkRetention: an aggregate's key that expires (RETENTION)
// leaves the table as a d event with its last row, then a tombstone.
func TestDebeziumSinkRetention(t *testing.T) {
	e, err := engine.Open(context.Background(), engine.Config{Memory: true, Log: quiet, ServiceID: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
	CREATE STREAM sales (k STRING KEY, v INT) WITH (KAFKA_TOPIC='sales', VALUE_FORMAT='JSON');
	CREATE TABLE totals WITH (VALUE_ENVELOPE='DEBEZIUM', RETENTION='1 SECOND') AS SELECT k, SUM(v) AS total FROM sales GROUP BY k;`)
	var got []string
	for _, r := range []exec.Record{
		{Topic: "sales", Key: []byte("a"), Value: []byte(`{"v":1}`), Timestamp: 1000},
		{Topic: "sales", Key: []byte("a"), Value: []byte(`{"v":2}`), Timestamp: 1500},
		{Topic: "sales", Key: []byte("b"), Value: []byte(`{"v":5}`), Timestamp: 5000},
	} {
		out, err := e.Memory().Send(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			if o.Topic == "TOTALS" {
				v := "<tombstone>"
				if o.Value != nil {
					v = string(o.Value)
				}
				got = append(got, fmt.Sprintf("%s %s", o.Key, v))
			}
		}
	}
	ev := func(before, after, op string, ts int64) string {
		return sluiceEvent("shop", "TOTALS", before, after, op, ts)
	}
	want := []string{
		`a ` + ev("null", `{"K":"a","TOTAL":1}`, "c", 1000),
		`a ` + ev(`{"K":"a","TOTAL":1}`, `{"K":"a","TOTAL":3}`, "u", 1500),
		`b ` + ev("null", `{"K":"b","TOTAL":5}`, "c", 5000),
		`a ` + ev(`{"K":"a","TOTAL":3}`, "null", "d", 5000),
		`a <tombstone>`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("change events (-want +got):\n%s", diff)
	}
}

// TestDebeziumTableJoin joins a Debezium table with a plain table: a
// re-sent change of the CDC side emits no joined row, a real one does.
func TestDebeziumTableJoin(t *testing.T) {
	e, err := engine.Open(context.Background(), engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
	CREATE TABLE items (id INT PRIMARY KEY, name STRING, qty BIGINT)
	  WITH (KAFKA_TOPIC='inv.public.items', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM');
	CREATE TABLE prices (id INT PRIMARY KEY, price DOUBLE) WITH (KAFKA_TOPIC='prices', KEY_FORMAT='JSON', VALUE_FORMAT='JSON');
	CREATE TABLE priced AS SELECT i.id AS id, i.name AS name, p.price AS price FROM items i JOIN prices p ON i.id = p.id;`)
	send := func(r exec.Record) []string {
		t.Helper()
		out, err := e.Memory().Send(r)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range out {
			if o.Topic == "PRICED" {
				got = append(got, fmt.Sprintf("%s %s", o.Key, recordValue(o)))
			}
		}
		return got
	}
	items := func(value string, ts int64) exec.Record {
		r := exec.Record{Topic: "inv.public.items", Key: debeziumKey(1), Timestamp: ts}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}
	steps := []struct {
		what string
		rec  exec.Record
		want []string
	}{
		{"price", exec.Record{Topic: "prices", Key: []byte("1"), Value: []byte(`{"price":2.5}`), Timestamp: 1}, nil},
		{"insert", items(debezium("c", nil, item(1, "anvil", 3), 100, 10), 2), []string{`1 {"NAME":"anvil","PRICE":2.5}`}},
		{"snapshot re-read", items(debezium("r", nil, item(1, "anvil", 3), 100, 10), 3), nil},
		{"update", items(debezium("u", item(1, "anvil", 3), item(1, "big anvil", 3), 200, 20), 4), []string{`1 {"NAME":"big anvil","PRICE":2.5}`}},
		{"update re-sent", items(debezium("u", item(1, "anvil", 3), item(1, "big anvil", 3), 200, 20), 5), nil},
		{"delete", items(debezium("d", item(1, "big anvil", 3), nil, 300, 30), 6), []string{`1 <tombstone>`}},
		{"tombstone", items("", 6), nil},
		{"delete re-sent", items(debezium("d", item(1, "big anvil", 3), nil, 300, 30), 7), nil},
	}
	for _, s := range steps {
		if diff := cmp.Diff(s.want, send(s.rec)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.what, diff)
		}
	}
}

// TestDebeziumRealRecords feeds a table the real Debezium records in
// format/testdata/debezium (Postgres through Kafka Connect: JsonConverter
// with and without schemas, REPLICA IDENTITY FULL and DEFAULT), each
// record twice as Connect may deliver it: an aggregation over the table
// and a copy of it change exactly once per change.
func TestDebeziumRealRecords(t *testing.T) {
	seq := []string{"r", "c", "u", "pk-change-d", "pk-change-tombstone", "pk-change-c", "d", "tombstone"}
	want := [][]string{
		{`COPY 1 {"OWNER":"ann","BALANCE":100}`, `PER_OWNER "ann" {"N":1,"TOTAL":100}`},
		{`COPY 3 {"OWNER":"cat","BALANCE":10}`, `PER_OWNER "cat" {"N":1,"TOTAL":10}`},
		{`COPY 2 {"OWNER":"bob","BALANCE":60}`, `PER_OWNER "bob" {"N":1,"TOTAL":60}`},
		{`COPY 2 <tombstone>`, `PER_OWNER "bob" {"N":0,"TOTAL":0}`},
		nil,
		{`COPY 20 {"OWNER":"bob","BALANCE":60}`, `PER_OWNER "bob" {"N":1,"TOTAL":60}`},
		{`COPY 1 <tombstone>`, `PER_OWNER "ann" {"N":0,"TOTAL":0}`},
		nil,
	}
	for _, dir := range []string{"plain", "schemas", "replica-identity-default"} {
		t.Run(dir, func(t *testing.T) {
			e, err := engine.Open(context.Background(), engine.Config{Memory: true, Log: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			execute(t, e, `
			CREATE TABLE accounts (id INT PRIMARY KEY, owner STRING, balance INT)
			  WITH (KAFKA_TOPIC='accounts', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM');
			CREATE TABLE per_owner AS SELECT owner, COUNT(*) AS n, SUM(balance) AS total FROM accounts GROUP BY owner;
			CREATE TABLE copy AS SELECT * FROM accounts;`)
			for i, name := range seq {
				read := func(part string) []byte {
					b, err := os.ReadFile(filepath.Join("..", "format", "testdata", "debezium", dir, name+"."+part+".json"))
					if err != nil {
						t.Fatal(err)
					}
					return b
				}
				rec := exec.Record{Topic: "accounts", Key: read("key"), Timestamp: int64(i + 1)}
				if v := read("value"); len(v) > 0 {
					rec.Value = v
				}
				for n, what := range []string{"", " again"} {
					out, err := e.Memory().Send(rec)
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, r := range out {
						if r.Topic == "COPY" || r.Topic == "PER_OWNER" {
							v := "<tombstone>"
							if r.Value != nil {
								v = string(r.Value)
							}
							got = append(got, fmt.Sprintf("%s %s %s", r.Topic, r.Key, v))
						}
					}
					sort.Strings(got)
					w := want[i]
					if n > 0 {
						w = nil
					}
					if diff := cmp.Diff(w, got); diff != "" {
						t.Errorf("%s%s (-want +got):\n%s", name, what, diff)
					}
				}
			}
		})
	}
}

// sendChange sends one change event of inv.public.items (an empty value
// is Debezium's tombstone) through the in-memory engine and gives the
// records the queries wrote.
func sendChange(t *testing.T, mem *exec.MemoryRunner, key []byte, value string, ts int64) []*exec.Record {
	t.Helper()
	r := exec.Record{Topic: "inv.public.items", Key: key, Timestamp: ts}
	if value != "" {
		r.Value = []byte(value)
	}
	out, err := mem.Send(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// recordValue is a written record's value as text, a tombstone named.
func recordValue(r *exec.Record) string {
	if r.Value == nil {
		return "<tombstone>"
	}
	return string(r.Value)
}
