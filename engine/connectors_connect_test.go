package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testcdc"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestConnectorsOnKafkaConnect runs ksqlDB's connector statements against
// a real Kafka Connect worker on Apache Kafka: a FileStream source
// connector copies a file the test writes into a topic, SHOW CONNECTORS
// and DESCRIBE CONNECTOR report it running with its topic and the Sluice
// stream over it, a pull query reads the lines it wrote, IF [NOT] EXISTS
// make re-running harmless, Connect's own errors reach the user, and DROP
// CONNECTOR removes it.
func TestConnectorsOnKafkaConnect(t *testing.T) {
	testcdc.Require(t)
	brokers := testkafka.Brokers(t)
	url := testcdc.StartConnect(t, brokers).URL
	cfg := testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet)
	cfg.ConnectURL = url
	e := openConfig(t, cfg)
	defer closeEngine(t, e)
	ctx := context.Background()

	topic := testkafka.Name(t, "lines")
	testkafka.CreateTopic(t, brokers, topic, 1)
	name := strings.ToUpper(testkafka.Name(t, "file_src"))
	file := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(file, []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	create := fmt.Sprintf(`CREATE SOURCE CONNECTOR %%s %s WITH ('connector.class'='FileStreamSource', 'file'='%s', 'topic'='%s', 'tasks.max'=1,
		'key.converter'='org.apache.kafka.connect.storage.StringConverter', 'value.converter'='org.apache.kafka.connect.storage.StringConverter')`,
		strings.ToLower(name), file, topic)
	res := execute(t, e, fmt.Sprintf(create, ""))[0]
	info, ok := res.Entity.(*engine.ConnectorInfo)
	if !ok {
		t.Fatalf("CREATE answered %T, want *engine.ConnectorInfo", res.Entity)
	}
	wantConfig := map[string]string{"connector.class": "FileStreamSource", "file": file, "topic": topic, "tasks.max": "1", "name": name,
		"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
	if diff := cmp.Diff(wantConfig, info.Info.Config); info.Info.Name != name || info.Info.Type != "source" || diff != "" {
		t.Errorf("created %s (%s), config (-want +got):\n%s", info.Info.Name, info.Info.Type, diff)
	}
	if res.Message != "Created connector "+name {
		t.Errorf("message %q", res.Message)
	}

	// Again with IF NOT EXISTS: nothing happens, and a warning says why;
	// without it, ksqlDB's error.
	res = execute(t, e, fmt.Sprintf(create, "IF NOT EXISTS"))[0]
	if diff := cmp.Diff(&engine.StatementWarning{Message: "Connector " + name + " already exists"}, res.Entity); diff != "" {
		t.Errorf("IF NOT EXISTS (-want +got):\n%s", diff)
	}
	if _, err := e.Execute(ctx, fmt.Sprintf(create, "")); !errors.Is(err, engine.ErrConnectorExists) || err.Error() != "Connector "+name+" already exists" {
		t.Errorf("second CREATE: err = %v", err)
	}

	// The connector and its one task run.
	running := engine.ConnectorSummary{Name: name, Type: "source", ClassName: "FileStreamSource", State: "RUNNING (1/1 tasks RUNNING)"}
	testkafka.Await(t, 60*time.Second, "connector running", func() bool {
		for _, c := range execute(t, e, "SHOW SOURCE CONNECTORS")[0].Entity.(*engine.ConnectorList).Connectors {
			if c == running {
				return true
			}
		}
		return false
	})
	for _, c := range execute(t, e, "SHOW SINK CONNECTORS")[0].Entity.(*engine.ConnectorList).Connectors {
		if c.Name == name {
			t.Errorf("SHOW SINK CONNECTORS lists the source connector: %+v", c)
		}
	}

	// The lines reach the topic, and a stream over it reads them.
	execute(t, e, fmt.Sprintf(`CREATE STREAM lines (line VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='KAFKA')`, topic))
	var got []string
	testkafka.Await(t, 60*time.Second, "three lines in the topic", func() bool {
		got = pullRows(t, e, "SELECT line FROM lines;")
		return len(got) >= 3
	})
	if diff := cmp.Diff([]string{"alpha", "beta", "gamma"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}

	// DESCRIBE CONNECTOR: its class, state, task, topic and the stream.
	var d *engine.ConnectorDescription
	testkafka.Await(t, 30*time.Second, "the connector's topic listed", func() bool {
		d = execute(t, e, "DESCRIBE CONNECTOR "+strings.ToLower(name))[0].Entity.(*engine.ConnectorDescription)
		return len(d.Topics) > 0
	})
	if d.Class != "FileStreamSource" || d.Status.Name != name || d.Status.Type != "source" || d.Status.Connector.State != "RUNNING" ||
		len(d.Status.Tasks) != 1 || d.Status.Tasks[0].State.State != "RUNNING" || d.Status.Tasks[0].WorkerID == "" {
		t.Errorf("description %+v", d)
	}
	if diff := cmp.Diff([]string{topic}, d.Topics); diff != "" {
		t.Errorf("topics (-want +got):\n%s", diff)
	}
	if len(d.Sources) != 1 || d.Sources[0].Name != "LINES" || d.Sources[0].Topic != topic {
		t.Errorf("sources %+v", d.Sources)
	}

	// Connect's own errors, in its words after ksqlDB's.
	for _, c := range []struct{ sql, prefix string }{
		{`CREATE SOURCE CONNECTOR bad_class WITH ('connector.class'='com.example.NoSuchConnector')`,
			"Failed to create connector: Failed to find any class that implements Connector and which name matches com.example.NoSuchConnector"},
		{`CREATE SOURCE CONNECTOR no_class WITH ('topic'='x')`,
			"Failed to create connector: Connector config {"},
		{`DESCRIBE CONNECTOR nope`, "Failed to query connector status: No status found for connector NOPE"},
	} {
		_, err := e.Execute(ctx, c.sql)
		var ce *engine.ConnectorError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), c.prefix) || ce.Status < 400 {
			t.Errorf("%s: err = %v (%T), want a ConnectorError starting %q", c.sql, err, err, c.prefix)
		}
	}
	if _, err := e.Execute(ctx, `CREATE SOURCE CONNECTOR no_class WITH ('topic'='x')`); err == nil || !strings.HasSuffix(err.Error(), "contains no connector type") {
		t.Errorf("no connector.class: err = %v", err)
	}

	// The plugins include the FileStream connectors.
	var plugins []string
	for _, p := range execute(t, e, "SHOW CONNECTOR PLUGINS")[0].Entity.(*engine.ConnectorPluginList).Plugins {
		if strings.HasPrefix(p.Class, "org.apache.kafka.connect.file.") {
			plugins = append(plugins, p.Class+" "+p.Type)
		}
	}
	if diff := cmp.Diff([]string{"org.apache.kafka.connect.file.FileStreamSinkConnector sink", "org.apache.kafka.connect.file.FileStreamSourceConnector source"}, plugins); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}

	// DROP, then DROP again: an error, or with IF EXISTS a warning.
	res = execute(t, e, "DROP CONNECTOR "+strings.ToLower(name))[0]
	if diff := cmp.Diff(&engine.DroppedConnector{Name: name}, res.Entity); diff != "" {
		t.Errorf("DROP (-want +got):\n%s", diff)
	}
	if _, err := e.Execute(ctx, "DROP CONNECTOR "+name); err == nil || err.Error() != "Failed to drop connector: Connector "+name+" not found" {
		t.Errorf("second DROP: err = %v", err)
	}
	res = execute(t, e, "DROP CONNECTOR IF EXISTS "+name)[0]
	if diff := cmp.Diff(&engine.StatementWarning{Message: "Connector '" + name + "' does not exist."}, res.Entity); diff != "" {
		t.Errorf("DROP IF EXISTS (-want +got):\n%s", diff)
	}
	for _, c := range execute(t, e, "SHOW CONNECTORS")[0].Entity.(*engine.ConnectorList).Connectors {
		if c.Name == name {
			t.Errorf("dropped connector still listed: %+v", c)
		}
	}
}

// TestFileStreamSinkConnector: a FileStream sink connector created from
// Sluice writes the rows of a Sluice query's sink topic to a file, line
// for line, and DESCRIBE CONNECTOR names the sink stream over its topic.
func TestFileStreamSinkConnector(t *testing.T) {
	testcdc.Require(t)
	brokers := testkafka.Brokers(t)
	url := testcdc.StartConnect(t, brokers).URL
	cfg := testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet)
	cfg.ConnectURL = url
	e := openConfig(t, cfg)
	defer closeEngine(t, e)

	in, out := testkafka.Name(t, "orders"), testkafka.Name(t, "big_orders")
	name := strings.ToUpper(testkafka.Name(t, "file_sink"))
	file := filepath.Join(t.TempDir(), "out.txt")
	execute(t, e, fmt.Sprintf(`CREATE STREAM orders (id INT KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=1);
		INSERT INTO orders (id, item, qty) VALUES (1, 'apple', 1);
		INSERT INTO orders (id, item, qty) VALUES (2, 'pear', 5);
		INSERT INTO orders (id, item, qty) VALUES (3, 'fig', 7);
		CREATE STREAM big_orders WITH (KAFKA_TOPIC='%s', PARTITIONS=1) AS SELECT id, item, qty * 10 AS qty10 FROM orders WHERE qty > 1;`, in, out))
	execute(t, e, fmt.Sprintf(`CREATE SINK CONNECTOR %s WITH ('connector.class'='FileStreamSink', 'file'='%s', 'topics'='%s',
		'key.converter'='org.apache.kafka.connect.storage.StringConverter', 'value.converter'='org.apache.kafka.connect.storage.StringConverter')`, name, file, out))
	want := `{"ITEM":"pear","QTY10":50}` + "\n" + `{"ITEM":"fig","QTY10":70}` + "\n"
	var got []byte
	testkafka.Await(t, 60*time.Second, "the sink's rows in the file", func() bool {
		got, _ = os.ReadFile(file)
		return len(got) >= len(want)
	})
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	// Kafka Connect records a sink's active topics in its status topic
	// after its task took their records, and its REST API answers from
	// what it has read of that topic: the file can hold the rows before
	// the connector's topics list them.
	var d *engine.ConnectorDescription
	testkafka.Await(t, 30*time.Second, "the connector's active topics", func() bool {
		d = execute(t, e, "DESCRIBE CONNECTOR "+name)[0].Entity.(*engine.ConnectorDescription)
		return len(d.Topics) > 0
	})
	if d.Status.Type != "sink" || len(d.Topics) != 1 || d.Topics[0] != out || len(d.Sources) != 1 || d.Sources[0].Name != "BIG_ORDERS" {
		t.Errorf("description: type %s, topics %v, sources %+v", d.Status.Type, d.Topics, d.Sources)
	}
	execute(t, e, "DROP CONNECTOR "+name)
}
