package exec

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A PushRegistry fans the records a persistent query writes to its sink
// out to the scalable push queries subscribed to it (ksqlDB's
// ksql.query.push.v2.enabled): each subscriber reads the query's output
// as it is produced, on this instance, with no consumer of its own.
//
// The registry carries records, not rows: key and value as the sink
// encoded them, the record timestamp (ROWTIME), and the partition and
// offset Kafka gave them. Each subscriber decodes them through its own
// plan in its own goroutine, so the persistent query's task pays only a
// non-blocking channel send per subscriber, and a subscriber sees exactly
// what a consumer of the sink topic would see.
//
// Delivery:
//
//   - At-least-once: a record is published when the broker acknowledges
//     it (the produce promise), in the order of each partition.
//   - Exactly-once: records are held until the transaction that wrote
//     them commits and published then; an aborted transaction's records
//     are dropped. Subscribers never see uncommitted output.
//
// Slow subscribers: each subscription buffers at most its capacity
// (PushBufferSize by default, ksqlDB's 1000). A publish that finds a
// subscription's buffer full drops that subscription (ErrPushSubscriberBehind)
// instead of waiting: the persistent query never waits for a client.
type PushRegistry struct {
	queryID string

	// n counts subscriptions, so a query nobody subscribes to pays one
	// atomic load per record.
	n atomic.Int32

	mu     sync.Mutex
	subs   map[*PushSubscription]struct{}
	held   []PushRecord
	closed error
}

// PushBufferSize is a subscription's default buffer, in records.
const PushBufferSize = 1000

// ErrPushSubscriberBehind ends a subscription whose buffer was full when
// the persistent query produced another record.
var ErrPushSubscriberBehind = errors.New("scalable push query fell behind its persistent query")

// ErrPushSourceStopped ends the subscriptions of a persistent query that
// stopped.
var ErrPushSourceStopped = errors.New("the persistent query feeding this scalable push query stopped")

// PushRecord is one record of a persistent query's sink.
type PushRecord struct {
	Partition  int32
	Offset     int64
	Key, Value []byte
	Timestamp  int64
	Headers    []Header
}

// NewPushRegistry returns the registry of query queryID's output.
func NewPushRegistry(queryID string) *PushRegistry {
	return &PushRegistry{queryID: queryID, subs: map[*PushSubscription]struct{}{}}
}

// PushSubscription is one subscriber's view of a registry: C carries the
// records published after Subscribe and is closed when the subscription
// ends; Err then says why (nil after Unsubscribe).
type PushSubscription struct {
	C <-chan PushRecord

	reg *PushRegistry
	ch  chan PushRecord
	err error
}

// Subscribe registers a subscriber with a buffer of size records
// (PushBufferSize when size <= 0). It fails once the registry is closed.
func (p *PushRegistry) Subscribe(size int) (*PushSubscription, error) {
	if size <= 0 {
		size = PushBufferSize
	}
	ch := make(chan PushRecord, size)
	s := &PushSubscription{C: ch, reg: p, ch: ch}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed != nil {
		return nil, fmt.Errorf("query %s: %w", p.queryID, p.closed)
	}
	p.subs[s] = struct{}{}
	p.n.Add(1)
	return s, nil
}

// Subscribers is the number of subscriptions now.
func (p *PushRegistry) Subscribers() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.subs)
}

// Unsubscribe ends the subscription; C is closed.
func (s *PushSubscription) Unsubscribe() { s.reg.end(s, nil) }

// Err reports why the subscription ended: ErrPushSubscriberBehind,
// ErrPushSourceStopped, or nil while it runs or after Unsubscribe.
func (s *PushSubscription) Err() error {
	s.reg.mu.Lock()
	defer s.reg.mu.Unlock()
	return s.err
}

// end removes s; every send and close of s.ch happens under p.mu.
func (p *PushRegistry) end(s *PushSubscription, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked(s, err)
}

func (p *PushRegistry) endLocked(s *PushSubscription, err error) {
	if _, ok := p.subs[s]; !ok {
		return
	}
	delete(p.subs, s)
	p.n.Add(-1)
	s.err = err
	close(s.ch)
}

// produced publishes a record the runner's producer wrote to the sink.
func (p *PushRegistry) produced(kr *kgo.Record, hold bool) {
	if p.n.Load() == 0 {
		return
	}
	rec := PushRecord{Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value, Timestamp: kr.Timestamp.UnixMilli()}
	for _, h := range kr.Headers {
		rec.Headers = append(rec.Headers, Header{Key: h.Key, Value: h.Value})
	}
	p.publish(rec, hold)
}

// publish hands rec to every subscriber, dropping those whose buffer is
// full. hold keeps it until commit instead (exactly-once).
func (p *PushRegistry) publish(rec PushRecord, hold bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.subs) == 0 {
		return // nobody subscribed before this record was written
	}
	if hold {
		p.held = append(p.held, rec)
		return
	}
	p.sendLocked(rec)
}

func (p *PushRegistry) sendLocked(rec PushRecord) {
	for s := range p.subs {
		select {
		case s.ch <- rec:
		default:
			p.endLocked(s, ErrPushSubscriberBehind)
		}
	}
}

// committed publishes the held records of a committed transaction, or
// drops those of an aborted one.
func (p *PushRegistry) committed(ok bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok {
		for _, rec := range p.held {
			p.sendLocked(rec)
		}
	}
	clear(p.held)
	p.held = p.held[:0]
}

// Close ends every subscription with err (ErrPushSourceStopped when nil)
// and refuses new ones.
func (p *PushRegistry) Close(err error) {
	if p == nil {
		return
	}
	if err == nil {
		err = ErrPushSourceStopped
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = err
	for s := range p.subs {
		p.endLocked(s, err)
	}
	p.held = nil
}
