package ksqlwire

// Error types: "statement_error" when a statement failed (with its text
// and the entities of the statements before it), "generic_error"
// otherwise.
const (
	TypeStatementError = "statement_error"
	TypeGenericError   = "generic_error"
)

// Error is ksqlDB's error body (KsqlErrorMessage and
// KsqlStatementErrorMessage). Entities are the entity types of this
// package when encoding, and JSON objects (maps) when decoded.
type Error struct {
	Type          string    `json:"@type"`
	ErrorCode     int       `json:"error_code"`
	Message       string    `json:"message"`
	StatementText *string   `json:"statementText,omitempty"`
	Entities      *[]Entity `json:"entities,omitempty"`
}

// ErrorMessage is the element a /query answer ends with when the query
// fails after its header.
type ErrorMessage struct {
	ErrorMessage Error `json:"errorMessage"`
}
