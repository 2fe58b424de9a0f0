package shell

import (
	"fmt"
	"sort"
	"strings"

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
type functionDescription struct{ Name, Type, Overview string }

func (d functionDescription) result() *Result {
	return &Result{Text: fmt.Sprintf("%-14s: %s\n%-14s: %s\n%-14s: %s\n",
		"Name", d.Name, "Type", strings.ToUpper(d.Type), "Overview", d.Overview)}
}
