package pgwire

// Sessions is how many sessions s serves now, for the tests.
func Sessions(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Received is how many bytes the client of session pid has sent, and
// what it had sent when the session last said ReadyForQuery.
func Received(s *Server, pid uint32) (total, atIdle int64) {
	s.mu.Lock()
	ss := s.sessions[pid]
	s.mu.Unlock()
	if ss == nil {
		return -1, -1
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.in.received(), ss.idleMark
}
