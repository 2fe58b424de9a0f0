package server

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/topicprint"
)

// printStatement returns sql's statement when it is one PRINT.
func printStatement(sql string) (*parser.Print, bool) {
	stmts, err := parser.ParseScript(sql)
	if err != nil || len(stmts) != 1 {
		return nil, false
	}
	st, ok := stmts[0].Stmt.(*parser.Print)
	return st, ok
}

// handlePrint serves PRINT on /query as ksqlDB does: a streamed text
// response of one line per record (topicprint.Line), flushed as records
// arrive, ending at the LIMIT, when the client goes away, or at Shutdown.
// A failure after the response started is written as a last line, as
// ksqlDB writes it. ksqlDB's "Key format: …"/"Value format: …" lines are
// not written: Sluice does not guess a topic's formats.
func (s *Server) handlePrint(w http.ResponseWriter, r *http.Request, st *parser.Print) {
	if s.shuttingDown() {
		genericError(w, http.StatusServiceUnavailable, codeUnavailable, "The server is shutting down")
		return
	}
	conn := s.eng.ConnOpts()
	if conn == nil {
		genericError(w, http.StatusBadRequest, codeBadRequest, "PRINT needs a Kafka connection")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	rd, err := topicprint.Open(ctx, conn, st)
	if err != nil {
		var nt *topicprint.NoTopicError
		if errors.As(err, &nt) {
			genericError(w, http.StatusBadRequest, codeBadRequest, err.Error())
		} else {
			genericError(w, http.StatusInternalServerError, codeServerError, err.Error())
		}
		return
	}
	defer rd.Close()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	for {
		rec, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) || ctx.Err() != nil {
			return
		}
		line := topicprint.Line(rec)
		if err != nil {
			line = err.Error()
		}
		if _, werr := io.WriteString(w, line+"\n"); werr != nil || rc.Flush() != nil || err != nil {
			return
		}
	}
}
