package server

import (
	"encoding/json"
	"net/http"
)

// Error codes ksqlDB puts in error bodies; clients branch on them.
const (
	codeBadRequest    = 40000
	codeBadStatement  = 40001
	codeQueryEndpoint = 40002
	codeUnauthorized  = 40100
	codeNotFound      = 40400
	codeServerError   = 50000
	codeUnavailable   = 50300
)

// errorBody is ksqlDB's error entity: "statement_error" when a statement
// failed (with its text and the entities of the statements before it),
// "generic_error" otherwise.
type errorBody struct {
	Type          string    `json:"@type"`
	ErrorCode     int       `json:"error_code"`
	Message       string    `json:"message"`
	StatementText *string   `json:"statementText,omitempty"`
	Entities      *[]entity `json:"entities,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func genericError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, errorBody{Type: "generic_error", ErrorCode: code, Message: msg})
}

// statementError answers 400, as ksqlDB does for a statement that cannot
// run; done are the entities of the statements that ran before it.
func statementError(w http.ResponseWriter, code int, msg, stmt string, done []entity) {
	if done == nil {
		done = []entity{}
	}
	writeJSON(w, http.StatusBadRequest, statementErrorBody(code, msg, stmt, done))
}

func statementErrorBody(code int, msg, stmt string, done []entity) errorBody {
	return errorBody{Type: "statement_error", ErrorCode: code, Message: msg, StatementText: &stmt, Entities: &done}
}
