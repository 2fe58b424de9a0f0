package server

import (
	"strings"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// entity is one element of a /ksql response: one of the structs below,
// each in the JSON shape ksqlDB gives it.
type entity = any

type currentStatus struct {
	Type                  string        `json:"@type"`
	StatementText         string        `json:"statementText"`
	CommandID             string        `json:"commandId"`
	CommandStatus         commandStatus `json:"commandStatus"`
	CommandSequenceNumber int64         `json:"commandSequenceNumber"`
	Warnings              []warning     `json:"warnings"`
}

type commandStatus struct {
	Status  string  `json:"status"`
	Message string  `json:"message"`
	QueryID *string `json:"queryId"`
}

type warning struct {
	Message string `json:"message"`
}

type sourceListEntity struct {
	Type          string        `json:"@type"`
	StatementText string        `json:"statementText"`
	Streams       *[]sourceInfo `json:"streams,omitempty"`
	Tables        *[]sourceInfo `json:"tables,omitempty"`
	Warnings      []warning     `json:"warnings"`
}

type sourceInfo struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Topic       string `json:"topic"`
	KeyFormat   string `json:"keyFormat"`
	ValueFormat string `json:"valueFormat"`
	IsWindowed  bool   `json:"isWindowed"`
}

type queriesEntity struct {
	Type          string      `json:"@type"`
	StatementText string      `json:"statementText"`
	Queries       []queryInfo `json:"queries"`
	Warnings      []warning   `json:"warnings"`
}

type queryInfo struct {
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

type topicsEntity struct {
	Type          string      `json:"@type"`
	StatementText string      `json:"statementText"`
	Topics        []topicInfo `json:"topics"`
	Warnings      []warning   `json:"warnings"`
}

// assertTopicEntity answers ASSERT TOPIC, assertSchemaEntity ASSERT
// SCHEMA, in ksqlDB's shapes (exists is false for NOT EXISTS).
type assertTopicEntity struct {
	Type          string    `json:"@type"`
	StatementText string    `json:"statementText"`
	TopicName     string    `json:"topicName"`
	Exists        bool      `json:"exists"`
	Warnings      []warning `json:"warnings"`
}

type assertSchemaEntity struct {
	Type          string    `json:"@type"`
	StatementText string    `json:"statementText"`
	Subject       *string   `json:"subject"`
	ID            *int      `json:"id"`
	Exists        bool      `json:"exists"`
	Warnings      []warning `json:"warnings"`
}

type topicInfo struct {
	Name        string `json:"name"`
	ReplicaInfo []int  `json:"replicaInfo"`
}

// functionNamesEntity answers SHOW FUNCTIONS in ksqlDB's shape.
type functionNamesEntity struct {
	Type          string         `json:"@type"`
	StatementText string         `json:"statementText"`
	Functions     []functionName `json:"functions"`
	Warnings      []warning      `json:"warnings"`
}

type functionName struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Category string `json:"category"`
}

// functionDescriptionEntity answers DESCRIBE FUNCTION in ksqlDB's shape.
type functionDescriptionEntity struct {
	Type          string    `json:"@type"`
	StatementText string    `json:"statementText"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	Author        string    `json:"author"`
	Version       string    `json:"version"`
	Path          string    `json:"path"`
	Type2         string    `json:"type"`
	Functions     []any     `json:"functions"`
	Warnings      []warning `json:"warnings"`
}

type propertiesEntity struct {
	Type                  string         `json:"@type"`
	StatementText         string         `json:"statementText"`
	Properties            []propertyInfo `json:"properties"`
	OverwrittenProperties []string       `json:"overwrittenProperties"`
	DefaultProperties     []string       `json:"defaultProperties"`
	Warnings              []warning      `json:"warnings"`
}

type propertyInfo struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	Value string `json:"value"`
}

type sourceDescriptionEntity struct {
	Type              string            `json:"@type"`
	StatementText     string            `json:"statementText"`
	SourceDescription sourceDescription `json:"sourceDescription"`
	Warnings          []warning         `json:"warnings"`
}

type sourceDescription struct {
	Name         string      `json:"name"`
	WindowType   *string     `json:"windowType"`
	ReadQueries  []queryInfo `json:"readQueries"`
	WriteQueries []queryInfo `json:"writeQueries"`
	Fields       []fieldInfo `json:"fields"`
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

type fieldInfo struct {
	Name   string     `json:"name"`
	Schema schemaInfo `json:"schema"`
	// Type is "KEY" for key columns, "HEADER" for header columns (with
	// HeaderKey for a HEADER('k') one) and absent for value columns.
	Type      string `json:"type,omitempty"`
	HeaderKey string `json:"headerKey,omitempty"`
}

type schemaInfo struct {
	Type         string      `json:"type"`
	Fields       []fieldInfo `json:"fields"`
	MemberSchema *schemaInfo `json:"memberSchema"`
}

// typeListEntity answers SHOW TYPES: each custom type's schema by name.
type typeListEntity struct {
	Type          string                `json:"@type"`
	StatementText string                `json:"statementText"`
	Types         map[string]schemaInfo `json:"types"`
	Warnings      []warning             `json:"warnings"`
}

type queryDescriptionEntity struct {
	Type             string           `json:"@type"`
	StatementText    string           `json:"statementText"`
	QueryDescription queryDescription `json:"queryDescription"`
	Warnings         []warning        `json:"warnings"`
}

type queryDescription struct {
	ID                   string            `json:"id"`
	StatementText        string            `json:"statementText"`
	WindowType           *string           `json:"windowType"`
	Fields               []fieldInfo       `json:"fields"`
	Sources              []string          `json:"sources"`
	Sinks                []string          `json:"sinks"`
	Topology             string            `json:"topology"`
	ExecutionPlan        string            `json:"executionPlan"`
	OverriddenProperties map[string]string `json:"overriddenProperties"`
	QueryType            string            `json:"queryType"`
	QueryErrors          []string          `json:"queryErrors"`
	State                string            `json:"state"`
}

// toEntity renders a structured engine result in ksqlDB's shape.
func toEntity(stmt string, ent engine.Entity) entity {
	switch x := ent.(type) {
	case *engine.SourceList:
		list := make([]sourceInfo, 0, len(x.Sources))
		for _, s := range x.Sources {
			list = append(list, toSourceInfo(s))
		}
		if x.Kind == parser.KindTable {
			return sourceListEntity{Type: "tables", StatementText: stmt, Tables: &list, Warnings: []warning{}}
		}
		return sourceListEntity{Type: "streams", StatementText: stmt, Streams: &list, Warnings: []warning{}}
	case *engine.QueryList:
		return queriesEntity{Type: "queries", StatementText: stmt, Queries: toQueryInfos(x.Queries), Warnings: []warning{}}
	case *engine.TopicList:
		list := make([]topicInfo, 0, len(x.Topics))
		for _, t := range x.Topics {
			list = append(list, topicInfo{Name: t.Name, ReplicaInfo: t.Replicas})
		}
		return topicsEntity{Type: "kafka_topics", StatementText: stmt, Topics: list, Warnings: []warning{}}
	case *engine.AssertTopicResult:
		return assertTopicEntity{Type: "assert_topic", StatementText: stmt, TopicName: x.Topic, Exists: x.Exists, Warnings: []warning{}}
	case *engine.AssertSchemaResult:
		e := assertSchemaEntity{Type: "assert_schema", StatementText: stmt, ID: x.ID, Exists: x.Exists, Warnings: []warning{}}
		if x.Subject != "" {
			subject := x.Subject
			e.Subject = &subject
		}
		return e
	case *engine.FunctionList:
		list := make([]functionName, 0, len(x.Functions))
		for _, f := range x.Functions {
			list = append(list, functionName{Name: f.Name, Type: strings.ToLower(f.Type), Category: f.Category})
		}
		return functionNamesEntity{Type: "function_names", StatementText: stmt, Functions: list, Warnings: []warning{}}
	case *engine.FunctionDescription:
		return functionDescriptionEntity{Type: "describe_function", StatementText: stmt, Name: x.Name, Description: x.Description,
			Author: "sluice", Version: "", Path: "internal", Type2: strings.ToLower(x.FunctionInfo.Type), Functions: []any{}, Warnings: []warning{}}
	case *engine.TypeList:
		list := make(map[string]schemaInfo, len(x.Types))
		for _, t := range x.Types {
			list[t.Name] = toSchema(t.Type)
		}
		return typeListEntity{Type: "type_list", StatementText: stmt, Types: list, Warnings: []warning{}}
	case *engine.PropertyList:
		e := propertiesEntity{Type: "properties", StatementText: stmt, OverwrittenProperties: []string{}, DefaultProperties: []string{}, Warnings: []warning{}}
		for _, p := range x.Properties {
			e.Properties = append(e.Properties, propertyInfo{Name: p.Name, Scope: "KSQL", Value: p.Value})
			if p.Overridden {
				e.OverwrittenProperties = append(e.OverwrittenProperties, p.Name)
			}
		}
		return e
	case *engine.SourceDescription:
		d := sourceDescription{Name: x.Name, ReadQueries: toQueryInfos(x.ReadQueries), WriteQueries: toQueryInfos(x.WriteQueries),
			Fields: toFields(x.Fields), Type: x.Kind.String(), Timestamp: x.TimestampColumn, Statistics: x.Statistics, ErrorStats: x.ErrorStats,
			Extended: x.Extended, KeyFormat: x.KeyFormat, ValueFormat: x.ValueFormat, Topic: x.Topic, Partitions: x.Partitions,
			Replication: 1, Statement: x.Statement}
		if x.WindowType != "" {
			d.WindowType = &x.WindowType
		}
		warnings := []warning{}
		for _, w := range x.Warnings {
			warnings = append(warnings, warning{Message: w})
		}
		return sourceDescriptionEntity{Type: "sourceDescription", StatementText: stmt, SourceDescription: d, Warnings: warnings}
	case *engine.QueryDescription:
		d := queryDescription{ID: x.ID, StatementText: x.Statement, Fields: toFields(x.Fields), Sources: nonNil(x.Sources),
			Sinks: nonNil(x.Sinks), Topology: x.Topology, ExecutionPlan: x.Topology, OverriddenProperties: map[string]string{},
			QueryType: "PERSISTENT", QueryErrors: []string{}, State: x.State}
		if x.Error != "" {
			d.QueryErrors = []string{x.Error}
		}
		var warnings []warning
		if w := strings.TrimSpace(x.Warning); w != "" {
			warnings = append(warnings, warning{Message: w})
		}
		for _, w := range x.Warnings {
			warnings = append(warnings, warning{Message: w})
		}
		return queryDescriptionEntity{Type: "queryDescription", StatementText: stmt, QueryDescription: d, Warnings: nonNilW(warnings)}
	}
	return nil
}

func toSourceInfo(s engine.SourceSummary) sourceInfo {
	return sourceInfo{Type: s.Kind.String(), Name: s.Name, Topic: s.Topic, KeyFormat: s.KeyFormat, ValueFormat: s.ValueFormat, IsWindowed: s.Windowed}
}

func toQueryInfos(qs []engine.QuerySummary) []queryInfo {
	out := make([]queryInfo, 0, len(qs))
	for _, q := range qs {
		info := queryInfo{QueryString: q.Statement, Sinks: nonNil(q.Sinks), SinkKafkaTopics: nonNil(q.SinkTopics), ID: q.ID,
			StatusCount: map[string]int{q.State: 1}, QueryType: "PERSISTENT", State: q.State}
		if len(q.Owners) > 0 {
			// Every instance runs every query: count them all. An
			// instance not heard from lately is UNRESPONSIVE, as in ksqlDB.
			info.StatusCount, info.KsqlHostQueryStatus = map[string]int{}, map[string]string{}
			for _, o := range q.Owners {
				state := "RUNNING"
				switch {
				case o.Self:
					state = q.State
				case !o.Alive:
					state = "UNRESPONSIVE"
				}
				info.StatusCount[state]++
				info.KsqlHostQueryStatus[strings.TrimPrefix(strings.TrimPrefix(o.URL, "http://"), "https://")] = state
			}
		}
		out = append(out, info)
	}
	return out
}

func toFields(fs []engine.Field) []fieldInfo {
	out := make([]fieldInfo, 0, len(fs))
	for _, f := range fs {
		fi := fieldInfo{Name: f.Name, Schema: toSchema(f.Type)}
		switch {
		case f.Key:
			fi.Type = "KEY"
		case f.Header:
			fi.Type, fi.HeaderKey = "HEADER", f.HeaderKey
		}
		out = append(out, fi)
	}
	return out
}

func toSchema(t types.Type) schemaInfo {
	s := schemaInfo{Type: t.Kind.String()}
	switch t.Kind {
	case types.Array, types.Map:
		m := toSchema(*t.Elem)
		s.MemberSchema = &m
	case types.Struct:
		s.Fields = []fieldInfo{}
		for _, f := range t.Fields {
			s.Fields = append(s.Fields, fieldInfo{Name: f.Name, Schema: toSchema(f.Type)})
		}
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilW(s []warning) []warning {
	if s == nil {
		return []warning{}
	}
	return s
}
