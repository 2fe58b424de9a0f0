// Package cluster lets the instances of one service know each other:
// which instance owns which partitions of each persistent query, and at
// which URL it answers. A server forwards the parts of a pull query that
// other instances own to them, and /clusterStatus lists them.
//
// Place in the flow: beside the engine, not inside it. The engine's
// Kafka runners learn their partitions from their consumer groups
// (engine.Config.OnPartitionsChange, Query.Partitions); a Registry
// publishes them and follows what the other instances publish. `sluice
// server` starts one; the Memory engine and `sluice run` do without.
//
// Every instance writes its Status, keyed by its instance id, to the
// compacted topic TopicName(service) (`_sluice-<service>-instances`):
// when its partitions change and every heartbeat interval (2 s by
// default). Every instance reads the whole topic and keeps the last
// Status of each instance. An instance not heard from for three
// intervals is stale: it is still listed, as not alive, but owns nothing.
// A clean stop writes a tombstone, so the instance disappears at once.
//
// Standby replicas: StandbyAssignment derives from the statuses which
// stateful partitions this instance keeps a warm copy of (the n live
// instances after each owner on a ring sorted by id); ApplyStandbys hands
// them to the engine's queries and EngineStandbys publishes them.
//
// Example: three servers of service "shop", each consuming 2 of the 6
// partitions of CTAS_COUNTS' input. On any of them
//
//	owner, ok := reg.Owner("CTAS_COUNTS", "_sluice-shop-query-CTAS_COUNTS-Aggregate-GroupBy-repartition", 4)
//
// gives the Instance (ID, URL) that owns partition 4, or ok=false when no
// live instance does (during a rebalance, or after a crash until the
// group moves the partition).
package cluster
