package pgcatalog

import (
	"github.com/sluice-sql/sluice/types"
)

// Relation is one Sluice stream or table as Postgres clients see it.
type Relation struct {
	// Name is Sluice's name for the source (upper case unless quoted).
	Name string
	// Kind is "STREAM" or "TABLE".
	Kind    string
	Topic   string
	Columns []Column
}

// Column is one column of a Relation, in the source's order.
type Column struct {
	Name string
	Type types.Type
	// Key marks the source's key columns.
	Key bool
}

// Source gives the catalog at the moment a statement runs.
type Source func() []Relation

// Field is one column of a result as a RowDescription carries it.
type Field struct {
	Name string
	Type PGType
}

// Result is the answer to one statement: rows (when Fields is not nil)
// and the command tag Postgres would send ("SELECT 3", "SET", "BEGIN").
// Row values are nil (NULL), bool, int16, int32, int64, float64, string,
// []byte, time.Time, or, for jsonb fields, any value encoding/json
// writes. Catalog results add: uint32 for oid, regproc and xid fields;
// string for name, "char", regclass, regtype and the other text-like
// fields (a regclass prints as the relation's name); []any (elements of
// the kinds above, nil for NULL) for array fields; string in Postgres's
// text form ("1 2") for int2vector and oidvector fields.
type Result struct {
	Fields []Field
	Rows   [][]any
	Tag    string
}

// Error is a statement's failure with its SQLSTATE and, where the
// statement text shows the fault, its 1-based character position.
type Error struct {
	Code     string
	Message  string
	Position int
}

func (e *Error) Error() string { return e.Message }

// SQLSTATE codes used here and by pgwire.
const (
	CodeSyntaxError        = "42601"
	CodeUndefinedTable     = "42P01"
	CodeUndefinedColumn    = "42703"
	CodeUndefinedFunction  = "42883"
	CodeFeatureUnsupported = "0A000"
	CodeInvalidParameter   = "22023"
	CodeInternal           = "XX000"
)
