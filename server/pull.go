package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/engine"
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
)

// forwardTimeout bounds one forwarded pull query.
const forwardTimeout = 30 * time.Second

// maxForwardedBytes bounds the response of one forwarded pull query.
const maxForwardedBytes = 256 << 20

// pullResult is a pull query's answer gathered from every owner.
type pullResult struct {
	queryID     string
	columns     types.Schema
	rows        []json.RawMessage // JSON arrays, values as ksqlDB renders them
	forwardedTo []string
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
	target, ok, err := s.eng.PullTarget(sel)
	if err != nil {
		statementError(w, codeBadStatement, engine.FormatError(sql, err), stmtText(stmts[0]), nil)
		return nil, true
	}
	if !ok {
		return nil, false
	}
	if s.shuttingDown() {
		genericError(w, http.StatusServiceUnavailable, codeUnavailable, "The server is shutting down")
		return nil, true
	}
	ctx := engine.WithProperties(r.Context(), props)
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
		res, err := s.pullLocal(ctx, stmts[0], parts)
		if err != nil {
			s.pullError(w, sql, stmts[0], err)
			return nil, true
		}
		return res, true
	}
	var local []int32
	remote := map[string][]int32{}
	for _, p := range target.Needed {
		owner, ok := s.opts.Cluster.Owner(target.QueryID, target.Topic, p)
		switch {
		case !ok:
			s.pullError(w, sql, stmts[0], fmt.Errorf("%w: no live instance owns partition %d of %s (query %s); it may be moving between instances, try again", engine.ErrPartitionUnavailable, p, target.Topic, target.QueryID))
			return nil, true
		case owner.Self:
			local = append(local, p)
		default:
			remote[owner.URL] = append(remote[owner.URL], p)
		}
	}
	res, err = s.pullLocal(ctx, stmts[0], local)
	if err != nil {
		s.pullError(w, sql, stmts[0], err)
		return nil, true
	}
	urls := make([]string, 0, len(remote))
	for u := range remote {
		urls = append(urls, u)
	}
	sort.Strings(urls)
	answers := make([][]json.RawMessage, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = s.forward(r.Context(), u, sql, props, remote[u])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		s.pullError(w, sql, stmts[0], err)
		return nil, true
	}
	for _, a := range answers {
		res.rows = append(res.rows, a...)
	}
	if sel.HasLimit && len(res.rows) > sel.Limit {
		res.rows = res.rows[:sel.Limit]
	}
	res.forwardedTo = urls
	return res, true
}

// pullError answers a pull query that could not be answered whole: 503
// when a partition is unavailable (moving, restoring, its owner away),
// so clients know to retry, and 400 for a statement that cannot run.
func (s *Server) pullError(w http.ResponseWriter, sql string, p parser.Parsed, err error) {
	if errors.Is(err, engine.ErrPartitionUnavailable) {
		writeJSON(w, http.StatusServiceUnavailable, statementErrorBody(codeUnavailable, err.Error(), stmtText(p), []entity{}))
		return
	}
	statementError(w, codeBadStatement, engine.FormatError(sql, err), stmtText(p), nil)
}

// pullLocal runs the pull query on this instance's state of parts.
func (s *Server) pullLocal(ctx context.Context, p parser.Parsed, parts []int32) (*pullResult, error) {
	res, err := s.eng.ExecuteStatement(engine.WithPartitions(ctx, parts), p)
	if err != nil {
		return nil, err
	}
	if res.Rows == nil {
		return nil, errors.New("pull query gave no rows")
	}
	defer res.Rows.Close()
	out := &pullResult{queryID: res.Rows.QueryID, columns: res.Rows.Columns, rows: []json.RawMessage{}}
	pp := &push{rs: res.Rows}
	for row := range res.Rows.C {
		out.rows = append(out.rows, marshal(jsonRow(pp, row.Cols)))
	}
	return out, nil
}

// forward sends the pull query to the instance at url for parts and
// returns its rows.
func (s *Server) forward(ctx context.Context, url, sql string, props map[string]string, parts []int32) ([]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	body, err := json.Marshal(queryStreamRequest{SQL: sql, Properties: toAny(props)})
	if err != nil {
		return nil, fmt.Errorf("forward pull query: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+"/query-stream", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("forward pull query to %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", contentDelimited)
	req.Header.Set(ForwardedHeader, "1")
	req.Header.Set(PartitionsHeader, formatPartitions(parts))
	if s.opts.ForwardUser != "" {
		req.SetBasicAuth(s.opts.ForwardUser, s.opts.ForwardPassword)
	}
	resp, err := s.forwarder.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: partitions %s are owned by %s, which did not answer: %v", engine.ErrPartitionUnavailable, formatPartitions(parts), url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardedBytes))
	if err != nil {
		return nil, fmt.Errorf("%w: partitions %s: reading the answer of %s: %v", engine.ErrPartitionUnavailable, formatPartitions(parts), url, err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &eb) == nil && eb.Message != "" {
			msg = eb.Message
		}
		err := fmt.Errorf("partitions %s, owned by %s: %s (HTTP %d)", formatPartitions(parts), url, msg, resp.StatusCode)
		if resp.StatusCode == http.StatusServiceUnavailable {
			err = fmt.Errorf("%w: %w", engine.ErrPartitionUnavailable, err)
		}
		return nil, err
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
			return nil, fmt.Errorf("partitions %s, owned by %s: not a row: %.200s", formatPartitions(parts), url, line)
		}
		rows = append(rows, json.RawMessage(append([]byte(nil), line...)))
	}
	return rows, nil
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
