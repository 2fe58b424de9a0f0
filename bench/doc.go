// Command bench is Sluice's benchmark harness (issue 11). It is its own Go
// module, so the dependencies of the peers it measures stay out of the
// engine's go.mod; a replace directive builds it against the engine in this
// checkout.
//
//	cd bench && go run . restore [--keys 1000000] [--runs 3] [--brokers ADDR]
//
// Every benchmark runs its contenders interleaved (A B A B …) after one
// untimed warm-up round, reports medians and the ratios the targets of
// issue 11 are stated in, and merges those ratios into results.json. The
// broker is an embedded one started in this process unless --brokers names
// an existing cluster; every figure says which.
//
// restore (issue 5, target T9) fills a compacted changelog topic with
// --keys distinct keys through state.Store's own Put and Flush, then
// alternates
//
//	R  a raw franz-go consume of the changelog partition, start to end: the limit;
//	S  Store.Restore of the whole changelog into a fresh Badger directory, timed
//	   until Restore returns and the store serves reads (Badger is then written
//	   in the background; the report gives the time until that is durable too);
//	W  after S, a clean close and reopen, then Restore again (only the empty tail).
//
// scale (issue 8) measures a stateless query over a 6-partition topic on
// one and on two instances against the same broker:
//
//	cd bench && go run . scale [--records 200000] [--runs 3]
//
// Each timed run creates fresh input and output topics, starts the
// instances and waits until their consumer group is stable with every
// instance holding partitions, then produces the records as fast as the
// producer goes and times until the output's end offsets add up to them.
// Contenders: R1/R2 one or two franz-go group consumers in this process
// copying each record to the output (the limit), S1/S2 one or two `sluice
// run` processes running CREATE STREAM … AS SELECT … WHERE.
//
// nexmark (issue 11, targets T1–T11, M1, M2) runs Nexmark-style queries
// over bids, every contender a separate OS process:
//
//	cd bench && go run . nexmark [--quick] [--brokers ADDR] [--runs 3] [--records N]
//
// A seeded generator writes Person, Auction and Bid events (1:3:46 per 50
// events, event time 1 ms apart and ending near now, each bid about 200
// bytes of JSON keyed by its auction id) to fresh topics persons, auctions
// and bids, once, before any timing. Workloads: q0 SELECT *, q1 the price
// in another currency (price * 0.908), q2 WHERE auction % 123 = 0, agg a
// 10-second tumbling COUNT(*) and SUM(price) per auction with EMIT CHANGES
// (one output per bid) under exactly-once. Each run starts the contender on
// the bids topic and a fresh output topic, waits until a read_committed
// consumer counted every expected output record, stops it (SIGTERM), and
// records the steady rate (input bids per second from a warm-up point,
// --warmup (2 s) after the first output record but at most at half the
// output, to the end: start-up and JIT warm-up left out; the ratios use
// it), the whole-run rate, the wall time from the process's start, its
// CPU (/proc utime+stime, whole life) and peak RSS (VmHWM). The stateful
// workloads of nexmark_workloads.go (issue 22) are agg-late (agg with a
// 2 s grace over bids of which 15% are late within it), session (a
// session-window count per bidder) and join (bids LEFT JOIN an auctions
// table); keys J1 (join S/KS) and L1 (agg-late S / agg S). results.json
// is written only by a full run, never with --quick or --only.
// Contenders:
//
//	P      `bench worker p`: a raw franz-go consume→produce copy (the limit);
//	P-avro P over the Avro copy of the bids;
//	H1     `bench worker h1`: q1 by hand, encoding/json into a map;
//	HA     `bench worker ha`: agg by hand, Badger state, a changelog record
//	       per update, exactly-once with a GroupTransactSession;
//	S-…    `sluice run FILE.sql` (q0, q1, q2, agg exactly_once, agg-alo,
//	       agg-final: agg with EMIT FINAL, its windows checked against the
//	       bids topic (nexmark_final.go); F2 is its ratio to F-agg);
//	S-q1-avro  q1 over the Avro copy of the bids, written as AVRO (issue 19);
//	S-q1-udf   q1 with its conversion by a WebAssembly function (TO_EURO,
//	           udf/testdata/gofuncs built with GOOS=wasip1; issue 38);
//	S-q1-js    q1 with its conversion by a JavaScript function (TO_EURO,
//	           LANGUAGE JAVASCRIPT AS $$ return price * 0.908; $$; issue 38);
//	KS-…   bench/kstreams/run <q1|q2|agg|agg-late|session|join|restore> --brokers --in --out
//	       --app-id [--state-dir] [--table], one stream thread per input partition;
//	G-…    gokabench <q1|agg|restore> --brokers --in --out --group [--storage],
//	       built once from ./gokabench.
//	F-…    bench/flink/run <q0|q1|q2|agg> --brokers --in --out --app-id: Flink SQL
//	       in a local MiniCluster (flink.go, flink/README.md); F-agg emits final
//	       windows only, so it is counted and timed differently (see there).
//
// The Avro copy (nexmark_avro.go), written only when P-avro or S-q1-avro
// runs, holds the same bids (keys, timestamps, values) in the Confluent
// wire format, their schema registered in a Schema Registry this process
// serves (registry.Serve) and S-q1-avro is given with --schema-registry.
//
// KS and G are skipped, with the reason printed, when their command is
// missing or fails. M1 runs S-agg once more over an input of one bid per
// auction (--m1-keys, 1,000,000 keys; it is written only at that size).
// The restore part fills a compacted changelog of --keys keys as `bench
// restore` does and times R and S from restore.go (in this process) and the
// KS and G restore modes (processes, from their start until they print
// "RESTORED <records> <millis>"). Targets whose contender did not run are
// reported as not measured and not written to results.json.
//
// nexmark-suite (issue 35) runs the standard Nexmark queries, each on
// Sluice, Flink SQL and (where its DSL says it naturally) Kafka Streams,
// over the same three topics, every run's output checked before its time
// counts:
//
//	cd bench && go run . nexmark-suite [--quick] [--brokers ADDR] [--runs 3] [--records N] [--queries q0,q1,…] [--only S-nx-q1,F-nx-q1,…]
//
// generate writes the persons, auctions and bids as for nexmark, with the
// reference model's persons (names, cities, states), prices, channels and
// URLs drawn from a random source of their own (nexmark_events.go), and
// keeps every event. nexmark_queries.go holds each query as Sluice runs it
// (the ksqlDB dialect, as close to the reference as it allows) and its
// expected output, computed in Go from the kept events; nexmark_check.go
// compares an output topic with it as a multiset of canonical rows (column
// names in lower case, numbers by value, timestamps in epoch ms). A run
// whose output differs fails, and gives no figure. Contenders S-nx-<q>
// (`sluice run`), F-nx-<q> (bench/flink/run nx-<q>: the reference SQL text
// of resources/nexmark/<q>.sql) and KS-nx-<q> (bench/kstreams/run nx-<q>);
// the table gives events/s steady, events per CPU-second and peak RSS, and
// a full run (not --quick, --queries or --only) merges NX-<q>-S/F,
// NX-<q>-S/F-cpu, NX-<q>-S/KS and NX-<q>-S/KS-cpu into results.json.
//
// costcurve (issue 22, C1–C3) measures how the aggregation's cost grows
// with its state, at --keys 100,000, 1,000,000 and 5,000,000 (one bid per
// auction): S-agg's and KS-agg's rate and peak RSS, and a cold restore of
// a changelog of that many keys (R, S, KS as in nexmark's restore part);
// it plots the three curves to docs/costcurve.png (gonum/plot):
//
//	cd bench && go run . costcurve --brokers ADDR
//
// pgload (issue 37) puts the Postgres front door under load: it starts
// `sluice server --pg-listen` on a free port over the broker (or loads a
// running one, --pg HOST:PORT), creates over the Postgres protocol a stream
// and a source table on one topic, inserts --keys rows (1,000) and reads
// each back, then runs --sessions pgx connections (50) for --duration
// (30 s), each running SELECT … WHERE ID = $1 for random keys back to back
// (pgx's cached prepared statement) and checking the row. It prints p50,
// p99 and max latency, queries/s, errors and the machine's load before and
// after, and drops what it made; a full run (the defaults, its own server,
// not --quick) merges PG-pull-p50-ms, PG-pull-p99-ms, PG-pull-max-ms,
// PG-pull-qps and PG-pull-errors into results.json:
//
//	cd bench && go run . pgload
//
// gokabench/ is a separate command in this module: the goka peer (q1, a
// windowed count/sum with a group table, and a group-table restore), run by
// the harness as a process; see gokabench/README.md.
package main
