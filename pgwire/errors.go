package pgwire

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/pgcatalog"
	"github.com/sluice-sql/sluice/planner"
)

// SQLSTATE codes pgwire answers besides pgcatalog's.
const (
	codeProtocolViolation    = "08P01"
	codeInvalidAuthorization = "28000"
	codeInvalidPassword      = "28P01"
	codeQueryCanceled        = "57014"
	codeAdminShutdown        = "57P01"
	codeCannotConnectNow     = "57P03"
	codeDuplicateTable       = "42P07"
	codeDatatypeMismatch     = "42804"
	codeInvalidCursorName    = "34000"
	codeDuplicateCursor      = "42P03"
	codeInvalidStatementName = "26000"
	codeInvalidTextRep       = "22P02"
	codeTooManyConnections   = "53300"
)

// pgError is an error as an ErrorResponse carries it.
type pgError struct {
	severity string
	code     string
	message  string
	// position is the 1-based character position in the query text, 0
	// when the error has none.
	position int32
}

func (e *pgError) Error() string { return e.message }

func (e *pgError) response() *pgproto3.ErrorResponse {
	sev := e.severity
	if sev == "" {
		sev = "ERROR"
	}
	return &pgproto3.ErrorResponse{Severity: sev, SeverityUnlocalized: sev, Code: e.code, Message: e.message, Position: e.position}
}

func protocolErrorf(format string, args ...any) *pgError {
	return &pgError{code: codeProtocolViolation, message: fmt.Sprintf(format, args...)}
}

func fatal(code, msg string) *pgError {
	return &pgError{severity: "FATAL", code: code, message: msg}
}

var errCanceled = &pgError{code: codeQueryCanceled, message: "canceling statement due to user request"}

// toPG gives err its SQLSTATE and, where it points into the statement
// text, its position: sql is the text as the client sent it and offset
// where the failing statement starts in it (a simple query may hold
// several).
func toPG(err error, sql string, offset int) *pgError {
	var pe *pgError
	if errors.As(err, &pe) {
		return pe
	}
	var ce *pgcatalog.Error
	if errors.As(err, &ce) {
		out := &pgError{code: ce.Code, message: ce.Message}
		if ce.Position > 0 && sql != "" {
			// pgcatalog counts in its statement; the client in its text.
			out.position = charPosition(sql, offset) - 1 + int32(ce.Position)
		} else {
			out.position = int32(ce.Position)
		}
		return out
	}
	var parseErr *parser.Error
	if errors.As(err, &parseErr) {
		return &pgError{code: pgcatalog.CodeSyntaxError,
			message:  fmt.Sprintf("line %d:%d: Syntax Error\n%s", parseErr.Pos.Line, parseErr.Pos.Column, parseErr.Msg),
			position: charPosition(sql, offset+parseErr.Pos.Offset)}
	}
	out := &pgError{code: codeOf(err), message: err.Error()}
	var xe *expr.PosError
	if errors.As(err, &xe) && xe.Pos.Line > 0 {
		out.message = xe.Error()
		out.position = charPosition(sql, offset+xe.Pos.Offset)
	}
	return out
}

// codeOf is the SQLSTATE of an engine error by its kind.
func codeOf(err error) string {
	switch {
	case errors.Is(err, expr.ErrUnknownColumn):
		return pgcatalog.CodeUndefinedColumn
	case errors.Is(err, expr.ErrUnknownFunction):
		return pgcatalog.CodeUndefinedFunction
	case errors.Is(err, expr.ErrType):
		return codeDatatypeMismatch
	case errors.Is(err, planner.ErrNotFound):
		return pgcatalog.CodeUndefinedTable
	case errors.Is(err, planner.ErrExists):
		return codeDuplicateTable
	case errors.Is(err, planner.ErrUnsupported):
		return pgcatalog.CodeFeatureUnsupported
	case errors.Is(err, engine.ErrPartitionUnavailable):
		return codeCannotConnectNow
	}
	return pgcatalog.CodeInternal
}

// charPosition turns a byte offset into sql into the 1-based character
// position Postgres's ErrorResponse carries.
func charPosition(sql string, byteOffset int) int32 {
	if byteOffset < 0 || sql == "" {
		return 0
	}
	if byteOffset > len(sql) {
		byteOffset = len(sql)
	}
	return int32(utf8.RuneCountInString(sql[:byteOffset]) + 1)
}
