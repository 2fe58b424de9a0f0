package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/registry"
)

// TestAvroThroughRegistry reads an Avro topic another client wrote
// through a Schema Registry (the embedded one, over HTTP): the stream is
// declared without columns and takes them from the subject's latest
// schema; records written with an older schema version read too; bad
// records (not the wire format, an unknown schema id) are counted and
// sent to the error topic. The result is written in AVRO with ksqlDB's
// generated schema, registered under <topic>-value, and reads back with
// that schema. The stream declares no key column, so, as in ksqlDB, the
// results have none.
func TestAvroThroughRegistry(t *testing.T) {
	ctx := context.Background()
	brokers := testkafka.Brokers(t)
	in, out, dead := testkafka.Name(t, "avro_orders"), testkafka.Name(t, "avro_big"), testkafka.Name(t, "avro_dead")
	testkafka.CreateTopic(t, brokers, in, 1)
	reg, err := registry.Serve("127.0.0.1:0", filepath.Join(t.TempDir(), "schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cl, err := registry.NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	v1 := `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}`
	v2 := `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"},` +
		`{"name":"price","type":["null","double"],"default":null}]}`
	id1, err := cl.Register(ctx, in+"-value", v1)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := cl.Register(ctx, in+"-value", v2)
	if err != nil {
		t.Fatal(err)
	}
	testkafka.Produce(t, brokers,
		&kgo.Record{Topic: in, Key: []byte("o1"), Value: confluentAvro(t, id2, v2, map[string]any{"id": int64(1), "item": "pen", "price": map[string]any{"double": 2.5}})},
		&kgo.Record{Topic: in, Key: []byte("o2"), Value: confluentAvro(t, id1, v1, map[string]any{"id": int64(2), "item": "ink"})}, // no price: NULL, filtered out
		&kgo.Record{Topic: in, Key: []byte("o3"), Value: []byte(`{"id":3}`)},                                                       // not the wire format
		&kgo.Record{Topic: in, Key: []byte("o4"), Value: confluentAvro(t, 999, v1, map[string]any{"id": int64(4), "item": "x"})},   // unknown schema id
		&kgo.Record{Topic: in, Key: []byte("o5"), Value: confluentAvro(t, id2, v2, map[string]any{"id": int64(5), "item": "box", "price": map[string]any{"double": 7.0}})},
	)

	cfg := testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet)
	cfg.SchemaRegistry = cl
	e := openConfig(t, cfg)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM orders WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='AVRO');
		CREATE STREAM big WITH (KAFKA_TOPIC='%[2]s', ERROR_TOPIC='%[3]s') AS
		  SELECT id, item, price * 2 AS dbl FROM orders WHERE price > 1;`, in, out, dead))
	desc := execute(t, e, "DESCRIBE orders;")[0].Entity.(*engine.SourceDescription)
	var fields []string
	for _, f := range desc.Fields {
		fields = append(fields, f.Name+" "+f.Type.String())
	}
	if want := []string{"ID BIGINT", "ITEM STRING", "PRICE DOUBLE"}; !cmp.Equal(want, fields) { // upper-cased, as ksqlDB infers them
		t.Errorf("columns from the registry: %v, want %v", fields, want)
	}
	q := res[1].Query
	testkafka.Await(t, 30*time.Second, "all 5 records read", func() bool {
		return q.Metrics.RecordsIn.Load()+q.Metrics.Errors()["deserialize"] >= 5
	})
	testkafka.Await(t, 30*time.Second, "2 results", func() bool { return q.Metrics.RecordsOut.Load() >= 2 })
	closeEngine(t, e)
	if n := q.Metrics.Errors()["deserialize"]; n != 2 {
		t.Errorf("deserialize errors %d, want 2", n)
	}
	if n := len(testkafka.ReadAll(t, brokers, dead)); n != 2 {
		t.Errorf("%d records in the error topic, want 2", n)
	}

	schema, sinkID, found, err := cl.Latest(ctx, out+"-value")
	if err != nil || !found {
		t.Fatalf("sink subject %s-value: found %v, %v", out, found, err)
	}
	want := `{"fields":[{"default":null,"name":"ID","type":["null","long"]},{"default":null,"name":"ITEM","type":["null","string"]},{"default":null,"name":"DBL","type":["null","double"]}],"name":"KsqlDataSourceSchema","namespace":"io.confluent.ksql.avro_schemas","type":"record"}`
	if schema != want {
		t.Errorf("registered sink schema\n got %s\nwant %s", schema, want)
	}
	var got []string
	var hdr sr.ConfluentHeader
	for _, r := range testkafka.ReadAll(t, brokers, out) {
		id, body, err := hdr.DecodeID(r.Value)
		if err != nil || id != sinkID {
			t.Fatalf("output header: id %d, %v; want %d", id, err, sinkID)
		}
		var v map[string]any
		if err := avro.Unmarshal(avro.MustParse(schema), body, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%q %v %v %v", r.Key, v["ID"], v["ITEM"], v["DBL"]))
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{`"" 1 pen 5`, `"" 5 box 14`}, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

// TestAvroRegistryOutage stops the Schema Registry while Avro records
// whose schema the query has not seen yet arrive: they are not bad
// records and not lost. The query waits (DESCRIBE EXTENDED says so, with
// the record that waits), retries with backoff, and when the registry is
// back every record comes out, exactly once, with no deserialize error;
// under both guarantees.
func TestAvroRegistryOutage(t *testing.T) {
	for _, guarantee := range []string{"at_least_once", "exactly_once"} {
		t.Run(guarantee, func(t *testing.T) { testRegistryOutage(t, guarantee) })
	}
}

func testRegistryOutage(t *testing.T, guarantee string) {
	ctx := context.Background()
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "outage_in"), testkafka.Name(t, "outage_out")
	testkafka.CreateTopic(t, brokers, in, 1)
	file := filepath.Join(t.TempDir(), "schemas.json")
	reg, err := registry.Serve("127.0.0.1:0", file)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(reg.URL(), "http://")
	producer, err := registry.NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	v1 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"qty","type":["null","int"],"default":null}]}`
	if _, err := producer.Register(ctx, in+"-value", v1); err != nil {
		t.Fatal(err)
	}
	engineRegistry, err := registry.NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet, "processing.guarantee", guarantee)
	cfg.SchemaRegistry = engineRegistry
	e := openConfig(t, cfg)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM orders (id BIGINT, qty INT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='AVRO');
		CREATE STREAM doubled WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON') AS SELECT id, qty * 2 AS q2 FROM orders;`, in, out))
	q := res[1].Query
	// A newer version the query has not read yet; then the registry goes.
	id2, err := producer.Register(ctx, in+"-value", v2)
	if err != nil {
		t.Fatal(err)
	}
	reg.Close()
	var hdr sr.ConfluentHeader
	for i := int64(1); i <= 3; i++ {
		b, _ := hdr.AppendEncode(nil, id2, nil)
		body, err := avro.Marshal(avro.MustParse(v2), map[string]any{"id": i, "qty": map[string]any{"int": int32(i * 10)}})
		if err != nil {
			t.Fatal(err)
		}
		testkafka.Produce(t, brokers, &kgo.Record{Topic: in, Value: append(b, body...)})
	}
	describe := func() string { return shown(execute(t, e, "DESCRIBE doubled EXTENDED;")[0]) }
	testkafka.Await(t, 30*time.Second, "the query to wait for the registry", func() bool {
		w, ok := q.RegistryWait()
		return ok && w.Attempts >= 3
	})
	desc := describe()
	if !strings.Contains(desc, "Schema registry UNAVAILABLE for ") || !strings.Contains(desc, fmt.Sprintf("%s/0@0 waits for its schema", in)) {
		t.Errorf("DESCRIBE EXTENDED does not show the wait for %s/0@0:\n%s", in, desc)
	}
	if n, out := q.Metrics.Errors()["deserialize"], q.Metrics.RecordsOut.Load(); n != 0 || out != 0 {
		t.Errorf("while waiting: %d deserialize errors, %d records out; want none of either", n, out)
	}
	reg, err = registry.Serve(addr, file)
	if err != nil {
		t.Fatalf("restart the registry on %s: %v", addr, err)
	}
	defer reg.Close()
	testkafka.Await(t, 30*time.Second, "3 results", func() bool { return q.Metrics.RecordsOut.Load() >= 3 })
	if _, waiting := q.RegistryWait(); waiting {
		t.Errorf("still waiting for the registry after the records were read")
	}
	if strings.Contains(describe(), "Schema registry UNAVAILABLE") {
		t.Errorf("DESCRIBE EXTENDED still shows the wait")
	}
	closeEngine(t, e)
	var got []string
	for _, r := range testkafka.ReadAll(t, brokers, out) {
		got = append(got, string(r.Value))
	}
	if diff := cmp.Diff([]string{`{"ID":1,"Q2":20}`, `{"ID":2,"Q2":40}`, `{"ID":3,"Q2":60}`}, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if n := q.Metrics.Errors()["deserialize"]; n != 0 {
		t.Errorf("deserialize errors %d, want 0", n)
	}
}

// TestProtobufBadRecords reads a PROTOBUF topic declared without columns
// (they come from the registered .proto): a good record reads; a wrong
// magic byte, an unknown schema id and a payload that is not the message
// are each counted, sent to the error topic, and the query goes on.
func TestProtobufBadRecords(t *testing.T) {
	ctx := context.Background()
	brokers := testkafka.Brokers(t)
	in, out, dead := testkafka.Name(t, "pb_in"), testkafka.Name(t, "pb_out"), testkafka.Name(t, "pb_dead")
	testkafka.CreateTopic(t, brokers, in, 1)
	reg, err := registry.Serve("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cl, err := registry.NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	schema := "syntax = \"proto3\";\npackage shop;\nmessage Order { int64 id = 1; string item = 2; repeated string tags = 3; }\n"
	id, err := cl.RegisterSchema(ctx, in+"-value", format.Schema{Type: format.SchemaProtobuf, Text: schema})
	if err != nil {
		t.Fatal(err)
	}
	// The good records: written by protobuf's own runtime (dynamicpb).
	fd, err := format.CompileProtobuf(format.Schema{Type: format.SchemaProtobuf, Text: schema})
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Messages().ByName("Order")
	good := func(n int64, item string) []byte {
		m := dynamicpb.NewMessage(md)
		m.Set(md.Fields().ByName("id"), protoreflect.ValueOfInt64(n))
		m.Set(md.Fields().ByName("item"), protoreflect.ValueOfString(item))
		body, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var hdr sr.ConfluentHeader
		b, _ := hdr.AppendEncode(nil, id, []int{0})
		return append(b, body...)
	}
	var hdr sr.ConfluentHeader
	unknown, _ := hdr.AppendEncode(nil, 999, []int{0})
	garbage, _ := hdr.AppendEncode(nil, id, []int{0})
	testkafka.Produce(t, brokers,
		&kgo.Record{Topic: in, Value: good(1, "pen")},
		&kgo.Record{Topic: in, Value: append([]byte{1}, good(2, "x")[1:]...)}, // wrong magic byte
		&kgo.Record{Topic: in, Value: append(unknown, 0x08, 0x03)},            // unknown schema id
		&kgo.Record{Topic: in, Value: append(garbage, 0x0a, 0x7f, 0x01)},      // field 1 as a length past the end
		&kgo.Record{Topic: in, Value: good(5, "box")},
	)
	cfg := testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet)
	cfg.SchemaRegistry = cl
	e := openConfig(t, cfg)
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM orders WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='PROTOBUF');
		CREATE STREAM named WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', ERROR_TOPIC='%[3]s') AS
		  SELECT id, UCASE(item) AS item, tags FROM orders;`, in, out, dead))
	q := res[1].Query
	testkafka.Await(t, 30*time.Second, "2 results", func() bool { return q.Metrics.RecordsOut.Load() >= 2 })
	testkafka.Await(t, 30*time.Second, "3 bad records", func() bool { return q.Metrics.Errors()["deserialize"] >= 3 })
	closeEngine(t, e)
	var got []string
	for _, r := range testkafka.ReadAll(t, brokers, out) {
		got = append(got, string(r.Value))
	}
	if diff := cmp.Diff([]string{`{"ID":1,"ITEM":"PEN","TAGS":[]}`, `{"ID":5,"ITEM":"BOX","TAGS":[]}`}, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if n := q.Metrics.Errors()["deserialize"]; n != 3 {
		t.Errorf("deserialize errors %d, want 3", n)
	}
	if n := len(testkafka.ReadAll(t, brokers, dead)); n != 3 {
		t.Errorf("%d records in the error topic, want 3", n)
	}
}

// confluentAvro is v in Avro under schema, in the Confluent wire format
// with the registry's id.
func confluentAvro(t *testing.T, id int, schema string, v map[string]any) []byte {
	t.Helper()
	var hdr sr.ConfluentHeader
	b, _ := hdr.AppendEncode(nil, id, nil)
	body, err := avro.Marshal(avro.MustParse(schema), v)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, body...)
}
