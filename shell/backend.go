package shell

import (
	"context"

	"github.com/sluice-sql/sluice/parser"
)

// Backend runs statements for the shell: an engine in this process
// (Embedded) or a `sluice server` over its HTTP API (Remote). The shell
// parses and splits input itself, so a backend sees one statement at a
// time, and renders every result the same way whichever backend made it.
type Backend interface {
	// Execute runs one parsed statement. A SELECT (or PRINT) returns a
	// Result with Rows; the caller closes them.
	Execute(ctx context.Context, p parser.Parsed) (*Result, error)
	// Names lists what tab completion offers besides keywords; a backend
	// that cannot answer returns what it has.
	Names(ctx context.Context) Names
	// Close releases the backend (an embedded engine stops its queries).
	Close() error
}

// Result is what one statement produced, in a form both backends can
// fill. At most one of Message, Table, Text and Rows is the main part;
// Text may precede a Table (DESCRIBE prints its header lines, then its
// columns) and After follow it (DESCRIBE … EXTENDED's runtime details
// and warnings).
type Result struct {
	Message string
	Text    string
	Table   *Table
	After   string
	Rows    RowStream
}

// Table is a finite result: SHOW/LIST, DESCRIBE's columns, a pull query.
type Table struct {
	Columns []string
	Rows    [][]string
}

// Column names a column of a row stream and its SQL type (as printed by
// DESCRIBE: BIGINT, VARCHAR, ARRAY<INTEGER>, …).
type Column struct {
	Name string
	Type string
	// Width is how wide a streamed table prints the column; 0 takes a
	// width from Type.
	Width int
}

// RowStream is the rows of a push or pull query. Values are JSON-shaped
// (nil, bool, string, float64 or json.Number, []any, map[string]any) so
// the shell prints them the same from either backend.
type RowStream interface {
	Columns() []Column
	// Pull reports a pull query: its rows are finite and print as one
	// table.
	Pull() bool
	// Next returns the next row; ok is false once the query ended (LIMIT
	// reached, closed) and err says why when it failed. It returns early
	// when ctx ends.
	Next(ctx context.Context) (row []any, ok bool, err error)
	// Close stops the query; it may be called more than once.
	Close() error
}

// Names feed tab completion.
type Names struct {
	// Sources are streams and tables.
	Sources []string
	// Columns are the columns of all sources.
	Columns   []string
	Functions []string
	// Topics are Kafka topics, for PRINT.
	Topics []string
}
