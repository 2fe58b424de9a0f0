package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/registry"
)

// debeziumAvroKey and debeziumAvroValue are the schemas Debezium's
// AvroConverter registers for a Postgres table inv.public.items (id
// primary key): the key record of the primary key, and the Envelope
// with before and after unions of null and the Value record.
const (
	debeziumAvroKey   = `{"type":"record","name":"Key","namespace":"inv.public.items","fields":[{"name":"id","type":"int"}],"connect.name":"inv.public.items.Key"}`
	debeziumAvroValue = `{"type":"record","name":"Envelope","namespace":"inv.public.items","fields":[` +
		`{"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"id","type":"int"},{"name":"name","type":["null","string"],"default":null},{"name":"qty","type":["null","long"],"default":null}],"connect.name":"inv.public.items.Value"}],"default":null},` +
		`{"name":"after","type":["null","Value"],"default":null},` +
		`{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[` +
		`{"name":"version","type":"string"},{"name":"connector","type":"string"},{"name":"name","type":"string"},{"name":"ts_ms","type":"long"},` +
		`{"name":"snapshot","type":[{"type":"string","connect.version":1,"connect.parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"connect.default":"false","connect.name":"io.debezium.data.Enum"},"null"],"default":"false"},` +
		`{"name":"db","type":"string"},{"name":"sequence","type":["null","string"],"default":null},{"name":"schema","type":"string"},{"name":"table","type":"string"},` +
		`{"name":"txId","type":["null","long"],"default":null},{"name":"lsn","type":["null","long"],"default":null},{"name":"xmin","type":["null","long"],"default":null}],` +
		`"connect.name":"io.debezium.connector.postgresql.Source"}},` +
		`{"name":"op","type":"string"},{"name":"ts_ms","type":["null","long"],"default":null},` +
		`{"name":"transaction","type":["null",{"type":"record","name":"block","namespace":"event","fields":[{"name":"id","type":"string"},{"name":"total_order","type":"long"},{"name":"data_collection_order","type":"long"}],"connect.version":1,"connect.name":"event.block"}],"default":null}],` +
		`"connect.version":2,"connect.name":"inv.public.items.Envelope"}`
)

// TestDebeziumAvroTable reads a Debezium table written in AVRO with the
// schemas AvroConverter registers: declared without columns, the table
// takes its key from the key schema and its other columns from the
// Envelope's Value record; creates, updates, a primary key change and
// deletes give the exact table and aggregate, and the pseudo columns
// read the envelope. A copy of the table written as AVRO change events
// (the sink registers their schema) holds each key's exact ops and reads
// back as the same table.
func TestDebeziumAvroTable(t *testing.T) {
	ctx := context.Background()
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "items_avro")
	testkafka.CreateTopic(t, brokers, topic, 1)
	reg, err := registry.Serve("127.0.0.1:0", filepath.Join(t.TempDir(), "schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cl, err := registry.NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	keyID, err := cl.Register(ctx, topic+"-key", debeziumAvroKey)
	if err != nil {
		t.Fatal(err)
	}
	valueID, err := cl.Register(ctx, topic+"-value", debeziumAvroValue)
	if err != nil {
		t.Fatal(err)
	}
	row := func(id int, name string, qty int64) any {
		if id == 0 {
			return nil
		}
		return map[string]any{"inv.public.items.Value": map[string]any{"id": id, "name": map[string]any{"string": name}, "qty": map[string]any{"long": qty}}}
	}
	ts := int64(0)
	change := func(key int, op string, before, after any, lsn int64) *kgo.Record {
		ts++
		v := map[string]any{"before": before, "after": after, "op": op, "ts_ms": map[string]any{"long": 900 + lsn}, "transaction": nil,
			"source": map[string]any{"version": "3.6.1.Final", "connector": "postgresql", "name": "inv", "ts_ms": 100 * lsn,
				"snapshot": map[string]any{"string": "false"}, "db": "shop", "sequence": nil, "schema": "public", "table": "items",
				"txId": map[string]any{"long": 700 + lsn}, "lsn": map[string]any{"long": lsn}, "xmin": nil}}
		return &kgo.Record{Topic: topic, Key: confluentAvro(t, keyID, debeziumAvroKey, map[string]any{"id": key}),
			Value: confluentAvro(t, valueID, debeziumAvroValue, v), Timestamp: time.UnixMilli(1000 + ts)}
	}
	tombstone := func(key int) *kgo.Record {
		ts++
		return &kgo.Record{Topic: topic, Key: confluentAvro(t, keyID, debeziumAvroKey, map[string]any{"id": key}), Timestamp: time.UnixMilli(1000 + ts)}
	}
	testkafka.Produce(t, brokers,
		change(1, "r", nil, row(1, "anvil", 3), 1),
		change(2, "c", nil, row(2, "anvil", 4), 2),
		change(1, "u", row(1, "anvil", 3), row(1, "anvil", 5), 3),
		change(1, "u", row(1, "anvil", 3), row(1, "anvil", 5), 3), // re-sent
		change(2, "d", row(2, "anvil", 4), nil, 4),
		tombstone(2),
		change(3, "c", nil, row(3, "anvil", 4), 5),
		change(4, "c", nil, row(4, "bolt", 1), 6),
		change(4, "d", row(4, "bolt", 1), nil, 7),
		tombstone(4),
		change(5, "x", nil, row(5, "bolt", 1), 8), // unknown op
	)
	cfg := testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet)
	cfg.SchemaRegistry = cl
	e := openConfig(t, cfg)
	defer closeEngine(t, e)
	res := execute(t, e, fmt.Sprintf(`
		CREATE SOURCE TABLE items WITH (KAFKA_TOPIC='%[1]s', FORMAT='AVRO', VALUE_ENVELOPE='DEBEZIUM');
		CREATE TABLE by_name AS SELECT name, COUNT(*) AS n, SUM(qty) AS total FROM items GROUP BY name;
		CREATE TABLE ops AS SELECT id, CDC_OP AS op, CDC_TS_MS AS ts, CDC_BEFORE->qty AS old_qty, CDC_SOURCE['lsn'] AS lsn,
		  CDC_SOURCE['snapshot'] AS snap, CDC_SOURCE['sequence'] AS seq FROM items;
		CREATE TABLE items_out WITH (KAFKA_TOPIC='%[1]s_out', VALUE_ENVELOPE='DEBEZIUM') AS SELECT * FROM items;
		CREATE SOURCE TABLE items_back (id INT PRIMARY KEY, name STRING, qty BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s_out', FORMAT='AVRO', VALUE_ENVELOPE='DEBEZIUM');`, topic))
	desc := execute(t, e, "DESCRIBE items;")[0].Entity.(*engine.SourceDescription)
	var fields []string
	for _, f := range desc.Fields {
		fields = append(fields, f.Name+" "+f.Type.String())
	}
	if want := []string{"ID INTEGER", "NAME STRING", "QTY BIGINT"}; !cmp.Equal(want, fields) {
		t.Errorf("columns from the registry: %v, want %v", fields, want)
	}
	pull := func(sql string) string {
		res, err := e.Execute(ctx, sql)
		if err != nil {
			return err.Error()
		}
		lines := strings.Split(rowsText(res[0].Rows), "\n")
		slices.Sort(lines[1:])
		return strings.Join(lines, "\n")
	}
	want := map[string]string{
		"SELECT * FROM items;":   "ID NAME QTY\n1 anvil 5\n3 anvil 4",
		"SELECT * FROM by_name;": "NAME N TOTAL\nanvil 2 9\nbolt 0 0",
		"SELECT * FROM ops;":     "ID OP TS OLD_QTY LSN SNAP SEQ\n1 u 300 3 3 false <nil>\n3 c 500 <nil> 5 false <nil>",
		// The AVRO change events the sink wrote, read back as a table.
		"SELECT * FROM items_back;": "ID NAME QTY\n1 anvil 5\n3 anvil 4",
	}
	got := map[string]string{}
	defer func() {
		if t.Failed() {
			t.Logf("pull queries (-want +got):\n%s", cmp.Diff(want, got))
		}
	}()
	testkafka.Await(t, 30*time.Second, "pull queries", func() bool {
		for sql := range want {
			got[sql] = pull(sql)
		}
		return cmp.Equal(want, got)
	})
	// The sink's records decoded with the schema it registered: each key's
	// ops, the re-sent update and the tombstones after deletes included.
	ops := map[string][]string{}
	for _, r := range testkafka.ReadAll(t, brokers, topic+"_out") {
		if r.Value == nil {
			continue
		}
		var h sr.ConfluentHeader
		id, body, err := h.DecodeID(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		sch, err := cl.Schema(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var ev map[string]any
		if err := avro.Unmarshal(avro.MustParse(sch.Text), body, &ev); err != nil {
			t.Fatal(err)
		}
		img := ev["after"]
		if img == nil {
			img = ev["before"]
		}
		// A union's value decodes bare or as {branch: value}.
		bare := func(v any) any {
			if m, ok := v.(map[string]any); ok && len(m) == 1 {
				for _, x := range m {
					return x
				}
			}
			return v
		}
		key := fmt.Sprint(bare(bare(img).(map[string]any)["ID"]))
		ops[key] = append(ops[key], fmt.Sprint(bare(ev["op"])))
	}
	if want := map[string][]string{"1": {"c", "u"}, "2": {"c", "d"}, "3": {"c"}, "4": {"c", "d"}}; !cmp.Equal(want, ops) {
		t.Errorf("change events written: %v, want %v", ops, want)
	}
	for _, r := range res[1:3] {
		if n := r.Query.Metrics.Errors()["deserialize"]; n != 1 {
			t.Errorf("%s: deserialize errors %d, want 1 (the unknown op)", r.Query.ID, n)
		}
	}
}
