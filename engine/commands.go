package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/failover"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
)

// The command topic holds a service's catalog as the statements that
// built it, in the order they took effect. Its order is the truth: an
// instance checks a statement against its own catalog only to turn away
// bad statements early, then appends it and applies nothing itself until
// its follower reaches the command, exactly as every other instance does.
// Two instances racing to create the same name both append; the first in
// the topic wins everywhere and the second fails everywhere.

// commandVersion is the version of the command record this engine
// writes and reads.
const commandVersion = 1

// Headers of a command record. The request id lets the instance that
// appended a command hand the outcome of applying it to the caller
// waiting for it.
const (
	commandInstanceHeader = "sluice.instance"
	commandRequestHeader  = "sluice.request"
)

// commandRecordOverhead is room left in a record batch for the batch and
// record headers around a command's value.
const commandRecordOverhead = 512

// CommandTopicName names the command topic of a service.
func CommandTopicName(serviceID string) string {
	if serviceID == "" {
		serviceID = "default"
	}
	return "_sluice-" + serviceID + "-commands"
}

// commandRecord is the JSON value of a command record: how the command
// topic stores every command kind (its text and the session properties).
type commandRecord struct {
	Version   int    `json:"version"`
	Statement string `json:"statement"`
	// Properties are the session properties in force when the statement
	// was issued, so that every replay plans and runs it the same way.
	Properties map[string]string `json:"properties,omitempty"`
}

// CommandRef says where a statement went in the command topic.
type CommandRef struct {
	Topic string
	// Offset is the command's offset (ksqlDB calls it the command
	// sequence number); WaitForCommand takes it.
	Offset int64
}

// outcome is what applying one command gave.
type outcome struct {
	res *Result
	err error
}

// commandLog follows a service's command topic.
type commandLog struct {
	e     *Engine
	topic string
	// cl reads the topic; appends go through the engine's client.
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// next is the offset of the next command to apply.
	next int64
	// moved is closed, and replaced, whenever next moves.
	moved chan struct{}
	// waiters are the callers of submit waiting for their command to be
	// applied, by request id.
	waiters map[string]chan outcome
	// replayEnd is the end offset of the topic at Open: queries start
	// once the command before it is applied.
	replayEnd int64
}

// openCommandLog creates the command topic if it is missing, replays it
// and starts following it.
func openCommandLog(ctx context.Context, e *Engine) (*commandLog, error) {
	topic := CommandTopicName(e.cfg.ServiceID)
	// One partition keeps one order; retention.ms=-1 with delete (not
	// compact) keeps every command for good, since each one matters.
	policy, forever := "delete", "-1"
	if err := state.EnsureTopic(ctx, e.adm, topic, 1, -1, map[string]*string{"cleanup.policy": &policy, "retention.ms": &forever}); err != nil {
		return nil, fmt.Errorf("command topic: %w", err)
	}
	end, err := commandEnd(ctx, e, topic)
	if err != nil {
		return nil, err
	}
	opts := append([]kgo.Opt{}, e.cfg.ConnOpts...)
	opts = append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		// A command should reach the other instances within a second or
		// so even where a broker holds fetches for the whole wait.
		kgo.FetchMaxWait(time.Second))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("command topic %s: kafka client: %w", topic, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c := &commandLog{e: e, topic: topic, cl: cl, cancel: cancel, done: make(chan struct{}),
		moved: make(chan struct{}), waiters: map[string]chan outcome{}, replayEnd: end}
	e.mu.Lock()
	e.deferStarts = end > 0
	e.mu.Unlock()
	go c.follow(runCtx)
	start := time.Now()
	if err := c.await(ctx, end); err != nil {
		c.close()
		return nil, fmt.Errorf("replay command topic %s: %w", topic, err)
	}
	e.log.Info("command topic replayed", "topic", topic, "commands", end, "took", time.Since(start))
	return c, nil
}

// commandEnd returns the end offset of the command topic. A topic just
// created can have no leader for a moment on a real cluster.
func commandEnd(ctx context.Context, e *Engine, topic string) (int64, error) {
	for attempt := 0; ; attempt++ {
		ends, err := failover.Offsets(ctx, "list end offsets", func(ctx context.Context) (kadm.ListedOffsets, error) {
			return e.adm.ListEndOffsets(ctx, topic)
		})
		if err != nil {
			return 0, fmt.Errorf("command topic %s: end offset: %w", topic, err)
		}
		end, ok := ends.Lookup(topic, 0)
		if ok && end.Err == nil {
			return end.Offset, nil
		}
		if attempt == 50 {
			return 0, fmt.Errorf("command topic %s: end offset: %w", topic, errors.Join(end.Err, errors.New("partition 0 not listed")))
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("command topic %s: end offset: %w", topic, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// follow applies every command of the topic in order until ctx ends.
func (c *commandLog) follow(ctx context.Context) {
	defer close(c.done)
	for {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		failed := false
		fs.EachError(func(topic string, p int32, err error) {
			failed = true
			c.e.log.Warn("command topic: fetch failed", "topic", topic, "partition", p, "error", err)
		})
		fs.EachRecord(func(r *kgo.Record) { c.applyRecord(ctx, r) })
		if failed && fs.NumRecords() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
}

// applyRecord applies one command and hands the outcome to the caller
// that appended it, if it waits on this instance.
func (c *commandLog) applyRecord(ctx context.Context, r *kgo.Record) {
	var res *Result
	var err error
	// A command that failed because Kafka could not be reached is applied
	// again until it can be: skipping it would leave this instance with a
	// catalog the others do not have. Later commands wait, in order.
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		res, err = c.e.applyCommand(ctx, r.Value)
		if err == nil || !transient(err) || ctx.Err() != nil {
			break
		}
		c.e.log.Warn("command failed, retrying", "topic", c.topic, "offset", r.Offset, "in", wait, "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	if err != nil {
		// The same command fails the same way on every instance (it lost
		// a race, say), so the catalogs still agree.
		c.e.log.Warn("command not applied", "topic", c.topic, "offset", r.Offset, "error", err)
	}
	if res != nil {
		res.Command = &CommandRef{Topic: c.topic, Offset: r.Offset}
	}
	if r.Offset+1 >= c.replayEnd {
		c.e.startPending(ctx)
	}
	var w chan outcome
	c.mu.Lock()
	c.next = r.Offset + 1
	close(c.moved)
	c.moved = make(chan struct{})
	if header(r, commandInstanceHeader) == c.e.instanceID {
		id := header(r, commandRequestHeader)
		w = c.waiters[id]
		delete(c.waiters, id)
	}
	c.mu.Unlock()
	if w != nil {
		w <- outcome{res, err}
	}
}

// transient reports whether err came from failing to reach Kafka rather
// than from the statement, which would fail the same way again.
func transient(err error) bool {
	var ne net.Error
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		return ke.Retriable
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return false
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// encodeCommand writes a command as JSON, leaving SQL's < > & as they
// are so the topic reads like the statements.
func encodeCommand(c commandRecord) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encode command: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// applyCommand decodes and applies one command record.
func (e *Engine) applyCommand(ctx context.Context, value []byte) (*Result, error) {
	var cmd commandRecord
	if err := json.Unmarshal(value, &cmd); err != nil {
		return nil, fmt.Errorf("decode command: %w", err)
	}
	if cmd.Version != commandVersion {
		return nil, fmt.Errorf("%w: command version %d, this engine reads version %d", planner.ErrUnsupported, cmd.Version, commandVersion)
	}
	ps, err := parser.ParseScript(cmd.Statement)
	if err != nil {
		return nil, fmt.Errorf("command %q: %w", cmd.Statement, err)
	}
	if len(ps) != 1 || !IsCommand(ps[0].Stmt) {
		return nil, fmt.Errorf("%w: a command holds one statement IsCommand accepts (CREATE, INSERT INTO … SELECT, TERMINATE, PAUSE/RESUME, DROP, ALTER, CREATE/DROP TYPE, CREATE/DROP FUNCTION), not %q", planner.ErrInvalid, cmd.Statement)
	}
	props := cmd.Properties
	if props == nil {
		props = map[string]string{}
	}
	if _, ok := props[planner.PlanVersionProperty]; !ok {
		// Issued before commands carried a plan version: planned as then.
		props[planner.PlanVersionProperty] = "1"
	}
	return e.apply(ctx, ps[0], props, true)
}

// submit checks a command, appends it and waits until this instance has
// applied it, in the topic's order, returning the outcome.
func (c *commandLog) submit(ctx context.Context, p parser.Parsed, props map[string]string) (*Result, error) {
	if res, done, err := c.e.check(ctx, p, props); err != nil || done {
		return res, err
	}
	value, err := encodeCommand(commandRecord{Version: commandVersion, Statement: p.Text, Properties: props})
	if err != nil {
		return nil, err
	}
	if limit, ok := c.e.cl.OptValue(kgo.ProducerBatchMaxBytes).(int32); ok && len(value) > int(limit)-commandRecordOverhead {
		return nil, fmt.Errorf("%w: the command is %d bytes, more than a record of the command topic %s may hold (%d: the producer's batch limit); a CREATE FUNCTION's module travels in its command, so its module must be smaller", planner.ErrInvalid, len(value), c.topic, int(limit)-commandRecordOverhead)
	}
	id := randomID()
	w := make(chan outcome, 1)
	c.mu.Lock()
	c.waiters[id] = w
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiters, id)
		c.mu.Unlock()
	}
	rec := &kgo.Record{Topic: c.topic, Value: value, Headers: []kgo.RecordHeader{
		{Key: commandInstanceHeader, Value: []byte(c.e.instanceID)},
		{Key: commandRequestHeader, Value: []byte(id)},
	}}
	if err := c.e.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		forget()
		return nil, fmt.Errorf("append to command topic %s: %w", c.topic, err)
	}
	select {
	case o := <-w:
		return o.res, o.err
	case <-ctx.Done():
		forget()
		return nil, fmt.Errorf("command appended to %s at offset %d, not yet applied here: %w", c.topic, rec.Offset, ctx.Err())
	case <-c.done:
		forget()
		return nil, fmt.Errorf("command appended to %s at offset %d, not applied here: the engine is closing", c.topic, rec.Offset)
	}
}

// await waits until the command at offset-1 and all before it are applied.
func (c *commandLog) await(ctx context.Context, offset int64) error {
	for {
		c.mu.Lock()
		next, moved := c.next, c.moved
		c.mu.Unlock()
		if next >= offset {
			return nil
		}
		select {
		case <-moved:
		case <-c.done:
			return errors.New("stopped following the command topic")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close stops following; waiting callers give up.
func (c *commandLog) close() {
	c.cancel()
	<-c.done
	c.cl.Close()
}

// WaitForCommand waits until this instance has applied the command at
// offset of the command topic and every one before it, so a statement
// executed next sees their effects (the server takes the offset from a
// client that issued the command through another instance). Without a
// command topic it returns at once.
func (e *Engine) WaitForCommand(ctx context.Context, offset int64) error {
	if e.cmd == nil {
		return nil
	}
	if err := e.cmd.await(ctx, offset+1); err != nil {
		return fmt.Errorf("wait for command %d of %s: %w", offset, e.cmd.topic, err)
	}
	return nil
}
