package ksqlwire_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/ksqlwire"
)

// Every entity the server writes decodes back to its own type, equal to
// what was written; an unknown "@type" is named, not an error.
func TestDecodeEntities(t *testing.T) {
	qid, window, subject, id := "CTAS_T", "TUMBLING", "s-value", 3
	sources := []ksqlwire.SourceInfo{{Type: "STREAM", Name: "S", Topic: "s", KeyFormat: "KAFKA", ValueFormat: "JSON"}}
	schema := ksqlwire.SchemaInfo{Type: "STRUCT", Fields: []ksqlwire.FieldInfo{{Name: "A", Schema: ksqlwire.SchemaInfo{Type: "ARRAY",
		MemberSchema: &ksqlwire.SchemaInfo{Type: "INTEGER"}}}}}
	query := ksqlwire.QueryInfo{QueryString: "CREATE TABLE T AS …", Sinks: []string{"T"}, SinkKafkaTopics: []string{"t"}, ID: qid,
		StatusCount: map[string]int{"RUNNING": 1}, QueryType: "PERSISTENT", State: "RUNNING"}
	want := []ksqlwire.Entity{
		&ksqlwire.CurrentStatus{Type: ksqlwire.TypeCurrentStatus, StatementText: "CREATE …;", CommandID: "table/`T`/create",
			CommandStatus: ksqlwire.CommandStatus{Status: "SUCCESS", Message: "Created query", QueryID: &qid}, CommandSequenceNumber: 2,
			Warnings: []ksqlwire.Warning{}},
		&ksqlwire.SourceList{Type: ksqlwire.TypeStreams, StatementText: "LIST STREAMS;", Streams: &sources, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.SourceList{Type: ksqlwire.TypeTables, StatementText: "LIST TABLES;", Tables: &[]ksqlwire.SourceInfo{}, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.Queries{Type: ksqlwire.TypeQueries, StatementText: "SHOW QUERIES;", Queries: []ksqlwire.QueryInfo{query}, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.KafkaTopics{Type: ksqlwire.TypeKafkaTopics, Topics: []ksqlwire.TopicInfo{{Name: "s", ReplicaInfo: []int{1, 1}}}, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.AssertTopic{Type: ksqlwire.TypeAssertTopic, TopicName: "s", Exists: true, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.AssertSchema{Type: ksqlwire.TypeAssertSchema, Subject: &subject, ID: &id, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.FunctionNames{Type: ksqlwire.TypeFunctionNames, Functions: []ksqlwire.FunctionName{{Name: "ABS", Type: "scalar", Category: "MATHEMATICAL"}},
			Warnings: []ksqlwire.Warning{}},
		&ksqlwire.FunctionDescription{Type: ksqlwire.TypeDescribeFunction, Name: "SUM", Description: "Sums.", FunctionType: "aggregate",
			Functions: []ksqlwire.FunctionVariant{}, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.TypeList{Type: ksqlwire.TypeTypeList, Types: map[string]ksqlwire.SchemaInfo{"ADDRESS": schema}, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.Properties{Type: ksqlwire.TypeProperties, Properties: []ksqlwire.PropertyInfo{{Name: "ksql.service.id", Scope: "KSQL", Value: "x"}},
			OverwrittenProperties: []string{}, DefaultProperties: []string{}, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.SourceDescriptionEntity{Type: ksqlwire.TypeSourceDescription, SourceDescription: ksqlwire.SourceDescription{Name: "T",
			WindowType: &window, WriteQueries: []ksqlwire.QueryInfo{query}, ReadQueries: []ksqlwire.QueryInfo{},
			Fields: []ksqlwire.FieldInfo{{Name: "K", Schema: ksqlwire.SchemaInfo{Type: "STRING"}, Type: "KEY"}, {Name: "S", Schema: schema}},
			Type:   "TABLE", KeyFormat: "KAFKA", ValueFormat: "JSON", Topic: "t", Partitions: 4, Replication: 1}, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.QueryDescriptionEntity{Type: ksqlwire.TypeQueryDescription, QueryDescription: ksqlwire.QueryDescription{ID: qid,
			Sources: []string{"S"}, Sinks: []string{"T"}, Topology: "…", OverriddenProperties: map[string]string{}, QueryType: "PERSISTENT",
			QueryErrors: []string{}, State: "RUNNING"}, Warnings: []ksqlwire.Warning{{Message: "hot key"}}},
		&ksqlwire.ConnectorInfoEntity{Type: ksqlwire.TypeConnectorInfo, StatementText: "CREATE SOURCE CONNECTOR …;", Info: ksqlwire.ConnectorInfo{
			Name: "SRC", Config: map[string]string{"connector.class": "FileStreamSource"}, Tasks: []ksqlwire.ConnectorTaskID{{Connector: "SRC", Task: 0}}, Type: "source"},
			Warnings: []ksqlwire.Warning{}},
		&ksqlwire.ConnectorList{Type: ksqlwire.TypeConnectorList, Warnings: []ksqlwire.Warning{}, Connectors: []ksqlwire.SimpleConnectorInfo{
			{Name: "SRC", Type: "source", ClassName: "FileStreamSource", State: "RUNNING (1/1 tasks RUNNING)"}, {Name: "BROKEN"}}},
		&ksqlwire.ConnectorDescription{Type: ksqlwire.TypeConnectorDescription, ConnectorClass: "FileStreamSource", Status: ksqlwire.ConnectorStateInfo{
			Name: "SRC", Connector: ksqlwire.ConnectorState{State: "RUNNING", WorkerID: "127.0.0.1:8083"},
			Tasks: []ksqlwire.ConnectorTask{{ID: 0, State: "FAILED", WorkerID: "127.0.0.1:8083", Trace: "java.lang.Exception"}}, Type: "source"},
			Sources: []ksqlwire.SourceDescription{{Name: "LINES", ReadQueries: []ksqlwire.QueryInfo{}, WriteQueries: []ksqlwire.QueryInfo{}, Fields: []ksqlwire.FieldInfo{},
				Type: "STREAM", KeyFormat: "KAFKA", ValueFormat: "KAFKA", Topic: "lines", Partitions: 1, Replication: 1}},
			Topics: []string{"lines"}, Warnings: []ksqlwire.Warning{}},
		&ksqlwire.ConnectorPluginsList{Type: ksqlwire.TypeConnectorPlugins, Warnings: []ksqlwire.Warning{}, ConnectorPlugins: []ksqlwire.SimpleConnectorPluginInfo{
			{ClassName: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: "source", Version: "4.3.1"}}},
		&ksqlwire.DropConnectorEntity{Type: ksqlwire.TypeDropConnector, ConnectorName: "SRC", Warnings: []ksqlwire.Warning{}},
		&ksqlwire.WarningEntity{Type: ksqlwire.TypeWarning, Message: "Connector SRC already exists", Warnings: []ksqlwire.Warning{}},
		&ksqlwire.Unknown{Type: "expression_evaluation"},
	}
	body, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ksqlwire.DecodeEntities(body)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded entities (-want +got):\n%s", diff)
	}
}

func TestDecodeEntitiesErrors(t *testing.T) {
	for body, want := range map[string]string{
		`{"@type":"currentStatus"}`:         "ksql answer: json: cannot unmarshal object into Go value of type []json.RawMessage",
		`[{"@type":"queries","queries":7}]`: "ksql answer entity 0: queries: json: cannot unmarshal number into Go struct field Queries.queries of type []ksqlwire.QueryInfo",
	} {
		_, err := ksqlwire.DecodeEntities([]byte(body))
		if err == nil || err.Error() != want {
			t.Errorf("DecodeEntities(%s) = %v, want %s", body, err, want)
		}
	}
}
