package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
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

// writeJSON answers v as JSON. Like ksqlDB's Jackson, and unlike
// encoding/json's default, it leaves <, > and & as they are.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func genericError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, ksqlwire.Error{Type: ksqlwire.TypeGenericError, ErrorCode: code, Message: msg})
}

// statementError answers 400, as ksqlDB does for a statement that cannot
// run; done are the entities of the statements that ran before it.
func statementError(w http.ResponseWriter, code int, msg, stmt string, done []ksqlwire.Entity) {
	if done == nil {
		done = []ksqlwire.Entity{}
	}
	writeJSON(w, http.StatusBadRequest, statementErrorBody(code, msg, stmt, done))
}

func statementErrorBody(code int, msg, stmt string, done []ksqlwire.Entity) ksqlwire.Error {
	return ksqlwire.Error{Type: ksqlwire.TypeStatementError, ErrorCode: code, Message: msg, StatementText: &stmt, Entities: &done}
}

// errorText is the message of a statement's error. A syntax error is
// worded as ksqlDB's REST API words it, which leaves the parser's details
// out of the message ("line 1:24: Syntax Error\n\nStatement: SELECT …;");
// Sluice's details (what was expected, the line with a caret under the
// position) follow that text, so clients matching ksqlDB's still match.
// Other errors read as engine.FormatError renders them.
func errorText(sql string, err error) string {
	var pe *parser.Error
	if !errors.As(err, &pe) {
		return engine.FormatError(sql, err)
	}
	stmt := pe.Statement
	if stmt == "" {
		stmt = strings.TrimSpace(sql)
	}
	head, detail, _ := strings.Cut(pe.Pretty(), "\n")
	return head + "\n\nStatement: " + stmt + "\n" + detail
}
