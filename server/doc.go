// Package server serves ksqlDB's REST API over an engine, so that
// ksqlDB's clients (the CLI's REST calls, language clients, curl) work
// against Sluice: POST /ksql (statements), POST /query-stream and POST
// /query (push and pull queries; /query also PRINT, as ksqlDB's text
// lines), POST /inserts-stream, POST /close-query, GET /info,
// /healthcheck, /clusterStatus and /status (the command statuses /ksql
// answered). One listener speaks HTTP/1.1 and HTTP/2 (cleartext with
// prior knowledge, or over TLS). Query rows carry values as ksqlDB's
// Jackson writes them (format.ToJSON, format.AppendJSONValue): a DOUBLE in
// Java's Double.toString form (30.0, 1.0E7; NaN and the infinities as
// strings), a DECIMAL with every digit at its scale
// (12345678987654321.0000000000000001), a string with only '"', '\' and
// control characters escaped (<, > and & as they are).
//
// Place in the flow: cmd/sluice's `server` command opens an engine and
// hands it to New; every request's statements go to the engine with the
// request's properties (engine.WithProperties), and the engine's results
// (Result.Message, Result.Entity, Result.Rows) are rendered in ksqlDB's
// JSON shapes here, as the types of package ksqlwire (engine.WireEntity
// gives a structured result's entity). With Options.Cluster (a
// cluster.Registry) the server is one of several instances of its
// service: a pull query reads the partitions this instance owns locally
// and forwards the rest to their owners (pull.go); with
// ksql.query.pull.enable.standby.reads a partition whose owner cannot
// answer is read from an instance keeping a standby of it (pull_route.go
// decides who is asked), and /clusterStatus lists every instance.
//
// Example:
//
//	srv := server.New(eng, server.Options{Users: map[string]string{"alice": "secret"}})
//	srv.Handle("GET /metrics", promhttp.Handler())
//	ln, _ := net.Listen("tcp", "127.0.0.1:8088")
//	go srv.Serve(ln)
//	…
//	srv.Shutdown(ctx) // push queries end their responses; then eng.Close()
package server
