package shell

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
)

// The connector statements' results print the same from both backends
// (the engine's entities, the server's JSON), as ksqlDB's CLI prints
// them: a message for CREATE and DROP, tables for the lists, DESCRIBE's
// lines, tasks, sources and topics.
func TestConnectorResults(t *testing.T) {
	remote := func(body string) *Result {
		t.Helper()
		e, err := ksqlwire.DecodeEntity([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return wireResult(e, parser.Parsed{})
	}
	print := func(r *Result) string {
		var b strings.Builder
		writeResult(&b, FormatTable, r)
		return b.String()
	}
	status := connect.Status{Name: "SRC", Type: "source", Connector: connect.State{State: "RUNNING", WorkerID: "127.0.0.1:8083"},
		Tasks: []connect.TaskState{{ID: 0, State: connect.State{State: "RUNNING", WorkerID: "127.0.0.1:8083"}}}}
	cases := []struct {
		name      string
		embedded  engine.Entity
		remote    string
		wantPrint string
	}{
		{"create", &engine.ConnectorInfo{Info: connect.Info{Name: "SRC", Type: "source", Config: map[string]string{"name": "SRC"}}},
			`{"@type":"connector_info","statementText":"x;","info":{"name":"SRC","config":{"name":"SRC"},"tasks":[],"type":"source"},"warnings":[]}`,
			"Created connector SRC\n"},
		{"drop", &engine.DroppedConnector{Name: "SRC"},
			`{"@type":"drop_connector","statementText":"x;","connectorName":"SRC","warnings":[]}`,
			"Dropped connector \"SRC\"\n"},
		{"warning", &engine.StatementWarning{Message: "Connector SRC already exists"},
			`{"@type":"warning_entity","statementText":"x;","message":"Connector SRC already exists","warnings":[]}`,
			"Connector SRC already exists\n"},
		{"list", &engine.ConnectorList{Connectors: []engine.ConnectorSummary{
			{Name: "SRC", Type: "source", ClassName: "FileStreamSource", State: "RUNNING (1/1 tasks RUNNING)"}, {Name: "X"}}},
			`{"@type":"connector_list","statementText":"x;","warnings":[],"connectors":[
				{"name":"SRC","type":"source","className":"FileStreamSource","state":"RUNNING (1/1 tasks RUNNING)"},{"name":"X"}]}`,
			`+----------------+---------+------------------+-----------------------------+
| Connector Name | Type    | Class            | Status                      |
+----------------+---------+------------------+-----------------------------+
| SRC            | SOURCE  | FileStreamSource | RUNNING (1/1 tasks RUNNING) |
| X              | UNKNOWN |                  |                             |
+----------------+---------+------------------+-----------------------------+
`},
		{"plugins", &engine.ConnectorPluginList{Plugins: []connect.Plugin{{Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Type: "sink", Version: "4.3.1"}}},
			`{"@type":"connector_plugins_list","statementText":"x;","warnings":[],"connectorsPlugins":[
				{"className":"org.apache.kafka.connect.file.FileStreamSinkConnector","type":"sink","version":"4.3.1"}]}`,
			`+-------------------------------------------------------+------+---------+
| Class                                                 | Type | Version |
+-------------------------------------------------------+------+---------+
| org.apache.kafka.connect.file.FileStreamSinkConnector | SINK | 4.3.1   |
+-------------------------------------------------------+------+---------+
`},
		{"describe", &engine.ConnectorDescription{Class: "FileStreamSource", Status: status, Topics: []string{"lines"},
			Sources: []*engine.SourceDescription{{SourceSummary: engine.SourceSummary{Name: "LINES", Kind: parser.KindStream, Topic: "lines",
				KeyFormat: "KAFKA", ValueFormat: "KAFKA"}, Partitions: 1}}},
			`{"@type":"connector_description","statementText":"x;","connectorClass":"FileStreamSource",
				"status":{"name":"SRC","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083"}],"type":"source"},
				"sources":[{"name":"LINES","windowType":null,"readQueries":[],"writeQueries":[],"fields":[],"type":"STREAM","timestamp":"","statistics":"","errorStats":"",
				"extended":false,"keyFormat":"KAFKA","valueFormat":"KAFKA","topic":"lines","partitions":1,"replication":1,"statement":""}],"topics":["lines"],"warnings":[]}`,
			`Name                 : SRC
Class                : FileStreamSource
Type                 : source
State                : RUNNING
WorkerId             : 127.0.0.1:8083
+---------+---------+-------------+
| Task ID | State   | Error Trace |
+---------+---------+-------------+
| 0       | RUNNING |             |
+---------+---------+-------------+

+------------------+-------------+--------+
| KSQL Source Name | Kafka Topic | Type   |
+------------------+-------------+--------+
| LINES            | lines       | STREAM |
+------------------+-------------+--------+

+----------------+
| Related Topics |
+----------------+
| lines          |
+----------------+
`},
	}
	for _, tc := range cases {
		emb := entityResult(parser.Parsed{Text: "x"}, tc.embedded)
		rem := remote(tc.remote)
		if diff := cmp.Diff(rem, emb); diff != "" {
			t.Errorf("%s: embedded and remote differ (-remote +embedded):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.wantPrint, print(rem)); diff != "" {
			t.Errorf("%s: printed (-want +got):\n%s", tc.name, diff)
		}
	}
}
