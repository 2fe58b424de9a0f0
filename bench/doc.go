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
// gokabench/ is a separate command in this module: the goka peer (q1, a
// windowed count/sum with a group table, and a group-table restore), run by
// the harness as a process; see gokabench/README.md.
package main
