package shell

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
)

// The types here are what SHOW and DESCRIBE results reduce to. Both
// backends reach them from the same entities, ksqlwire's: the remote one
// decodes them from the server's answer, the embedded one has the engine
// make them (engine.WireEntity), and wireResult lays them out.

type sourceRow struct {
	Name, Topic, KeyFormat, ValueFormat string
	Windowed                            bool
}

// sourceTable lays out LIST STREAMS / LIST TABLES with ksqlDB's CLI
// column names.
func sourceTable(kind parser.SourceKind, list []sourceRow) *Table {
	first := "Stream Name"
	if kind == parser.KindTable {
		first = "Table Name"
	}
	t := &Table{Columns: []string{first, "Kafka Topic", "Key Format", "Value Format", "Windowed"}}
	for _, s := range list {
		t.Rows = append(t.Rows, []string{s.Name, s.Topic, s.KeyFormat, s.ValueFormat, fmt.Sprint(s.Windowed)})
	}
	return t
}

// typeRow is one custom type: its name and its schema as schemaText
// prints it.
type typeRow struct{ Name, Schema string }

// typeTable lays out SHOW TYPES with ksqlDB's CLI column names.
func typeTable(list []typeRow) *Table {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	t := &Table{Columns: []string{"Type Name", "Schema"}}
	for _, r := range list {
		t.Rows = append(t.Rows, []string{r.Name, r.Schema})
	}
	return t
}

type queryRow struct {
	ID, State, Sinks, SinkTopics, Statement string
}

func queryTable(list []queryRow) *Table {
	t := &Table{Columns: []string{"Query ID", "Status", "Sink Name", "Sink Kafka Topic", "Query String"}}
	for _, q := range list {
		t.Rows = append(t.Rows, []string{q.ID, q.State, q.Sinks, q.SinkTopics, q.Statement})
	}
	return t
}

// replicaText lists the replica count of each partition, ksqlDB-style.
func replicaText(replicas []int) string {
	parts := make([]string, len(replicas))
	for i, r := range replicas {
		parts[i] = fmt.Sprint(r)
	}
	return strings.Join(parts, " ")
}

type fieldRow struct {
	Name, Type string
	Key        bool
}

// description is DESCRIBE's answer.
type description struct {
	Name, Kind, Topic      string
	Partitions             int32
	KeyFormat, ValueFormat string
	Timestamp, WindowType  string
	Fields                 []fieldRow
	WrittenBy, ReadBy      []string
	Statistics, ErrorStats string
}

// result prints the source's properties as aligned lines, then its
// columns as a table.
func (d description) result() *Result {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-14s: %s\n", k, v)
		}
	}
	line("Name", d.Name)
	line("Type", d.Kind)
	line("Kafka topic", fmt.Sprintf("%s (partitions: %d)", d.Topic, d.Partitions))
	line("Key format", d.KeyFormat)
	line("Value format", d.ValueFormat)
	line("Timestamp", d.Timestamp)
	line("Window", d.WindowType)
	line("Written by", strings.Join(d.WrittenBy, ", "))
	line("Read by", strings.Join(d.ReadBy, ", "))
	line("Statistics", d.Statistics)
	line("Errors", d.ErrorStats)
	t := &Table{Columns: []string{"Field", "Type"}}
	for _, f := range d.Fields {
		typ := f.Type
		if f.Key {
			typ += " (key)"
			if d.Kind == "TABLE" {
				typ = f.Type + " (primary key)"
			}
		}
		t.Rows = append(t.Rows, []string{f.Name, typ})
	}
	return &Result{Text: b.String(), Table: t}
}

// functionRow is one function of SHOW FUNCTIONS.
type functionRow struct{ Name, Type, Category string }

// functionTable lays out SHOW FUNCTIONS, sorted by name.
func functionTable(list []functionRow) *Table {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	t := &Table{Columns: []string{"Function Name", "Type", "Category"}}
	for _, f := range list {
		t.Rows = append(t.Rows, []string{f.Name, strings.ToUpper(f.Type), f.Category})
	}
	return t
}

// functionDescription is DESCRIBE FUNCTION's answer, with what both the
// engine and ksqlDB's describe_function carry (no category: the server's
// shape has none).
type functionDescription struct {
	Name, Type, Overview string
	// Variations are a user-defined function's overloads, laid out as
	// ksqlDB's CLI lays out a function's variations.
	Variations []ksqlwire.FunctionVariant
}

func (d functionDescription) result() *Result {
	text := fmt.Sprintf("%-14s: %s\n%-14s: %s\n%-14s: %s\n",
		"Name", d.Name, "Type", strings.ToUpper(d.Type), "Overview", d.Overview)
	if len(d.Variations) > 0 {
		text += fmt.Sprintf("%-14s:\n", "Variations")
		for _, v := range d.Variations {
			args := make([]string, len(v.Arguments))
			for i, a := range v.Arguments {
				args[i] = a.Name + " " + a.Type
				if a.IsVariadic {
					args[i] = "VARIADIC " + args[i]
				}
			}
			text += fmt.Sprintf("\n\t%-12s: %s(%s)\n\t%-12s: %s\n\t%-12s: %s\n",
				"Variation", d.Name, strings.Join(args, ", "), "Returns", v.ReturnType, "Description", v.Description)
		}
	}
	return &Result{Text: text}
}

// connectorListTable lays out SHOW CONNECTORS as ksqlDB's CLI does.
func connectorListTable(e *ksqlwire.ConnectorList) *Result {
	t := &Table{Columns: []string{"Connector Name", "Type", "Class", "Status"}}
	for _, c := range e.Connectors {
		typ := strings.ToUpper(c.Type)
		if typ == "" {
			typ = "UNKNOWN"
		}
		t.Rows = append(t.Rows, []string{c.Name, typ, c.ClassName, c.State})
	}
	return &Result{Table: t, After: warningLines(e.Warnings)}
}

// connectorPluginsTable lays out SHOW CONNECTOR PLUGINS as ksqlDB's CLI
// does.
func connectorPluginsTable(e *ksqlwire.ConnectorPluginsList) *Result {
	t := &Table{Columns: []string{"Class", "Type", "Version"}}
	for _, p := range e.ConnectorPlugins {
		typ := strings.ToUpper(p.Type)
		if typ == "" {
			typ = "UNKNOWN"
		}
		t.Rows = append(t.Rows, []string{p.ClassName, typ, p.Version})
	}
	return &Result{Table: t}
}

// connectorDescription lays out DESCRIBE CONNECTOR as ksqlDB's CLI does:
// the connector's lines, its tasks, the streams and tables over its
// topics, and the topics.
func connectorDescription(e *ksqlwire.ConnectorDescription) *Result {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-20s : %s\n", k, v) }
	st := e.Status
	line("Name", st.Name)
	line("Class", e.ConnectorClass)
	line("Type", st.Type)
	line("State", st.Connector.State)
	line("WorkerId", st.Connector.WorkerID)
	if st.Connector.Trace != "" {
		line("Trace", st.Connector.Trace)
	}
	res := &Result{Text: b.String()}
	if len(st.Tasks) > 0 {
		res.Table = &Table{Columns: []string{"Task ID", "State", "Error Trace"}}
		for _, t := range st.Tasks {
			res.Table.Rows = append(res.Table.Rows, []string{fmt.Sprint(t.ID), t.State, t.Trace})
		}
	}
	var after strings.Builder
	if len(e.Sources) > 0 {
		t := &Table{Columns: []string{"KSQL Source Name", "Kafka Topic", "Type"}}
		for _, s := range e.Sources {
			t.Rows = append(t.Rows, []string{s.Name, s.Topic, s.Type})
		}
		after.WriteString("\n")
		writeTable(&after, FormatTable, t)
	}
	if len(e.Topics) > 0 {
		t := &Table{Columns: []string{"Related Topics"}}
		for _, topic := range e.Topics {
			t.Rows = append(t.Rows, []string{topic})
		}
		after.WriteString("\n")
		writeTable(&after, FormatTable, t)
	}
	after.WriteString(warningLines(e.Warnings))
	res.After = after.String()
	return res
}

func warningLines(ws []ksqlwire.Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.Message + "\n")
	}
	return b.String()
}
