package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
)

// requestProps are a /ksql or /query request's properties as strings.
func requestProps(q *ksqlwire.KsqlRequest) map[string]string {
	return mergeProps(q.StreamsProperties, q.Properties)
}

// mergeProps turns JSON property values (strings, numbers, booleans) into
// the strings SET would give.
func mergeProps(ms ...map[string]any) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			if s, ok := v.(string); ok {
				out[k] = s
			} else {
				out[k] = fmt.Sprint(v)
			}
		}
	}
	return out
}

// decodeBody reads a JSON request body of at most MaxBodyBytes; on
// failure it has answered 400 and returns false.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		genericError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("Invalid JSON in request: %v", err))
		return false
	}
	return true
}

// handleKSQL runs the statements of a /ksql request in order and answers
// one entity per statement that has one. The statement's kind says how
// (engine.KSQLUseOf): SET and UNSET change the properties of the
// statements after them in the same request only, as in ksqlDB; queries
// and PRINT belong to /query-stream and /query.
func (s *Server) handleKSQL(w http.ResponseWriter, r *http.Request) {
	var req ksqlwire.KsqlRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	text := req.KSQL
	if strings.TrimSpace(text) == "" {
		statementError(w, codeBadStatement, "No statements in the request", text, nil)
		return
	}
	stmts, err := parser.ParseScript(text)
	if err != nil {
		statementError(w, codeBadStatement, errorText(text, err), text, nil)
		return
	}
	props := requestProps(&req)
	done := []ksqlwire.Entity{}
	for _, p := range stmts {
		switch engine.KSQLUseOf(p.Stmt) {
		case engine.KSQLProperty:
			if err := engine.SetRequestProperty(p.Stmt, props); err != nil {
				statementError(w, codeBadStatement, errorText(text, err), stmtText(p), done)
				return
			}
			continue
		case engine.KSQLQuery:
			statementError(w, codeQueryEndpoint,
				"The following statement types should be issued to the websocket endpoint '/query':\n\t* PRINT\n\t* SELECT", stmtText(p), done)
			return
		}
		res, err := s.eng.ExecuteStatement(engine.WithProperties(r.Context(), props), p)
		var ce *engine.ConnectorError
		if errors.As(err, &ce) && ce.Status >= 400 {
			// As ksqlDB: Kafka Connect's refusal answers with Connect's
			// HTTP status, its error code that status × 100.
			genericError(w, ce.Status, ce.Status*100, ce.Message)
			return
		}
		if err != nil {
			statementError(w, codeBadStatement, errorText(text, err), stmtText(p), done)
			return
		}
		if res.Rows != nil {
			// Not reached: SELECT is refused above. Stop it all the same.
			res.Rows.Close()
			continue
		}
		if e := s.resultEntity(p, res); e != nil {
			done = append(done, e)
		}
	}
	writeJSON(w, http.StatusOK, done)
}

// resultEntity renders one statement's result: a structured entity for
// SHOW, DESCRIBE and EXPLAIN; a command status for statements that change
// the catalog or the running queries; nothing for INSERT … VALUES, as
// ksqlDB.
func (s *Server) resultEntity(p parser.Parsed, res *engine.Result) ksqlwire.Entity {
	if res.Entity != nil {
		return engine.WireEntity(stmtText(p), res.Entity)
	}
	id, silent := engine.CommandID(p.Stmt)
	if silent || (id == engine.GenericCommandID && res.Message == "") {
		return nil
	}
	cs := ksqlwire.CurrentStatus{Type: ksqlwire.TypeCurrentStatus, StatementText: stmtText(p), CommandID: id,
		CommandStatus: ksqlwire.CommandStatus{Status: "SUCCESS", Message: res.Message}, CommandSequenceNumber: s.seq.Add(1), Warnings: []ksqlwire.Warning{}}
	if res.Query != nil {
		qid := res.Query.ID
		cs.CommandStatus.QueryID = &qid
	}
	s.mu.Lock()
	s.statuses[id] = cs.CommandStatus
	s.mu.Unlock()
	return cs
}

// stmtText is a statement's text as ksqlDB echoes it: with its ';', and
// a CREATE CONNECTOR's settings masked (they carry passwords).
func stmtText(p parser.Parsed) string {
	if cc, ok := p.Stmt.(*parser.CreateConnector); ok {
		return cc.Masked() + ";"
	}
	return p.Text + ";"
}
