package engine

import (
	"sync"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/types"
)

// rowFeed hands a transient plan's rows to a RowStream: each row the
// plan's callback gets goes on the stream's channel, until the query's
// LIMIT, a Close or the end of its input. Push queries and scalable push
// queries share it.
type rowFeed struct {
	mu    sync.Mutex
	ch    chan StreamRow
	limit int // 0: none
	count int
	done  bool
}

func newRowFeed(limit int) *rowFeed { return &rowFeed{ch: make(chan StreamRow, 256), limit: limit} }

// stream is the RowStream the feed fills; its stop is the caller's to set.
func (f *rowFeed) stream(cols types.Schema, id string) *RowStream {
	return &RowStream{Columns: cols, C: f.ch, QueryID: id, closed: make(chan struct{})}
}

// collect is the plan's callback (exec.CallbackNode.Fn). It may be
// called from several tasks at once; onLimit runs once, in a goroutine of
// its own, when the LIMIT is reached.
func (f *rowFeed) collect(rs *RowStream, onLimit func()) func(*exec.Row) {
	return func(row *exec.Row) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.done {
			return
		}
		select {
		case f.ch <- StreamRow{Cols: append([]any(nil), row.Cols...), Tombstone: row.Tombstone}:
		case <-rs.closed:
			f.finish()
			return
		}
		f.count++
		if f.limit > 0 && f.count >= f.limit {
			f.finish()
			go onLimit()
		}
	}
}

// end closes the stream's channel; err, when the feed had not ended
// already, is why the query ended (RowStream.Err).
func (f *rowFeed) end(rs *RowStream, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		rs.err = err
	}
	f.finish()
}

// finish closes the channel once; f.mu is held.
func (f *rowFeed) finish() {
	if !f.done {
		f.done = true
		close(f.ch)
	}
}
