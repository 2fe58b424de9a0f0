package server

import (
	"net/http"
)

// commandStatuses is GET /status's answer: each command id /ksql
// answered with and its status alone, as ksqlDB's CommandStatuses.
type commandStatuses struct {
	CommandStatuses map[string]string `json:"commandStatuses"`
}

// handleStatus answers GET /status/{commandId} with the command status
// /ksql gave that command (ksqlDB's CommandStatus), or 404 for an id it
// never gave. Sluice runs a command before /ksql answers, so the status
// is final: SUCCESS, never QUEUED, PARSING or EXECUTING.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st, ok := s.statuses[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		genericError(w, http.StatusNotFound, codeNotFound, "Command not found")
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// handleStatuses answers GET /status: every command id with its status.
func (s *Server) handleStatuses(w http.ResponseWriter, r *http.Request) {
	out := commandStatuses{CommandStatuses: map[string]string{}}
	s.mu.Lock()
	for id, st := range s.statuses {
		out.CommandStatuses[id] = st.Status
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}
