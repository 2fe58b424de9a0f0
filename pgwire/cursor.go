package pgwire

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/pgcatalog"
	"github.com/sluice-sql/sluice/types"
)

// fetchLinger is how long FETCH on a push query's cursor waits for more
// rows once it has one: FETCH n returns when n rows arrived, the query
// ended, or no further row came within fetchLinger of the last.
const fetchLinger = 100 * time.Millisecond

// cursor is a DECLAREd query the session reads with FETCH.
type cursor struct {
	name   string
	rows   Rows
	cols   []column
	push   bool
	binary bool
	done   bool
}

// Cursor statements, as Postgres spells them. A name is an identifier,
// folded to lower case, or a quoted one.
var (
	declareRE = regexp.MustCompile(`(?is)^\s*DECLARE\s+("(?:[^"]|"")+"|[\p{L}_][\p{L}\p{N}_$]*)\s+(BINARY\s+)?(?:INSENSITIVE\s+)?(?:NO\s+SCROLL\s+|SCROLL\s+)?CURSOR\s+(?:(?:WITH|WITHOUT)\s+HOLD\s+)?FOR\s+(.+?)\s*;?\s*$`)
	fetchRE   = regexp.MustCompile(`(?is)^\s*(FETCH|MOVE)\s+(?:(FORWARD)\s+)?(?:(ALL|NEXT|[+]?\d+)\s+)?(?:(?:FROM|IN)\s+)?("(?:[^"]|"")+"|[\p{L}_][\p{L}\p{N}_$]*)\s*;?\s*$`)
	closeRE   = regexp.MustCompile(`(?is)^\s*CLOSE\s+("(?:[^"]|"")+"|[\p{L}_][\p{L}\p{N}_$]*)\s*;?\s*$`)
)

// cursorName is a name as Postgres reads it: quoted kept, else lower.
func cursorName(s string) string {
	if strings.HasPrefix(s, `"`) {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return strings.ToLower(s)
}

// prepareCursor recognises DECLARE, FETCH, MOVE and CLOSE; ok is false
// for any other statement.
func (ss *session) prepareCursor(text string, declared []uint32) (statement, bool, error) {
	if m := declareRE.FindStringSubmatch(text); m != nil {
		inner, err := ss.prepareSluice(m[3], declared)
		if err != nil {
			return nil, true, err
		}
		return &declareStatement{name: cursorName(m[1]), binary: m[2] != "", query: inner}, true, nil
	}
	if m := fetchRE.FindStringSubmatch(text); m != nil {
		// Without a count (FETCH c, FETCH FORWARD c, FETCH NEXT c): one row.
		var count int
		switch c := strings.ToUpper(m[3]); c {
		case "", "NEXT":
			count = 1
		case "ALL":
			count = -1
		default:
			n, err := strconv.Atoi(strings.TrimPrefix(c, "+"))
			if err != nil {
				return nil, true, &pgError{code: pgcatalog.CodeSyntaxError, message: "invalid FETCH count: " + c}
			}
			count = n
		}
		return &fetchStatement{name: cursorName(m[4]), count: count, move: strings.EqualFold(m[1], "MOVE")}, true, nil
	}
	if m := closeRE.FindStringSubmatch(text); m != nil {
		if strings.EqualFold(m[1], "ALL") {
			return &closeStatement{all: true}, true, nil
		}
		return &closeStatement{name: cursorName(m[1])}, true, nil
	}
	return nil, false, nil
}

// declareStatement starts a query as a cursor.
type declareStatement struct {
	name string
	// binary is DECLARE … BINARY CURSOR: FETCH answers in binary unless
	// a Bind asks otherwise.
	binary bool
	query  *sluiceStatement
}

func (d *declareStatement) paramOIDs() []uint32                                 { return d.query.paramOIDs() }
func (d *declareStatement) empty() bool                                         { return false }
func (d *declareStatement) columns(context.Context, *session) ([]column, error) { return nil, nil }

func (d *declareStatement) run(ctx context.Context, ss *session, params []any) (*outcome, error) {
	if _, exists := ss.cursors[d.name]; exists {
		return nil, &pgError{code: codeDuplicateCursor, message: `cursor "` + d.name + `" already exists`}
	}
	out, err := d.query.run(ctx, ss, params)
	if err != nil {
		return nil, err
	}
	if out.rows == nil {
		out.close()
		return nil, &pgError{code: "42P11", message: "cursor can only scan a query that returns rows"}
	}
	ss.cursors[d.name] = &cursor{name: d.name, rows: out.rows, cols: out.cols, push: out.push, binary: d.binary}
	return &outcome{fixedTag: "DECLARE CURSOR"}, nil
}

// fetchStatement reads (or, for MOVE, skips) rows of a cursor; count
// -1 is ALL.
type fetchStatement struct {
	name  string
	count int
	move  bool
}

func (f *fetchStatement) paramOIDs() []uint32 { return nil }
func (f *fetchStatement) empty() bool         { return false }

func (f *fetchStatement) cursor(ss *session) (*cursor, error) {
	c, ok := ss.cursors[f.name]
	if !ok {
		return nil, &pgError{code: codeInvalidCursorName, message: `cursor "` + f.name + `" does not exist`}
	}
	return c, nil
}

func (f *fetchStatement) columns(_ context.Context, ss *session) ([]column, error) {
	c, err := f.cursor(ss)
	if err != nil || f.move {
		return nil, err
	}
	return c.cols, nil
}

func (f *fetchStatement) run(ctx context.Context, ss *session, _ []any) (*outcome, error) {
	c, err := f.cursor(ss)
	if err != nil {
		return nil, err
	}
	rows, err := c.fetch(ctx, f.count)
	if err != nil {
		return nil, err
	}
	if f.move {
		return &outcome{fixedTag: "MOVE " + strconv.Itoa(len(rows))}, nil
	}
	return &outcome{cols: c.cols, rows: &anyRows{rows: rows}, tagPrefix: "FETCH", binary: c.binary}, nil
}

// fetch reads up to n rows (n < 0: all). A pull query's rows are all
// there; on a push query it waits for the first row as long as it takes
// (a CancelRequest ends the wait), then takes what arrives within
// fetchLinger of the previous row, so FETCH returns at least one row
// unless the query ended.
func (c *cursor) fetch(ctx context.Context, n int) ([][]any, error) {
	var out [][]any
	for !c.done && (n < 0 || len(out) < n) {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if c.push && len(out) > 0 {
			rctx, cancel = context.WithTimeout(ctx, fetchLinger)
		}
		row, ok, err := c.rows.Next(rctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				break // no further row within fetchLinger
			}
			return out, err
		}
		if !ok {
			c.done = true
			break
		}
		out = append(out, row)
	}
	return out, nil
}

// closeStatement closes one cursor or all.
type closeStatement struct {
	name string
	all  bool
}

func (c *closeStatement) paramOIDs() []uint32                                 { return nil }
func (c *closeStatement) empty() bool                                         { return false }
func (c *closeStatement) columns(context.Context, *session) ([]column, error) { return nil, nil }

func (c *closeStatement) run(_ context.Context, ss *session, _ []any) (*outcome, error) {
	if c.all {
		for name, cur := range ss.cursors {
			cur.rows.Close()
			delete(ss.cursors, name)
		}
		return &outcome{fixedTag: "CLOSE CURSOR ALL"}, nil
	}
	cur, ok := ss.cursors[c.name]
	if !ok {
		return nil, &pgError{code: codeInvalidCursorName, message: `cursor "` + c.name + `" does not exist`}
	}
	cur.rows.Close()
	delete(ss.cursors, c.name)
	return &outcome{fixedTag: "CLOSE CURSOR"}, nil
}

// cursorRows read a cursor's rows as a portal's; the cursor stays open
// until CLOSE.
type cursorRows struct{ c *cursor }

func (r cursorRows) Columns() types.Schema { return r.c.rows.Columns() }
func (r cursorRows) Push() bool            { return r.c.push }
func (r cursorRows) Close()                {}

func (r cursorRows) Next(ctx context.Context) ([]any, bool, error) {
	if r.c.done {
		return nil, false, nil
	}
	row, ok, err := r.c.rows.Next(ctx)
	if !ok && err == nil {
		r.c.done = true
	}
	return row, ok, err
}
