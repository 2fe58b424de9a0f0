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
package main
