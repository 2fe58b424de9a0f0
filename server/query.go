package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// push is a running push query of one request.
type push struct {
	rs *engine.RowStream
	// stopped is set when /close-query or Shutdown ended the query, so
	// the response does not claim its LIMIT was reached.
	stopped atomic.Bool
}

// startPush parses sql, which must be one SELECT, and starts it with
// props. On failure it has answered with ksqlDB's error and returns nil.
func (s *Server) startPush(w http.ResponseWriter, r *http.Request, sql string, props map[string]string) *push {
	if s.shuttingDown() {
		genericError(w, http.StatusServiceUnavailable, codeUnavailable, "The server is shutting down")
		return nil
	}
	stmts, err := parser.ParseScript(sql)
	if err != nil {
		statementError(w, codeBadStatement, errorText(sql, err), sql, nil)
		return nil
	}
	if len(stmts) != 1 {
		statementError(w, codeBadStatement, fmt.Sprintf("Expected exactly one SELECT statement, got %d statements", len(stmts)), sql, nil)
		return nil
	}
	if _, ok := stmts[0].Stmt.(*parser.Select); !ok {
		statementError(w, codeBadStatement, "Not a query: only SELECT statements run here; send other statements to /ksql", sql, nil)
		return nil
	}
	res, err := s.eng.ExecuteStatement(engine.WithProperties(r.Context(), props), stmts[0])
	if err != nil {
		statementError(w, codeBadStatement, errorText(sql, err), stmtText(stmts[0]), nil)
		return nil
	}
	p := &push{rs: res.Rows}
	s.mu.Lock()
	// Shutdown may have started while the query was starting; it has
	// already closed the queries it saw, so close this one here.
	if s.shuttingDown() {
		s.mu.Unlock()
		res.Rows.Close()
		genericError(w, http.StatusServiceUnavailable, codeUnavailable, "The server is shutting down")
		return nil
	}
	s.pushes[res.Rows.QueryID] = p
	s.mu.Unlock()
	return p
}

func (s *Server) endPush(p *push) {
	s.mu.Lock()
	delete(s.pushes, p.rs.QueryID)
	s.mu.Unlock()
	p.rs.Close()
}

// run delivers rows to emit until the query ends (LIMIT, /close-query,
// Shutdown) or the client goes away. It reports whether the query ended
// by itself, which for a push query means its LIMIT was reached.
func (s *Server) run(r *http.Request, p *push, emit func(row engine.StreamRow) error) (limitReached bool) {
	for {
		select {
		case row, ok := <-p.rs.C:
			if !ok {
				return !p.stopped.Load() && !s.shuttingDown()
			}
			if err := emit(row); err != nil {
				return false
			}
		case <-r.Context().Done():
			return false
		}
	}
}

// jsonRow is a row as the JSON array ksqlDB's REST API writes: each
// value as Jackson writes its column's type (format.ToJSON,
// format.AppendJSONValue).
func jsonRow(p *push, row []any) json.RawMessage {
	b := []byte{'['}
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = format.AppendJSONValue(b, format.ToJSON(v, p.rs.Columns.Columns[i].Type)); err != nil {
			// ToJSON yields only values AppendJSONValue writes; say so in
			// the stream rather than break it.
			return marshal(map[string]string{"error": err.Error()})
		}
	}
	return append(b, ']')
}

// marshal is v as JSON, leaving <, > and & as they are (as writeJSON).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil {
		// v is one of the server's own shapes, always encodable; say so
		// in the stream rather than break it.
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}

// handleQueryStream runs a push query and streams its rows: a header
// object, then one JSON array per row, newline-delimited by default or
// as one JSON array when the client accepts application/json.
func (s *Server) handleQueryStream(w http.ResponseWriter, r *http.Request) {
	var req ksqlwire.QueryStreamRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	ct := streamFormat(r.Header.Get("Accept"))
	asJSON := ct == contentJSON
	if res, handled := s.pull(w, r, req.SQL, mergeProps(req.Properties)); handled {
		switch {
		case res == nil:
		case ct == ContentProtobuf:
			writeProtoPull(w, res)
		default:
			writePullStream(w, res, asJSON)
		}
		return
	}
	p := s.startPush(w, r, req.SQL, mergeProps(req.Properties))
	if p == nil {
		return
	}
	defer s.endPush(p)
	if ct == ContentProtobuf {
		s.writeProtoQuery(w, r, p)
		return
	}
	s.writePushStream(w, r, p, asJSON)
}

// writePushStream streams a push query's rows in /query-stream's shape.
func (s *Server) writePushStream(w http.ResponseWriter, r *http.Request, p *push, asJSON bool) {
	hdr := ksqlwire.QueryStreamHeader{QueryID: p.rs.QueryID, ColumnNames: []string{}, ColumnTypes: []string{}}
	for _, c := range p.rs.Columns.Columns {
		hdr.ColumnNames = append(hdr.ColumnNames, c.Name)
		hdr.ColumnTypes = append(hdr.ColumnTypes, c.Type.String())
	}
	rc := http.NewResponseController(w)
	var buf bytes.Buffer
	if asJSON {
		w.Header().Set("Content-Type", contentJSON)
		buf.WriteByte('[')
	} else {
		w.Header().Set("Content-Type", contentDelimited)
	}
	buf.Write(marshal(hdr))
	if !asJSON {
		buf.WriteByte('\n')
	}
	setPullStats(w, p.rs)
	w.WriteHeader(http.StatusOK)
	write := func() error {
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
		buf.Reset()
		return rc.Flush()
	}
	if write() != nil {
		return
	}
	s.run(r, p, func(row engine.StreamRow) error {
		if asJSON {
			buf.WriteByte(',')
		}
		buf.Write(jsonRow(p, row.Cols))
		if !asJSON {
			buf.WriteByte('\n')
		}
		return write()
	})
	if err := p.rs.Err(); err != nil && r.Context().Err() == nil {
		// ksqlDB ends the stream with the error object.
		if asJSON {
			buf.WriteByte(',')
		}
		buf.Write(marshal(ksqlwire.Error{Type: ksqlwire.TypeGenericError, ErrorCode: codeServerError, Message: err.Error()}))
		if !asJSON {
			buf.WriteByte('\n')
		}
	}
	if asJSON {
		buf.WriteString("]")
	}
	if buf.Len() > 0 {
		_ = write()
	}
}

// writePullStream writes a gathered pull query's answer as
// handleQueryStream writes a query's rows.
func writePullStream(w http.ResponseWriter, res *pullResult, asJSON bool) {
	hdr := ksqlwire.QueryStreamHeader{QueryID: res.queryID, ColumnNames: []string{}, ColumnTypes: []string{}}
	for _, c := range res.columns.Columns {
		hdr.ColumnNames = append(hdr.ColumnNames, c.Name)
		hdr.ColumnTypes = append(hdr.ColumnTypes, c.Type.String())
	}
	if len(res.forwardedTo) > 0 {
		w.Header().Set(ForwardedToHeader, strings.Join(res.forwardedTo, ","))
	}
	w.Header().Set(KeysReadHeader, strconv.FormatInt(res.keysRead.Load(), 10))
	if len(res.parts) > 0 {
		w.Header().Set(PartitionRowsHeader, formatPartitionRows(res.parts))
	}
	if len(res.standbyOf) > 0 {
		w.Header().Set(StandbyOfHeader, formatPartitions(res.standbyOf))
	}
	var buf bytes.Buffer
	if asJSON {
		w.Header().Set("Content-Type", contentJSON)
		buf.WriteByte('[')
		buf.Write(marshal(hdr))
		for _, row := range res.rows {
			buf.WriteByte(',')
			buf.Write(row)
		}
		buf.WriteByte(']')
	} else {
		w.Header().Set("Content-Type", contentDelimited)
		buf.Write(marshal(hdr))
		buf.WriteByte('\n')
		for _, row := range res.rows {
			buf.Write(row)
			buf.WriteByte('\n')
		}
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// handleQuery is ksqlDB's older push query endpoint: one JSON array sent
// in chunks as rows arrive, a header element first and, when the LIMIT
// was reached, a final message last. A client that prefers
// application/vnd.ksqlapi.delimited.v1 gets /query-stream's delimited
// lines instead. PRINT is served here too, as text lines (handlePrint).
func (s *Server) handleQuery(w http.ResponseWriter, r *http.Request) {
	var req ksqlwire.KsqlRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if st, ok := printStatement(req.KSQL); ok {
		s.handlePrint(w, r, st)
		return
	}
	ct := queryFormat(r.Header.Get("Accept"))
	if res, handled := s.pull(w, r, req.KSQL, requestProps(&req)); handled {
		switch {
		case res == nil:
		case ct == contentDelimited:
			writePullStream(w, res, false)
		default:
			writePullQuery(w, res, ct)
		}
		return
	}
	p := s.startPush(w, r, req.KSQL, requestProps(&req))
	if p == nil {
		return
	}
	defer s.endPush(p)
	if ct == contentDelimited {
		s.writePushStream(w, r, p, false)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", ct)
	setPullStats(w, p.rs)
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	// One JSON array, an element a line: the separator goes before each
	// element after the header, so the array can end after any of them.
	if send(append([]byte{'['}, marshal(queryHeaderOf(p.rs.QueryID, p.rs.Columns, p.rs.Pull && !p.rs.Scan))...)) != nil {
		return
	}
	limit := s.run(r, p, func(row engine.StreamRow) error {
		var qr ksqlwire.QueryRow
		qr.Row.Columns = jsonRow(p, row.Cols)
		qr.Row.Tombstone = row.Tombstone
		return send(append([]byte(",\n"), marshal(qr)...))
	})
	if r.Context().Err() != nil {
		return
	}
	if err := p.rs.Err(); err != nil {
		_ = send([]byte(",\n" + string(marshal(streamError(err))) + "]\n"))
		return
	}
	if final := finalMessage(p.rs, limit); final != "" {
		_ = send([]byte(",\n" + final + "]\n"))
		return
	}
	_ = send([]byte("]\n"))
}

// streamError is the last element of a /query answer whose query ended
// by itself on an error (a scalable push query dropped for falling
// behind, or whose persistent query stopped): ksqlDB's errorMessage.
func streamError(err error) ksqlwire.ErrorMessage {
	return ksqlwire.ErrorMessage{ErrorMessage: ksqlwire.Error{Type: ksqlwire.TypeGenericError, ErrorCode: codeServerError, Message: err.Error()}}
}

// finalMessage is the last element of a /query answer: ksqlDB's
// {"finalMessage":"Limit Reached"} when a push query's LIMIT or a stream
// scan's LIMIT was reached, "Query Completed" when a query ended by
// itself otherwise, and none after a pull query on a table.
func finalMessage(rs *engine.RowStream, limitReached bool) string {
	switch {
	case rs.Pull && !rs.Scan:
		return ""
	case rs.Pull && rs.LimitReached, !rs.Pull && limitReached:
		return `{"finalMessage":"Limit Reached"}`
	}
	return `{"finalMessage":"Query Completed"}`
}

// queryHeaderOf is a /query answer's header: the query's id and its
// columns as ksqlDB's schema text; a pull query on a table marks its key
// columns KEY.
func queryHeaderOf(id string, cols types.Schema, markKeys bool) ksqlwire.QueryHeader {
	var h ksqlwire.QueryHeader
	h.Header.QueryID = id
	h.Header.Schema = schemaText(cols, markKeys)
	return h
}

func schemaText(cols types.Schema, markKeys bool) string {
	parts := make([]string, 0, len(cols.Columns))
	for _, c := range cols.Columns {
		part := fmt.Sprintf("`%s` %s", c.Name, c.Type)
		if markKeys && c.Key {
			part += " KEY"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// writePullQuery writes a gathered pull query's answer (on a table: no
// final message) as handleQuery writes it, as content type ct.
func writePullQuery(w http.ResponseWriter, res *pullResult, ct string) {
	if len(res.forwardedTo) > 0 {
		w.Header().Set(ForwardedToHeader, strings.Join(res.forwardedTo, ","))
	}
	w.Header().Set(KeysReadHeader, strconv.FormatInt(res.keysRead.Load(), 10))
	if len(res.parts) > 0 {
		w.Header().Set(PartitionRowsHeader, formatPartitionRows(res.parts))
	}
	if len(res.standbyOf) > 0 {
		w.Header().Set(StandbyOfHeader, formatPartitions(res.standbyOf))
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	buf.Write(marshal(queryHeaderOf(res.queryID, res.columns, true)))
	for _, row := range res.rows {
		buf.WriteString(",\n{\"row\":{\"columns\":")
		buf.Write(row)
		buf.WriteString("}}")
	}
	buf.WriteString("]\n")
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// handleCloseQuery stops a push query started by /query-stream or /query;
// its response ends.
func (s *Server) handleCloseQuery(w http.ResponseWriter, r *http.Request) {
	var req ksqlwire.CloseQueryRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	s.mu.Lock()
	p := s.pushes[req.QueryID]
	s.mu.Unlock()
	if p == nil {
		genericError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("No query with id %s", req.QueryID))
		return
	}
	s.stop(p)
	w.WriteHeader(http.StatusOK)
}

// setPullStats names, on the response to a pull query on a table that
// this instance answered alone, the store entries it read
// (KeysReadHeader): its rows were all read before the response starts.
func setPullStats(w http.ResponseWriter, rs *engine.RowStream) {
	if rs.Pull && !rs.Scan {
		w.Header().Set(KeysReadHeader, strconv.FormatInt(rs.KeysRead, 10))
	}
}
