package types

import (
	"fmt"
	"strings"
)

// Column is one named, typed column of a stream, a table or an
// intermediate row. Key columns travel in the Kafka record key.
type Column struct {
	Name string
	Type Type
	Key  bool
	// Header marks a column read from the record's headers, not its value:
	// HEADERS (all of them, HeaderKey "") or HEADER('k') (HeaderKey k).
	Header    bool
	HeaderKey string
}

// Schema is an ordered list of columns. By convention key columns come
// first, in key order, then value columns.
type Schema struct {
	Columns []Column
}

// Find returns the position of the column named name, comparing without
// case, or -1.
func (s Schema) Find(name string) int {
	for i, c := range s.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// Keys returns the key columns in order.
func (s Schema) Keys() []Column {
	var out []Column
	for _, c := range s.Columns {
		if c.Key {
			out = append(out, c)
		}
	}
	return out
}

// Values returns the value columns (not key, not header) in order.
func (s Schema) Values() []Column {
	var out []Column
	for _, c := range s.Columns {
		if !c.Key && !c.Header {
			out = append(out, c)
		}
	}
	return out
}

// Headers returns the header columns in order; a source lays them out
// after its value columns.
func (s Schema) Headers() []Column {
	var out []Column
	for _, c := range s.Columns {
		if c.Header {
			out = append(out, c)
		}
	}
	return out
}

// Names lists the column names in order, for error messages.
func (s Schema) Names() []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Name
	}
	return out
}

// String prints the schema as a column list, e.g. `ID STRING KEY, PRICE DOUBLE`.
func (s Schema) String() string {
	parts := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		parts[i] = fmt.Sprintf("%s %s", c.Name, c.Type)
		if c.Key {
			parts[i] += " KEY"
		}
	}
	return strings.Join(parts, ", ")
}
