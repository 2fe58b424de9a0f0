package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/cluster"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// Headers of forwarded pull queries.
const (
	// ForwardedHeader marks a pull query one instance sends another: the
	// receiver answers from its own state for the partitions named in
	// PartitionsHeader and never forwards again, so two instances that
	// disagree about ownership for a moment cannot send a query back and
	// forth.
	ForwardedHeader = "X-Sluice-Forwarded"
	// PartitionsHeader lists the store partitions a forwarded pull query
	// asks for ("0,3").
	PartitionsHeader = "X-Sluice-Partitions"
	// ForwardedToHeader, on a pull query's response, lists the URLs of the
	// instances that answered part of it (absent when this instance
	// answered it all), so a client or a test can see where rows came from.
	ForwardedToHeader = "X-Sluice-Forwarded-To"
	// StandbyHeader, on a forwarded pull query, asks the receiver to read
	// the partitions of PartitionsHeader from its standby state (it must
	// keep a caught-up standby of each, within the request's
	// ksql.query.pull.max.allowed.offset.lag; 503 otherwise), not from
	// tasks it owns.
	StandbyHeader = "X-Sluice-Standby"
	// StandbyOfHeader, on a pull query's response, lists the partitions
	// ("1,3") whose rows came from a standby (this instance's or
	// another's) rather than their owner; absent when none did.
	StandbyOfHeader = "X-Sluice-Standby-Of"
	// KeysReadHeader, on a pull query's response on a table, is how
	// many state store entries the instances answering it read (its key
	// lookups, key ranges or scans, summed over the partitions): a range
	// reads only the keys in range.
	KeysReadHeader = "X-Sluice-Keys-Read"
	// PartitionRowsHeader, on a pull query's response on a table, groups
	// its rows, in order, by the partition they came from ("0:3,2:1": 3
	// rows of partition 0, then 1 of partition 2), so that an instance
	// gathering several owners' answers puts them in partition order.
	PartitionRowsHeader = "X-Sluice-Partition-Rows"
)

// standbyRetryWindow is how long a pull query with standby reads keeps
// asking again, standbyRetryPause apart, for partitions every candidate
// refused while they move between instances.
const standbyRetryWindow, standbyRetryPause = 5 * time.Second, 250 * time.Millisecond

// forwardTimeout bounds a pull query's answer gathered from other
// instances, every attempt included.
const forwardTimeout = 30 * time.Second

// dialTimeout bounds connecting to another instance: a host cut off
// from the network fails a forward this fast, and standby reads try the
// next instance.
const dialTimeout = 2 * time.Second

// failoverAfter is how long a forward with a fallback (standby reads,
// another instance able to answer) waits for its response to start.
const failoverAfter = 2 * time.Second

// maxForwardedBytes bounds the response of one forwarded pull query.
const maxForwardedBytes = 256 << 20

// pullResult is a pull query's answer gathered from every owner.
type pullResult struct {
	queryID     string
	columns     types.Schema
	rows        []json.RawMessage // JSON arrays, values as ksqlDB renders them
	forwardedTo []string
	// standbyOf are the partitions read from a standby.
	standbyOf []int32
	// keysRead counts the store entries read, here and by the owners
	// asked (engine.RowStream.KeysRead).
	keysRead atomic.Int64
	// parts groups rows by partition (engine.RowStream.PartitionRows).
	parts []engine.PartitionRows
}

// pull answers sql when it is a pull query and the server is one of
// several instances (Options.Cluster): the rows of the partitions this
// instance owns come from local state, the others' from their owners over
// HTTP. handled is false for anything else, which the caller runs as
// before; when handled and res is nil, the error response was written.
func (s *Server) pull(w http.ResponseWriter, r *http.Request, sql string, props map[string]string) (res *pullResult, handled bool) {
	if s.opts.Cluster == nil {
		return nil, false
	}
	stmts, err := parser.ParseScript(sql)
	if err != nil || len(stmts) != 1 {
		return nil, false // the push path reports it
	}
	sel, ok := stmts[0].Stmt.(*parser.Select)
	if !ok {
		return nil, false
	}
	ctx := engine.WithProperties(r.Context(), props)
	target, ok, err := s.eng.PullTarget(ctx, sel)
	if err != nil {
		statementError(w, codeBadStatement, errorText(sql, err), stmtText(stmts[0]), nil)
		return nil, true
	}
	if !ok {
		return nil, false
	}
	if s.shuttingDown() {
		genericError(w, http.StatusServiceUnavailable, codeUnavailable, "The server is shutting down")
		return nil, true
	}
	if r.Header.Get(ForwardedHeader) != "" {
		// Another instance's share: only what it asked for, from here.
		parts, err := parsePartitions(r.Header.Get(PartitionsHeader))
		if err != nil {
			genericError(w, http.StatusBadRequest, codeBadRequest, err.Error())
			return nil, true
		}
		if parts == nil {
			parts = target.Needed
		}
		res, err := s.pullLocal(readingOnly(ctx, parts, r.Header.Get(StandbyHeader) != ""), stmts[0])
		if err != nil {
			s.pullError(w, sql, stmts[0], err)
			return nil, true
		}
		return res, true
	}
	res, err = s.pullGathered(ctx, stmts[0], sel, sql, props, target)
	if err != nil {
		s.pullError(w, sql, stmts[0], err)
		return nil, true
	}
	return res, true
}

// pullGathered answers a pull query on a table from every instance
// holding its partitions (pullRouted), cut to its LIMIT.
func (s *Server) pullGathered(ctx context.Context, p parser.Parsed, sel *parser.Select, sql string, props map[string]string, target *engine.PullTarget) (*pullResult, error) {
	res, err := s.pullRouted(ctx, p, sql, props, target)
	if err != nil {
		return nil, err
	}
	if sel.HasLimit && len(res.rows) > sel.Limit {
		res.rows = res.rows[:sel.Limit]
	}
	return res, nil
}

// pullRouted answers a pull query from the instances holding its
// partitions: each partition from its owner (this instance's local
// state, or a forward), and, with standby reads
// (engine.PullStandbyReadsProperty), from an instance keeping a standby
// of it when the owner is not alive or does not answer. A partition no
// candidate answers fails the whole query with the last error about it.
func (s *Server) pullRouted(ctx context.Context, p parser.Parsed, sql string, props map[string]string, target *engine.PullTarget) (*pullResult, error) {
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	standbyReads := s.eng.StandbyReads(ctx)
	byPart := &partitionRows{rows: map[int32][]json.RawMessage{}}
	// The columns, whoever answers the rows.
	res, err := s.pullLocal(engine.WithPartitions(ctx, nil), p)
	if err != nil {
		return nil, err
	}
	g := &gathering{
		standbyReads: standbyReads,
		retryWindow:  standbyRetryWindow,
		retryPause:   standbyRetryPause,
		candidates: func(part int32) []answerer {
			owner, ok := s.opts.Cluster.Owner(target.QueryID, target.Topic, part)
			var standbys []cluster.Instance
			if standbyReads {
				standbys = s.opts.Cluster.Standbys(target.QueryID, target.Topic, part)
			}
			return candidates(owner, ok, ok && !owner.Self && s.suspects.suspect(owner), standbys, standbyReads)
		},
		ask: func(ctx context.Context, a answerer, parts []int32, early bool) ([]json.RawMessage, error) {
			ans, err := s.answer(ctx, a, p, sql, props, parts, early)
			if err != nil {
				return nil, err
			}
			res.keysRead.Add(ans.keys)
			byPart.add(ans.rows, ans.parts)
			return ans.rows, nil
		},
		failedOver: func(a answerer, parts []int32, err error) {
			s.log.Info("pull query: partitions not answered; trying the next instance", "partitions", formatPartitions(parts), "instance", a.url, "standby", a.standby, "err", err)
		},
		unavailable: func(part int32) error {
			what := "no live instance owns"
			if standbyReads {
				what = "no live instance owns or keeps a standby of"
			}
			return fmt.Errorf("%w: %s partition %d of %s (query %s); it may be moving between instances, try again", engine.ErrPartitionUnavailable, what, part, target.Topic, target.QueryID)
		},
	}
	gathered, err := g.run(ctx, target.Needed)
	if err != nil {
		return nil, err
	}
	if rows, ok := byPart.ordered(len(gathered.rows)); ok {
		gathered.rows = rows
	}
	res.rows = append(res.rows, gathered.rows...)
	res.forwardedTo = gathered.forwardedTo
	res.standbyOf = gathered.standbyOf
	return res, nil
}

// answer reads parts from a: this instance's state, or a forward. early
// lets a forward give up after failoverAfter without an answer.
func (s *Server) answer(ctx context.Context, a answerer, p parser.Parsed, sql string, props map[string]string, parts []int32, early bool) (answered, error) {
	if !a.self() {
		ans, err := s.forward(ctx, a.url, sql, props, parts, a.standby, early)
		switch {
		case err == nil:
			s.suspects.clear(a.url)
		case errors.Is(err, errNoAnswer) && ctx.Err() == nil:
			// Not when the client gave up or the bound passed: that
			// says nothing about the instance.
			s.suspects.mark(a.url, time.Now())
		}
		return ans, err
	}
	res, err := s.pullLocal(readingOnly(ctx, parts, a.standby), p)
	if err != nil {
		return answered{}, err
	}
	return answered{rows: res.rows, keys: res.keysRead.Load(), parts: res.parts}, nil
}

// answered is one instance's answer for some partitions: its rows, the
// store entries it read, and its rows grouped by partition (nil when
// the instance did not say).
type answered struct {
	rows  []json.RawMessage
	keys  int64
	parts []engine.PartitionRows
}

// partitionRows gathers the answers' rows by partition.
type partitionRows struct {
	mu      sync.Mutex
	rows    map[int32][]json.RawMessage
	unknown bool // an answer did not group its rows
}

func (p *partitionRows) add(rows []json.RawMessage, parts []engine.PartitionRows) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pr := range parts {
		n += pr.Rows
	}
	if n != len(rows) {
		p.unknown = len(rows) > 0 || p.unknown
		return
	}
	for _, pr := range parts {
		p.rows[pr.Partition] = append(p.rows[pr.Partition], rows[:pr.Rows]...)
		rows = rows[pr.Rows:]
	}
}

// ordered is the rows in partition order, each partition's as its
// instance read them (in key order), when every answer grouped its rows
// and they are the total gathered.
func (p *partitionRows) ordered(total int) ([]json.RawMessage, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unknown {
		return nil, false
	}
	out := make([]json.RawMessage, 0, total)
	for _, part := range slices.Sorted(maps.Keys(p.rows)) {
		out = append(out, p.rows[part]...)
	}
	return out, len(out) == total
}

// readingOnly makes a pull query read only parts of its table: from the
// tasks that own them, or from standby state.
func readingOnly(ctx context.Context, parts []int32, standby bool) context.Context {
	if standby {
		return engine.WithStandbyPartitions(ctx, parts)
	}
	return engine.WithPartitions(ctx, parts)
}

// errNoAnswer marks a forward that got no answer: no connection, none in
// time, or an answer cut off. errServer marks an answer with a 5xx status
// other than 503 (which is engine.ErrPartitionUnavailable).
var (
	errNoAnswer = errors.New("no answer")
	errServer   = errors.New("server error")
)

// noAnswer is the error of a forward that got no answer: it reads as the
// error it wraps and is errNoAnswer.
type noAnswer struct{ err error }

func (e noAnswer) Error() string      { return e.err.Error() }
func (e noAnswer) Unwrap() error      { return e.err }
func (noAnswer) Is(target error) bool { return target == errNoAnswer }

// failoverable reports whether another instance may answer what err
// failed: the partition was unavailable there, or the instance did not
// answer or failed. A statement error would fail anywhere.
func failoverable(err error) bool {
	return errors.Is(err, engine.ErrPartitionUnavailable) || errors.Is(err, errNoAnswer) || errors.Is(err, errServer)
}

// pullError answers a pull query that could not be answered whole: 503
// when a partition is unavailable (moving, restoring, its owner away),
// so clients know to retry, and 400 for a statement that cannot run.
func (s *Server) pullError(w http.ResponseWriter, sql string, p parser.Parsed, err error) {
	if errors.Is(err, engine.ErrPartitionUnavailable) {
		writeJSON(w, http.StatusServiceUnavailable, statementErrorBody(codeUnavailable, err.Error(), stmtText(p), []ksqlwire.Entity{}))
		return
	}
	statementError(w, codeBadStatement, errorText(sql, err), stmtText(p), nil)
}

// pullLocal runs the pull query on this instance's state, of the
// partitions ctx names (engine.WithPartitions, WithStandbyPartitions).
func (s *Server) pullLocal(ctx context.Context, p parser.Parsed) (*pullResult, error) {
	res, err := s.eng.ExecuteStatement(ctx, p)
	if err != nil {
		return nil, err
	}
	if res.Rows == nil {
		return nil, errors.New("pull query gave no rows")
	}
	defer res.Rows.Close()
	out := &pullResult{queryID: res.Rows.QueryID, columns: res.Rows.Columns, rows: []json.RawMessage{}}
	out.keysRead.Store(res.Rows.KeysRead)
	out.parts = res.Rows.PartitionRows
	pp := &push{rs: res.Rows}
	for row := range res.Rows.C {
		out.rows = append(out.rows, jsonRow(pp, row.Cols))
	}
	return out, nil
}

// forward sends the pull query to the instance at url for parts and
// returns its rows; standby asks for them from its standby state
// (StandbyHeader). Connecting is bounded by the forwarder's dial timeout
// and the whole answer by ctx; early also bounds the wait for the
// response to start by failoverAfter, for a caller that has another
// instance to ask: an owner that accepts connections but does not
// answer (stopped, overloaded) then costs failoverAfter, not the whole
// bound.
func (s *Server) forward(ctx context.Context, url, sql string, props map[string]string, parts []int32, standby, early bool) (answered, error) {
	role := "owned by"
	if standby {
		role = "kept on standby by"
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, err := json.Marshal(ksqlwire.QueryStreamRequest{SQL: sql, Properties: toAny(props)})
	if err != nil {
		return answered{}, fmt.Errorf("forward pull query: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+"/query-stream", bytes.NewReader(body))
	if err != nil {
		return answered{}, fmt.Errorf("forward pull query to %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", contentDelimited)
	req.Header.Set(ForwardedHeader, "1")
	req.Header.Set(PartitionsHeader, formatPartitions(parts))
	if standby {
		req.Header.Set(StandbyHeader, "1")
	}
	if s.opts.ForwardUser != "" {
		req.SetBasicAuth(s.opts.ForwardUser, s.opts.ForwardPassword)
	}
	var gaveUp atomic.Bool
	if early {
		t := time.AfterFunc(failoverAfter, func() { gaveUp.Store(true); cancel() })
		defer t.Stop()
	}
	resp, err := s.forwarder.Do(req)
	if err != nil {
		if gaveUp.Load() {
			err = fmt.Errorf("no response within %s", failoverAfter)
		}
		return answered{}, fmt.Errorf("%w: partitions %s are %s %s, which did not answer: %w", engine.ErrPartitionUnavailable, formatPartitions(parts), role, url, noAnswer{err})
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardedBytes))
	if err != nil {
		return answered{}, fmt.Errorf("%w: partitions %s: reading the answer of %s: %w", engine.ErrPartitionUnavailable, formatPartitions(parts), url, noAnswer{err})
	}
	if resp.StatusCode != http.StatusOK {
		var eb ksqlwire.Error
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &eb) == nil && eb.Message != "" {
			msg = eb.Message
		}
		err := fmt.Errorf("partitions %s, %s %s: %s (HTTP %d)", formatPartitions(parts), role, url, msg, resp.StatusCode)
		switch {
		case resp.StatusCode == http.StatusServiceUnavailable:
			err = fmt.Errorf("%w: %w", engine.ErrPartitionUnavailable, err)
		case resp.StatusCode >= 500:
			err = fmt.Errorf("%w: %w", errServer, err)
		}
		return answered{}, err
	}
	var rows []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxForwardedBytes)
	first := true
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if first { // the header object
			first = false
			continue
		}
		if !json.Valid(line) || line[0] != '[' {
			return answered{}, fmt.Errorf("partitions %s, %s %s: not a row: %.200s", formatPartitions(parts), role, url, line)
		}
		rows = append(rows, json.RawMessage(append([]byte(nil), line...)))
	}
	keys, _ := strconv.ParseInt(resp.Header.Get(KeysReadHeader), 10, 64)
	return answered{rows: rows, keys: keys, parts: parsePartitionRows(resp.Header.Get(PartitionRowsHeader))}, nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func formatPartitions(parts []int32) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

// parsePartitions reads PartitionsHeader; nil when absent.
func parsePartitions(h string) ([]int32, error) {
	if strings.TrimSpace(h) == "" {
		return nil, nil
	}
	var out []int32
	for _, f := range strings.Split(h, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: not a partition list: %q", PartitionsHeader, h)
		}
		out = append(out, int32(n))
	}
	return out, nil
}

// formatPartitionRows writes PartitionRowsHeader's value.
func formatPartitionRows(parts []engine.PartitionRows) string {
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = fmt.Sprintf("%d:%d", p.Partition, p.Rows)
	}
	return strings.Join(texts, ",")
}

// parsePartitionRows reads PartitionRowsHeader's value; nil when it is
// absent or malformed (the rows then stay in the order they came).
func parsePartitionRows(h string) []engine.PartitionRows {
	if h == "" {
		return nil
	}
	var out []engine.PartitionRows
	for _, f := range strings.Split(h, ",") {
		part, rows, ok := strings.Cut(f, ":")
		p, err1 := strconv.ParseInt(part, 10, 32)
		n, err2 := strconv.Atoi(rows)
		if !ok || err1 != nil || err2 != nil || n < 0 {
			return nil
		}
		out = append(out, engine.PartitionRows{Partition: int32(p), Rows: n})
	}
	return out
}
