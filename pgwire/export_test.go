package pgwire

// Sessions is how many sessions s serves now, for the tests.
func Sessions(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}
