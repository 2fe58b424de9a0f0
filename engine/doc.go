// Package engine executes SQL statements: it owns the catalog, the
// instance's Badger database and its Kafka clients, and starts, tracks
// and stops queries.
//
// Place in the flow: cmd/sluice, shell/ and server/ hand statement text to
// an Engine; the engine parses it (parser/), plans it (planner/), creates
// the topics a plan needs, and runs it (exec/).
//
// Each kind of statement is one type, registered once in kinds
// (statement.go) by its AST type: a command (CREATE STREAM/TABLE with
// columns or AS SELECT, INSERT INTO … SELECT, TERMINATE, PAUSE/RESUME,
// DROP, ALTER, CREATE TYPE, DROP TYPE) has check (no side effects),
// apply and its REST status id; any other statement executes in a
// session (SET, DEFINE, SELECT, SHOW, DESCRIBE, EXPLAIN, INSERT …
// VALUES, ASSERT, and the connector statements of connectors.go, which
// Kafka Connect carries out through package connect: Connect keeps the
// connectors, so they are never commands). ExecuteStatement, the command topic, IsCommand and
// the server's command ids all look the kind up. To add a statement:
// give the parser its AST type, write its kind in a file of its own
// (create_source.go, custom_type.go, alter.go are small examples), add
// one line to kinds, and test it.
//
// Topics live and queries run in a cluster (cluster.go): kafkaCluster
// (cluster_kafka.go) or, with Config.Memory, memoryCluster
// (cluster_memory.go), which needs no broker: topics exist only in
// memory and records flow through exec.MemoryRunner, which is how `sluice
// test` runs ksqlDB's test files offline. The engine asks the cluster,
// never which one it has.
//
// SHOW, DESCRIBE, EXPLAIN and ASSERT answer a structured Result.Entity
// (entities.go), and the engine writes no text for it; WireEntity
// (wire.go) gives it in ksqlDB's REST shape (package ksqlwire), which the
// server sends and the shell prints on either backend, and `sluice run`
// prints through the shell's layout too (shell.WriteEntity).
//
// With Config.CommandTopic the catalog lives in Kafka: every command that
// passes its check is appended to the single-partition topic
// _sluice-<service>-commands with the session properties in force, and
// every instance of the service applies the topic's commands in order,
// its own included: Open replays the topic (starting the queries still
// running at its end) and a goroutine follows it. An Execute that issues a command returns once this
// instance has applied it, with its outcome. commands.go holds this.
//
// Several instances of a service split each query's partitions through
// its consumer group. Query.Partitions says what this instance owns and
// Config.OnPartitionsChange says when that changes (package cluster
// publishes both); PullTarget names the state partitions a pull query
// needs (those of the keys its plan's store read looks up, or all) and
// WithPartitions limits one to partitions this instance owns,
// so a server can answer its share and forward the rest (ownership.go).
//
// A SELECT without EMIT is a pull query (select.go), except on a stream
// this engine cannot scan: planner.PlanQuery validates it (ksqlDB's
// refusals; a table no query keeps, which the engine tells the planner
// through planner.Options.TableStore, gets ErrNotQueryable) and its plan
// says how it is answered. Pull queries (pull.go) read a table from the state store of the query
// that keeps it: its aggregation, the rows a non-aggregate CREATE TABLE
// … AS SELECT writes, or, for a CREATE SOURCE TABLE, the CST_<name>
// query the engine starts with it (materializeSource). A plain CREATE
// TABLE is not queryable (ErrNotQueryable, ksqlDB's words). The keys
// its WHERE pins, the planner's key-lookup rule finds (Query.StoreRead):
// the read goes straight to them. A pull query on a stream scans its
// topic (pull_stream.go).
//
// Example:
//
//	e, _ := engine.Open(ctx, engine.Config{ConnOpts: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:9092")}, DataDir: "sluice-data"})
//	defer e.Close()
//	res, err := e.Execute(ctx, `CREATE STREAM s (id VARCHAR KEY, v INT)
//	    WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`)
//
// A server instance keeps its catalog in the command topic and gives each
// request its own properties:
//
//	e, _ := engine.Open(ctx, engine.Config{ConnOpts: conn, DataDir: dir, ServiceID: "orders", CommandTopic: true})
//	res, err := e.ExecuteWith(ctx, sql, map[string]string{"auto.offset.reset": "earliest"})
//	// res[i].Command.Offset is the command's sequence number; another
//	// instance can WaitForCommand(ctx, offset) before its next statement.
//
// A server also sets Config.LiveInstances from its instance registry, so
// that DESCRIBE EXTENDED and EXPLAIN can say when a query has fewer input
// partitions than the service has instances (scale.go), beside warning
// about a key carrying more than sluice.hot.key.share of its records.
package engine
