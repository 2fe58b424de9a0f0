package state

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/failover"
)

// ErrPartitioner is returned by Flush when the producing client does not
// honour kgo.Record.Partition (it must be built with
// kgo.RecordPartitioner(kgo.ManualPartitioner())).
var ErrPartitioner = errors.New("changelog producer must use kgo.ManualPartitioner")

// ErrTopicMismatch is returned by EnsureTopic when the topic exists with a
// different partition count than asked for.
var ErrTopicMismatch = errors.New("existing topic does not match")

// sourceOffsetsHeader is the record header, on the last record of every
// flush, carrying the source offsets that flush completes. Restoring from
// scratch reads it back, so a new owner of a partition knows which source
// records its rebuilt state already contains. Compaction cannot remove the
// newest one: the last record of the last flush is never superseded.
const sourceOffsetsHeader = "sluice.src"

// Changelog names the changelog topic partition of one store partition.
// Partition is normally the store's own partition.
type Changelog struct {
	Topic     string
	Partition int32
	// Transform, when set, turns each record read by a restore into the
	// entry to keep (ok false: keep nothing). A store whose changelog is
	// a source topic (a table a join reads) keeps its rows in its own
	// encoding. A nil v deletes k.
	Transform func(key, value []byte, ts int64) (k, v []byte, ok bool)
	// Until, when set, ends the restore at that offset rather than at
	// the log's end: a store whose changelog is the topic its task reads
	// holds the rows up to where the task resumes, and no further, or
	// the task would see the records after it twice (once restored, once
	// read).
	Until *int64
	// AfterOpenTransactions has the restore first wait for the
	// transactions open in the log as it starts to end, committed or
	// aborted. A task taking a partition over restores so: the previous
	// owner's last transaction may still be ending (franz-go lets it
	// commit through a rebalance once its offsets are sent, KIP-447), and
	// a restore that stopped at the open transaction would miss the state
	// of input the committed offsets then skip. A standby, which only
	// keeps up, does not wait.
	AfterOpenTransactions bool
}

// EnsureTopic creates topic with the given partition count and replication
// factor (-1: the broker default) unless it exists. The topic gets
// cleanup.policy=compact, overridden or extended by configs (windowed stores
// pass "compact,delete" and retention.ms). An existing topic with a different
// partition count is an ErrTopicMismatch: its records would be partitioned
// differently from the state.
func EnsureTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32, replication int16, configs map[string]*string) error {
	compact := "compact"
	cfg := map[string]*string{"cleanup.policy": &compact}
	maps.Copy(cfg, configs)
	_, err := adm.CreateTopic(ctx, partitions, replication, cfg, topic)
	if err == nil {
		return nil
	}
	if !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	// A topic just created (by us a moment ago, or by another instance)
	// can be missing from metadata for a while, and kadm answers from
	// metadata cached for up to 5 s (kgo's MetadataMinAge): ask again for
	// a little longer than that before calling it an error.
	var td kadm.TopicDetail
	for attempt := 0; ; attempt++ {
		tds, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return fmt.Errorf("describe topic %s: %w", topic, err)
		}
		var ok bool
		td, ok = tds[topic]
		if !ok {
			td.Err = kerr.UnknownTopicOrPartition
		}
		if !errors.Is(td.Err, kerr.UnknownTopicOrPartition) || attempt == 70 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("describe topic %s: %w", topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if td.Err != nil {
		return fmt.Errorf("describe topic %s: %w", topic, td.Err)
	}
	if got := int32(len(td.Partitions)); got != partitions {
		return fmt.Errorf("topic %s has %d partitions, want %d: %w", topic, got, partitions, ErrTopicMismatch)
	}
	return nil
}

// Flush writes the overlay to the changelog and then commits it to Badger.
//
// Each pending change is produced to log (key = Key, value = Value, or a nil
// value for a delete) and acknowledged before anything is committed locally,
// so Badger never holds state the changelog lacks. Then Commit stores the
// overlay with a checkpoint whose ChangelogOffset is one past the last
// produced offset and whose SourceOffsets are the previous checkpoint's
// updated with src.
//
// cl must be built with kgo.RecordPartitioner(kgo.ManualPartitioner()), so
// records land on log.Partition and not where a key hash would put them;
// Flush checks this and returns ErrPartitioner before producing. A
// transactional client works: the records join its open transaction.
//
// A nil cl skips the changelog (the offline `sluice test` runner) and only
// commits.
func (s *Store) Flush(ctx context.Context, cl *kgo.Client, log Changelog, src map[string]int64) error {
	cp, err := s.ProduceChangelog(ctx, cl, log, src)
	if err != nil {
		return err
	}
	return s.Commit(cp)
}

// ProduceChangelog is the first half of Flush: it produces the overlay to
// the changelog and returns the checkpoint that Commit should store, but
// commits nothing locally. Exactly-once processing produces inside a
// Kafka transaction and calls Commit only once the transaction has
// committed, so local state never runs ahead of what Kafka kept; after an
// abort it calls Discard instead.
func (s *Store) ProduceChangelog(ctx context.Context, cl *kgo.Client, log Changelog, src map[string]int64) (Checkpoint, error) {
	prev, err := s.Checkpoint()
	if err != nil {
		return Checkpoint{}, err
	}
	cp := Checkpoint{ChangelogOffset: prev.ChangelogOffset, SourceOffsets: mergeOffsets(prev.SourceOffsets, src)}
	pending := s.Pending()
	s.produced = pending
	if cl == nil || len(pending) == 0 {
		return cp, nil
	}
	if err := checkManualPartitioner(cl, log.Topic); err != nil {
		return Checkpoint{}, s.errorf("flush", err)
	}
	// One allocation for the records, not one each: a commit may carry
	// thousands of small entries (COUNT_DISTINCT's new values).
	backing := make([]kgo.Record, len(pending))
	recs := make([]*kgo.Record, len(pending))
	for i, c := range pending {
		r := &backing[i]
		r.Topic, r.Partition, r.Key = log.Topic, log.Partition, c.Key
		if !c.Delete {
			r.Value = c.Value
		}
		recs[i] = r
	}
	if len(cp.SourceOffsets) > 0 {
		last := recs[len(recs)-1]
		last.Headers = append(last.Headers, kgo.RecordHeader{
			Key:   sourceOffsetsHeader,
			Value: encodeCheckpoint(Checkpoint{SourceOffsets: cp.SourceOffsets}),
		})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return Checkpoint{}, s.errorf("flush", fmt.Errorf("produce to %s/%d: %w", log.Topic, log.Partition, err))
	}
	for _, r := range recs {
		if r.Partition != log.Partition {
			// Cannot happen after checkManualPartitioner; checked because a
			// record on the wrong partition silently corrupts a restore.
			return Checkpoint{}, s.errorf("flush", fmt.Errorf("record went to partition %d, want %d: %w", r.Partition, log.Partition, ErrPartitioner))
		}
		cp.ChangelogOffset = max(cp.ChangelogOffset, r.Offset+1)
	}
	return cp, nil
}

func mergeOffsets(prev, src map[string]int64) map[string]int64 {
	if len(prev) == 0 && len(src) == 0 {
		return nil
	}
	out := make(map[string]int64, len(prev)+len(src))
	maps.Copy(out, prev)
	maps.Copy(out, src)
	return out
}

// checkManualPartitioner asks cl's partitioner where two probe records that
// name different partitions would go; only a partitioner that honours
// Record.Partition sends each to its own.
//
// Partitioners that pick by load (kgo.TopicBackupPartitioner, the default's
// kind) are rejected without probing, and a probe that panics counts as a
// rejection: some partitioners only work inside the producer.
func checkManualPartitioner(cl *kgo.Client, topic string) (err error) {
	p, _ := cl.OptValue(kgo.RecordPartitioner).(kgo.Partitioner)
	if p == nil {
		return ErrPartitioner
	}
	tp := p.ForTopic(topic)
	if _, ok := tp.(kgo.TopicBackupPartitioner); ok {
		return ErrPartitioner
	}
	defer func() {
		if recover() != nil {
			err = ErrPartitioner
		}
	}()
	for _, want := range []int32{1, 2} {
		r := &kgo.Record{Topic: topic, Partition: want, Key: []byte("probe")}
		if tp.Partition(r, 3) != int(want) {
			return ErrPartitioner
		}
	}
	return nil
}

// Restore brings this store partition up to date from its changelog
// partition and returns the number of records applied.
//
// It reads from the local checkpoint's ChangelogOffset up to the end measured
// when it starts (the last stable offset, so open transactions are not
// waited for). A nil value deletes the key.
//
// With local state only the tail is replayed, written straight to Badger in
// large batches (not through the overlay) with the checkpoint advanced after
// each batch, so an interrupted restore resumes where it stopped; the
// checkpoint's SourceOffsets are kept (updated by any source-offset headers
// in the tail).
//
// Without a checkpoint, or with one past the end of the changelog (the topic
// was recreated), the store partition is wiped and rebuilt from the start:
// a cold restore. It keeps the latest value of each key in memory and
// returns when the changelog end is reached; the store serves reads and
// commits from memory at once while a background goroutine writes the data
// to Badger, and the checkpoint reaches Badger only after the data (see
// restored.go). A crash before that restores from scratch again. A Restore
// while that background write still runs replays the tail into memory too,
// without waiting for it.
//
// Offsets have gaps (compaction, transaction markers), so progress counts
// offsets, not records: progress(done, total) is called after every batch and
// once at the end with done == total. It may be nil.
//
// connOpts are connection options only (seed brokers, SASL, TLS, dialer):
// Restore builds its own direct-partition, read-committed consumer from them,
// not a group member, and closes it before returning. The overlay should be
// empty; it is not consulted.
func (s *Store) Restore(ctx context.Context, connOpts []kgo.Opt, log Changelog, progress func(done, total int64)) (int64, error) {
	n, err := s.restore(ctx, connOpts, log, progress)
	if err != nil {
		return n, s.errorf("restore", err)
	}
	return n, nil
}

func (s *Store) restore(ctx context.Context, connOpts []kgo.Opt, log Changelog, progress func(done, total int64)) (int64, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	// Held writes go to Badger first: the restore continues from their
	// checkpoint.
	if err := s.CommitHeld(); err != nil {
		return 0, err
	}
	if err := s.settle(); err != nil {
		return 0, err
	}
	// A store restored cold shortly before (a task that lost and regained
	// the partition, or reopened after an aborted transaction) may still
	// be building Badger: its tail then goes to memory like a commit, so
	// the task need not wait for the build.
	layer := s.liveLayer()
	cp, err := s.Checkpoint()
	if err != nil {
		return 0, err
	}
	opts := append(slices.Clone(connOpts),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Control records (transaction markers) occupy offsets; seeing them
		// lets the loop reach an end offset that is itself a marker.
		kgo.KeepControlRecords(),
		// An offset compacted or retained away falls to the log start.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, fmt.Errorf("consumer: %w", err)
	}
	defer cl.Close()

	adm := kadm.NewClient(cl)
	if log.AfterOpenTransactions {
		if err := s.awaitOpenTransactions(ctx, adm, log); err != nil {
			return 0, err
		}
	}
	lo, err := endOffset(ctx, adm, log)
	if err != nil {
		return 0, err
	}
	if lo.Err != nil {
		return 0, fmt.Errorf("end offset of %s/%d: %w", log.Topic, log.Partition, lo.Err)
	}
	end := lo.Offset
	if log.Until != nil && *log.Until < end {
		end = max(*log.Until, 0)
	}

	start := cp.ChangelogOffset
	cold := start <= 0 || start > end
	if cold {
		if start > end {
			s.db.log.Warn("changelog is behind local checkpoint; rebuilding from scratch",
				"store", s.id.String(), "checkpoint", start, "end", end)
		}
		// Wipe also cancels a build in progress: its layer is gone.
		if err := s.Wipe(); err != nil {
			return 0, err
		}
		cp, start, layer = Checkpoint{}, 0, nil
	}
	// Retention (windowed stores use compact,delete) may have removed the
	// head of the log; without this clamp the consumer would wait forever
	// for offsets below the log start when the whole log expired.
	starts, err := failover.Offsets(ctx, "start offsets", func(ctx context.Context) (kadm.ListedOffsets, error) {
		return adm.ListStartOffsets(ctx, log.Topic)
	})
	if err != nil {
		return 0, fmt.Errorf("start offset of %s/%d: %w", log.Topic, log.Partition, err)
	}
	if so, ok := starts.Lookup(log.Topic, log.Partition); ok && so.Err == nil && so.Offset > start {
		start = min(so.Offset, end)
	}
	if start >= end {
		if cp.ChangelogOffset != end && end > 0 {
			cp.ChangelogOffset = end
			if layer != nil {
				if err := s.commitTail(layer, &memtable{}, cp); err != nil {
					return 0, err
				}
			} else if err := s.db.update(func(txn *badger.Txn) error {
				return txn.Set(s.ckey, encodeCheckpoint(cp))
			}); err != nil {
				return 0, err
			}
		}
		if progress != nil {
			progress(0, 0)
		}
		return 0, nil
	}

	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{
		log.Topic: {log.Partition: kgo.NewOffset().At(start)},
	})
	// A cold restore reads into snap (restored.go) while it stays within
	// the DB's restore memory budget; past it, snap is written to Badger
	// and the rest goes the tail's way, straight to Badger.
	var snap *snapshot
	var tail *memtable // the tail's writes while layer's build runs
	if layer != nil && !cold {
		tail = &memtable{m: make(map[string]entry)}
	}
	budget := s.db.restoreMemory - s.db.restoreHeld.Load()
	if cold {
		snap = newSnapshot(end-start, int(max(budget/4/8, 0)))
	}
	var applied int64
	next := start
	for next < end {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return applied, err
		}
		if err := fetchErr(fetches); err != nil {
			return applied, err
		}
		if snap != nil && (!snap.room(fetches.NumRecords()) || snap.memBytes() > budget) {
			s.db.log.Warn("cold restore exceeds the restore memory budget; writing to badger directly (slower)",
				"store", s.id.String(), "budget", budget, "offset", next, "end", end)
			if err := s.writeSorted(snap, snap.sorted(), ctx.Err); err != nil {
				return applied, err
			}
			snap = nil
		}
		if snap != nil {
			n, err := eachEntry(fetches, &next, end, &cp, log.Transform, func(r *kgo.Record) error {
				if r.Value == nil {
					snap.delete(r.Key)
				} else {
					snap.put(r.Key, r.Value)
				}
				return nil
			})
			applied += n
			if err != nil {
				return applied, err
			}
			if progress != nil {
				progress(min(next, end)-start, end-start)
			}
			continue
		}
		if tail != nil {
			n, err := eachEntry(fetches, &next, end, &cp, log.Transform, func(r *kgo.Record) error {
				if r.Value == nil {
					tail.set(r.Key, entry{del: true})
				} else {
					tail.put(r.Key, r.Value, 0)
				}
				return nil
			})
			applied += n
			if err != nil {
				return applied, err
			}
			if progress != nil {
				progress(min(next, end)-start, end-start)
			}
			continue
		}
		// A key may come more than once (the changelog is compacted
		// lazily) and the batch has one commit timestamp, so only each
		// key's last record is written: a batch that Badger splits
		// holds no key twice at one version.
		first := s.db.beginWrite()
		wb := s.db.bdb.NewWriteBatchAt(first)
		latest := make(map[string]*kgo.Record)
		n, werr := eachEntry(fetches, &next, end, &cp, log.Transform, func(r *kgo.Record) error {
			latest[string(r.Key)] = r
			return nil
		})
		applied += n
		for k, r := range latest {
			if werr != nil {
				break
			}
			key := concat(s.data, []byte(k))
			if r.Value == nil {
				werr = wb.Delete(key)
			} else {
				werr = wb.Set(key, r.Value)
			}
		}
		if werr == nil {
			cp.ChangelogOffset = next
			werr = wb.Set(s.ckey, encodeCheckpoint(cp))
		}
		if werr != nil {
			wb.Cancel()
			s.db.endWrite(first)
			return applied, werr
		}
		err := wb.Flush()
		s.db.endWrite(first)
		if err != nil {
			return applied, err
		}
		if progress != nil {
			progress(min(next, end)-start, end-start)
		}
	}
	if snap != nil {
		cp.ChangelogOffset = next
		s.startBuild(snap, cp)
	}
	if tail != nil {
		cp.ChangelogOffset = next
		if err := s.commitTail(layer, tail, cp); err != nil {
			return applied, err
		}
	}
	return applied, nil
}

// liveLayer returns s's restored layer if its build is still running and
// has not failed. A failed one is forgotten: Badger then has no checkpoint,
// and the restore starts from scratch.
func (s *Store) liveLayer() *restored {
	r := s.restored.Load()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	done, failed := r.done, r.err != nil
	r.mu.Unlock()
	if failed {
		s.waitBuild()
	}
	if done || failed {
		return nil
	}
	return r
}

// commitTail hands a tail replayed during a build to the layer, as a commit
// would; if the build finished meanwhile, Badger takes it directly.
func (s *Store) commitTail(layer *restored, tail *memtable, cp Checkpoint) error {
	handled, err := layer.commit(tail, cp)
	if err != nil || handled {
		return err
	}
	return s.writeTable(tail, cp)
}

// mergeHeader folds the source offsets a changelog record carries (the last
// record of each flush) into cp.
func mergeHeader(cp *Checkpoint, r *kgo.Record) error {
	for _, h := range r.Headers {
		if h.Key == sourceOffsetsHeader {
			hc, err := decodeCheckpoint(h.Value)
			if err != nil {
				return fmt.Errorf("offset %d: source offsets header: %w", r.Offset, err)
			}
			cp.SourceOffsets = mergeOffsets(cp.SourceOffsets, hc.SourceOffsets)
		}
	}
	return nil
}

func fetchErr(fs kgo.Fetches) error {
	var first error
	fs.EachError(func(t string, p int32, err error) {
		if first == nil {
			first = fmt.Errorf("fetch %s/%d: %w", t, p, err)
		}
	})
	return first
}

// endOffset asks for the changelog partition's end. A changelog created
// a moment ago (a query's first start: its tasks restore as soon as
// their partitions are assigned) can be unknown to the broker answering
// for a little while, and the leader of the partition can be a broker
// that just died: both are asked about again (failover.Offsets).
func endOffset(ctx context.Context, adm *kadm.Client, log Changelog) (kadm.ListedOffset, error) {
	what := fmt.Sprintf("end offset of %s/%d", log.Topic, log.Partition)
	ends, err := failover.Offsets(ctx, what, func(ctx context.Context) (kadm.ListedOffsets, error) {
		ends, err := adm.ListCommittedOffsets(ctx, log.Topic)
		if err == nil {
			if _, ok := ends.Lookup(log.Topic, log.Partition); !ok {
				err = kerr.UnknownTopicOrPartition
			}
		}
		return ends, err
	})
	if err != nil {
		return kadm.ListedOffset{}, fmt.Errorf("%s: %w", what, err)
	}
	lo, _ := ends.Lookup(log.Topic, log.Partition)
	return lo, nil
}

// openTransactionsWarnAfter is how long a restore waits for the
// transactions open in its changelog before it says so: longer than the
// default transaction timeout (15 s, transaction.timeout.ms), after which
// the coordinator aborts a transaction whose producer went silent.
const openTransactionsWarnAfter = 20 * time.Second

// awaitOpenTransactions returns once the log's last stable offset has
// reached its high watermark as it was on entry: every transaction open
// then has ended. Transactions begun later are not waited for.
func (s *Store) awaitOpenTransactions(ctx context.Context, adm *kadm.Client, log Changelog) error {
	what := fmt.Sprintf("high watermark of %s/%d", log.Topic, log.Partition)
	highs, err := failover.Offsets(ctx, what, func(ctx context.Context) (kadm.ListedOffsets, error) {
		return adm.ListEndOffsets(ctx, log.Topic)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	high, ok := highs.Lookup(log.Topic, log.Partition)
	if !ok || high.Err != nil {
		return nil // endOffset reports a missing partition
	}
	start, warned := time.Now(), false
	for {
		lo, err := endOffset(ctx, adm, log)
		if err != nil {
			return err
		}
		if lo.Err != nil || lo.Offset >= high.Offset {
			return nil
		}
		if !warned && time.Since(start) >= openTransactionsWarnAfter {
			warned = true
			s.db.log.Warn("restore waits for a transaction open in the changelog",
				"store", s.id.String(), "topic", log.Topic, "partition", log.Partition,
				"last_stable", lo.Offset, "high_watermark", high.Offset, "waited", time.Since(start).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// eachEntry applies the state entries among fetches' records at offsets
// [*next, end): each record advances *next, transaction markers and
// keyless records carry no entry, and an entry's source-offset header
// merges into cp before apply sees it. It returns the entries applied.
func eachEntry(fetches kgo.Fetches, next *int64, end int64, cp *Checkpoint, tr func(key, value []byte, ts int64) ([]byte, []byte, bool), apply func(*kgo.Record) error) (int64, error) {
	var applied int64
	var err error
	fetches.EachRecord(func(r *kgo.Record) {
		if err != nil || r.Offset >= end || r.Offset < *next {
			return
		}
		*next = r.Offset + 1
		if r.Attrs.IsControl() || r.Key == nil {
			return
		}
		if tr != nil {
			k, v, ok := tr(r.Key, r.Value, r.Timestamp.UnixMilli())
			if !ok {
				return
			}
			r = &kgo.Record{Key: k, Value: v}
		} else if len(r.Headers) > 0 {
			if err = mergeHeader(cp, r); err != nil {
				return
			}
		}
		if err = apply(r); err == nil {
			applied++
		}
	})
	return applied, err
}

// Lag is how many offsets of its changelog partition this store partition
// has not applied: the changelog's last stable offset (what a
// read-committed restore would reach, open transactions excluded) less
// the local checkpoint's ChangelogOffset, never below 0. A standby read
// uses it to refuse state further behind than a pull query accepts
// (ksql.query.pull.max.allowed.offset.lag). The caller keeps restores of
// this store from running meanwhile, as for any use of the checkpoint.
func (s *Store) Lag(ctx context.Context, adm *kadm.Client, log Changelog) (int64, error) {
	cp, err := s.Checkpoint()
	if err != nil {
		return 0, err
	}
	lo, err := endOffset(ctx, adm, log)
	if err != nil {
		return 0, s.errorf("lag", err)
	}
	if lo.Err != nil {
		return 0, s.errorf("lag", fmt.Errorf("end offset of %s/%d: %w", log.Topic, log.Partition, lo.Err))
	}
	end := lo.Offset
	if log.Until != nil && *log.Until < end {
		end = max(*log.Until, 0)
	}
	return max(end-cp.ChangelogOffset, 0), nil
}
