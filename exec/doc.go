// Package exec runs planned queries: tasks (one per sub-topology and input
// partition) push records through chains of operators, keep per-task
// stream time, read and write state stores, and hand results to an Output.
//
// Place in the flow: planner/ builds a Topology out of the node specs in
// this package (source, filter, project, aggregate, sink); exec
// instantiates one operator chain per task and drives it, either from Kafka
// through a franz-go consumer group (KafkaRunner) or from memory
// (MemoryRunner, used by the offline `sluice test` runner and unit tests).
// State lives in package state. A KafkaRunner also keeps standby state
// (standby.go) for partitions it is told to (SetStandbys): their stores
// follow their changelogs, with no task, so a takeover restores only the
// tail. The group rebalances cooperatively (cooperative-sticky). The tasks
// of one poll share nothing while they process or commit, so a
// KafkaRunner runs them in parallel (KafkaConfig.Threads, default
// GOMAXPROCS); a task's own records stay in order.
//
// The KafkaRunner is split by job: kafka.go is the poll loop; partitions.go
// the task lifecycle (assignment, restore, revoke, loss); committer.go the
// commit protocol, one committer per guarantee (atLeastOnce, exactlyOnce)
// owning its transaction state; dedupe.go the repartition de-duplication
// protocol; membership.go static group membership (a restart takes its
// partitions back at once, a clean stop leaves by instance id); stall.go
// the stall watch, which names partitions that have input but make no
// committed progress (KafkaRunner.Stalls) and what they wait on.
//
// Example: a stateless query `SELECT id, price * 2 AS p FROM s WHERE price > 1`
// becomes one sub-topology
//
//	source(s) → filter(PRICE > 1) → project(ID, PRICE * 2) → sink(OUT)
//
// and a GROUP BY on a value column becomes two, split at a repartition topic:
//
//	source(s) → filter → select-key(HOTEL) → sink(…-repartition)
//	source(…-repartition) → aggregate(store …) → project → sink(OUT)
//
// Pull queries read tables from state through a TableReader: an
// aggregation's store, or a MaterializeNode's (materialize.go), which
// keeps a non-aggregate result table's rows, or a source table's, by key:
//
//	source(users) → filter → project → materialize(store …-Materialize) → sink(ADULTS)
//	source(users) → materialize(store CST_USERS-Materialize, changelog: the users topic)
//
// Each task also counts its input keys in a small Space-Saving sketch
// (HotKeys, 32 counters): in the second sub-topology above that key is
// HOTEL, so a hotel carrying most bookings shows as the one task, and
// instance, every such booking must pass through.
package exec
