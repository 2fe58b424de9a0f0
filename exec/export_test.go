package exec

// ExpiryVisited exposes how many time-index entries expiry scans read.
func ExpiryVisited(m *Metrics) int64 { return m.expiryVisited.Load() }
