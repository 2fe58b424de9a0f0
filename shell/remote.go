package shell

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/topicprint"
)

// Remote runs statements on a `sluice server` (or ksqlDB) over its REST
// API: /ksql for statements, /query-stream for queries, /close-query to
// stop one. Like ksqlDB's CLI it keeps SET properties itself and sends
// them with every request, because the server applies SET only to the
// request that carries it.
type Remote struct {
	base       string
	user, pass string
	hc         *http.Client

	mu    sync.Mutex
	props map[string]string
	// names caches completion names; statements that may change the
	// catalog clear it.
	names *Names
	// tables are the tables' upper-cased names, to tell a pull query
	// (SELECT from a table without EMIT) from a push query.
	tables map[string]bool
}

var _ Backend = (*Remote)(nil)

// NewRemote returns a client of the server at rawURL. Credentials come
// from user and password, else from the URL's userinfo.
func NewRemote(rawURL, user, password string) (*Remote, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http(s)://host:port", rawURL)
	}
	if u.User != nil && user == "" {
		user = u.User.Username()
		password, _ = u.User.Password()
	}
	u.User = nil
	return &Remote{base: strings.TrimRight(u.String(), "/"), user: user, pass: password, hc: &http.Client{},
		props: map[string]string{}}, nil
}

// RemoteError is an error the server answered with.
type RemoteError struct {
	Status  int
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Ping checks that the server answers and accepts the credentials, so a
// wrong URL fails at start rather than at the first statement.
func (r *Remote) Ping(ctx context.Context) error {
	resp, err := r.post(ctx, "/ksql", ksqlwire.KsqlRequest{KSQL: "LIST PROPERTIES;"}, "application/json")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Execute implements Backend.
func (r *Remote) Execute(ctx context.Context, p parser.Parsed) (*Result, error) {
	switch st := p.Stmt.(type) {
	case *parser.SetProperty:
		// The server knows which properties it takes (a ksqlDB server more
		// than Sluice's table): a SET alone in /ksql changes nothing there,
		// and is refused as the server refuses it.
		resp, err := r.post(ctx, "/ksql", map[string]any{"ksql": p.Text + ";"}, "application/json")
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		r.mu.Lock()
		r.props[st.Name] = st.Value
		r.mu.Unlock()
		return &Result{Message: fmt.Sprintf("Successfully changed local property '%s' to '%s'.", st.Name, st.Value)}, nil
	case *parser.UnsetProperty:
		r.mu.Lock()
		for k := range r.props {
			if slices.Contains(engine.UnsetNames(st.Name), strings.ToLower(k)) {
				delete(r.props, k)
			}
		}
		r.mu.Unlock()
		return &Result{Message: fmt.Sprintf("Successfully unset local property '%s'.", st.Name)}, nil
	case *parser.Select:
		return r.query(ctx, p.Text, st)
	case *parser.Print:
		return r.print(ctx, p.Text)
	}
	r.mu.Lock()
	r.names = nil
	props := r.propsCopy()
	r.mu.Unlock()
	ents, err := r.ksql(ctx, p.Text+";", props)
	if err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		if _, ok := p.Stmt.(*parser.InsertValues); ok {
			return &Result{Message: "1 row inserted"}, nil
		}
		return &Result{}, nil
	}
	return wireResult(ents[0], p), nil
}

func (r *Remote) propsCopy() map[string]string {
	m := make(map[string]string, len(r.props))
	for k, v := range r.props {
		m[k] = v
	}
	return m
}

// post sends a JSON request and returns the response when its status is
// 200; other answers become a *RemoteError with the server's message.
func (r *Remote) post(ctx context.Context, path string, body any, accept string) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if r.user != "" {
		req.SetBasicAuth(r.user, r.pass)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", r.base, err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var eb ksqlwire.Error
	if json.Unmarshal(raw, &eb) != nil || eb.Message == "" {
		eb.Message = strings.TrimSpace(string(raw))
	}
	if resp.StatusCode == http.StatusUnauthorized {
		eb.Message = "the server refused the credentials (--user/--password, or user:password@ in the URL): " + eb.Message
	}
	return nil, &RemoteError{Status: resp.StatusCode, Message: eb.Message}
}

// query starts a push or pull query over /query-stream.
func (r *Remote) query(ctx context.Context, text string, sel *parser.Select) (*Result, error) {
	pull := false
	if sel.Emit == parser.EmitNone && sel.From != nil {
		r.Names(ctx)
		r.mu.Lock()
		pull = r.tables[strings.ToUpper(sel.From.Name)]
		r.mu.Unlock()
	}
	r.mu.Lock()
	props := r.propsCopy()
	r.mu.Unlock()
	// The request outlives Execute: it ends when the rows do or Close
	// cancels it.
	qctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	resp, err := r.post(qctx, "/query-stream", ksqlwire.QueryStreamRequest{SQL: text + ";", Properties: toAny(props)}, "application/vnd.ksqlapi.delimited.v1")
	if err != nil {
		cancel()
		return nil, err
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadBytes('\n')
	if err != nil {
		cancel()
		resp.Body.Close()
		return nil, fmt.Errorf("read query header: %w", err)
	}
	var hdr ksqlwire.QueryStreamHeader
	if err := json.Unmarshal(line, &hdr); err != nil {
		cancel()
		resp.Body.Close()
		return nil, fmt.Errorf("query header %q: %w", line, err)
	}
	rs := &remoteRows{r: r, id: hdr.QueryID, pull: pull, cancel: cancel, body: resp.Body, rows: make(chan remoteRow, 64)}
	for i, n := range hdr.ColumnNames {
		c := Column{Name: n}
		if i < len(hdr.ColumnTypes) {
			c.Type = hdr.ColumnTypes[i]
		}
		rs.cols = append(rs.cols, c)
	}
	go rs.read(br)
	return &Result{Rows: rs}, nil
}

type remoteRow struct {
	row []any
	err error
}

// remoteRows reads a /query-stream response: one JSON array per line.
type remoteRows struct {
	r      *Remote
	id     string
	cols   []Column
	pull   bool
	cancel context.CancelFunc
	body   io.ReadCloser
	rows   chan remoteRow
	once   sync.Once
}

func (q *remoteRows) Columns() []Column { return q.cols }
func (q *remoteRows) Pull() bool        { return q.pull }

func (q *remoteRows) read(br *bufio.Reader) {
	defer close(q.rows)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			var row []any
			if derr := dec.Decode(&row); derr != nil {
				q.rows <- remoteRow{err: fmt.Errorf("query row %q: %w", line, derr)}
				return
			}
			q.rows <- remoteRow{row: row}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
				q.rows <- remoteRow{err: fmt.Errorf("query stream: %w", err)}
			}
			return
		}
	}
}

func (q *remoteRows) Next(ctx context.Context) ([]any, bool, error) {
	return nextRemoteRow(ctx, q.rows)
}

// nextRemoteRow takes the next row a remote stream's reader delivered.
func nextRemoteRow(ctx context.Context, rows <-chan remoteRow) ([]any, bool, error) {
	select {
	case r, ok := <-rows:
		if !ok {
			return nil, false, nil
		}
		if r.err != nil {
			return nil, false, r.err
		}
		return r.row, true, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// Close asks the server to end the query, then drops the connection
// (either alone would do; both make sure the server stops promptly).
func (q *remoteRows) Close() error {
	var err error
	q.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var resp *http.Response
		if resp, err = q.r.post(ctx, "/close-query", ksqlwire.CloseQueryRequest{QueryID: q.id}, "application/json"); err == nil {
			resp.Body.Close()
		}
		var re *RemoteError
		if errors.As(err, &re) {
			err = nil // the query had already ended (LIMIT)
		}
		q.cancel()
		q.body.Close()
		for range q.rows {
		}
	})
	return err
}

// print runs PRINT over /query, where the server streams one text line
// per record (topicprint.Line); the rows are read back from the lines.
func (r *Remote) print(ctx context.Context, text string) (*Result, error) {
	r.mu.Lock()
	props := r.propsCopy()
	r.mu.Unlock()
	// The request outlives Execute: it ends when the lines do or Close
	// cancels it.
	qctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	resp, err := r.post(qctx, "/query", ksqlwire.KsqlRequest{KSQL: text + ";", StreamsProperties: toAny(props)}, "application/json")
	if err != nil {
		cancel()
		return nil, err
	}
	rs := &remotePrintRows{cancel: cancel, body: resp.Body, rows: make(chan remoteRow, 64)}
	go rs.read(bufio.NewReader(resp.Body))
	return &Result{Rows: rs}, nil
}

// remotePrintRows reads a PRINT response. Closing it drops the
// connection, which ends the PRINT on the server.
type remotePrintRows struct {
	cancel context.CancelFunc
	body   io.ReadCloser
	rows   chan remoteRow
	once   sync.Once
}

func (q *remotePrintRows) Columns() []Column { return printColumns }
func (q *remotePrintRows) Pull() bool        { return false }

func (q *remotePrintRows) read(br *bufio.Reader) {
	defer close(q.rows)
	for {
		line, err := br.ReadString('\n')
		if rec, ok, perr := topicprint.ParseLine(line); perr != nil {
			q.rows <- remoteRow{err: perr}
			return
		} else if ok {
			q.rows <- remoteRow{row: printRow(rec)}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
				q.rows <- remoteRow{err: fmt.Errorf("PRINT stream: %w", err)}
			}
			return
		}
	}
}

func (q *remotePrintRows) Next(ctx context.Context) ([]any, bool, error) {
	return nextRemoteRow(ctx, q.rows)
}

func (q *remotePrintRows) Close() error {
	q.once.Do(func() {
		q.cancel()
		q.body.Close()
		for range q.rows {
		}
	})
	return nil
}

// Names implements Backend: LIST STREAMS, LIST TABLES and a DESCRIBE of
// each source, cached until the next statement that is not a query.
func (r *Remote) Names(ctx context.Context) Names {
	r.mu.Lock()
	if r.names != nil {
		defer r.mu.Unlock()
		return *r.names
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	n := Names{Functions: functionNames()}
	tables := map[string]bool{}
	ents, err := r.ksql(ctx, "LIST STREAMS; LIST TABLES; LIST TOPICS;", nil)
	if err != nil {
		return n
	}
	var describe strings.Builder
	for _, ent := range ents {
		switch e := ent.(type) {
		case *ksqlwire.SourceList:
			for _, list := range []*[]ksqlwire.SourceInfo{e.Streams, e.Tables} {
				if list == nil {
					continue
				}
				for _, s := range *list {
					n.Sources = append(n.Sources, s.Name)
					fmt.Fprintf(&describe, "DESCRIBE `%s`; ", s.Name)
					if list == e.Tables {
						tables[strings.ToUpper(s.Name)] = true
					}
				}
			}
		case *ksqlwire.KafkaTopics:
			for _, t := range e.Topics {
				n.Topics = append(n.Topics, t.Name)
			}
		}
	}
	cols := map[string]bool{}
	if describe.Len() > 0 {
		descs, _ := r.ksql(ctx, describe.String(), nil)
		for _, ent := range descs {
			if d, ok := ent.(*ksqlwire.SourceDescriptionEntity); ok {
				for _, f := range d.SourceDescription.Fields {
					cols[f.Name] = true
				}
			}
		}
	}
	for c := range cols {
		n.Columns = append(n.Columns, c)
	}
	sort.Strings(n.Sources)
	sort.Strings(n.Columns)
	r.mu.Lock()
	r.names, r.tables = &n, tables
	r.mu.Unlock()
	return n
}

// ksql runs statements on /ksql and decodes the entities of the answer.
func (r *Remote) ksql(ctx context.Context, text string, props map[string]string) ([]ksqlwire.Entity, error) {
	resp, err := r.post(ctx, "/ksql", ksqlwire.KsqlRequest{KSQL: text, StreamsProperties: toAny(props)}, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read /ksql response: %w", err)
	}
	ents, err := ksqlwire.DecodeEntities(body)
	if err != nil {
		return nil, fmt.Errorf("read /ksql response: %w", err)
	}
	return ents, nil
}

// toAny is a property map as a request's JSON object; nil stays nil.
func toAny(m map[string]string) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Close implements Backend; a server's queries keep running.
func (r *Remote) Close() error {
	r.hc.CloseIdleConnections()
	return nil
}

// schemaText prints a type the way the server's JSON describes it (kind
// names, members in angle brackets).
func schemaText(s ksqlwire.SchemaInfo) string {
	switch s.Type {
	case "ARRAY":
		if s.MemberSchema != nil {
			return "ARRAY<" + schemaText(*s.MemberSchema) + ">"
		}
	case "MAP":
		if s.MemberSchema != nil {
			return "MAP<STRING, " + schemaText(*s.MemberSchema) + ">"
		}
	case "STRUCT":
		var parts []string
		for _, f := range s.Fields {
			parts = append(parts, f.Name+" "+schemaText(f.Schema))
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">"
	}
	return s.Type
}

// wireResult reduces an entity of the server's answer to what the shell
// prints.
func wireResult(ent ksqlwire.Entity, p parser.Parsed) *Result {
	switch e := ent.(type) {
	case *ksqlwire.AssertTopic:
		return assertResult("Topic "+e.TopicName, e.Exists)
	case *ksqlwire.AssertSchema:
		what := "Schema with"
		if e.Subject != nil {
			what += " subject name " + *e.Subject
		}
		if e.ID != nil {
			what += " id " + strconv.Itoa(*e.ID)
		}
		return assertResult(what, e.Exists)
	case *ksqlwire.SourceList:
		kind, list := parser.KindStream, e.Streams
		if e.Tables != nil {
			kind, list = parser.KindTable, e.Tables
		}
		var rows []sourceRow
		if list != nil {
			for _, s := range *list {
				rows = append(rows, sourceRow{s.Name, s.Topic, s.KeyFormat, s.ValueFormat, s.IsWindowed})
			}
		}
		return &Result{Table: sourceTable(kind, rows)}
	case *ksqlwire.Queries:
		var rows []queryRow
		for _, q := range e.Queries {
			rows = append(rows, queryRow{q.ID, q.State, strings.Join(q.Sinks, ","), strings.Join(q.SinkKafkaTopics, ","), q.QueryString})
		}
		return &Result{Table: queryTable(rows)}
	case *ksqlwire.KafkaTopics:
		t := &Table{Columns: []string{"Kafka Topic", "Partitions", "Partition Replicas"}}
		for _, tp := range e.Topics {
			t.Rows = append(t.Rows, []string{tp.Name, fmt.Sprint(len(tp.ReplicaInfo)), replicaText(tp.ReplicaInfo)})
		}
		return &Result{Table: t}
	case *ksqlwire.TypeList:
		var list []typeRow
		for name, s := range e.Types {
			list = append(list, typeRow{name, schemaText(s)})
		}
		return &Result{Table: typeTable(list)}
	case *ksqlwire.Properties:
		t := &Table{Columns: []string{"Property", "Value"}}
		for _, pr := range e.Properties {
			t.Rows = append(t.Rows, []string{pr.Name, pr.Value})
		}
		return &Result{Table: t}
	case *ksqlwire.SourceDescriptionEntity:
		x := e.SourceDescription
		d := description{Name: x.Name, Kind: x.Type, Topic: x.Topic, Partitions: x.Partitions, KeyFormat: x.KeyFormat,
			ValueFormat: x.ValueFormat, Timestamp: x.Timestamp, Statistics: x.Statistics, ErrorStats: x.ErrorStats}
		if x.WindowType != nil {
			d.WindowType = *x.WindowType
		}
		for _, q := range x.WriteQueries {
			d.WrittenBy = append(d.WrittenBy, q.ID)
		}
		for _, q := range x.ReadQueries {
			d.ReadBy = append(d.ReadBy, q.ID)
		}
		for _, f := range x.Fields {
			d.Fields = append(d.Fields, fieldRow{f.Name, schemaText(f.Schema), f.Type == "KEY"})
		}
		res := d.result()
		for _, w := range e.Warnings {
			res.After += w.Message + "\n"
		}
		return res
	case *ksqlwire.QueryDescriptionEntity:
		text := e.QueryDescription.Topology
		for _, w := range e.Warnings {
			text += w.Message + "\n"
		}
		if ex, ok := p.Stmt.(*parser.Explain); ok && ex.Statement == nil {
			text = e.QueryDescription.StatementText + "\n\n" + text
		}
		return &Result{Text: text}
	case *ksqlwire.FunctionNames:
		list := make([]functionRow, 0, len(e.Functions))
		for _, f := range e.Functions {
			list = append(list, functionRow{f.Name, f.Type, f.Category})
		}
		return &Result{Table: functionTable(list)}
	case *ksqlwire.FunctionDescription:
		return functionDescription{e.Name, e.FunctionType, e.Description, e.Functions}.result()
	case *ksqlwire.CurrentStatus:
		return &Result{Message: e.CommandStatus.Message}
	case *ksqlwire.ConnectorInfoEntity:
		return &Result{Message: "Created connector " + e.Info.Name}
	case *ksqlwire.DropConnectorEntity:
		return &Result{Message: `Dropped connector "` + e.ConnectorName + `"`}
	case *ksqlwire.WarningEntity:
		return &Result{Message: e.Message}
	case *ksqlwire.ConnectorList:
		return connectorListTable(e)
	case *ksqlwire.ConnectorPluginsList:
		return connectorPluginsTable(e)
	case *ksqlwire.ConnectorDescription:
		return connectorDescription(e)
	case *ksqlwire.Unknown:
		// Saying what came is better than printing nothing, as the shell
		// did for function lists before it knew them.
		return &Result{Message: fmt.Sprintf("(the server answered a %q entity, which this shell cannot print)", e.Type)}
	}
	return &Result{Message: fmt.Sprintf("(the server answered a %T entity, which this shell cannot print)", ent)}
}

// assertResult is ASSERT's answer: what was asserted, and whether it exists.
func assertResult(what string, exists bool) *Result {
	if exists {
		return &Result{Message: what + " exists"}
	}
	return &Result{Message: what + " does not exist"}
}
