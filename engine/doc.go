// Package engine executes SQL statements: it owns the catalog, the
// instance's Badger database and its Kafka clients, and starts, tracks
// and stops queries.
//
// Place in the flow: cmd/sluice, shell/ and server/ hand statement text to
// an Engine; the engine parses it (parser/), plans it (planner/), creates
// the topics a plan needs, and runs it (exec/). With Config.Memory the
// engine needs no broker: topics exist only in memory and records flow
// through exec.MemoryRunner, which is how `sluice test` runs ksqlDB's
// test files offline.
//
// Example:
//
//	e, _ := engine.Open(ctx, engine.Config{ConnOpts: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:9092")}, DataDir: "sluice-data"})
//	defer e.Close()
//	res, err := e.Execute(ctx, `CREATE STREAM s (id VARCHAR KEY, v INT)
//	    WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`)
package engine
