package ksqlwire

// KsqlRequest is the body of POST /ksql and POST /query.
type KsqlRequest struct {
	KSQL              string         `json:"ksql"`
	StreamsProperties map[string]any `json:"streamsProperties,omitempty"`
	// Properties is what newer clients send instead of streamsProperties.
	Properties map[string]any `json:"properties,omitempty"`
}

// QueryStreamRequest is the body of POST /query-stream.
type QueryStreamRequest struct {
	SQL        string         `json:"sql"`
	Properties map[string]any `json:"properties"`
}

// CloseQueryRequest is the body of POST /close-query.
type CloseQueryRequest struct {
	QueryID string `json:"queryId"`
}
