// Package state keeps the state of Sluice's stateful operators: Badger-backed
// key/value stores (window stores are key/value stores with time-ordered
// keys), an in-memory write overlay per commit interval, changelog writing,
// checkpoints and restore.
//
// # Place in the flow
//
//	parser → planner → exec → state
//
// The planner names each store and its changelog topic; exec opens one DB per
// instance, hands each task the *Store of every (store, partition) it owns,
// and drives the lifecycle below. Nothing here knows about SQL or rows: keys
// and values are bytes encoded by exec. In Badger each key starts with its
// store partition's prefix: the number the DB's catalog gives the store's
// name, and the partition (keys.go).
//
// # Lifecycle of a store partition
//
//  1. Restore when a task is assigned the partition. With a local checkpoint
//     only the changelog tail after it is replayed; without one (a new owner,
//     an empty data dir) the partition is rebuilt from the changelog's start:
//     a cold restore reads the changelog into an in-memory index and returns
//     when it reaches the end, the store serves reads and takes commits from
//     memory at once, and a background goroutine writes the data to Badger,
//     its checkpoint last (restored.go). Options.RestoreMemory bounds that
//     memory (default an eighth of the process's memory, 256 MiB–2 GiB);
//     DB.Close waits for those writes.
//  2. Get, Put, Delete, Range and RangeBetween while processing. Writes go to
//     the overlay, which reads see and which keeps only the last write of a
//     key, so a hot key costs one changelog record per interval, not one per
//     input record.
//  3. Commit. At-least-once calls Flush: the overlay is produced to the
//     changelog partition and acknowledged (ProduceChangelog), then written
//     to Badger in one transaction together with the checkpoint (next
//     changelog offset and the applied source offsets: Commit). The Badger
//     write runs in the background while the task goes on: reads and
//     ranges see the commit being written between the overlay and Badger,
//     and the next commit, a restore, a wipe or DB.Close waits for it.
//     Badger runs in managed mode (db.go): the DB gives writes their
//     commit timestamps and reads take the latest versions, so no read
//     waits for a write under way.
//     Exactly-once splits the two halves around its Kafka transaction:
//     ProduceChangelog inside it, then, once it committed, Commit, or Hold,
//     which keeps the committed writes in the overlay (the changelog takes
//     only what is new next time) until a later Commit or CommitHeld writes
//     them to Badger, at most once a second; Discard if the transaction
//     aborts. Pull queries read committed state only (RangeCommitted): each
//     Hold publishes the changelog's delta to a view merged over Badger, a
//     Commit its whole overlay (the table on its way to Badger, not a
//     copy), forgotten once the Badger write holding it is done.
//     OverlayMemory estimates what the overlay takes on the Go heap (keys'
//     overhead included), which exec bounds: a store past its bound
//     commits at once and writes Badger.
//
// Badger never holds a write the changelog lacks, so a crash at any point
// is repaired by replaying the changelog from the last checkpoint. The source
// offsets in the checkpoint (and in a header of each flush's last changelog
// record, for rebuilds from scratch) tell exec which input records the state
// already contains, so a replayed input record never counts twice.
//
// # Example
//
// A COUNT(*) GROUP BY hotel task owning partition 3:
//
//	db, err := state.Open(state.Options{Dir: "/var/lib/sluice/state"})
//	// handle err; defer db.Close()
//	counts := db.Store("q1-agg", 3)
//	log := state.Changelog{Topic: "app-q1-agg-changelog", Partition: 3}
//	err = state.EnsureTopic(ctx, adm, log.Topic, 4, -1, nil) // cleanup.policy=compact
//	n, err := counts.Restore(ctx, connOpts, log, func(done, total int64) {
//		slog.Info("restoring", "store", "q1-agg/3", "done", done, "total", total)
//	})
//	cp, err := counts.Checkpoint() // cp.SourceOffsets["bookings/3"]: where to resume
//
//	// per record:
//	v, ok, err := counts.Get([]byte("hotel-7"))
//	counts.Put([]byte("hotel-7"), encodeCount(decodeCount(v, ok)+1))
//
//	// at commit; the producer sends changelog records to the partition they name
//	// (kgo.ManualPartitioner for the changelog topic, as exec.Partitioner does):
//	err = counts.Flush(ctx, producer, log, map[string]int64{"bookings/3": lastOffset + 1})
//
// With Options{Dir: ""} Badger runs in memory and Flush(ctx, nil, …) skips the
// changelog; that is how `sluice test` runs queries without Kafka.
package state
