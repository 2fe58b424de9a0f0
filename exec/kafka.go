package exec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/state"
)

// KafkaConfig configures a KafkaRunner.
type KafkaConfig struct {
	// ConnOpts connect to the cluster (seed brokers, TLS, SASL).
	ConnOpts []kgo.Opt
	// Paused starts the query paused (see SetPaused): a query PAUSEd
	// before a restart stays so.
	Paused bool
	// ClientOpts are added to the query's own client only, not to the
	// short-lived clients of state restores: hooks such as a metrics
	// collector that must see one client per id.
	ClientOpts []kgo.Opt
	// GroupID is the consumer group of the query; every instance running
	// the query uses the same one.
	GroupID string
	// ResetOffset is where a group with no committed offset starts:
	// "earliest" or "latest" (ksqlDB's auto.offset.reset).
	ResetOffset string
	// CommitInterval is how often outputs are flushed, state committed
	// and offsets committed. Default 1s.
	CommitInterval time.Duration
	// TransactionTimeout is the producer's transaction.timeout.ms under
	// exactly-once (0: DefaultTransactionTimeout).
	TransactionTimeout time.Duration
	// SessionTimeout is the consumer group's session.timeout.ms: how
	// long a member that stopped heartbeating keeps its partitions (0:
	// DefaultSessionTimeout).
	SessionTimeout time.Duration
	// Compression is the producer's compression.type: one of Compressions
	// ("": DefaultCompression).
	Compression string
	// Fetch sizes the consumer's fetches (zero fields: defaults).
	Fetch FetchConfig
	DB    *state.DB
	Log   *slog.Logger
	// Transient queries keep no changelog and wipe their state at stop.
	Transient bool
	// Output replaces Kafka as the destination of sink records (transient
	// push queries print rows instead of producing them).
	Output Output
	// OnRestoreProgress, when set, hears how restores advance: records
	// done out of total, per store partition (for progress bars).
	OnRestoreProgress func(p RestoreProgress)
	// ExactlyOnce runs each commit interval as one Kafka transaction:
	// outputs, repartition and changelog records and the input offsets
	// commit together or not at all, and local state is committed only
	// after the transaction is. TransactionalID must then be stable for
	// this query on this instance, so a restarted process fences its
	// crashed predecessor at once instead of waiting for its transaction
	// to time out.
	ExactlyOnce     bool
	TransactionalID string
	// OnPartitionsChange, when set, is called (with no lock held) after
	// this runner's partitions or their tasks' states change: partitions
	// assigned, revoked or lost, a task restored and running. An
	// instance registry publishes ownership from it.
	OnPartitionsChange func()
	// Threads bounds how many of the runner's tasks process records at
	// once (ksqlDB's num.stream.threads); default GOMAXPROCS.
	Threads int
	// InstanceID, when set, makes this runner a static member of its
	// consumer group (KIP-345 group.instance.id): a restart after a crash
	// takes the partitions of its dead predecessor at once instead of
	// waiting for that member's session to time out. A clean Stop leaves
	// the group explicitly, so its partitions move at once too. It must
	// be unique per group: the engine's instance id. Transient queries
	// leave it empty.
	InstanceID string
	// StallTimeout is how long an input partition with records to read
	// may go without committed progress before the query counts as
	// stalled (sluice.stall.timeout): one WARN per stalled partition,
	// KafkaRunner.Stalls, STALLED in SHOW QUERIES. Default 30 s.
	StallTimeout time.Duration
	// Push, when set, receives every record produced to the sink topic
	// for the scalable push queries subscribed to this query
	// (push_registry.go): at its acknowledgement, or under exactly-once
	// at its transaction's commit. Default none.
	Push *PushRegistry
}

// KafkaRunner runs one query's topology against Kafka: a consumer group
// over its source topics, one task per assigned partition, outputs
// produced asynchronously, and a commit cycle that flushes outputs, then
// state with its changelog, then offsets.
type KafkaRunner struct {
	topo *Topology
	cfg  KafkaConfig
	cl   *kgo.Client
	// committer is the guarantee's commit protocol (committer.go).
	committer committer
	Metrics   *Metrics
	// registry retries records whose schema the registry cannot give.
	registry registryWait
	// paused is set by SetPaused (PAUSE).
	paused atomic.Bool

	mu        sync.Mutex
	tasks     map[topicPartition]*Task
	restoring map[topicPartition]*RestoreProgress
	// assigned holds when each partition of this member was assigned, so
	// that with an idle timeout a partition that stays silent after a
	// restart or rebalance still gets its task and closes its windows.
	assigned map[topicPartition]time.Time
	err      error
	// standby holds the partitions to keep standby state for (see
	// SetStandbys); standbyMu is held by a standby catch-up and by a
	// task's restore, so the two never touch a store at once.
	standby map[topicPartition]bool
	// standbyCaught holds the standby partitions whose stores caught up
	// with their changelogs at least once since they became standbys:
	// only those are read by pull queries (StandbyReadable).
	standbyCaught map[topicPartition]bool
	// standbyExpiry holds, per standby partition, when its catch-ups last
	// dropped the expired state they restored (expireRestored) and
	// whether they applied records since; standbyMu guards it.
	standbyExpiry map[topicPartition]standbyExpiry
	standbyMu     sync.Mutex
	standbyKick   chan struct{}
	standbyDone   chan struct{}

	cancel context.CancelFunc
	done   chan struct{}
	// produceErr holds the first failed produce: losing output is fatal
	// to an at-least-once query.
	produceErr error
	// promise is produced, made once.
	promise func(*kgo.Record, error)
	// watch tells stalled partitions apart (stall.go).
	watch *stallWatch
}

type topicPartition struct {
	topic     string
	partition int32
}

// Partitioner sends the records of the named changelog topics to the
// partition each record names (the state store partition's own, see
// state.Store.ProduceChangelog) and every other keyed record to
// murmur2(key) like Java clients, so topics Sluice writes are
// co-partitioned with topics others write. The records of the windowed
// topics (a windowed result's sink, any topic whose keys carry a window)
// go to murmur2 of the key without its window bytes, as Kafka Streams'
// WindowedStreamPartitioner sends them: every window of a key lands on the
// key's partition, the one its input and its non-windowed results take.
// Which topics are changelogs and which are windowed is the topology's to
// say (Topology.changelogs, Topology.windowedTopics), never a name's: a
// user's sink topic called orders-changelog is partitioned by key.
func Partitioner(changelogs []string, windowed map[string]WindowType) kgo.Partitioner {
	p := partitioner{keyed: kgo.StickyKeyPartitioner(nil), windowed: windowed}
	if len(changelogs) > 0 {
		p.changelogs = make(map[string]bool, len(changelogs))
		for _, c := range changelogs {
			p.changelogs[c] = true
		}
	}
	return p
}

type partitioner struct {
	keyed      kgo.Partitioner
	changelogs map[string]bool
	windowed   map[string]WindowType
}

// KeyPartition is the partition of topic (with partitions partitions)
// that Partitioner sends a record with key to: where a keyed record
// written by Sluice, or by a Java client, lands. A windowed key is
// given without its window (the base key), since that alone decides.
func KeyPartition(topic string, key []byte, partitions int32) int32 {
	tp := Partitioner(nil, nil).ForTopic(topic)
	return int32(tp.Partition(&kgo.Record{Topic: topic, Key: key}, int(partitions)))
}

func (p partitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if p.changelogs[topic] {
		return kgo.ManualPartitioner().ForTopic(topic)
	}
	if w := p.windowed[topic]; w != NotWindowed {
		return &windowedPartitioner{keyed: p.keyed.ForTopic(topic), window: w}
	}
	return p.keyed.ForTopic(topic)
}

// windowedPartitioner partitions the records of one windowed topic by
// their base key. franz-go calls a topic's partitioner for one record at
// a time, so the scratch record that carries the base key is not shared.
type windowedPartitioner struct {
	keyed   kgo.TopicPartitioner
	window  WindowType
	scratch kgo.Record
}

// RequiresConsistency is true for every record: a windowed key is never
// null (it holds at least its window), and its partition must not move
// while one is down.
func (*windowedPartitioner) RequiresConsistency(*kgo.Record) bool { return true }

func (p *windowedPartitioner) Partition(r *kgo.Record, n int) int {
	// An empty base key (the key columns encoded to no bytes) is not
	// null: its windows, too, go to murmur2 of it, all to one partition.
	base, err := baseKey(r.Key, p.window)
	if err != nil {
		// The sink appends the window to every key it writes, so a key
		// too short to hold one was not written by it: it is partitioned
		// whole, as any keyed record, rather than failing the produce.
		return p.keyed.Partition(r, n)
	}
	p.scratch.Topic, p.scratch.Key = r.Topic, base
	return p.keyed.Partition(&p.scratch, n)
}

// baseKey is a windowed key without its window bytes.
func baseKey(key []byte, w WindowType) ([]byte, error) {
	switch w {
	case TimeWindowed:
		k, _, err := format.DecodeTimeWindowedKey(key)
		return k, err
	case SessionWindowed:
		k, _, _, err := format.DecodeSessionWindowedKey(key)
		return k, err
	}
	return key, nil
}

// StartKafka starts running topo. It returns once the client is created;
// processing continues in the background until Stop.
func StartKafka(topo *Topology, cfg KafkaConfig, m *Metrics) (*KafkaRunner, error) {
	if cfg.CommitInterval <= 0 {
		cfg.CommitInterval = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	r := &KafkaRunner{topo: topo, cfg: cfg, Metrics: m, tasks: map[topicPartition]*Task{}, restoring: map[topicPartition]*RestoreProgress{}, assigned: map[topicPartition]time.Time{}, done: make(chan struct{}),
		standby: map[topicPartition]bool{}, standbyCaught: map[topicPartition]bool{}, standbyExpiry: map[topicPartition]standbyExpiry{}, standbyKick: make(chan struct{}, 1), standbyDone: make(chan struct{})}
	r.promise = r.produced
	r.watch = newStallWatch(topo.QueryID, cfg.StallTimeout, cfg.Log, topo.subIndex)
	reset := kgo.NewOffset().AtEnd()
	if strings.EqualFold(cfg.ResetOffset, "earliest") {
		reset = kgo.NewOffset().AtStart()
	}
	opts := append([]kgo.Opt{}, cfg.ConnOpts...)
	opts = append(opts,
		kgo.ConsumerGroup(cfg.GroupID),
		kgo.ConsumeTopics(topo.SourceTopics()...),
		kgo.ConsumeResetOffset(reset),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		// Cooperative rebalancing moves only the partitions that change
		// owner: the others keep their tasks and state (no restore) and
		// go on processing while an instance joins or leaves.
		//
		// It is safe under exactly-once too. BlockRebalanceOnPoll holds
		// every revoke callback until AllowRebalance, which the loop calls
		// only between transactions, so no partition leaves in the middle
		// of one. The transact session marks itself revoked when a
		// rebalance takes partitions from this member (not when it only
		// adds some, which eager rebalancing could not tell apart) and
		// aborts the next transaction; commitTransaction then reopens
		// every task from its last committed state while the session
		// rewinds the input to the committed offsets. All members of a
		// group must agree on the protocol: every Sluice version has used
		// cooperative-sticky (franz-go's default), named here so that it
		// stays so. CoPartitioned keeps its name and cooperative
		// rebalancing: it only makes the topics of a co-partition group
		// (the inputs of a join) move together, partition p of each to the
		// same member, and is cooperative-sticky itself when there are no
		// groups. The leader balances, so only a group whose members all
		// know the same groups is reliably co-partitioned.
		kgo.Balancers(CoPartitioned(kgo.CooperativeStickyBalancer(), topo.CoPartitionGroups())),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Transaction markers reach the loop (which skips them), so the
		// offsets it commits lie past a partition's last marker: a
		// consumer caught up with a transactional input then has no lag,
		// which the stall watch and the lag metric rely on.
		kgo.KeepControlRecords(),
		kgo.RecordPartitioner(Partitioner(topo.changelogs(), topo.windowedTopics())),
		kgo.ProducerLinger(5*time.Millisecond),
		// franz-go compresses with snappy unless told; Kafka's producers
		// (Kafka Streams', ksqlDB's) do not unless compression.type says.
		kgo.ProducerBatchCompression(CompressionCodec(cfg.Compression)),
		// Produce blocks once this many records wait for the broker
		// (10,000 by default): tasks processing a poll in parallel
		// produce faster than one request in flight per broker (an
		// idempotent producer's limit) drains at the default.
		kgo.MaxBufferedRecords(50_000),
		// A fetch waits at most this long for data: with the 5 s default a
		// fetch of an empty partition holds back the others after a
		// restart.
		kgo.FetchMaxWait(cfg.Fetch.maxWait(cfg.CommitInterval)),
		// A member that died without leaving holds its partitions for
		// the session timeout (Sluice's default 10 s, Kafka's 45 s),
		// unless it restarts first: with InstanceID the restarted member
		// takes them over at once (see membership.go). A member
		// heartbeats at least three times a session.
		kgo.SessionTimeout(cfg.sessionTimeout()),
		kgo.HeartbeatInterval(min(time.Second, cfg.sessionTimeout()/3)),
		kgo.WithLogger(newClientLogger(cfg.Log)),
		kgo.OnPartitionsAssigned(r.onAssigned),
		kgo.OnPartitionsRevoked(r.onRevoked),
		kgo.OnPartitionsLost(r.onLost),
	)
	if cfg.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(cfg.InstanceID))
	}
	opts = append(opts, cfg.Fetch.sizes(len(topo.Stores) > 0)...)
	opts = append(opts, cfg.ClientOpts...)
	if cfg.ExactlyOnce {
		opts = append(opts, kgo.TransactionalID(cfg.TransactionalID), kgo.TransactionTimeout(cfg.transactionTimeout()))
		sess, err := kgo.NewGroupTransactSession(opts...)
		if err != nil {
			return nil, fmt.Errorf("query %s: kafka client: %w", topo.QueryID, err)
		}
		r.cl, r.committer = sess.Client(), &exactlyOnce{r: r, sess: sess}
	} else {
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return nil, fmt.Errorf("query %s: kafka client: %w", topo.QueryID, err)
		}
		r.cl, r.committer = cl, &atLeastOnce{r: r, cl: cl}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	if cfg.Transient {
		close(r.standbyDone)
	} else {
		go r.standbyLoop(ctx)
	}
	r.watch.groupLag = r.unassignedLag
	r.watch.ends = r.partitionEnds
	go r.watch.run(r.done)
	if cfg.Paused {
		r.SetPaused(true)
	}
	// The loop and every goroutine it starts (its tasks, the background
	// state writes) carry the query's id as a profiler label, so a CPU
	// profile of a process running a chain of queries says which query
	// spent what (go tool pprof -tagfocus query=ID, or -tags).
	go pprof.Do(ctx, pprof.Labels("query", topo.QueryID), r.run)
	return r, nil
}

// Stalls reports the input partitions of this instance that have records
// to process but made no committed progress for the stall timeout, and
// what each waits on. Empty while the query progresses.
func (r *KafkaRunner) Stalls() []Stall { return r.watch.stalls() }

// SetPaused pauses or resumes the query (PAUSE / RESUME): paused, it
// fetches nothing from its inputs but stays in its group, keeps its
// tasks, state and offsets, and commits what it had processed; resumed,
// it goes on from there.
func (r *KafkaRunner) SetPaused(on bool) {
	if r.paused.Swap(on) == on {
		return
	}
	if on {
		r.cl.PauseFetchTopics(r.topo.SourceTopics()...)
	} else {
		r.cl.ResumeFetchTopics(r.topo.SourceTopics()...)
	}
	r.watch.pause(on)
}

// Paused reports whether the query is paused.
func (r *KafkaRunner) Paused() bool { return r.paused.Load() }

// RegistryWait reports a wait for the Schema Registry under way: records
// whose schema it cannot give now, read again after a backoff.
func (r *KafkaRunner) RegistryWait() (RegistryWaitState, bool) { return r.registry.current() }

// Done is closed when the runner has stopped, cleanly or not.
func (r *KafkaRunner) Done() <-chan struct{} { return r.done }

// Err is the error that stopped the query, if any.
func (r *KafkaRunner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// RestoreProgress is where a store partition's restore stands.
type RestoreProgress struct {
	Query     string
	Store     string
	Partition int32
	Done      int64 // changelog offsets replayed
	Total     int64 // changelog offsets to replay
	Started   time.Time
}

// TaskInfo describes one task of this instance.
type TaskInfo struct {
	Topic     string
	Partition int32
	State     TaskState
	// Restore is set while the task is RESTORING.
	Restore *RestoreProgress
	// HotKeys is the running task's sketch of its busiest input keys
	// (nil before it runs).
	HotKeys *HotKeys
}

// TaskAssigned is the state of an assigned partition whose task does not
// exist yet: a stateless sub-topology's task starts with its first
// record.
const TaskAssigned TaskState = "ASSIGNED"

// Partitions reports every partition assigned to this instance, with its
// task's state (TaskAssigned when it has none yet), sorted by topic and
// partition. Unlike Tasks it includes silent stateless partitions: it is
// what this instance owns, which is what other instances need to know.
func (r *KafkaRunner) Partitions() []TaskInfo {
	byTP := map[topicPartition]TaskInfo{}
	for _, ti := range r.Tasks() {
		byTP[topicPartition{ti.Topic, ti.Partition}] = ti
	}
	r.mu.Lock()
	for tp := range r.assigned {
		if _, ok := byTP[tp]; !ok {
			byTP[tp] = TaskInfo{Topic: tp.topic, Partition: tp.partition, State: TaskAssigned}
		}
	}
	r.mu.Unlock()
	out := make([]TaskInfo, 0, len(byTP))
	for _, ti := range byTP {
		out = append(out, ti)
	}
	sort.Slice(out, func(i, j int) bool {
		return partitionLess(out[i].Topic, out[i].Partition, out[j].Topic, out[j].Partition)
	})
	return out
}

func (r *KafkaRunner) partitionsChanged() {
	if r.cfg.OnPartitionsChange != nil {
		r.cfg.OnPartitionsChange()
	}
}

// Tasks reports the tasks this instance owns, restoring ones included,
// sorted by topic and partition.
func (r *KafkaRunner) Tasks() []TaskInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]TaskInfo, 0, len(r.tasks)+len(r.restoring))
	for tp, t := range r.tasks {
		out = append(out, TaskInfo{Topic: tp.topic, Partition: tp.partition, State: t.State, HotKeys: t.hot})
	}
	for tp, p := range r.restoring {
		cp := *p
		out = append(out, TaskInfo{Topic: tp.topic, Partition: tp.partition, State: TaskRestoring, Restore: &cp})
	}
	sort.Slice(out, func(i, j int) bool {
		return partitionLess(out[i].Topic, out[i].Partition, out[j].Topic, out[j].Partition)
	})
	return out
}

// Stop ends processing cleanly: outputs flushed, state committed,
// offsets committed, the group left. It waits for the loop to finish.
func (r *KafkaRunner) Stop() error {
	r.cancel()
	<-r.done
	return r.Err()
}

func (r *KafkaRunner) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *KafkaRunner) run(ctx context.Context) {
	defer close(r.done)
	defer r.shutdown()
	lastCommit := time.Now()
	// The loop wakes at least this often without records: to commit, and
	// to let idle partitions' stream time move on in time.
	wake := r.cfg.CommitInterval
	if idle := r.topo.IdleTimeout; idle > 0 {
		wake = min(wake, max(idle/2, 50*time.Millisecond))
	}
	// lag is, per input partition, how far the last fetch's high
	// watermark is ahead of the last record processed.
	lag := map[topicPartition]int64{}
	// caughtUp says the last fetch left no partition behind its end.
	caughtUp := false
	// commitTook is how long the last commit held the loop.
	var commitTook time.Duration
	r.watch.enter(phaseCommit)
	if err := r.committer.start(ctx); err != nil {
		r.fail(err)
		return
	}
	for {
		// A poll takes every buffered fetch, at most one response per
		// broker (max.partition.fetch.bytes of each partition bounds it:
		// FetchConfig.sizes), so one commit (one transaction under
		// exactly-once) stays small even when a restart finds a large
		// backlog. A response holds its partitions one after the other:
		// a poll of fewer records would mostly hand over one partition
		// and leave the other threads idle.
		wait := wake
		if r.committer.holding() && caughtUp {
			// Wake for the early commit of a caught-up transaction.
			wait = min(wait, max(time.Until(lastCommit.Add(r.cfg.CommitInterval/4)), time.Millisecond))
		}
		if until := r.registry.resume(r, time.Now()); until > 0 {
			wait = min(wait, until)
		}
		pollCtx, cancel := context.WithTimeout(ctx, wait)
		r.watch.enter(phasePoll)
		fetches := r.committer.poll(pollCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if !fetches.Empty() {
			held := r.committer.holding()
			if err := r.committer.work(); err != nil {
				r.fail(err)
				return
			}
			if !held && r.committer.holding() {
				lastCommit = time.Now() // a transaction began
			}
		}
		if fetches.IsClientClosed() {
			return
		}
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				r.cfg.Log.Warn("fetch error", "query", r.topo.QueryID, "topic", topic, "partition", p, "err", err)
			}
		})
		r.watch.enter(phaseProcess)
		procErr := r.process(ctx, fetches, lag)
		var total int64
		for _, l := range lag {
			total += l
		}
		r.Metrics.Lag.Store(total)
		if procErr == nil {
			procErr = r.startAssignedTasks(ctx)
		}
		if procErr == nil && r.topo.IdleTimeout > 0 {
			procErr = r.advanceIdle(time.Now())
		}
		// Under exactly-once, results are visible only once their
		// transaction commits: a query that has caught up with its input
		// commits early (commitDue); a busy one, behind its input,
		// commits at the interval or later, so that commits do not take
		// most of its time.
		caughtUp = total == 0
		due := commitDue(time.Since(lastCommit), r.cfg.CommitInterval, r.cfg.transactionTimeout(), commitTook, r.committer.holding(), caughtUp) ||
			r.overlayFull()
		if procErr == nil && due {
			r.watch.enter(phaseCommit)
			began := time.Now()
			procErr = r.commitDetached(false)
			lastCommit = time.Now()
			commitTook = lastCommit.Sub(began)
		}
		if !r.committer.holding() {
			r.cl.AllowRebalance()
		}
		if procErr != nil && ctx.Err() != nil {
			return // stopped while restoring: a clean stop, not a failure
		}
		if procErr != nil {
			r.cfg.Log.Error("query failed", "query", r.topo.QueryID, "err", procErr)
			r.fail(procErr)
			return
		}
	}
}

// overlayFull reports whether a task's store partition holds
// overlayMemoryLimit or more in its overlay: the loop then commits at
// once, whatever the interval says, so that the state a commit interval
// writes is bounded by memory, not only by time. The tasks are not
// processing: the loop asks between polls.
func (r *KafkaRunner) overlayFull() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.tasks {
		for _, s := range t.stores {
			if s.store.OverlayMemory() >= overlayMemoryLimit {
				return true
			}
		}
	}
	return false
}

// DefaultSessionTimeout is a query's session.timeout.ms unless set
// (Kafka's default is 45 s): a crashed instance that does not come back
// holds its partitions this long.
const DefaultSessionTimeout = 10 * time.Second

// sessionTimeout is the configured session timeout, or the default.
func (cfg KafkaConfig) sessionTimeout() time.Duration {
	return cmp.Or(cfg.SessionTimeout, DefaultSessionTimeout)
}

// FetchConfig is what Kafka's consumer configs fetch.max.wait.ms,
// fetch.min.bytes, fetch.max.bytes and max.partition.fetch.bytes set for
// a query's consumer; a zero field keeps the default (Kafka's, but for
// the wait: at most the commit interval, and for a partition's bytes of a
// query that keeps state: statefulPartitionFetch).
type FetchConfig struct {
	MaxWait                               time.Duration
	MinBytes, MaxBytes, MaxPartitionBytes int32
}

// minFetchWait is the shortest wait franz-go takes; a shorter
// fetch.max.wait.ms waits this long.
const minFetchWait = 10 * time.Millisecond

// maxWait is how long a fetch waits for data: fetch.max.wait.ms, or
// Kafka's 500 ms, but no longer than the commit interval.
func (f FetchConfig) maxWait(commitInterval time.Duration) time.Duration {
	if f.MaxWait > 0 {
		return max(f.MaxWait, minFetchWait)
	}
	return max(min(commitInterval, 500*time.Millisecond), minFetchWait)
}

// statefulPartitionFetch is how many bytes of a partition one fetch of a
// query that keeps state returns unless max.partition.fetch.bytes says:
// half of Kafka's 1 MiB. A query holds about two fetches of its input at
// a time (the one it processes and the next, already read),
// decompressed, with a franz-go record struct per record: at 1 MiB that
// was 28 of the 118 MB live at the peak of a million-key aggregation,
// and 512 KiB took its peak RSS from 276 to 251 MB at the same records
// per CPU second (256 KiB cost it a tenth). A stateless query holds
// nothing else, and moves bytes as fast as it reads them: it keeps
// Kafka's default (at 512 KiB its records per CPU second were lower in
// three of four alternated runs of q0; docs/benchmarks.md).
const statefulPartitionFetch = 512 << 10

// sizes are the client options of the set byte sizes; stateful says the
// query keeps state (statefulPartitionFetch).
func (f FetchConfig) sizes(stateful bool) []kgo.Opt {
	if f.MaxPartitionBytes == 0 && stateful {
		f.MaxPartitionBytes = statefulPartitionFetch
	}
	var opts []kgo.Opt
	if f.MinBytes > 0 {
		opts = append(opts, kgo.FetchMinBytes(f.MinBytes))
	}
	if f.MaxBytes > 0 {
		opts = append(opts, kgo.FetchMaxBytes(f.MaxBytes))
		// A response may hold this much; franz-go refuses a fetch size
		// past what it reads from a broker (100 MiB unless raised).
		opts = append(opts, kgo.BrokerMaxReadBytes(int32(max(100<<20, min(math.MaxInt32, int64(f.MaxBytes)+1<<20)))))
	}
	if f.MaxPartitionBytes > 0 {
		opts = append(opts, kgo.FetchMaxPartitionBytes(f.MaxPartitionBytes))
	}
	return opts
}

// DefaultCompression is a query's compression.type unless set: Kafka's
// producer default. Compressing costs the query and the broker CPU per
// batch; on a local network it buys nothing.
const DefaultCompression = "none"

// Compressions are the values compression.type takes.
var Compressions = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// CompressionCodec is the producer codec of a compression.type; an
// unknown name (the engine refuses it before a query starts) is none.
func CompressionCodec(compression string) kgo.CompressionCodec {
	switch strings.ToLower(compression) {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

// transactionTimeout is the configured transaction timeout, or the
// default.
func (cfg KafkaConfig) transactionTimeout() time.Duration {
	return cmp.Or(cfg.TransactionTimeout, DefaultTransactionTimeout)
}

// commitWorkShare is how many times as long as a commit takes the loop
// processes between commits while it is behind its input, and
// commitStretchMax how far past the commit interval that may stretch it.
const (
	commitWorkShare  = 3
	commitStretchMax = 4
)

// commitDue says whether the loop commits now, since the time since the
// last commit ended. A commit holds the loop (an exactly-once commit
// waits for its changelog produce and the transaction's end, about a
// tenth of a second against a local broker, as long as the 100 ms
// interval itself), so a query behind its input commits no more often
// than keeps commits to a quarter of the loop's time: the interval
// stretches to commitWorkShare times the last commit's duration, at most
// commitStretchMax intervals (and a quarter of the transaction timeout),
// which bounds how long a transaction holds back rebalances and
// read_committed readers. A query that has caught up
// commits at the interval, and under a transaction early (after a quarter
// of it) rather than hold its last results back: there the latency of
// results counts, not the throughput.
func commitDue(since, interval, txnTimeout, lastTook time.Duration, holding, caughtUp bool) bool {
	if caughtUp {
		if holding {
			return since >= interval/4
		}
		return since >= interval
	}
	// The stretch stays well inside the transaction timeout (a longer
	// transaction would be aborted by the coordinator); an interval
	// set longer than that is left as it is.
	limit := min(commitStretchMax*interval, max(interval, txnTimeout/4))
	return since >= min(max(interval, commitWorkShare*lastTook), limit)
}

// taskBatch is one task's share of a fetch: the records of its input
// partitions in fetch order, and what processing them left behind.
type taskBatch struct {
	t   *Task
	fps []kgo.FetchTopicPartition
	err error
	// retry, set when a record's schema could not be fetched, is where
	// each of the batch's partitions not wholly processed reads again.
	retry      map[topicPartition]int64
	retryCause *RegistryRetry
	// lags are the partitions' distances from their high watermarks
	// after the batch.
	lags []partitionLag
}

type partitionLag struct {
	tp  topicPartition
	lag int64
}

// run processes the batch's records in order; the first error stops it.
func (b *taskBatch) run() {
	t := b.t
	for _, fp := range b.fps {
		var rec Record
		for _, kr := range fp.Records {
			if kr.Attrs.IsControl() {
				// A transaction marker: nothing to process, but it is
				// where the partition's position now stands.
				rec.Offset = kr.Offset
				continue
			}
			rec = Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value, Timestamp: kr.Timestamp.UnixMilli()}
			if len(kr.Headers) > 0 {
				rec.Headers = make([]Header, len(kr.Headers))
				for i, h := range kr.Headers {
					rec.Headers[i] = Header{Key: h.Key, Value: h.Value}
				}
			}
			if err := t.Process(&rec); err != nil {
				var rr *RegistryRetry
				if errors.As(err, &rr) {
					b.rewindFrom(fp, rr)
					t.FlushBatch()
					return
				}
				b.err = err
				return
			}
		}
		if fp.HighWatermark >= 0 {
			b.lags = append(b.lags, partitionLag{topicPartition{fp.Topic, fp.Partition}, max(fp.HighWatermark-rec.Offset-1, 0)})
		}
	}
	t.FlushBatch()
}

// rewindFrom notes where the batch's partitions read again: the record
// that waits for its schema, and the first record of every partition the
// batch had not reached.
func (b *taskBatch) rewindFrom(failed kgo.FetchTopicPartition, rr *RegistryRetry) {
	b.retry = map[topicPartition]int64{{rr.Topic, rr.Partition}: rr.Offset}
	b.retryCause = rr
	after := false
	for _, fp := range b.fps {
		if after && len(fp.Records) > 0 {
			b.retry[topicPartition{fp.Topic, fp.Partition}] = fp.Records[0].Offset
		}
		if fp.Topic == failed.Topic && fp.Partition == failed.Partition {
			after = true
		}
	}
}

// process runs a fetch's records through their tasks. Tasks share
// nothing while they process (each has its own operators, codecs and
// store partitions; the client, the metrics and a transient query's
// callback are safe for concurrent use), so the tasks of one fetch run
// in parallel, up to Threads at once; each task's records stay in order.
// Tasks are created (and restored) first, one at a time.
func (r *KafkaRunner) process(ctx context.Context, fetches kgo.Fetches, lag map[topicPartition]int64) error {
	now := time.Now()
	var batches []*taskBatch
	var setupErr error
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		r.watchFetch(fp)
		if setupErr != nil || len(fp.Records) == 0 {
			return
		}
		t, err := r.task(ctx, fp.Topic, fp.Partition)
		if err != nil {
			setupErr = err
			return
		}
		// A join's task reads several topics: its partitions of this
		// fetch form one batch.
		for _, b := range batches {
			if b.t == t {
				b.fps = append(b.fps, fp)
				return
			}
		}
		t.setClock(now)
		batches = append(batches, &taskBatch{t: t, fps: []kgo.FetchTopicPartition{fp}})
	})
	r.parallel(len(batches), func(i int) { batches[i].run() })
	retries := map[topicPartition]int64{}
	var cause *RegistryRetry
	for _, b := range batches {
		for _, pl := range b.lags {
			lag[pl.tp] = pl.lag
		}
		for tp, off := range b.retry {
			retries[tp] = off
			cause = b.retryCause
		}
	}
	var ran []topicPartition
	for _, b := range batches {
		for _, fp := range b.fps {
			if _, retried := b.retry[topicPartition{fp.Topic, fp.Partition}]; !retried {
				ran = append(ran, topicPartition{fp.Topic, fp.Partition})
			}
		}
	}
	r.registry.afterBatch(r, retries, cause, ran, now)
	if setupErr != nil {
		return setupErr
	}
	for _, b := range batches {
		if b.err != nil {
			return b.err
		}
	}
	return nil
}

// watchFetch tells the stall watch what a fetch showed of a partition.
func (r *KafkaRunner) watchFetch(fp kgo.FetchTopicPartition) {
	if fp.Err != nil {
		return
	}
	tp := topicPartition{fp.Topic, fp.Partition}
	first, next := int64(-1), int64(-1)
	if n := len(fp.Records); n > 0 {
		first, next = fp.Records[0].Offset, fp.Records[n-1].Offset+1
	} else if !r.watch.known(tp) {
		// Nothing read yet: the consumer stands at the group's
		// committed offset, if there is one.
		if off, ok := r.cl.CommittedOffsets()[fp.Topic][fp.Partition]; ok && off.Offset >= 0 {
			r.watch.position(tp, off.Offset)
		}
	}
	r.watch.fetched(tp, first, next, fp.HighWatermark, fp.LastStableOffset)
}

// parallel runs fn(0) … fn(n-1), up to threads of them at once, and
// returns when all have.
func (r *KafkaRunner) parallel(n int, fn func(i int)) {
	threads := r.threads()
	if n == 1 || threads == 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, threads)
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			fn(i)
		})
	}
	wg.Wait()
}

// eachTask runs fn for every task, in parallel (tasks share nothing
// while they commit either), and returns the first error in task order.
func (r *KafkaRunner) eachTask(tasks []*Task, fn func(i int, t *Task) error) error {
	errs := make([]error, len(tasks))
	r.parallel(len(tasks), func(i int) { errs[i] = fn(i, tasks[i]) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// threads is how many tasks process at once.
func (r *KafkaRunner) threads() int {
	if r.cfg.Threads > 0 {
		return r.cfg.Threads
	}
	return runtime.GOMAXPROCS(0)
}

// advanceIdle moves on the stream time of every task whose partition
// has sent nothing for the topology's IdleTimeout. What that emits is
// output like any other: under exactly-once it must be part of a
// transaction, so one begins when a task is due (one in which nothing
// was produced ends without a request to the broker), and the commit
// that follows in the loop makes it visible.
func (r *KafkaRunner) advanceIdle(now time.Time) error {
	r.mu.Lock()
	tasks := make([]*Task, 0, len(r.tasks))
	for _, t := range r.tasks {
		tasks = append(tasks, t)
	}
	r.mu.Unlock()
	for _, t := range tasks {
		t.setClock(now)
		ts, ok := t.idleTarget(r.topo.IdleTimeout)
		if !ok {
			continue
		}
		if err := r.committer.work(); err != nil {
			return err
		}
		if err := t.advanceIdle(ts); err != nil {
			return err
		}
	}
	return nil
}

// output is the Output of a new task: its own, since it keeps the
// task's records (one task produces from one goroutine at a time).
func (r *KafkaRunner) output() Output {
	if r.cfg.Output != nil {
		return r.cfg.Output
	}
	return &kafkaOutput{r: r}
}

// kafkaOutput produces one task's records. The client keeps each
// kgo.Record until the broker has it, so they are not reused, but they
// are allocated kafkaRecordSlab at a time: a slab is garbage when the
// last of its records is acknowledged.
type kafkaOutput struct {
	r    *KafkaRunner
	slab []kgo.Record
}

const kafkaRecordSlab = 256

func (o *kafkaOutput) Produce(rec *Record) {
	if len(o.slab) == 0 {
		o.slab = make([]kgo.Record, kafkaRecordSlab)
	}
	kr := &o.slab[0]
	o.slab = o.slab[1:]
	// The slab's records are zero: set only what differs, field by
	// field, instead of copying a whole record in (with a write barrier
	// over all of it while the collector runs).
	kr.Topic, kr.Key, kr.Value, kr.Timestamp = rec.Topic, rec.Key, rec.Value, time.UnixMilli(rec.Timestamp)
	if len(rec.Headers) > 0 {
		kr.Headers = make([]kgo.RecordHeader, len(rec.Headers))
		for i, h := range rec.Headers {
			kr.Headers[i] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
		}
	}
	o.r.cl.Produce(context.Background(), kr, o.r.promise)
}

// produced is the promise of every record a task produces (made once
// into promise, so a record costs no closure): it keeps the first error for
// the next commit to fail on.
func (r *KafkaRunner) produced(kr *kgo.Record, err error) {
	if err == nil && r.cfg.Push != nil && kr.Topic == r.topo.SinkTopic {
		r.cfg.Push.produced(kr, r.cfg.ExactlyOnce)
	}
	if err != nil {
		r.mu.Lock()
		if r.produceErr == nil {
			r.produceErr = fmt.Errorf("produce to %s: %w", kr.Topic, err)
		}
		r.mu.Unlock()
	}
}

func (r *KafkaRunner) shutdown() {
	// A failed query's loop ends without Stop: its standbys end too.
	r.cancel()
	<-r.standbyDone
	if r.Err() == nil {
		if err := r.commitDetached(true); err != nil {
			r.fail(err)
		}
	}
	r.mu.Lock()
	for tp, t := range r.tasks {
		_ = t.Close()
		if r.cfg.Transient {
			for _, s := range t.stores {
				_ = s.store.Wipe()
			}
		}
		delete(r.tasks, tp)
	}
	r.mu.Unlock()
	// Polling blocks rebalances until allowed; leaving the group is one.
	r.committer.close()
	// A static member does not leave when its client closes: a clean
	// stop leaves by its instance id, so its partitions move now.
	r.leaveGroup()
}
