// Package connect is a client of Kafka Connect's REST API, for ksqlDB's
// connector statements.
//
// Place in the flow: cmd/sluice reads the Connect URL (--connect-url,
// SLUICE_CONNECT_URL or ksql.connect.url in a server's config file) into
// engine.Config; engine/'s connector statements (CREATE SOURCE|SINK
// CONNECTOR, SHOW CONNECTORS, DESCRIBE CONNECTOR, DROP CONNECTOR, SHOW
// CONNECTOR PLUGINS) call a Client made from it. Connect keeps the
// connectors: nothing of them enters Sluice's catalog or command topic.
//
// Connect's refusals come back as *Error, with Connect's own message and
// HTTP status; a Connect that does not answer is an *UnreachableError
// within the client's timeout, never a hang. User info in the URL
// (http://user:secret@host:8083) becomes Basic authentication and never
// appears in an error.
//
// Example:
//
//	cl, _ := connect.New("http://localhost:8083")
//	info, err := cl.Create(ctx, "LINES", map[string]string{
//		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
//		"file": "/tmp/lines.txt", "topic": "lines"})
//	st, _ := cl.Status(ctx, "LINES") // st.Connector.State == "RUNNING"
//	_ = cl.Delete(ctx, "LINES")
package connect
