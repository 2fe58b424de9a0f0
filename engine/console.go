package engine

// QuerySummaries reports every persistent query as SHOW QUERIES does:
// state, error, sources, sinks and owning instances. The server's web
// console reads it instead of parsing SHOW QUERIES text.
func (e *Engine) QuerySummaries() []QuerySummary {
	return e.queryList().Queries
}
