package shell

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/topicprint"
)

// printColumns are PRINT's columns, the parts of ksqlDB's PRINT line:
// the record's timestamp, its partition, and key and value as text
// (PRINT shows a topic's bytes without knowing its formats). Both
// backends fill them from a topicprint.Record, so PRINT prints the same
// with and without --server.
var printColumns = []Column{
	{Name: "ROWTIME", Type: "VARCHAR", Width: len(rowtimeExample)}, {Name: "PARTITION", Type: "INTEGER"},
	{Name: "KEY", Type: "VARCHAR"}, {Name: "VALUE", Type: "VARCHAR"},
}

// rowtimeExample is as wide as every ROWTIME topicprint writes, so a
// record's time stays on one line.
const rowtimeExample = "2026/05/24 12:00:00.000 Z"

func printRow(r topicprint.Record) []any {
	return []any{r.Rowtime, int64(r.Partition), optText(r.Key), optText(r.Value)}
}

// optText is a key or value as a row value: NULL for none (a
// tombstone's value).
func optText(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// print runs PRINT 'topic' [FROM BEGINNING] [INTERVAL n] [LIMIT n] with
// its own consumer, as a row stream so it prints like a push query and
// stops the same way.
func (b *Embedded) print(ctx context.Context, st *parser.Print) (*Result, error) {
	if b.conn == nil {
		return nil, errors.New("PRINT needs a Kafka connection")
	}
	rd, err := topicprint.Open(ctx, b.conn, st)
	if err != nil {
		return nil, err
	}
	return &Result{Rows: &printRows{rd: rd}}, nil
}

type printRows struct {
	rd   *topicprint.Reader
	once sync.Once
}

func (p *printRows) Columns() []Column { return printColumns }
func (p *printRows) Pull() bool        { return false }

func (p *printRows) Next(ctx context.Context) ([]any, bool, error) {
	rec, err := p.rd.Next(ctx)
	if errors.Is(err, io.EOF) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return printRow(rec), true, nil
}

func (p *printRows) Close() error {
	p.once.Do(p.rd.Close)
	return nil
}
