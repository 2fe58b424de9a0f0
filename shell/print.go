package shell

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/parser"
)

// printColumns are PRINT's columns: where each record is, its timestamp,
// and key and value as text (PRINT shows a topic's bytes without knowing
// its formats).
var printColumns = []Column{
	{Name: "ROWTIME", Type: "VARCHAR"}, {Name: "PARTITION", Type: "INTEGER"}, {Name: "OFFSET", Type: "BIGINT"},
	{Name: "KEY", Type: "VARCHAR"}, {Name: "VALUE", Type: "VARCHAR"},
}

// print runs PRINT 'topic' [FROM BEGINNING] [INTERVAL n] [LIMIT n] with
// its own consumer (no group: nothing is committed), as a row stream so
// it prints like a push query and stops the same way.
func (b *Embedded) print(ctx context.Context, st *parser.Print) (*Result, error) {
	if b.conn == nil {
		return nil, errors.New("PRINT needs a Kafka connection")
	}
	start := kgo.NewOffset().AtEnd()
	if st.FromBeginning {
		start = kgo.NewOffset().AtStart()
	}
	opts := append([]kgo.Opt{}, b.conn...)
	opts = append(opts, kgo.ConsumeTopics(st.Topic), kgo.ConsumeResetOffset(start))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("PRINT %s: %w", st.Topic, err)
	}
	// A missing topic would wait forever; say so instead.
	if ok, err := topicExists(ctx, cl, st.Topic); err != nil || !ok {
		cl.Close()
		if err != nil {
			return nil, fmt.Errorf("PRINT %s: %w", st.Topic, err)
		}
		return nil, fmt.Errorf("topic %s does not exist", st.Topic)
	}
	limit := -1
	if st.HasLimit {
		limit = st.Limit
	}
	every := max(st.Interval, 1)
	rs := &printRows{cl: cl, rows: make(chan []any, 64), done: make(chan struct{})}
	go rs.run(limit, every)
	return &Result{Rows: rs}, nil
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

type printRows struct {
	cl   *kgo.Client
	rows chan []any
	done chan struct{}
	once sync.Once
	err  error
}

func (p *printRows) run(limit, every int) {
	defer close(p.rows)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.done
		cancel()
	}()
	seen, sent := 0, 0
	for limit < 0 || sent < limit {
		fs := p.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		if errs := fs.Errors(); len(errs) > 0 {
			p.err = fmt.Errorf("PRINT: %w", errs[0].Err)
			return
		}
		for _, r := range fs.Records() {
			seen++
			if (seen-1)%every != 0 {
				continue
			}
			row := []any{r.Timestamp.UTC().Format("2006-01-02 15:04:05.000"), int64(r.Partition), r.Offset, bytesText(r.Key), bytesText(r.Value)}
			select {
			case p.rows <- row:
			case <-p.done:
				return
			}
			if sent++; limit >= 0 && sent >= limit {
				return
			}
		}
	}
}

// bytesText shows bytes as a string, NULL for none (a tombstone's value).
func bytesText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func (p *printRows) Columns() []Column { return printColumns }
func (p *printRows) Pull() bool        { return false }

func (p *printRows) Next(ctx context.Context) ([]any, bool, error) {
	select {
	case row, ok := <-p.rows:
		if !ok {
			return nil, false, p.err
		}
		return row, true, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

func (p *printRows) Close() error {
	p.once.Do(func() {
		close(p.done)
		for range p.rows {
		}
		p.cl.Close()
	})
	return nil
}
