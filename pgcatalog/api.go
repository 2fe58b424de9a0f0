package pgcatalog

import (
	"context"
	"errors"
	"fmt"

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
// writes.
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

// Session answers one connection's Postgres-side statements and keeps
// its client parameters (SET).
type Session struct {
	src      Source
	user     string
	database string
}

// NewSession starts a session for user on database over src.
func NewSession(src Source, user, database string) *Session {
	return &Session{src: src, user: user, database: database}
}

// Split cuts a simple-query text into its statements, keeping quoted
// text and comments intact.
func Split(sql string) []string {
	return []string{sql}
}

// Claims reports whether sql (one statement) is for this package rather
// than Sluice's dialect.
func (s *Session) Claims(sql string) bool {
	return false
}

// Statement is one parsed statement, ready to describe and execute.
type Statement struct {
	params []uint32
	fields []Field
}

// Prepare parses one statement. paramOIDs are the types the client
// declared for $1…$n (0: infer).
func (s *Session) Prepare(sql string, paramOIDs []uint32) (*Statement, error) {
	return nil, &Error{Code: CodeFeatureUnsupported, Message: fmt.Sprintf("not supported: %q", sql)}
}

// Params are the parameters' type OIDs, inferred where the client gave 0.
func (st *Statement) Params() []uint32 { return st.params }

// Fields describe the statement's rows; nil when it returns none.
func (st *Statement) Fields() []Field { return st.fields }

// Execute runs the statement with params (decoded by the caller to Go
// values as Result's rows are typed).
func (st *Statement) Execute(ctx context.Context, params []any) (*Result, error) {
	return nil, errors.New("not implemented")
}
