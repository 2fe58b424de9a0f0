package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sluice-sql/sluice/engine"
)

type insertAck struct {
	Status    string `json:"status"`
	Seq       int64  `json:"seq"`
	ErrorCode int    `json:"error_code,omitempty"`
	Message   string `json:"message,omitempty"`
}

// handleInsertsStream inserts rows as they arrive: the body's first JSON
// object names the target ({"target":"S"}), every later one is a row
// (column → value). Each row is acknowledged in order with
// {"status":"ok","seq":n} once Kafka has it; the first bad row is
// answered with {"status":"error",…} and ends the stream. The acks are
// delimited lines, or one JSON array for a client that accepts
// application/json (ksqlDB's shapes).
func (s *Server) handleInsertsStream(w http.ResponseWriter, r *http.Request) {
	if s.shuttingDown() {
		genericError(w, http.StatusServiceUnavailable, codeUnavailable, "The server is shutting down")
		return
	}
	rc := http.NewResponseController(w)
	// HTTP/1.1 clients may stream rows while reading acks; HTTP/2 always
	// allows it, and there the call fails harmlessly.
	_ = rc.EnableFullDuplex()
	lines := bufio.NewReader(r.Body)
	first, err := readObject(lines, s.opts.MaxBodyBytes)
	if err != nil {
		genericError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("Invalid JSON in inserts request: %v", err))
		return
	}
	var target struct {
		Target string `json:"target"`
	}
	if err := json.Unmarshal(first, &target); err != nil || target.Target == "" {
		genericError(w, http.StatusBadRequest, codeBadRequest, `The first JSON object must name the target: {"target":"STREAM_NAME"}`)
		return
	}
	if _, err := s.eng.Catalog().LookupFold(target.Target); err != nil {
		genericError(w, http.StatusBadRequest, codeBadStatement, fmt.Sprintf("Cannot insert values into an unknown stream/table: %s", target.Target))
		return
	}
	// Acks go out one a line (delimited), or as the elements of one JSON
	// array when the client accepts application/json; either way each is
	// flushed as soon as Kafka has its row.
	asJSON := insertsFormat(r.Header.Get("Accept")) == contentJSON
	if asJSON {
		w.Header().Set("Content-Type", contentJSON)
	} else {
		w.Header().Set("Content-Type", contentDelimited)
	}
	w.WriteHeader(http.StatusOK)
	acks := 0
	if asJSON {
		defer func() {
			end := "]"
			if acks == 0 {
				end = "[]"
			}
			_, _ = io.WriteString(w, end)
			_ = rc.Flush()
		}()
	}
	ack := func(a insertAck) error {
		b := marshal(a)
		switch {
		case !asJSON:
			b = append(b, '\n')
		case acks == 0:
			b = append([]byte{'['}, b...)
		default:
			b = append([]byte{','}, b...)
		}
		acks++
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	for seq := int64(0); ; seq++ {
		raw, err := readObject(lines, s.opts.MaxBodyBytes)
		if errors.Is(err, io.EOF) {
			return
		}
		if err == nil {
			var row map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err = dec.Decode(&row); err == nil {
				err = s.eng.InsertJSON(r.Context(), target.Target, row)
			}
		}
		if err != nil {
			_ = ack(insertAck{Status: "error", Seq: seq, ErrorCode: codeBadRequest, Message: engine.FormatError("", err)})
			return
		}
		if ack(insertAck{Status: "ok", Seq: seq}) != nil {
			return
		}
	}
}

// readObject reads the next non-blank line of at most limit bytes: one
// JSON object, as clients send one per line. It returns io.EOF at the
// end of the body.
func readObject(r *bufio.Reader, limit int64) ([]byte, error) {
	for {
		var line []byte
		for {
			chunk, isPrefix, err := r.ReadLine()
			line = append(line, chunk...)
			if int64(len(line)) > limit {
				return nil, fmt.Errorf("a row is longer than %d bytes", limit)
			}
			if err != nil {
				if errors.Is(err, io.EOF) && len(strings.TrimSpace(string(line))) > 0 {
					return line, nil
				}
				return nil, err
			}
			if !isPrefix {
				break
			}
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}
