package topicprint

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/parser"
)

// NoTopicError is Open's error for a topic that does not exist; its text
// is ksqlDB's.
type NoTopicError struct{ Topic string }

func (e *NoTopicError) Error() string {
	return fmt.Sprintf("Could not find topic '%s', or the KSQL user does not have permissions to list the topic. Topic names are case-sensitive.", e.Topic)
}

// Reader reads the records a PRINT statement shows: from the end of the
// topic (or its beginning with FROM BEGINNING), every INTERVAL-th, until
// LIMIT. It consumes with no group, so it commits nothing.
type Reader struct {
	cl      *kgo.Client
	every   int
	limit   int // < 0: none
	seen    int
	sent    int
	pending []*kgo.Record
}

// Open starts reading st's topic with a client of its own on conn. A
// missing topic is a *NoTopicError rather than a wait for ever.
func Open(ctx context.Context, conn []kgo.Opt, st *parser.Print) (*Reader, error) {
	start := kgo.NewOffset().AtEnd()
	if st.FromBeginning {
		start = kgo.NewOffset().AtStart()
	}
	opts := append([]kgo.Opt{}, conn...)
	opts = append(opts, kgo.ConsumeTopics(st.Topic), kgo.ConsumeResetOffset(start))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("PRINT %s: %w", st.Topic, err)
	}
	ok, err := topicExists(ctx, cl, st.Topic)
	if err != nil || !ok {
		cl.Close()
		if err != nil {
			return nil, fmt.Errorf("PRINT %s: %w", st.Topic, err)
		}
		return nil, &NoTopicError{Topic: st.Topic}
	}
	rd := &Reader{cl: cl, every: max(st.Interval, 1), limit: -1}
	if st.HasLimit {
		rd.limit = st.Limit
	}
	return rd, nil
}

func topicExists(ctx context.Context, cl *kgo.Client, topic string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, err
	}
	for _, t := range resp.Topics {
		if t.ErrorCode == 0 {
			return true, nil
		}
	}
	return false, nil
}

// Next waits for the next record to show. It returns io.EOF once LIMIT
// records were shown, and ctx's error when ctx ends first.
func (r *Reader) Next(ctx context.Context) (Record, error) {
	for {
		if r.limit >= 0 && r.sent >= r.limit {
			return Record{}, io.EOF
		}
		for len(r.pending) > 0 {
			rec := r.pending[0]
			r.pending = r.pending[1:]
			r.seen++
			if (r.seen-1)%r.every == 0 {
				r.sent++
				return FromKafka(rec), nil
			}
		}
		fs := r.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return Record{}, err
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return Record{}, fmt.Errorf("PRINT: %w", errs[0].Err)
		}
		r.pending = fs.Records()
	}
}

// Close stops reading.
func (r *Reader) Close() { r.cl.Close() }
