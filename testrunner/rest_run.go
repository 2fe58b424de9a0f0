package testrunner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/broker"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/server"
)

// Bounds of one REST case: a query that does not end (a push query whose
// LIMIT is never reached) or inputs never processed fail the case rather
// than hang the run.
const (
	restQueryTimeout  = 10 * time.Second
	restCatchUp       = 20 * time.Second
	restOutputTimeout = 10 * time.Second
)

// restDefaultPartitions is the partition count of the topics a case
// does not size, as in ksqlDB's runner (cases that need a stable order
// ask for one partition).
const restDefaultPartitions = 4

// RunREST runs one REST case against a fresh embedded broker, Schema
// Registry and `sluice server` (real engine, Badger state in a temporary
// directory) listening on loopback, talking to it over HTTP as ksqlDB's
// REST test runner talks to ksqlDB.
func RunREST(file string, c *RESTCase) (res Result) {
	res = Result{File: file, Case: c.Name}
	if c.Skip != "" {
		res.Status, res.Reason = Skipped, c.Skip
		return res
	}
	defer func() {
		if p := recover(); p != nil {
			res.Status, res.Reason = Failed, fmt.Sprintf("panic: %v", p)
		}
	}()
	diffs, err := runREST(c)
	switch {
	case err != nil:
		res.Status, res.Reason = Failed, err.Error()
	case len(diffs) > 0:
		res.Status, res.Diff = Failed, diffs
	default:
		res.Status = Passed
	}
	return res
}

// restRun is one REST case's running server and what it answered.
type restRun struct {
	c       *RESTCase
	base    string
	brokers string
	eng     *engine.Engine
	http    *http.Client
	// errored is set once a request answered with the expected error.
	errored bool
}

func runREST(c *RESTCase) ([]string, error) {
	ctx := context.Background()
	b, err := broker.Start(broker.Config{})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	reg, schemas, err := caseRegistry(&Case{Topics: c.Topics})
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	if err := createCaseTopics(ctx, b.Addr(), c); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sluice-rest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := engine.Open(ctx, engine.Config{
		ConnOpts:       []kgo.Opt{kgo.SeedBrokers(b.Addr())},
		DataDir:        dir,
		ServiceID:      "rqtt",
		Properties:     serverProperties(),
		SchemaRegistry: schemas,
		Log:            quiet,
	})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := server.New(e, server.Options{Log: quiet})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
	}()
	run := &restRun{c: c, base: "http://" + ln.Addr().String(), brokers: b.Addr(), eng: e, http: &http.Client{}}
	return run.execute(ctx)
}

func (r *restRun) execute(ctx context.Context) ([]string, error) {
	c := r.c
	admin, queries, err := splitRESTStatements(c.Statements)
	if err != nil {
		return nil, err
	}
	var actual []restResponse
	if len(admin) > 0 {
		entities, done, err := r.admin(ctx, strings.Join(admin, "\n"))
		if err != nil || done {
			return nil, err
		}
		for _, en := range entities {
			actual = append(actual, restResponse{kind: "admin", body: en})
		}
	}
	if !c.WaitForPushQuery {
		if err := r.produceInputs(ctx); err != nil {
			return nil, err
		}
	}
	if c.ExpectedError == nil && len(c.Responses) > len(admin) {
		if err := r.waitCaughtUp(ctx); err != nil {
			return nil, err
		}
	}
	for i, q := range queries {
		rows, done, err := r.query(ctx, q, c.WaitForPushQuery && i == 0)
		if err != nil || done {
			return nil, err
		}
		actual = append(actual, restResponse{kind: "query", rows: rows})
	}
	if c.ExpectedError != nil {
		return nil, fmt.Errorf("expected the last statement to fail with %s, but every statement succeeded", describeRESTError(c.ExpectedError))
	}
	if c.Proto {
		for _, q := range queries {
			rows, ok, err := r.protoQuery(ctx, q)
			if err != nil {
				return nil, err
			}
			if ok {
				actual = append(actual, restResponse{kind: "queryProto", rows: rows})
			}
		}
	}
	diffs, err := r.verifyOutputs(ctx)
	if err != nil {
		return nil, err
	}
	return append(diffs, verifyRESTResponses(c.Responses, actual, c.VerifyOrder)...), nil
}

// splitRESTStatements splits a case's statements as ksqlDB's runner
// does: those before the first one starting "SELECT " are admin
// statements, sent together; the queries must all come after them.
func splitRESTStatements(stmts []string) (admin, queries []string, err error) {
	for i, s := range stmts {
		if strings.HasPrefix(s, "SELECT ") {
			queries = append(queries, s)
			continue
		}
		if len(queries) > 0 {
			return nil, nil, fmt.Errorf("invalid case: statement %d follows queries but is not a query", i)
		}
		admin = append(admin, s)
	}
	return admin, queries, nil
}

// createCaseTopics creates the topics a case names up front (with their
// partition counts), those its inputs go to, and those its CREATE STREAM
// and CREATE TABLE statements read (with their PARTITIONS), with
// restDefaultPartitions unless the case or statement says otherwise:
// ksqlDB's runner creates them before the statements run.
func createCaseTopics(ctx context.Context, brokers string, c *RESTCase) error {
	partitions := map[string]int32{}
	var order []string
	add := func(name string, n int32) {
		if name == "" {
			return
		}
		if _, ok := partitions[name]; !ok {
			order = append(order, name)
			partitions[name] = n
		} else if n > 0 {
			partitions[name] = n
		}
	}
	if len(c.Topics) > 0 {
		var ts []struct {
			Name       string `json:"name"`
			Partitions int32  `json:"partitions"`
		}
		if err := json.Unmarshal(c.Topics, &ts); err != nil {
			return fmt.Errorf("topics: %w", err)
		}
		for _, t := range ts {
			add(t.Name, t.Partitions)
		}
	}
	for _, in := range c.Inputs {
		add(in.Topic, 0)
	}
	for _, s := range c.Statements {
		ps, err := parser.ParseScript(s)
		if err != nil {
			continue // the server reports it
		}
		for _, p := range ps {
			cs, ok := p.Stmt.(*parser.CreateSource)
			if !ok || cs.Query != nil {
				continue
			}
			topic, n := "", int32(0)
			for _, w := range cs.With {
				switch strings.ToUpper(w.Name) {
				case "KAFKA_TOPIC":
					if w.Value != nil {
						topic = w.Value.Str
					}
				case "PARTITIONS":
					if w.Value != nil {
						if v, err := strconv.ParseInt(w.Value.Text, 10, 32); err == nil {
							n = int32(v)
						}
					}
				}
			}
			add(topic, n)
		}
	}
	if len(order) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, name := range order {
		n := partitions[name]
		if n <= 0 {
			n = restDefaultPartitions
		}
		resp, err := adm.CreateTopic(ctx, n, 1, nil, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("create topic %s: %w", name, err)
		}
	}
	return nil
}

// restResponse is one response the server gave: an admin entity, or the
// elements of a query's answer.
type restResponse struct {
	kind string // admin, query, queryProto
	body map[string]any
	rows []map[string]any
}

func (r *restRun) post(ctx context.Context, path, accept string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/vnd.ksql.v1+json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return r.http.Do(req)
}

func (r *restRun) requestProps() map[string]any {
	props := map[string]any{}
	for k, v := range r.c.Properties {
		props[k] = v
	}
	return props
}

// admin sends the admin statements as one /ksql request. done is set when
// the request failed as the case expects (the case ends there).
func (r *restRun) admin(ctx context.Context, sql string) (entities []map[string]any, done bool, err error) {
	resp, err := r.post(ctx, "/ksql", "", ksqlwire.KsqlRequest{KSQL: sql, StreamsProperties: r.requestProps()})
	if err != nil {
		return nil, false, fmt.Errorf("POST /ksql: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, false, fmt.Errorf("POST /ksql: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, true, r.errorResponse(resp.StatusCode, body)
	}
	if err := decodeNumbers(body, &entities); err != nil {
		return nil, false, fmt.Errorf("POST /ksql: answer is not a JSON array of entities: %w: %s", err, body)
	}
	return entities, false, nil
}

// errorResponse checks an error answer against the case's expected
// error; with none expected, the error fails the case.
func (r *restRun) errorResponse(status int, body []byte) error {
	want := r.c.ExpectedError
	if want == nil {
		return fmt.Errorf("server failed to execute statement: %d %s", status, bytes.TrimSpace(body))
	}
	var got ksqlwire.Error
	if err := json.Unmarshal(body, &got); err != nil {
		return fmt.Errorf("error answer %d is not an error entity: %s", status, body)
	}
	var problems []string
	if want.Status != 0 && want.Status != status {
		problems = append(problems, fmt.Sprintf("status %d, want %d", status, want.Status))
	}
	if want.Message != "" && !strings.Contains(got.Message, want.Message) {
		problems = append(problems, fmt.Sprintf("message %q does not contain %q", got.Message, want.Message))
	}
	switch want.Type {
	case "", "io.confluent.ksql.rest.entity.KsqlErrorMessage":
	case "io.confluent.ksql.rest.entity.KsqlStatementErrorMessage":
		last := r.c.Statements[len(r.c.Statements)-1]
		switch {
		case got.Type != ksqlwire.TypeStatementError:
			problems = append(problems, fmt.Sprintf("error type %s, want %s", got.Type, ksqlwire.TypeStatementError))
		case got.StatementText == nil || !strings.Contains(*got.StatementText, last):
			problems = append(problems, fmt.Sprintf("statementText %q does not contain the last statement %q", stringOr(got.StatementText), last))
		}
	default:
		problems = append(problems, "unknown expected error type "+want.Type)
	}
	if len(problems) > 0 {
		return fmt.Errorf("expected error mismatch: %s", strings.Join(problems, "; "))
	}
	r.errored = true
	return nil
}

func describeRESTError(e *RESTError) string {
	var parts []string
	if e.Status != 0 {
		parts = append(parts, fmt.Sprint(e.Status))
	}
	if e.Message != "" {
		parts = append(parts, fmt.Sprintf("%q", e.Message))
	}
	return strings.Join(parts, " ")
}

// produceInputs writes the case's inputs to the broker, encoded in the
// formats of the streams and tables over their topics.
func (r *restRun) produceInputs(ctx context.Context) error {
	if len(r.c.Inputs) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.brokers), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		return err
	}
	defer cl.Close()
	for i, in := range r.c.Inputs {
		rec, err := encodeInput(r.eng.Catalog(), in)
		if err != nil {
			return fmt.Errorf("input %d: %w", i, err)
		}
		kr := &kgo.Record{Topic: rec.Topic, Key: rec.Key, Value: rec.Value, Timestamp: time.UnixMilli(rec.Timestamp)}
		for _, h := range rec.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		if err := cl.ProduceSync(ctx, kr).FirstErr(); err != nil {
			return fmt.Errorf("input %d: produce: %w", i, err)
		}
	}
	return nil
}

// waitCaughtUp waits until the persistent queries have processed the
// inputs and committed their state.
func (r *restRun) waitCaughtUp(ctx context.Context) error {
	deadline := time.Now().Add(restCatchUp)
	for {
		ok, err := r.eng.CaughtUp(ctx)
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("persistent queries did not process the inputs within %s: %w", restCatchUp, err)
			}
			for _, q := range r.eng.Queries() {
				if qerr := q.Err(); qerr != nil {
					return fmt.Errorf("query %s failed: %w", q.ID, qerr)
				}
			}
			return fmt.Errorf("persistent queries did not process the inputs within %s", restCatchUp)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// query sends one SELECT to /query and gathers the elements of its
// answer. With produce, the inputs are produced once the answer's header
// has arrived (the query runs by then).
func (r *restRun) query(ctx context.Context, sql string, produce bool) (rows []map[string]any, done bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, restQueryTimeout)
	defer cancel()
	resp, err := r.post(ctx, "/query", "", ksqlwire.KsqlRequest{KSQL: sql, StreamsProperties: r.requestProps()})
	if err != nil {
		return nil, false, fmt.Errorf("POST /query %q: %w", sql, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, true, r.errorResponse(resp.StatusCode, body)
	}
	// The answer is one JSON array sent in chunks as rows arrive. With
	// produce, the inputs go out once its first element, the header, is
	// complete (the query runs by then) — ksqlDB's runner waits for the
	// header and the active query the same way. The header need not end
	// a line: the separator before the next element may come only with
	// that element.
	var body bytes.Buffer
	chunk := make([]byte, 4096)
	produced := !produce
	for {
		n, err := resp.Body.Read(chunk)
		body.Write(chunk[:n])
		if !produced && headerComplete(body.Bytes()) {
			produced = true
			if err := r.produceInputs(ctx); err != nil {
				return nil, false, err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, fmt.Errorf("query %q did not end within %s; it answered: %s", sql, restQueryTimeout, body.Bytes())
			}
			return nil, false, fmt.Errorf("query %q: read answer: %w", sql, err)
		}
	}
	if err := decodeNumbers(body.Bytes(), &rows); err != nil {
		return nil, false, fmt.Errorf("query %q: answer is not a JSON array: %w: %s", sql, err, body.Bytes())
	}
	return rows, false, nil
}

// headerComplete reports whether answer, the start of a /query answer
// (a JSON array), holds its first element whole.
func headerComplete(answer []byte) bool {
	d := json.NewDecoder(bytes.NewReader(answer))
	if tok, err := d.Token(); err != nil || tok != json.Delim('[') {
		return false
	}
	var first json.RawMessage
	return d.Decode(&first) == nil
}

// protoQuery asks for a query again on /query-stream in ksqlDB's protobuf
// media type. An error answer gives no response (ok false), as in
// ksqlDB's runner.
func (r *restRun) protoQuery(ctx context.Context, sql string) (rows []map[string]any, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, restQueryTimeout)
	defer cancel()
	resp, err := r.post(ctx, "/query-stream", server.ContentProtobuf, ksqlwire.QueryStreamRequest{SQL: sql, Properties: r.requestProps()})
	if err != nil {
		return nil, false, fmt.Errorf("POST /query-stream %q: %w", sql, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, false, fmt.Errorf("POST /query-stream %q: %w", sql, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, nil
	}
	if err := decodeNumbers(body, &rows); err != nil {
		return nil, false, fmt.Errorf("query %q in protobuf: answer is not a JSON array: %w: %s", sql, err, body)
	}
	return rows, true, nil
}

// verifyOutputs reads the topics the case expects records on, until as
// many records as expected arrived (or a timeout), and compares them.
func (r *restRun) verifyOutputs(ctx context.Context) ([]string, error) {
	if len(r.c.Outputs) == 0 {
		return nil, nil
	}
	want := map[string]int{}
	var topics []string
	for _, o := range r.c.Outputs {
		if want[o.Topic] == 0 {
			topics = append(topics, o.Topic)
		}
		want[o.Topic]++
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.brokers), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, restOutputTimeout)
	defer cancel()
	got := map[string]int{}
	var actual []Record
	for {
		missing := false
		for _, t := range topics {
			if got[t] < want[t] {
				missing = true
			}
		}
		if !missing {
			break
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		var ferr error
		fs.EachRecord(func(kr *kgo.Record) {
			rec := exec.Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value, Timestamp: kr.Timestamp.UnixMilli()}
			out, err := decodeOutput(r.eng.Catalog(), &rec)
			if err != nil && ferr == nil {
				ferr = fmt.Errorf("output on %s: %w", kr.Topic, err)
			}
			actual = append(actual, out)
			got[kr.Topic]++
		})
		if ferr != nil {
			return nil, ferr
		}
	}
	return CompareOutputs(r.c.Outputs, actual), nil
}

// decodeNumbers decodes JSON keeping numbers as json.Number.
func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// stringOr is *s, or "" for nil.
func stringOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
