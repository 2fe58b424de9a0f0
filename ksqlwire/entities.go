package ksqlwire

import (
	"encoding/json"
	"fmt"
)

// Entity is one element of a /ksql answer: a value (when encoding) or a
// pointer (from DecodeEntity) of one of the entity types below.
type Entity = any

// The "@type" of each entity.
const (
	TypeCurrentStatus     = "currentStatus"
	TypeStreams           = "streams"
	TypeTables            = "tables"
	TypeQueries           = "queries"
	TypeKafkaTopics       = "kafka_topics"
	TypeAssertTopic       = "assert_topic"
	TypeAssertSchema      = "assert_schema"
	TypeFunctionNames     = "function_names"
	TypeDescribeFunction  = "describe_function"
	TypeTypeList          = "type_list"
	TypeProperties        = "properties"
	TypeSourceDescription = "sourceDescription"
	TypeQueryDescription  = "queryDescription"

	TypeConnectorInfo        = "connector_info"
	TypeConnectorList        = "connector_list"
	TypeConnectorDescription = "connector_description"
	TypeConnectorPlugins     = "connector_plugins_list"
	TypeDropConnector        = "drop_connector"
	TypeWarning              = "warning_entity"
)

// CurrentStatus answers a statement that changed the catalog or the
// running queries.
type CurrentStatus struct {
	Type                  string        `json:"@type"`
	StatementText         string        `json:"statementText"`
	CommandID             string        `json:"commandId"`
	CommandStatus         CommandStatus `json:"commandStatus"`
	CommandSequenceNumber int64         `json:"commandSequenceNumber"`
	Warnings              []Warning     `json:"warnings"`
}

// CommandStatus is a command's outcome, in CurrentStatus and from /status.
type CommandStatus struct {
	Status  string  `json:"status"`
	Message string  `json:"message"`
	QueryID *string `json:"queryId"`
}

// Warning is one element of an entity's warnings.
type Warning struct {
	Message string `json:"message"`
}

// SourceList answers LIST STREAMS ("@type" streams, Streams set) and LIST
// TABLES (tables, Tables set).
type SourceList struct {
	Type          string        `json:"@type"`
	StatementText string        `json:"statementText"`
	Streams       *[]SourceInfo `json:"streams,omitempty"`
	Tables        *[]SourceInfo `json:"tables,omitempty"`
	Warnings      []Warning     `json:"warnings"`
}

// SourceInfo is one stream or table of a SourceList.
type SourceInfo struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Topic       string `json:"topic"`
	KeyFormat   string `json:"keyFormat"`
	ValueFormat string `json:"valueFormat"`
	IsWindowed  bool   `json:"isWindowed"`
}

// Queries answers SHOW QUERIES.
type Queries struct {
	Type          string      `json:"@type"`
	StatementText string      `json:"statementText"`
	Queries       []QueryInfo `json:"queries"`
	Warnings      []Warning   `json:"warnings"`
}

// QueryInfo is one query of SHOW QUERIES and of a source's description.
type QueryInfo struct {
	QueryString     string         `json:"queryString"`
	Sinks           []string       `json:"sinks"`
	SinkKafkaTopics []string       `json:"sinkKafkaTopics"`
	ID              string         `json:"id"`
	StatusCount     map[string]int `json:"statusCount"`
	QueryType       string         `json:"queryType"`
	State           string         `json:"state"`
	// KsqlHostQueryStatus is the query's state on each instance of the
	// service (host:port), as ksqlDB reports it.
	KsqlHostQueryStatus map[string]string `json:"ksqlHostQueryStatus,omitempty"`
}

// KafkaTopics answers SHOW TOPICS.
type KafkaTopics struct {
	Type          string      `json:"@type"`
	StatementText string      `json:"statementText"`
	Topics        []TopicInfo `json:"topics"`
	Warnings      []Warning   `json:"warnings"`
}

// TopicInfo is one topic of KafkaTopics: a replica count per partition.
type TopicInfo struct {
	Name        string `json:"name"`
	ReplicaInfo []int  `json:"replicaInfo"`
}

// AssertTopic answers ASSERT (NOT EXISTS) TOPIC; Exists is false for NOT
// EXISTS.
type AssertTopic struct {
	Type          string    `json:"@type"`
	StatementText string    `json:"statementText"`
	TopicName     string    `json:"topicName"`
	Exists        bool      `json:"exists"`
	Warnings      []Warning `json:"warnings"`
}

// AssertSchema answers ASSERT (NOT EXISTS) SCHEMA.
type AssertSchema struct {
	Type          string    `json:"@type"`
	StatementText string    `json:"statementText"`
	Subject       *string   `json:"subject"`
	ID            *int      `json:"id"`
	Exists        bool      `json:"exists"`
	Warnings      []Warning `json:"warnings"`
}

// FunctionNames answers SHOW FUNCTIONS.
type FunctionNames struct {
	Type          string         `json:"@type"`
	StatementText string         `json:"statementText"`
	Functions     []FunctionName `json:"functions"`
	Warnings      []Warning      `json:"warnings"`
}

// FunctionName is one function of FunctionNames; Type is "scalar",
// "aggregate" or "table".
type FunctionName struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Category string `json:"category"`
}

// FunctionDescription answers DESCRIBE FUNCTION.
type FunctionDescription struct {
	Type          string            `json:"@type"`
	StatementText string            `json:"statementText"`
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Author        string            `json:"author"`
	Version       string            `json:"version"`
	Path          string            `json:"path"`
	FunctionType  string            `json:"type"`
	Functions     []FunctionVariant `json:"functions"`
	Warnings      []Warning         `json:"warnings"`
}

// FunctionVariant is one signature of a function DESCRIBE FUNCTION lists:
// its arguments, return type and description.
type FunctionVariant struct {
	Arguments   []FunctionArgument `json:"arguments"`
	ReturnType  string             `json:"returnType"`
	Description string             `json:"description"`
}

// FunctionArgument is one argument of a FunctionVariant.
type FunctionArgument struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	IsVariadic  bool   `json:"isVariadic"`
}

// Properties answers SHOW PROPERTIES.
type Properties struct {
	Type                  string         `json:"@type"`
	StatementText         string         `json:"statementText"`
	Properties            []PropertyInfo `json:"properties"`
	OverwrittenProperties []string       `json:"overwrittenProperties"`
	DefaultProperties     []string       `json:"defaultProperties"`
	Warnings              []Warning      `json:"warnings"`
}

// PropertyInfo is one property of Properties.
type PropertyInfo struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	Value string `json:"value"`
}

// SourceDescriptionEntity answers DESCRIBE of a stream or table.
type SourceDescriptionEntity struct {
	Type              string            `json:"@type"`
	StatementText     string            `json:"statementText"`
	SourceDescription SourceDescription `json:"sourceDescription"`
	Warnings          []Warning         `json:"warnings"`
}

// SourceDescription is a stream's or table's description.
type SourceDescription struct {
	Name         string      `json:"name"`
	WindowType   *string     `json:"windowType"`
	ReadQueries  []QueryInfo `json:"readQueries"`
	WriteQueries []QueryInfo `json:"writeQueries"`
	Fields       []FieldInfo `json:"fields"`
	Type         string      `json:"type"`
	Timestamp    string      `json:"timestamp"`
	Statistics   string      `json:"statistics"`
	ErrorStats   string      `json:"errorStats"`
	Extended     bool        `json:"extended"`
	KeyFormat    string      `json:"keyFormat"`
	ValueFormat  string      `json:"valueFormat"`
	Topic        string      `json:"topic"`
	Partitions   int32       `json:"partitions"`
	Replication  int         `json:"replication"`
	Statement    string      `json:"statement"`
}

// FieldInfo is a column of a description, or a field of a STRUCT schema.
type FieldInfo struct {
	Name   string     `json:"name"`
	Schema SchemaInfo `json:"schema"`
	// Type is "KEY" for key columns, "HEADER" for header columns (with
	// HeaderKey for a HEADER('k') one) and absent for value columns.
	Type      string `json:"type,omitempty"`
	HeaderKey string `json:"headerKey,omitempty"`
}

// SchemaInfo is a column's SQL type: its kind, a STRUCT's fields, an
// ARRAY's or a MAP's element (a MAP's keys are STRING).
type SchemaInfo struct {
	Type         string      `json:"type"`
	Fields       []FieldInfo `json:"fields"`
	MemberSchema *SchemaInfo `json:"memberSchema"`
}

// TypeList answers SHOW TYPES: each custom type's schema by name.
type TypeList struct {
	Type          string                `json:"@type"`
	StatementText string                `json:"statementText"`
	Types         map[string]SchemaInfo `json:"types"`
	Warnings      []Warning             `json:"warnings"`
}

// QueryDescriptionEntity answers EXPLAIN.
type QueryDescriptionEntity struct {
	Type             string           `json:"@type"`
	StatementText    string           `json:"statementText"`
	QueryDescription QueryDescription `json:"queryDescription"`
	Warnings         []Warning        `json:"warnings"`
}

// QueryDescription is a query's description.
type QueryDescription struct {
	ID                   string            `json:"id"`
	StatementText        string            `json:"statementText"`
	WindowType           *string           `json:"windowType"`
	Fields               []FieldInfo       `json:"fields"`
	Sources              []string          `json:"sources"`
	Sinks                []string          `json:"sinks"`
	Topology             string            `json:"topology"`
	ExecutionPlan        string            `json:"executionPlan"`
	OverriddenProperties map[string]string `json:"overriddenProperties"`
	QueryType            string            `json:"queryType"`
	QueryErrors          []string          `json:"queryErrors"`
	State                string            `json:"state"`
}

// ConnectorInfoEntity answers CREATE SOURCE|SINK CONNECTOR.
type ConnectorInfoEntity struct {
	Type          string        `json:"@type"`
	StatementText string        `json:"statementText"`
	Info          ConnectorInfo `json:"info"`
	Warnings      []Warning     `json:"warnings"`
}

// ConnectorInfo is a connector as Kafka Connect describes it.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []ConnectorTaskID `json:"tasks"`
	// Type is "source", "sink" or "unknown".
	Type string `json:"type"`
}

// ConnectorTaskID names a task of a connector.
type ConnectorTaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// ConnectorList answers SHOW [SOURCE|SINK] CONNECTORS.
type ConnectorList struct {
	Type          string                `json:"@type"`
	StatementText string                `json:"statementText"`
	Warnings      []Warning             `json:"warnings"`
	Connectors    []SimpleConnectorInfo `json:"connectors"`
}

// SimpleConnectorInfo is one connector of a ConnectorList; ksqlDB leaves
// out what it could not learn.
type SimpleConnectorInfo struct {
	Name      string `json:"name"`
	Type      string `json:"type,omitempty"`
	ClassName string `json:"className,omitempty"`
	// State is e.g. "RUNNING (1/1 tasks RUNNING)".
	State string `json:"state,omitempty"`
}

// ConnectorDescription answers DESCRIBE CONNECTOR.
type ConnectorDescription struct {
	Type           string              `json:"@type"`
	StatementText  string              `json:"statementText"`
	ConnectorClass string              `json:"connectorClass"`
	Status         ConnectorStateInfo  `json:"status"`
	Sources        []SourceDescription `json:"sources"`
	Topics         []string            `json:"topics"`
	Warnings       []Warning           `json:"warnings"`
}

// ConnectorStateInfo is a connector's and its tasks' states, as Kafka
// Connect's status endpoint gives them.
type ConnectorStateInfo struct {
	Name      string          `json:"name"`
	Connector ConnectorState  `json:"connector"`
	Tasks     []ConnectorTask `json:"tasks"`
	Type      string          `json:"type"`
}

// ConnectorState is the state of a connector on a worker, with the
// failure's trace when it FAILED.
type ConnectorState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// ConnectorTask is a task's state.
type ConnectorTask struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// ConnectorPluginsList answers SHOW CONNECTOR PLUGINS. ksqlDB spells the
// list "connectorsPlugins".
type ConnectorPluginsList struct {
	Type             string                      `json:"@type"`
	StatementText    string                      `json:"statementText"`
	Warnings         []Warning                   `json:"warnings"`
	ConnectorPlugins []SimpleConnectorPluginInfo `json:"connectorsPlugins"`
}

// SimpleConnectorPluginInfo is one installed connector class.
type SimpleConnectorPluginInfo struct {
	ClassName string `json:"className"`
	// Type is "source" or "sink".
	Type    string `json:"type,omitempty"`
	Version string `json:"version,omitempty"`
}

// DropConnectorEntity answers DROP CONNECTOR.
type DropConnectorEntity struct {
	Type          string    `json:"@type"`
	StatementText string    `json:"statementText"`
	ConnectorName string    `json:"connectorName"`
	Warnings      []Warning `json:"warnings"`
}

// WarningEntity answers a statement that did nothing, saying why
// (CREATE … CONNECTOR IF NOT EXISTS of an existing connector).
type WarningEntity struct {
	Type          string    `json:"@type"`
	StatementText string    `json:"statementText"`
	Message       string    `json:"message"`
	Warnings      []Warning `json:"warnings"`
}

// Unknown is an entity whose "@type" this package does not know.
type Unknown struct {
	Type string `json:"@type"`
}

// DecodeEntities decodes a /ksql answer: a JSON array of entities.
func DecodeEntities(data []byte) ([]Entity, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("ksql answer: %w", err)
	}
	out := make([]Entity, 0, len(raws))
	for i, raw := range raws {
		e, err := DecodeEntity(raw)
		if err != nil {
			return nil, fmt.Errorf("ksql answer entity %d: %w", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// DecodeEntity decodes one entity into a pointer to its type, chosen by
// its "@type"; an unknown one is an *Unknown.
func DecodeEntity(raw []byte) (Entity, error) {
	var head Unknown
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	var e Entity
	switch head.Type {
	case TypeCurrentStatus:
		e = &CurrentStatus{}
	case TypeStreams, TypeTables:
		e = &SourceList{}
	case TypeQueries:
		e = &Queries{}
	case TypeKafkaTopics:
		e = &KafkaTopics{}
	case TypeAssertTopic:
		e = &AssertTopic{}
	case TypeAssertSchema:
		e = &AssertSchema{}
	case TypeFunctionNames:
		e = &FunctionNames{}
	case TypeDescribeFunction:
		e = &FunctionDescription{}
	case TypeTypeList:
		e = &TypeList{}
	case TypeProperties:
		e = &Properties{}
	case TypeSourceDescription:
		e = &SourceDescriptionEntity{}
	case TypeQueryDescription:
		e = &QueryDescriptionEntity{}
	case TypeConnectorInfo:
		e = &ConnectorInfoEntity{}
	case TypeConnectorList:
		e = &ConnectorList{}
	case TypeConnectorDescription:
		e = &ConnectorDescription{}
	case TypeConnectorPlugins:
		e = &ConnectorPluginsList{}
	case TypeDropConnector:
		e = &DropConnectorEntity{}
	case TypeWarning:
		e = &WarningEntity{}
	default:
		return &head, nil
	}
	if err := json.Unmarshal(raw, e); err != nil {
		return nil, fmt.Errorf("%s: %w", head.Type, err)
	}
	return e, nil
}
