// Package server will hold `sluice server`: persistent queries kept in a
// Kafka command topic and ksqlDB's REST API (/ksql, /query-stream, …)
// over the engine.
//
// Its work is tracked as its own issue; nothing here runs yet.
package server
