package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/state"
)

// committer is the commit protocol of one processing guarantee. It owns
// whatever state that protocol keeps (the exactly-once transaction, the
// policy of holding committed state in memory), so the runner's loop asks
// it what to do instead of asking whether a transaction is open.
type committer interface {
	// start runs once before the first poll.
	start(ctx context.Context) error
	// poll returns the next fetches.
	poll(ctx context.Context) kgo.Fetches
	// work is called before records are processed, or idle partitions'
	// time advanced, when that may produce output.
	work() error
	// holding reports whether work since the last commit holds back
	// rebalances (and its results from read_committed consumers) until
	// the next commit: the loop then commits early once caught up.
	holding() bool
	// commit makes the work since the last commit durable; final says the
	// query stops. It reports whether offsets (and so progress) committed.
	commit(ctx context.Context, tasks []*Task, final bool) (committed bool, err error)
	// revoking commits what leaving tasks need before their partitions
	// move to another member.
	revoking(ctx context.Context, leaving []*Task)
	// rebalancing is held by the revoke and lost callbacks while they
	// drop tasks; it returns the function that releases it.
	rebalancing() (release func())
	// close closes the client, allowing the rebalance that leaving is.
	close()
}

// commitTimeout bounds one commit; past it the query fails rather than
// hang.
const commitTimeout = 2 * time.Minute

// DefaultTransactionTimeout is a query's transaction.timeout.ms unless
// set: it bounds how long a crashed or cut-off instance's open
// transaction can hold back read_committed consumers, and a taker's
// restore (state.Changelog.AfterOpenTransactions), when no successor with
// the same transactional id fences it. Kafka Streams' default is 10 s;
// Sluice's commits stretch to a quarter of it (commitDue).
const DefaultTransactionTimeout = 15 * time.Second

// endStuckAfter is how long a transaction's end may wait before the
// rebalance callbacks it may be waiting for are let through. franz-go's
// End, after committing the offsets, forces a heartbeat and waits for it,
// or for the group to revoke or lose the partitions. When the group
// coordinator has just died the heartbeat loop is gone and the group
// wants to call the lost callback, which BlockRebalanceOnPoll holds until
// the loop allows it, after the commit: without this, End waited for its
// context (commitTimeout) and the query made no progress for two minutes
// (seen on a three-node cluster when a broker died). A normal End takes
// well under a second, a broker failover several.
const endStuckAfter = 5 * time.Second

// stateWriteInterval is how often exactly-once writes committed state to
// Badger; between writes the stores hold it in memory (state.Store.Hold).
// At-least-once commits once a second already and writes at each commit.
const stateWriteInterval = time.Second

// overlayMemoryLimit bounds what a store partition's overlay holds on the
// Go heap (state.Store.OverlayMemory: keys, values and each key's
// overhead), the open transaction's writes and the committed ones held
// for Badger alike: once a store passes it the loop commits without
// waiting for the interval (KafkaRunner.overlayFull), and that commit
// writes Badger. The heap then holds at most about twice the bound per
// store partition (the overlay and the commit on its way to Badger),
// plus one poll's writes, however far a query runs behind its input and
// however many distinct keys it writes: a million-key aggregation,
// every record a new key, grew its peak RSS with the commit interval's
// stretch (docs/benchmarks.md, "Memory: M1 and M2"). 4 MiB rather than 8
// took the aggregation's peak RSS from 245 to 211 MB and Nexmark q20's,
// q4's and q5's down 16–30 MB; 2 MiB rather than 4 took the aggregation
// to 180 MB and q20 down a further 30–45 MB, q4 and q5 20–30 MB, at the
// same events per CPU second within noise (a Badger write costs q20
// about 2% more CPU; 1 MiB saved nothing more). Under load a store
// partition's writes then reach Badger several times a second, in
// writes of a few thousand keys, which Badger takes cheaply.
const overlayMemoryLimit = 2 << 20

// commitDetached commits with a context of its own: a stop requested
// while a commit is under way must let it finish, or an exactly-once
// query would abort the work it was about to commit.
func (r *KafkaRunner) commitDetached(final bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	return r.commit(ctx, final)
}

// commit commits the work of every task and tells the stall watch what
// became durable.
func (r *KafkaRunner) commit(ctx context.Context, final bool) error {
	pos := r.watch.committing()
	r.mu.Lock()
	tasks := make([]*Task, 0, len(r.tasks))
	for _, t := range r.tasks {
		tasks = append(tasks, t)
	}
	r.mu.Unlock()
	committed, err := r.committer.commit(ctx, tasks, final)
	if committed {
		r.watch.committed(pos)
	}
	return err
}

// commitStateErr says which store partition's commit failed.
func (r *KafkaRunner) commitStateErr(t *Task, s taskStore, err error) error {
	return fmt.Errorf("query %s: commit state %s/%d: %w", r.topo.QueryID, s.spec.Name, t.Partition, err)
}

// atLeastOnce commits in the order that keeps at-least-once honest:
// outputs acknowledged, then state (changelog first, then Badger with the
// source offsets it covers), then the consumer offsets. A replay after a
// crash changes no state: the applied source offsets are in it.
type atLeastOnce struct {
	r  *KafkaRunner
	cl *kgo.Client
}

func (c *atLeastOnce) start(context.Context) error { return nil }

func (c *atLeastOnce) poll(ctx context.Context) kgo.Fetches { return c.cl.PollFetches(ctx) }

func (c *atLeastOnce) work() error { return nil }

func (c *atLeastOnce) holding() bool { return false }

func (c *atLeastOnce) commit(ctx context.Context, tasks []*Task, _ bool) (bool, error) {
	r := c.r
	// Waiting for the broker to take the outputs is waiting on produce;
	// the state and offset commits after it are the transaction's part.
	r.watch.enter(phaseProcess)
	if err := c.cl.Flush(ctx); err != nil {
		return false, fmt.Errorf("query %s: flush outputs: %w", r.topo.QueryID, err)
	}
	r.watch.enter(phaseCommit)
	r.mu.Lock()
	perr := r.produceErr
	r.mu.Unlock()
	if perr != nil {
		return false, fmt.Errorf("query %s: %w", r.topo.QueryID, perr)
	}
	changelog := c.cl
	if r.cfg.Transient {
		changelog = nil
	}
	if err := r.eachTask(tasks, func(_ int, t *Task) error {
		src := t.checkpointOffsets()
		for _, s := range t.stores {
			cp, err := t.produceChangelog(ctx, changelog, s, src)
			if err == nil {
				err = s.store.Commit(cp)
			}
			if err != nil {
				return r.commitStateErr(t, s, err)
			}
		}
		return nil
	}); err != nil {
		return false, err
	}
	if err := c.cl.CommitUncommittedOffsets(ctx); err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("query %s: commit offsets: %w", r.topo.QueryID, err)
		}
		// The group coordinator is away (broker restarting, network):
		// the offsets stay uncommitted and go with the next commit.
		// State already records what it applied, so a replay in between
		// changes nothing.
		n := r.Metrics.CountError(ErrKindCommit)
		r.cfg.Log.Warn("offset commit failed; retrying at the next commit", "query", r.topo.QueryID, "err", err, "failures", n)
		return false, nil
	}
	return true, nil
}

// rebalancing: at-least-once commits from the revoke callback itself
// (revoking), so there is nothing to wait for.
func (c *atLeastOnce) rebalancing() func() { return func() {} }

func (c *atLeastOnce) revoking(ctx context.Context, _ []*Task) {
	if err := c.r.commit(ctx, false); err != nil {
		c.r.cfg.Log.Warn("commit on revoke failed", "query", c.r.topo.QueryID, "err", err)
	}
}

func (c *atLeastOnce) close() { c.cl.CloseAllowingRebalance() }

// exactlyOnce runs each commit interval as one Kafka transaction:
// outputs, repartition and changelog records and the input offsets
// commit together or not at all. Local state is committed only after
// the transaction is, and then mostly held in memory (state.Store.Hold),
// reaching Badger at most once a second: Kafka has it already, and a
// crash restores it from the changelog.
type exactlyOnce struct {
	r    *KafkaRunner
	sess *kgo.GroupTransactSession
	// inTxn says a transaction is open.
	inTxn bool
	// stateWritten is when committed state last went to Badger.
	stateWritten time.Time
	// busy is held by a commit, except while it waits in End, and by the
	// rebalance callbacks (rebalancing): a callback that End's wait lets
	// through (endStuckAfter) drops tasks only while the commit cannot
	// be using them.
	busy sync.Mutex
}

func (c *exactlyOnce) rebalancing() func() {
	c.busy.Lock()
	return c.busy.Unlock
}

// start fences the crashed predecessor at once: its open transaction,
// and the offsets it holds pending, block this member's offset fetch
// (and so its first poll) until a new producer epoch aborts it. Left to
// the first Begin, which waits for that poll, it would end only with the
// transaction's timeout.
func (c *exactlyOnce) start(ctx context.Context) error {
	if _, _, err := c.sess.Client().ProducerID(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("query %s: init producer id: %w", c.r.topo.QueryID, err)
	}
	return nil
}

func (c *exactlyOnce) poll(ctx context.Context) kgo.Fetches { return c.sess.PollFetches(ctx) }

func (c *exactlyOnce) work() error {
	if c.inTxn {
		return nil
	}
	if err := c.sess.Begin(); err != nil {
		return fmt.Errorf("query %s: begin transaction: %w", c.r.topo.QueryID, err)
	}
	c.inTxn = true
	return nil
}

// holding: within a transaction the group may not rebalance (partitions
// moving mid-transaction would abort it), so rebalances wait for the
// commit, at most one commit interval.
func (c *exactlyOnce) holding() bool { return c.inTxn }

// commit ends the open transaction: changelog records join it, then
// outputs, changelog and input offsets commit together. Only then does
// local state commit. If Kafka aborts instead, the overlays are dropped
// and the tasks closed: they reopen from the last committed state while
// the session rewinds the input to the last committed offsets.
func (c *exactlyOnce) commit(ctx context.Context, tasks []*Task, final bool) (bool, error) {
	c.busy.Lock()
	defer c.busy.Unlock()
	r := c.r
	if !c.inTxn {
		if final {
			return false, c.commitHeld(tasks)
		}
		return false, nil
	}
	// Each task's changelog records, and later its state, are written by
	// a goroutine of its own: the tasks' produce round trips and Badger
	// writes overlap.
	pending := make([][]state.Checkpoint, len(tasks))
	produceErr := r.eachTask(tasks, func(i int, t *Task) error {
		src := t.checkpointOffsets()
		cps := make([]state.Checkpoint, len(t.stores))
		for j, s := range t.stores {
			cp, err := t.produceChangelog(ctx, c.sess.Client(), s, src)
			if err != nil {
				return err
			}
			cps[j] = cp
		}
		pending[i] = cps
		return nil
	})
	try := kgo.TryCommit
	if produceErr != nil {
		try = kgo.TryAbort
	}
	c.busy.Unlock()
	stuck := time.AfterFunc(endStuckAfter, c.sess.AllowRebalance)
	committed, err := c.sess.End(ctx, try)
	stuck.Stop()
	c.busy.Lock()
	c.inTxn = false
	if err != nil && errors.Is(err, kerr.InvalidProducerEpoch) {
		// The coordinator aborted the transaction and bumped the
		// producer's epoch (its timeout passed while this instance was
		// cut off): nothing of it committed, and End has reset the
		// session to the committed offsets. As after an abort, the tasks
		// reprocess from the last commit; the next transaction
		// re-initialises the producer's epoch (franz-go, KIP-588).
		r.cfg.Log.Warn("transaction fenced by its coordinator; reprocessing from the last commit", "query", r.topo.QueryID, "err", err)
		committed, err = false, nil
	}
	if err != nil && !committed && offsetCommitFailed(err) {
		// The transaction's offsets did not commit (the group's
		// coordinator went away, or refused them), so End aborted the
		// transaction, and that abort succeeded: End reports the offset
		// commit's error only then (an EndTxn that fails is what it
		// reports otherwise). Nothing of it committed and End has reset
		// the session to the committed offsets: the tasks reprocess from
		// the last commit, as after any abort.
		produceErr, err = fmt.Errorf("transaction's offsets not committed: %w", err), nil
	}
	r.cfg.Push.committed(committed && err == nil)
	if err != nil {
		return false, fmt.Errorf("query %s: end transaction: %w", r.topo.QueryID, err)
	}
	if committed {
		// A callback let through while End waited has dropped the tasks
		// of the partitions that left: their state is in the committed
		// changelog, and a restore finds it there.
		tasks, pending = c.r.stillRunning(tasks, pending)
		return true, c.commitState(tasks, pending, final)
	}
	r.cfg.Log.Warn("transaction aborted; reprocessing from the last commit", "query", r.topo.QueryID, "cause", produceErr)
	r.mu.Lock()
	for tp, t := range r.tasks {
		for _, s := range t.stores {
			s.store.Discard()
		}
		_ = t.Close()
		delete(r.tasks, tp)
	}
	r.produceErr = nil
	r.mu.Unlock()
	return false, nil
}

// offsetCommitFailed reports an error franz-go's GroupTransactSession.End
// returns when the transaction's TxnOffsetCommit failed and its EndTxn,
// then an abort, succeeded. franz-go gives that error no type of its own,
// only this text (kgo/txn.go); TestExactlyOnceOffsetCommitErrorReprocesses
// fails should it change.
func offsetCommitFailed(err error) bool {
	return strings.HasPrefix(err.Error(), "unable to commit transaction offsets")
}

// commitState commits a committed transaction's state: to Badger at most
// once a second (or as the query stops, or once a store's overlay holds
// overlayMemoryLimit), and in between held in the stores' overlays.
func (c *exactlyOnce) commitState(tasks []*Task, pending [][]state.Checkpoint, final bool) error {
	write := final || time.Since(c.stateWritten) >= stateWriteInterval || storesFull(tasks)
	if write {
		c.stateWritten = time.Now()
	}
	return c.r.eachTask(tasks, func(i int, t *Task) error {
		for j, s := range t.stores {
			if !write {
				s.store.Hold(pending[i][j])
				continue
			}
			if err := s.store.Commit(pending[i][j]); err != nil {
				return c.r.commitStateErr(t, s, err)
			}
		}
		return nil
	})
}

// commitHeld writes the state the tasks' stores hold to Badger.
func (c *exactlyOnce) commitHeld(tasks []*Task) error {
	return c.r.eachTask(tasks, func(_ int, t *Task) error {
		for _, s := range t.stores {
			if err := s.store.CommitHeld(); err != nil {
				return c.r.commitStateErr(t, s, err)
			}
		}
		return nil
	})
}

// revoking: rebalances happen only between transactions, so there is
// nothing left to commit; the state the leaving tasks hold goes to
// Badger, so that a partition coming back finds it there.
func (c *exactlyOnce) revoking(_ context.Context, leaving []*Task) {
	if err := c.commitHeld(leaving); err != nil {
		c.r.cfg.Log.Warn("commit on revoke failed", "query", c.r.topo.QueryID, "err", err)
	}
}

func (c *exactlyOnce) close() { c.sess.CloseAllowingRebalance() }

// stillRunning keeps the tasks (and their pending checkpoints) that are
// still the runner's.
func (r *KafkaRunner) stillRunning(tasks []*Task, pending [][]state.Checkpoint) ([]*Task, [][]state.Checkpoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keep := func(t *Task) bool {
		for _, cur := range r.tasks {
			if cur == t {
				return true
			}
		}
		return false
	}
	if !slices.ContainsFunc(tasks, func(t *Task) bool { return !keep(t) }) {
		return tasks, pending
	}
	var ts []*Task
	var ps [][]state.Checkpoint
	for i, t := range tasks {
		if keep(t) {
			ts = append(ts, t)
			ps = append(ps, pending[i])
		}
	}
	return ts, ps
}

// storesFull reports whether a store partition of tasks holds
// overlayMemoryLimit or more in its overlay.
func storesFull(tasks []*Task) bool {
	for _, t := range tasks {
		for _, s := range t.stores {
			if s.store.OverlayMemory() >= overlayMemoryLimit {
				return true
			}
		}
	}
	return false
}
