package engine

import (
	"fmt"

	"github.com/sluice-sql/sluice/expr"
	"strings"

	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// WireEntity is a structured result (SHOW, DESCRIBE, EXPLAIN, ASSERT) in
// ksqlDB's REST shape, a pointer to one of ksqlwire's entity types, for
// the statement text stmt; nil for a result ksqlDB has no entity for. The
// server sends it and the shell prints it, whichever backend it runs on,
// so a result is laid out once.
func WireEntity(stmt string, ent Entity) ksqlwire.Entity {
	switch x := ent.(type) {
	case *SourceList:
		list := make([]ksqlwire.SourceInfo, 0, len(x.Sources))
		for _, s := range x.Sources {
			list = append(list, wireSourceInfo(s))
		}
		if x.Kind == parser.KindTable {
			return &ksqlwire.SourceList{Type: ksqlwire.TypeTables, StatementText: stmt, Tables: &list, Warnings: []ksqlwire.Warning{}}
		}
		return &ksqlwire.SourceList{Type: ksqlwire.TypeStreams, StatementText: stmt, Streams: &list, Warnings: []ksqlwire.Warning{}}
	case *QueryList:
		return &ksqlwire.Queries{Type: ksqlwire.TypeQueries, StatementText: stmt, Queries: wireQueryInfos(x.Queries), Warnings: []ksqlwire.Warning{}}
	case *TopicList:
		list := make([]ksqlwire.TopicInfo, 0, len(x.Topics))
		for _, t := range x.Topics {
			list = append(list, ksqlwire.TopicInfo{Name: t.Name, ReplicaInfo: t.Replicas})
		}
		return &ksqlwire.KafkaTopics{Type: ksqlwire.TypeKafkaTopics, StatementText: stmt, Topics: list, Warnings: []ksqlwire.Warning{}}
	case *AssertTopicResult:
		return &ksqlwire.AssertTopic{Type: ksqlwire.TypeAssertTopic, StatementText: stmt, TopicName: x.Topic, Exists: x.Exists, Warnings: []ksqlwire.Warning{}}
	case *AssertSchemaResult:
		e := &ksqlwire.AssertSchema{Type: ksqlwire.TypeAssertSchema, StatementText: stmt, ID: x.ID, Exists: x.Exists, Warnings: []ksqlwire.Warning{}}
		if x.Subject != "" {
			subject := x.Subject
			e.Subject = &subject
		}
		return e
	case *FunctionList:
		list := make([]ksqlwire.FunctionName, 0, len(x.Functions))
		for _, f := range x.Functions {
			list = append(list, ksqlwire.FunctionName{Name: f.Name, Type: strings.ToLower(f.Type), Category: f.Category})
		}
		return &ksqlwire.FunctionNames{Type: ksqlwire.TypeFunctionNames, StatementText: stmt, Functions: list, Warnings: []ksqlwire.Warning{}}
	case *FunctionDescription:
		d := &ksqlwire.FunctionDescription{Type: ksqlwire.TypeDescribeFunction, StatementText: stmt, Name: x.Name, Description: x.Description,
			Author: "sluice", Version: "", Path: "internal", FunctionType: strings.ToLower(x.FunctionInfo.Type), Functions: []ksqlwire.FunctionVariant{}, Warnings: []ksqlwire.Warning{}}
		if len(x.Overloads) > 0 {
			d.Author, d.Path = "user", "user-defined"
			if dir := x.Overloads[0].Dir; dir != "" {
				// ksqlDB names the jar a function of its extension
				// directory came from.
				d.Path = dir
			}
		}
		for _, f := range x.Overloads {
			v := ksqlwire.FunctionVariant{ReturnType: f.Result.String(), Arguments: []ksqlwire.FunctionArgument{},
				Description: userFunctionDescription(f)}
			for i, t := range f.Args {
				v.Arguments = append(v.Arguments, ksqlwire.FunctionArgument{Name: f.Params[i], Type: t.String(),
					IsVariadic: f.Variadic && i == len(f.Args)-1})
			}
			d.Functions = append(d.Functions, v)
		}
		return d
	case *TypeList:
		list := make(map[string]ksqlwire.SchemaInfo, len(x.Types))
		for _, t := range x.Types {
			list[t.Name] = wireSchema(t.Type)
		}
		return &ksqlwire.TypeList{Type: ksqlwire.TypeTypeList, StatementText: stmt, Types: list, Warnings: []ksqlwire.Warning{}}
	case *PropertyList:
		e := &ksqlwire.Properties{Type: ksqlwire.TypeProperties, StatementText: stmt, OverwrittenProperties: []string{}, DefaultProperties: []string{}, Warnings: []ksqlwire.Warning{}}
		for _, p := range x.Properties {
			e.Properties = append(e.Properties, ksqlwire.PropertyInfo{Name: p.Name, Scope: "KSQL", Value: p.Value})
			if p.Overridden {
				e.OverwrittenProperties = append(e.OverwrittenProperties, p.Name)
			}
		}
		return e
	case *SourceDescription:
		d := wireSourceDescription(x)
		warnings := []ksqlwire.Warning{}
		for _, w := range x.Warnings {
			warnings = append(warnings, ksqlwire.Warning{Message: w})
		}
		return &ksqlwire.SourceDescriptionEntity{Type: ksqlwire.TypeSourceDescription, StatementText: stmt, SourceDescription: d, Warnings: warnings}
	case *QueryDescription:
		d := ksqlwire.QueryDescription{ID: x.ID, StatementText: x.Statement, Fields: wireFields(x.Fields), Sources: nonNilStrings(x.Sources),
			Sinks: nonNilStrings(x.Sinks), Topology: x.Topology, ExecutionPlan: x.Topology, OverriddenProperties: map[string]string{},
			QueryType: "PERSISTENT", QueryErrors: []string{}, State: x.State}
		if x.Error != "" {
			d.QueryErrors = []string{x.Error}
		}
		var warnings []ksqlwire.Warning
		if w := strings.TrimSpace(x.Warning); w != "" {
			warnings = append(warnings, ksqlwire.Warning{Message: w})
		}
		for _, w := range x.Warnings {
			warnings = append(warnings, ksqlwire.Warning{Message: w})
		}
		return &ksqlwire.QueryDescriptionEntity{Type: ksqlwire.TypeQueryDescription, StatementText: stmt, QueryDescription: d, Warnings: nonNilWarnings(warnings)}
	case *ConnectorInfo:
		info := ksqlwire.ConnectorInfo{Name: x.Info.Name, Config: x.Info.Config, Tasks: []ksqlwire.ConnectorTaskID{}, Type: x.Info.Type}
		if info.Config == nil {
			info.Config = map[string]string{}
		}
		for _, t := range x.Info.Tasks {
			info.Tasks = append(info.Tasks, ksqlwire.ConnectorTaskID{Connector: t.Connector, Task: t.Task})
		}
		return &ksqlwire.ConnectorInfoEntity{Type: ksqlwire.TypeConnectorInfo, StatementText: stmt, Info: info, Warnings: []ksqlwire.Warning{}}
	case *ConnectorList:
		list := make([]ksqlwire.SimpleConnectorInfo, 0, len(x.Connectors))
		for _, c := range x.Connectors {
			list = append(list, ksqlwire.SimpleConnectorInfo{Name: c.Name, Type: c.Type, ClassName: c.ClassName, State: c.State})
		}
		return &ksqlwire.ConnectorList{Type: ksqlwire.TypeConnectorList, StatementText: stmt, Warnings: wireWarnings(x.Warnings), Connectors: list}
	case *ConnectorDescription:
		st := ksqlwire.ConnectorStateInfo{Name: x.Status.Name, Type: x.Status.Type, Tasks: []ksqlwire.ConnectorTask{},
			Connector: ksqlwire.ConnectorState{State: x.Status.Connector.State, WorkerID: x.Status.Connector.WorkerID, Trace: x.Status.Connector.Trace}}
		for _, t := range x.Status.Tasks {
			st.Tasks = append(st.Tasks, ksqlwire.ConnectorTask{ID: t.ID, State: t.State.State, WorkerID: t.WorkerID, Trace: t.Trace})
		}
		sources := make([]ksqlwire.SourceDescription, 0, len(x.Sources))
		for _, s := range x.Sources {
			sources = append(sources, wireSourceDescription(s))
		}
		return &ksqlwire.ConnectorDescription{Type: ksqlwire.TypeConnectorDescription, StatementText: stmt, ConnectorClass: x.Class, Status: st,
			Sources: sources, Topics: nonNilStrings(x.Topics), Warnings: wireWarnings(x.Warnings)}
	case *ConnectorPluginList:
		list := make([]ksqlwire.SimpleConnectorPluginInfo, 0, len(x.Plugins))
		for _, p := range x.Plugins {
			list = append(list, ksqlwire.SimpleConnectorPluginInfo{ClassName: p.Class, Type: p.Type, Version: p.Version})
		}
		return &ksqlwire.ConnectorPluginsList{Type: ksqlwire.TypeConnectorPlugins, StatementText: stmt, Warnings: []ksqlwire.Warning{}, ConnectorPlugins: list}
	case *DroppedConnector:
		return &ksqlwire.DropConnectorEntity{Type: ksqlwire.TypeDropConnector, StatementText: stmt, ConnectorName: x.Name, Warnings: []ksqlwire.Warning{}}
	case *StatementWarning:
		return &ksqlwire.WarningEntity{Type: ksqlwire.TypeWarning, StatementText: stmt, Message: x.Message, Warnings: []ksqlwire.Warning{}}
	}
	return nil
}

func wireWarnings(ws []string) []ksqlwire.Warning {
	out := make([]ksqlwire.Warning, 0, len(ws))
	for _, w := range ws {
		out = append(out, ksqlwire.Warning{Message: w})
	}
	return out
}

func wireSourceDescription(x *SourceDescription) ksqlwire.SourceDescription {
	d := ksqlwire.SourceDescription{Name: x.Name, ReadQueries: wireQueryInfos(x.ReadQueries), WriteQueries: wireQueryInfos(x.WriteQueries),
		Fields: wireFields(x.Fields), Type: x.Kind.String(), Timestamp: x.TimestampColumn, Statistics: x.Statistics, ErrorStats: x.ErrorStats,
		Extended: x.Extended, KeyFormat: x.KeyFormat, ValueFormat: x.ValueFormat, Topic: x.Topic, Partitions: x.Partitions,
		Replication: 1, Statement: x.Statement}
	if x.WindowType != "" {
		d.WindowType = &x.WindowType
	}
	return d
}

func wireSourceInfo(s SourceSummary) ksqlwire.SourceInfo {
	return ksqlwire.SourceInfo{Type: s.Kind.String(), Name: s.Name, Topic: s.Topic, KeyFormat: s.KeyFormat, ValueFormat: s.ValueFormat, IsWindowed: s.Windowed}
}

func wireQueryInfos(qs []QuerySummary) []ksqlwire.QueryInfo {
	out := make([]ksqlwire.QueryInfo, 0, len(qs))
	for _, q := range qs {
		info := ksqlwire.QueryInfo{QueryString: q.Statement, Sinks: nonNilStrings(q.Sinks), SinkKafkaTopics: nonNilStrings(q.SinkTopics), ID: q.ID,
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

func wireFields(fs []Field) []ksqlwire.FieldInfo {
	out := make([]ksqlwire.FieldInfo, 0, len(fs))
	for _, f := range fs {
		fi := ksqlwire.FieldInfo{Name: f.Name, Schema: wireSchema(f.Type)}
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

func wireSchema(t types.Type) ksqlwire.SchemaInfo {
	s := ksqlwire.SchemaInfo{Type: t.Kind.String()}
	switch t.Kind {
	case types.Array, types.Map:
		m := wireSchema(*t.Elem)
		s.MemberSchema = &m
	case types.Struct:
		s.Fields = []ksqlwire.FieldInfo{}
		for _, f := range t.Fields {
			s.Fields = append(s.Fields, ksqlwire.FieldInfo{Name: f.Name, Schema: wireSchema(f.Type)})
		}
	}
	return s
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilWarnings(s []ksqlwire.Warning) []ksqlwire.Warning {
	if s == nil {
		return []ksqlwire.Warning{}
	}
	return s
}

// userFunctionDescription says what DESCRIBE FUNCTION says of one
// overload of a user-defined function: language, origin, version and
// determinism.
func userFunctionDescription(f *expr.UserFunction) string {
	det := "not deterministic"
	if f.Deterministic {
		det = "deterministic"
	}
	return fmt.Sprintf("LANGUAGE %s, %s, version %d, %s", f.Language, f.Origin, f.Version, det)
}
