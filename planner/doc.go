// Package planner turns parsed statements into catalog entries and
// physical topologies.
//
// Place in the flow: parser/ gives an AST; the planner resolves names
// against the Catalog, type-checks expressions (compiling them with
// package expr), decides the key of every result, and builds an
// exec.Topology: sub-topologies split at repartition topics, named state
// stores with changelog topics, and the sink. The engine then runs it.
//
// A query goes through PlanQuery in six steps: a pull query is validated
// (below); the onStatement rules rewrite the SELECT (magic-timestamps);
// the bind pass (bind.go) resolves its sources, checks its joins with
// ksqlDB's texts and states it as a logical plan (package logical) whose
// nodes carry the bound expressions (WHERE, HAVING, the output columns
// named as ksqlDB names them, GROUP BY, the window, PARTITION BY, ON,
// the table functions) and whose sources say how they are keyed
// (logical.Keying); the onLogical rules decide on that plan and may
// rewrite any of it (repartition: where rows are re-keyed; co-
// partitioning: ksqlDB's refusals of joins whose inputs cannot meet;
// join-column-pruning: what a join input's repartition carries;
// constant-folding: literal arithmetic computed once); the builder makes
// the topology from the plan: lower.go reads back every clause it
// compiles from the nodes, it dispatches on them (an aggregate, a
// PARTITION BY, else a stateless chain), and a logical.Repartition
// before an aggregate or a join input is a repartition topic and the
// sub-topology writing it; the onPlan rules work on the built plan
// (column-pruning, json-copy, key-lookup, key-range, scalable-push). Each rule is a rule_<name>.go file listed in rules.go.
// A rule's decision is written into the plan (a node exec instantiates,
// a field of Query the engine reads), never left for exec to work out
// from the shape of the chain. Query.Explain, what EXPLAIN prints, shows
// the logical plan, the rules that changed it and the topology. A pull
// query on a table runs its chain over rows of the table's state store:
// its sub-topology's Read (exec.StoreRead, a scan, or the keys the key-
// lookup rule found, and the store, which Options.TableStore names) says
// so, and EXPLAIN's physical plan names that read where a query of
// topics names its source. ARCHITECTURE.md shows one of each kind of
// query and how to add a rule.
//
// PlanQuery's first stage validates a pull query (a SELECT without EMIT
// and without target; pull_validate.go): it refuses, with ksqlDB's words,
// the clauses, pseudo columns and WHERE shapes ksqlDB's pull queries do
// not take (with Options.PullKeyLookupsOnly, a WHERE that does not pin
// the key), then asks Options.TableStore which state store keeps the
// table, whose error refuses a table no query keeps. Running a pull query
// and EXPLAIN of it are planned alike, so both refuse the same. On an
// engine that cannot scan topics (Options.NoStreamScans) a SELECT
// without EMIT on a stream is a push query and is not checked.
//
// Example: for
//
//	CREATE TABLE hotel_5m AS SELECT hotel, COUNT(*) AS bookings
//	  FROM bookings WINDOW TUMBLING 5m GRACE 2m GROUP BY hotel;
//
// the repartition rule sees that HOTEL is not the key of BOOKINGS and
// puts a repartition before the aggregate, so the builder plans
// sub-topology 0 (read BOOKINGS, re-key by HOTEL, write the repartition
// topic) and sub-topology 1 (read the repartition topic, aggregate into
// a windowed store whose changelog is compacted, write HOTEL_5M keyed by
// HOTEL and window start, each record on HOTEL's partition whatever its
// window: the sink node says it writes windows, and exec.Partitioner
// leaves the window out of the hash).
//
// A table no aggregation holds is kept for pull queries by an
// exec.MaterializeNode (materialize.go): before the sink of a
// non-aggregate CREATE TABLE … AS SELECT, and as the whole of the
// CST_<name> query of a CREATE SOURCE TABLE (PlanMaterialize).
package planner
