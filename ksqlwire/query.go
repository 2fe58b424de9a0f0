package ksqlwire

import "encoding/json"

// QueryStreamHeader is the first line of a /query-stream answer in
// ksqlDB's delimited and JSON media types.
type QueryStreamHeader struct {
	QueryID     string   `json:"queryId"`
	ColumnNames []string `json:"columnNames"`
	ColumnTypes []string `json:"columnTypes"`
}

// QueryHeader is the first element of a /query answer: the query's id and
// its columns as ksqlDB's schema text (`A` INTEGER, `K` STRING KEY).
type QueryHeader struct {
	Header struct {
		QueryID string `json:"queryId"`
		Schema  string `json:"schema"`
	} `json:"header"`
}

// ProtoHeader is the first element of a /query-stream answer in ksqlDB's
// protobuf media type: QueryHeader's fields and the rows' proto3 schema.
type ProtoHeader struct {
	Header struct {
		QueryID     string `json:"queryId"`
		Schema      string `json:"schema"`
		ProtoSchema string `json:"protoSchema"`
	} `json:"header"`
}

// QueryRow is a /query row, its columns a JSON array of the row's values;
// a push query on a table marks a deleted key's row "tombstone": true.
type QueryRow struct {
	Row struct {
		Columns   json.RawMessage `json:"columns"`
		Tombstone bool            `json:"tombstone,omitempty"`
	} `json:"row"`
}
