package pgwire_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/cluster"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/pgwire"
	"github.com/sluice-sql/sluice/server"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fixture is a Sluice server as `sluice server` runs one (command topic,
// instance registry, REST API on loopback) over a test broker, with the
// user alice:secret; pg serves the Postgres protocol over it.
type fixture struct {
	t       *testing.T
	srv     *server.Server
	brokers string
	pgAddr  string
}

func start(t *testing.T) *fixture {
	t.Helper()
	brokers := testkafka.Brokers(t)
	ctx := context.Background()
	svc := testkafka.Name(t, "svc")
	connOpts := []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)}
	e, err := engine.Open(ctx, engine.Config{ConnOpts: connOpts, DataDir: t.TempDir(), ServiceID: svc, CommandTopic: true, Log: quiet})
	if err != nil {
		t.Fatalf("open engine: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ir, err := cluster.Start(ctx, cluster.Config{ConnOpts: connOpts, ServiceID: svc, InstanceID: e.InstanceID(), URL: "http://" + ln.Addr().String(), Log: quiet,
		Local: func() map[string][]cluster.Partition { return cluster.EnginePartitions(e) }})
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	users := map[string]string{"alice": "secret"}
	srv := server.New(e, server.Options{Users: users, Log: quiet, Cluster: ir})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	f := &fixture{t: t, srv: srv, brokers: brokers}
	f.pgAddr = f.listen(pgwire.Options{Users: users})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
		if err := ir.Close(); err != nil {
			t.Errorf("close registry: %v", err)
		}
	})
	return f
}

// listen serves the Postgres protocol with opts over the fixture's
// server on a loopback port of its own, shut down at cleanup.
func (f *fixture) listen(opts pgwire.Options) string {
	f.t.Helper()
	_, addr := f.listenServer(opts)
	return addr
}

func (f *fixture) listenServer(opts pgwire.Options) (*pgwire.Server, string) {
	f.t.Helper()
	if opts.Log == nil {
		opts.Log = quiet
	}
	pg, err := pgwire.New(f.srv.PGBackend(), opts)
	if err != nil {
		f.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- pg.Serve(ln) }()
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := pg.Shutdown(ctx); err != nil {
			f.t.Errorf("postgres shutdown: %v", err)
		}
		if err := <-done; err != nil {
			f.t.Errorf("postgres serve: %v", err)
		}
	})
	return pg, ln.Addr().String()
}

func connString(addr, user, pass, sslmode string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=sluice sslmode=%s connect_timeout=10", host, port, user, pass, sslmode)
}

// connect opens a pgx connection whose context cancel sends a
// CancelRequest (rather than closing the socket).
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := connectErr(dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func connectErr(dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, CancelRequestDelay: 0, DeadlineDelay: 10 * time.Second}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return pgx.ConnectConfig(ctx, cfg)
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func exec(t *testing.T, conn *pgx.Conn, sql string, args ...any) pgconn.CommandTag {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag
}

// textRows runs sql with every result column in text format and gives
// the raw texts ("NULL" for NULL).
func textRows(t *testing.T, conn *pgx.Conn, sql string, params ...string) [][]string {
	t.Helper()
	rows, err := textRowsErr(conn, sql, params...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

func textRowsErr(conn *pgx.Conn, sql string, params ...string) ([][]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var vals [][]byte
	for _, p := range params {
		vals = append(vals, []byte(p))
	}
	res := conn.PgConn().ExecParams(ctx, sql, vals, nil, nil, []int16{0}).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	var out [][]string
	for _, r := range res.Rows {
		row := make([]string, len(r))
		for i, v := range r {
			if v == nil {
				row[i] = "NULL"
			} else {
				row[i] = string(v)
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// rowCount is how many rows sql gives, -1 while it fails (a table
// still restoring).
func rowCount(conn *pgx.Conn, sql string) int {
	rows, err := textRowsErr(conn, sql)
	if err != nil {
		return -1
	}
	return len(rows)
}

// poll runs check until it reports true or the deadline passes.
func poll(t *testing.T, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const allTypes = `ID INT PRIMARY KEY, B BOOLEAN, I INT, L BIGINT, D DOUBLE, N DECIMAL(10, 2), S STRING, Y BYTES,
	TS TIMESTAMP, DT DATE, TM TIME, A ARRAY<STRING>, AI ARRAY<INT>, M MAP<STRING, INT>, ST STRUCT<X INT, Y STRING>`

// TestTypes fills a table through the Postgres connection itself
// (CREATE TABLE, INSERT … VALUES with typed parameters) and reads it
// back by key with $1, every mapped type in text and in binary, NULLs
// kept.
func TestTypes(t *testing.T) {
	f := start(t)
	conn := connect(t, connString(f.pgAddr, "alice", "secret", "disable"))
	topic := testkafka.Name(t, "types")
	tbl, q := testkafka.Name(t, "T"), testkafka.Name(t, "Q")
	if tag := exec(t, conn, fmt.Sprintf("CREATE TABLE %s (%s) WITH (KAFKA_TOPIC='%s', PARTITIONS=2, VALUE_FORMAT='JSON')", tbl, allTypes, topic)); tag.String() != "CREATE TABLE" {
		t.Fatalf("tag %q", tag)
	}
	// The query reads the table's topic from its start, whenever its
	// consumer joins.
	exec(t, conn, "SET 'auto.offset.reset'='earliest'")
	exec(t, conn, fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM %s", q, tbl))
	ts := time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC)
	insert := fmt.Sprintf(`INSERT INTO %s (ID, B, I, L, D, N, S, Y, TS, DT, TM, A, AI, M, ST)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, ARRAY['a', 'b c', NULL, '"q"'], ARRAY[1, NULL, 3], MAP('k' := 1), STRUCT(X := 1, Y := 'y'))`, tbl)
	num := pgtype.Numeric{Int: big.NewInt(1230), Exp: -2, Valid: true}
	tag := exec(t, conn, insert, int32(1), true, int32(-7), int64(1234567890123), 1.5, num, "héllo 'q' --", []byte{0, 0xff}, ts,
		time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), pgtype.Time{Microseconds: (3*3600 + 4*60 + 5) * 1e6, Valid: true})
	if tag.String() != "INSERT 0 1" {
		t.Fatalf("insert tag %q", tag)
	}
	exec(t, conn, fmt.Sprintf("INSERT INTO %s (ID) VALUES ($1)", tbl), int32(2))
	// A string parameter stays a string, whatever it holds.
	exec(t, conn, fmt.Sprintf("INSERT INTO %s (ID, S) VALUES (3, $1)", tbl), "' OR 1=1 --")

	pull := fmt.Sprintf("SELECT * FROM %s WHERE ID = $1", q)
	poll(t, "the three rows in "+q, func() bool {
		return rowCount(conn, fmt.Sprintf("SELECT ID FROM %s", q)) == 3
	})
	want := [][]string{{"1", "t", "-7", "1234567890123", "1.5", "12.30", "héllo 'q' --", `\x00ff`, "2024-01-02 03:04:05.678", "2024-01-02", "03:04:05",
		`{a,"b c",NULL,"\"q\""}`, "{1,NULL,3}", `{"k": 1}`, `{"X": 1, "Y": "y"}`}}
	if diff := cmp.Diff(want, textRows(t, conn, pull, "1")); diff != "" {
		t.Errorf("text row 1 (-want +got):\n%s", diff)
	}
	nulls := []string{"2"}
	for range 14 {
		nulls = append(nulls, "NULL")
	}
	if diff := cmp.Diff([][]string{nulls}, textRows(t, conn, pull, "2")); diff != "" {
		t.Errorf("text row 2 (-want +got):\n%s", diff)
	}
	if got := textRows(t, conn, fmt.Sprintf("SELECT ID, S FROM %s WHERE S = $1", q), "' OR 1=1 --"); !cmp.Equal(got, [][]string{{"3", "' OR 1=1 --"}}) {
		t.Errorf("string parameter: %q", got)
	}

	// Binary: pgx asks for binary results of the types it knows.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := conn.Query(ctx, pull, int32(1))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
	if err != nil {
		t.Fatal(err)
	}
	fds := rows.FieldDescriptions()
	var oids, formats []int
	for _, fd := range fds {
		oids = append(oids, int(fd.DataTypeOID))
		formats = append(formats, int(fd.Format))
	}
	wantOIDs := []int{23, 16, 23, 20, 701, 1700, 25, 17, 1114, 1082, 1083, 1009, 1007, 3802, 3802}
	if !cmp.Equal(oids, wantOIDs) {
		t.Errorf("oids %v, want %v", oids, wantOIDs)
	}
	// pgx asks for text and jsonb as text, everything else binary.
	if !cmp.Equal(formats, []int{1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0}) {
		t.Errorf("formats %v", formats)
	}
	// Every column binary: text is its bytes, jsonb its version 1 and
	// the JSON.
	res := conn.PgConn().ExecParams(ctx, pull, [][]byte{[]byte("1")}, nil, nil, []int16{1}).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		t.Fatalf("binary ExecParams: %v %d rows", res.Err, len(res.Rows))
	}
	if got := [][]byte{res.Rows[0][6], res.Rows[0][13], res.Rows[0][14]}; !cmp.Equal(got, [][]byte{[]byte("héllo 'q' --"), []byte("\x01{\"k\": 1}"), []byte("\x01{\"X\": 1, \"Y\": \"y\"}")}) {
		t.Errorf("binary text and jsonb: %q", got)
	}
	wantVals := [][]any{{int32(1), true, int32(-7), int64(1234567890123), 1.5, num, "héllo 'q' --", []byte{0, 0xff}, ts,
		time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), pgtype.Time{Microseconds: (3*3600 + 4*60 + 5) * 1e6, Valid: true},
		[]any{"a", "b c", nil, `"q"`}, []any{int32(1), nil, int32(3)}, map[string]any{"k": float64(1)}, map[string]any{"X": float64(1), "Y": "y"}}}
	if diff := cmp.Diff(wantVals, got, cmp.Comparer(func(a, b pgtype.Numeric) bool {
		return a.Valid == b.Valid && a.Exp == b.Exp && a.Int.Cmp(b.Int) == 0
	})); diff != "" {
		t.Errorf("binary row 1 (-want +got):\n%s", diff)
	}
	var id int32
	var b *bool
	var s *string
	if err := conn.QueryRow(ctx, pull, 2).Scan(&id, &b, nil, nil, nil, nil, &s, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if id != 2 || b != nil || s != nil {
		t.Errorf("binary row 2: %d %v %v, want 2 NULL NULL", id, b, s)
	}

	// A stream pull query (a scan of its topic) with LIMIT, through the
	// simple protocol.
	st := testkafka.Name(t, "S")
	exec(t, conn, fmt.Sprintf("CREATE STREAM %s (K STRING KEY, V INT) WITH (KAFKA_TOPIC='%s', PARTITIONS=1, VALUE_FORMAT='JSON')", st, testkafka.Name(t, "s")))
	for i := range 3 {
		exec(t, conn, fmt.Sprintf("INSERT INTO %s (K, V) VALUES ('k%d', %d)", st, i, i))
	}
	var scan [][]string
	poll(t, "the stream's rows", func() bool {
		scan, _ = textRowsErr(conn, fmt.Sprintf("SELECT K, V FROM %s LIMIT 2", st))
		return len(scan) == 2
	})
	if !cmp.Equal(scan, [][]string{{"k0", "0"}, {"k1", "1"}}) {
		t.Errorf("stream pull: %q", scan)
	}
}

// TestProtocol: simple queries with several statements, statement
// errors with SQLSTATE and position while the session goes on, push
// queries (LIMIT, cancel), cursors, SHOW and DESCRIBE.
func TestProtocol(t *testing.T) {
	f := start(t)
	conn := connect(t, connString(f.pgAddr, "alice", "secret", "disable"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	st := testkafka.Name(t, "P")
	mr := conn.PgConn().Exec(ctx, fmt.Sprintf(
		"CREATE STREAM %s (K STRING KEY, V INT) WITH (KAFKA_TOPIC='%s', PARTITIONS=1, VALUE_FORMAT='JSON'); INSERT INTO %s (K, V) VALUES ('a', 1); INSERT INTO %s (K, V) VALUES ('b', 2)",
		st, testkafka.Name(t, "p"), st, st))
	results, err := mr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, r := range results {
		tags = append(tags, r.CommandTag.String())
	}
	if !cmp.Equal(tags, []string{"CREATE STREAM", "INSERT 0 1", "INSERT 0 1"}) {
		t.Errorf("tags %q", tags)
	}

	// Errors: SQLSTATE, position, and the session goes on.
	_, err = conn.Exec(ctx, "SELECT * FORM "+st)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42601" || pe.Position != 10 {
		t.Errorf("syntax error: %v (%+v)", err, pe)
	}
	_, err = conn.Exec(ctx, "SELECT * FROM NO_SUCH_SOURCE EMIT CHANGES")
	if pgCode(err) != "42P01" {
		t.Errorf("unknown source: %v", err)
	}
	// Through the extended protocol (pgx prepares it), positioned too.
	_, err = conn.Exec(ctx, fmt.Sprintf("SELECT NOPE FROM %s EMIT CHANGES", st))
	if !errors.As(err, &pe) || pe.Code != "42703" || pe.Position != 8 {
		t.Errorf("unknown column: %v (%+v)", err, pe)
	}

	// Push queries start from the earliest offset with this session's
	// property.
	if tag := exec(t, conn, "SET 'auto.offset.reset'='earliest'"); tag.String() != "SET" {
		t.Errorf("SET tag %q", tag)
	}
	got := textRows(t, conn, fmt.Sprintf("SELECT K, V FROM %s EMIT CHANGES LIMIT 2", st))
	if !cmp.Equal(got, [][]string{{"a", "1"}, {"b", "2"}}) {
		t.Errorf("push LIMIT 2: %q", got)
	}
	// A parameter where the grammar wants a number, typed so.
	sd, err := conn.Prepare(ctx, "limited", fmt.Sprintf("SELECT K, V FROM %s WHERE K <> $1 EMIT CHANGES LIMIT $2", st))
	if err != nil || !cmp.Equal(sd.ParamOIDs, []uint32{25, 20}) {
		t.Fatalf("prepare with LIMIT $2: %v %v", sd, err)
	}
	got = textRows(t, conn, fmt.Sprintf("SELECT K, V FROM %s WHERE K <> $1 EMIT CHANGES LIMIT $2", st), "a", "1")
	if !cmp.Equal(got, [][]string{{"b", "2"}}) {
		t.Errorf("push LIMIT $2: %q", got)
	}
	// A syntax error's position is in the text as sent, $n and all.
	_, err = conn.Exec(ctx, fmt.Sprintf("SELECT K FROM %s WHERE K = $1 EMIT CHANGES LIMT 2", st), "a")
	if !errors.As(err, &pe) || pe.Code != "42601" || int(pe.Position) != len("SELECT K FROM "+st+" WHERE K = $1 EMIT CHANGES ")+1 {
		t.Errorf("syntax error after a parameter: %v (%+v)", err, pe)
	}

	// A push query without LIMIT, canceled by pgx's context (a
	// CancelRequest): 57014, and the session serves the next statement.
	qctx, qcancel := context.WithCancel(ctx)
	rows, err := conn.Query(qctx, fmt.Sprintf("SELECT K, V FROM %s EMIT CHANGES", st))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
		if n == 2 {
			qcancel()
		}
	}
	if pgCode(rows.Err()) != "57014" || n != 2 {
		t.Errorf("canceled push query: %d rows, err %v", n, rows.Err())
	}
	qcancel()
	if got := textRows(t, conn, fmt.Sprintf("SELECT K, V FROM %s EMIT CHANGES LIMIT 1", st)); !cmp.Equal(got, [][]string{{"a", "1"}}) {
		t.Errorf("after cancel: %q", got)
	}

	// A CancelRequest with a wrong key does nothing: the push query goes
	// on and gets the next row.
	w := testkafka.Name(t, "W")
	exec(t, conn, fmt.Sprintf("CREATE STREAM %s (V INT) WITH (KAFKA_TOPIC='%s', PARTITIONS=1, VALUE_FORMAT='JSON')", w, testkafka.Name(t, "w")))
	exec(t, conn, "INSERT INTO "+w+" (V) VALUES (1)")
	other := connect(t, connString(f.pgAddr, "alice", "secret", "disable"))
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	wrows, err := conn.Query(wctx, "SELECT V FROM "+w+" EMIT CHANGES")
	if err != nil {
		t.Fatal(err)
	}
	var v int32
	if !wrows.Next() || wrows.Scan(&v) != nil || v != 1 {
		t.Fatalf("first row %d, %v", v, wrows.Err())
	}
	cc, err := net.Dial("tcp", f.pgAddr)
	if err != nil {
		t.Fatal(err)
	}
	wrong := append([]byte(nil), conn.PgConn().SecretKey()...)
	wrong[0] ^= 0xff
	cfe := pgproto3.NewFrontend(cc, cc)
	cfe.Send(&pgproto3.CancelRequest{ProcessID: conn.PgConn().PID(), SecretKey: wrong})
	if err := cfe.Flush(); err != nil {
		t.Fatal(err)
	}
	// The server closes a cancel connection once it has acted on it.
	if _, err := io.ReadAll(cc); err != nil {
		t.Fatal(err)
	}
	_ = cc.Close()
	exec(t, other, "INSERT INTO "+w+" (V) VALUES (2)")
	if !wrows.Next() || wrows.Scan(&v) != nil || v != 2 {
		t.Fatalf("after a wrong cancel key: %d, %v", v, wrows.Err())
	}
	wcancel()
	for wrows.Next() {
	}
	if pgCode(wrows.Err()) != "57014" {
		t.Errorf("canceled: %v", wrows.Err())
	}

	// A cursor over a push query pages it.
	exec(t, conn, fmt.Sprintf("INSERT INTO %s (K, V) VALUES ('c', 3)", st))
	exec(t, conn, fmt.Sprintf("DECLARE c NO SCROLL CURSOR WITHOUT HOLD FOR SELECT K, V FROM %s EMIT CHANGES", st))
	if got := textRows(t, conn, "FETCH 1 FROM c"); !cmp.Equal(got, [][]string{{"a", "1"}}) {
		t.Errorf("FETCH 1: %q", got)
	}
	if tag := exec(t, conn, "MOVE 1 IN c"); tag.String() != "MOVE 1" {
		t.Errorf("MOVE tag %q", tag)
	}
	if got := textRows(t, conn, "FETCH NEXT FROM c"); !cmp.Equal(got, [][]string{{"c", "3"}}) {
		t.Errorf("FETCH NEXT: %q", got)
	}
	// FETCH on a push query waits for a row as long as it takes, then
	// returns what came within the linger: here the one new row.
	exec(t, conn, fmt.Sprintf("INSERT INTO %s (K, V) VALUES ('d', 4)", st))
	r := conn.PgConn().ExecParams(ctx, "FETCH FORWARD 5 IN c", nil, nil, nil, nil).Read()
	if r.Err != nil || r.CommandTag.String() != "FETCH 1" || len(r.Rows) != 1 || string(r.Rows[0][0]) != "d" {
		t.Errorf("FETCH 5: tag %q rows %q err %v", r.CommandTag, r.Rows, r.Err)
	}
	if tag := exec(t, conn, "CLOSE c"); tag.String() != "CLOSE CURSOR" {
		t.Errorf("CLOSE tag %q", tag)
	}
	if _, err := conn.Exec(ctx, "FETCH 1 FROM c"); pgCode(err) != "34000" {
		t.Errorf("FETCH from a closed cursor: %v", err)
	}
	// A cursor over a pull query (a scan of the stream) gives what there
	// is at once; a BINARY cursor's rows come in binary.
	mr = conn.PgConn().Exec(ctx, fmt.Sprintf(`DECLARE "Pull" CURSOR FOR SELECT V FROM %s; FETCH ALL FROM "Pull"; FETCH 1 FROM "Pull"; DECLARE b BINARY CURSOR FOR SELECT V FROM %s; FETCH 1 b; CLOSE ALL`, st, st))
	results, err = mr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	tags = nil
	var vals []string
	for _, r := range results {
		tags = append(tags, r.CommandTag.String())
		for _, row := range r.Rows {
			vals = append(vals, fmt.Sprintf("%q", row[0]))
		}
	}
	if !cmp.Equal(tags, []string{"DECLARE CURSOR", "FETCH 4", "FETCH 0", "DECLARE CURSOR", "FETCH 1", "CLOSE CURSOR ALL"}) ||
		!cmp.Equal(vals, []string{`"1"`, `"2"`, `"3"`, `"4"`, `"\x00\x00\x00\x01"`}) {
		t.Errorf("pull cursors: tags %q values %s", tags, vals)
	}

	// SHOW and DESCRIBE as rows, as the shell's tables, tagged as
	// Postgres tags SHOW.
	var found bool
	show := conn.PgConn().ExecParams(ctx, "SHOW STREAMS", nil, nil, nil, nil).Read()
	for _, row := range show.Rows {
		found = found || string(row[0]) == st
	}
	if show.Err != nil || !found || show.CommandTag.String() != "SHOW" {
		t.Errorf("SHOW STREAMS: tag %q, %s among %q, %v", show.CommandTag, st, show.Rows, show.Err)
	}
	if got := textRows(t, conn, "DESCRIBE "+st); !cmp.Equal(got, [][]string{{"K", "STRING (key)"}, {"V", "INTEGER"}}) {
		t.Errorf("DESCRIBE: %q", got)
	}
}

// TestAuth: SCRAM-SHA-256 (default) and cleartext passwords, a wrong
// password (28P01), TLS required (a plain connection refused with 28000,
// sslmode=require served), a malformed startup packet (08P01) while
// another session goes on.
func TestAuth(t *testing.T) {
	f := start(t)
	users := map[string]string{"alice": "secret", "bob": "hunter2"}
	other := connect(t, connString(f.pgAddr, "alice", "secret", "disable"))
	check := func(c *pgx.Conn) {
		t.Helper()
		if _, err := c.Exec(context.Background(), "SHOW STREAMS"); err != nil {
			t.Errorf("session not served: %v", err)
		}
	}
	check(other)

	if _, err := connectErr(connString(f.pgAddr, "alice", "wrong", "disable")); pgCode(err) != "28P01" ||
		!strings.Contains(err.Error(), `password authentication failed for user "alice"`) {
		t.Errorf("wrong password: %v", err)
	}
	if _, err := connectErr(connString(f.pgAddr, "mallory", "secret", "disable")); pgCode(err) != "28P01" {
		t.Errorf("unknown user: %v", err)
	}

	clear := f.listen(pgwire.Options{Users: users, AuthMethod: pgwire.AuthPassword})
	check(connect(t, connString(clear, "bob", "hunter2", "disable")))
	if _, err := connectErr(connString(clear, "bob", "secret", "disable")); pgCode(err) != "28P01" {
		t.Errorf("cleartext wrong password: %v", err)
	}

	trust := f.listen(pgwire.Options{})
	check(connect(t, connString(trust, "anyone", "", "disable")))

	tlsAddr := f.listen(pgwire.Options{Users: users, TLS: selfSigned(t)})
	if _, err := connectErr(connString(tlsAddr, "alice", "secret", "disable")); pgCode(err) != "28000" ||
		!strings.Contains(err.Error(), "TLS is required") {
		t.Errorf("plain connection to a TLS server: %v", err)
	}
	tc := connect(t, connString(tlsAddr, "alice", "secret", "require"))
	if !tc.PgConn().Conn().(*tls.Conn).ConnectionState().HandshakeComplete {
		t.Errorf("sslmode=require: not TLS")
	}
	check(tc)

	// Malformed startup packets: a length beyond the limit, and an
	// unknown protocol version.
	for name, packet := range map[string][]byte{
		"oversized":        {0x7f, 0, 0, 0, 0, 3, 0, 0},
		"unknown protocol": {0, 0, 0, 8, 0, 9, 0, 0},
	} {
		c, err := net.Dial("tcp", f.pgAddr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(packet); err != nil {
			t.Fatal(err)
		}
		fe := pgproto3.NewFrontend(c, c)
		msg, err := fe.Receive()
		er, ok := msg.(*pgproto3.ErrorResponse)
		if err != nil || !ok || er.Code != "08P01" || er.Severity != "FATAL" {
			t.Errorf("%s startup packet: %#v %v", name, msg, err)
		}
		if _, err := fe.Receive(); err == nil {
			t.Errorf("%s startup packet: the connection stays open", name)
		}
		_ = c.Close()
	}
	check(other)
}

// TestConcurrentSessions: 20 sessions at once, each its own pull
// queries by key.
func TestConcurrentSessions(t *testing.T) {
	f := start(t)
	conn := connect(t, connString(f.pgAddr, "alice", "secret", "disable"))
	tbl, q := testkafka.Name(t, "T"), testkafka.Name(t, "Q")
	exec(t, conn, fmt.Sprintf("CREATE TABLE %s (ID INT PRIMARY KEY, V STRING) WITH (KAFKA_TOPIC='%s', PARTITIONS=4, VALUE_FORMAT='JSON')", tbl, testkafka.Name(t, "t")))
	exec(t, conn, "SET 'auto.offset.reset'='earliest'")
	exec(t, conn, fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM %s", q, tbl))
	const sessions = 20
	for i := range sessions {
		exec(t, conn, fmt.Sprintf("INSERT INTO %s (ID, V) VALUES ($1, $2)", tbl), int32(i), fmt.Sprintf("v%d", i))
	}
	poll(t, "every row in "+q, func() bool {
		return rowCount(conn, "SELECT ID FROM "+q) == sessions
	})
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := connectErr(connString(f.pgAddr, "alice", "secret", "disable"))
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(context.Background())
			for range 5 {
				var v string
				if err := c.QueryRow(context.Background(), "SELECT V FROM "+q+" WHERE ID = $1", i).Scan(&v); err != nil {
					errs <- fmt.Errorf("session %d: %w", i, err)
					return
				}
				if v != fmt.Sprintf("v%d", i) {
					errs <- fmt.Errorf("session %d: got %q", i, v)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestShutdown: a server shutting down ends its sessions, a running push
// query's and an idle one's, with FATAL 57P01.
func TestShutdown(t *testing.T) {
	f := start(t)
	pg, addr := f.listenServer(pgwire.Options{Users: map[string]string{"alice": "secret"}})
	busy := connect(t, connString(addr, "alice", "secret", "disable"))
	idle := connect(t, connString(addr, "alice", "secret", "disable"))
	st := testkafka.Name(t, "S")
	exec(t, busy, fmt.Sprintf("CREATE STREAM %s (V INT) WITH (KAFKA_TOPIC='%s', PARTITIONS=1, VALUE_FORMAT='JSON')", st, testkafka.Name(t, "s")))
	exec(t, idle, "INSERT INTO "+st+" (V) VALUES (1)")
	exec(t, busy, "SET 'auto.offset.reset'='earliest'")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// pgx's Query returns with the first row; the query then waits for
	// more that never come.
	rows, err := busy.Query(ctx, "SELECT V FROM "+st+" EMIT CHANGES")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("no first row: %v", rows.Err())
	}
	ended := make(chan error, 1)
	go func() {
		for rows.Next() {
		}
		ended <- rows.Err()
	}()
	if err := pg.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-ended; pgCode(err) != "57P01" {
		t.Errorf("push query at shutdown: %v", err)
	}
	if _, err := idle.Exec(ctx, "SHOW STREAMS"); err == nil {
		t.Errorf("idle session still served after shutdown")
	}
	if _, err := connectErr(connString(addr, "alice", "secret", "disable")); err == nil {
		t.Errorf("connected after shutdown")
	}
}

// TestExtendedProtocol speaks the protocol's messages itself: a named
// statement's parameter and row descriptions, Execute with a row limit
// (PortalSuspended, then the rest), and after an error every message
// skipped until Sync.
func TestExtendedProtocol(t *testing.T) {
	f := start(t)
	conn := connect(t, connString(f.pgAddr, "alice", "secret", "disable"))
	st := testkafka.Name(t, "S")
	exec(t, conn, fmt.Sprintf("CREATE STREAM %s (K STRING KEY, V INT) WITH (KAFKA_TOPIC='%s', PARTITIONS=1, VALUE_FORMAT='JSON')", st, testkafka.Name(t, "s")))
	for i := 1; i <= 3; i++ {
		exec(t, conn, fmt.Sprintf("INSERT INTO %s (K, V) VALUES ('k%d', %d)", st, i, i))
	}
	poll(t, "the stream's rows", func() bool { return rowCount(conn, "SELECT * FROM "+st) == 3 })

	trust := f.listen(pgwire.Options{})
	c, err := net.Dial("tcp", trust)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	fe := pgproto3.NewFrontend(c, c)
	// exchange sends msgs and summarizes the answers up to ReadyForQuery.
	exchange := func(msgs ...pgproto3.FrontendMessage) []string {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		var out []string
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatalf("receive after %q: %v", out, err)
			}
			switch m := msg.(type) {
			case *pgproto3.ParameterStatus, *pgproto3.BackendKeyData, *pgproto3.NoticeResponse:
				continue
			case *pgproto3.ParameterDescription:
				out = append(out, fmt.Sprintf("ParameterDescription %v", m.ParameterOIDs))
			case *pgproto3.RowDescription:
				var fs []string
				for _, fd := range m.Fields {
					fs = append(fs, fmt.Sprintf("%s:%d/%d", fd.Name, fd.DataTypeOID, fd.Format))
				}
				out = append(out, "RowDescription "+strings.Join(fs, " "))
			case *pgproto3.DataRow:
				var vs []string
				for _, v := range m.Values {
					vs = append(vs, string(v))
				}
				out = append(out, "DataRow "+strings.Join(vs, " "))
			case *pgproto3.CommandComplete:
				out = append(out, "CommandComplete "+string(m.CommandTag))
			case *pgproto3.ErrorResponse:
				out = append(out, "ErrorResponse "+m.Code)
			case *pgproto3.ReadyForQuery:
				return append(out, "ReadyForQuery "+string(m.TxStatus))
			default:
				out = append(out, strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3."))
			}
		}
	}
	// No GSSAPI encryption, and no TLS on a server without it: 'N' to
	// each, then the startup goes on in the clear.
	for _, req := range []pgproto3.FrontendMessage{&pgproto3.GSSEncRequest{}, &pgproto3.SSLRequest{}} {
		fe.Send(req)
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := io.ReadFull(c, b); err != nil || b[0] != 'N' {
			t.Fatalf("%T answered %q, %v", req, b, err)
		}
	}
	if got := exchange(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u", "database": "sluice"}}); !cmp.Equal(got, []string{"AuthenticationOk", "ReadyForQuery I"}) {
		t.Errorf("startup: %q", got)
	}
	got := exchange(
		&pgproto3.Parse{Name: "s1", Query: "SELECT K, V FROM " + st + " WHERE V >= $1"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("2")}, ResultFormatCodes: []int16{0, 1}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{MaxRows: 1},
		&pgproto3.Execute{MaxRows: 5},
		&pgproto3.Sync{},
	)
	want := []string{"ParseComplete", "ParameterDescription [23]", "RowDescription K:25/0 V:23/0", "BindComplete", "RowDescription K:25/0 V:23/1",
		"DataRow k2 \x00\x00\x00\x02", "PortalSuspended", "DataRow k3 \x00\x00\x00\x03", "CommandComplete SELECT 1", "ReadyForQuery I"}
	if !cmp.Equal(got, want) {
		t.Errorf("extended query:\n got %q\nwant %q", got, want)
	}
	got = exchange(
		&pgproto3.Parse{Query: "SELECT * FORM " + st},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.Query{String: "SELECT V FROM " + st + " WHERE V = 1"},
	)
	if want := []string{"ErrorResponse 42601", "ReadyForQuery I"}; !cmp.Equal(got, want) {
		t.Errorf("error until Sync: %q", got)
	}
	got = exchange()
	if want := []string{"RowDescription V:23/0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I"}; !cmp.Equal(got, want) {
		t.Errorf("the query after: %q", got)
	}

	// A DECLAREd cursor is a portal too: Describe and Execute by its
	// name (psycopg's server-side cursors).
	if got := exchange(&pgproto3.Query{String: "DECLARE cur CURSOR FOR SELECT V FROM " + st}); !cmp.Equal(got, []string{"CommandComplete DECLARE CURSOR", "ReadyForQuery I"}) {
		t.Errorf("DECLARE: %q", got)
	}
	got = exchange(&pgproto3.Describe{ObjectType: 'P', Name: "cur"}, &pgproto3.Execute{Portal: "cur", MaxRows: 2}, &pgproto3.Sync{})
	if want := []string{"RowDescription V:23/0", "DataRow 1", "DataRow 2", "PortalSuspended", "ReadyForQuery I"}; !cmp.Equal(got, want) {
		t.Errorf("cursor as a portal: %q", got)
	}
	if got := exchange(&pgproto3.Query{String: "FETCH ALL cur"}); !cmp.Equal(got, []string{"RowDescription V:23/0", "DataRow 3", "CommandComplete FETCH 1", "ReadyForQuery I"}) {
		t.Errorf("FETCH after Execute: %q", got)
	}

	// After the startup, a message of no known type, or one longer than
	// the limit, ends that connection with FATAL 08P01.
	for name, raw := range map[string][]byte{"unknown type": {'z', 0, 0, 0, 4}, "oversized": {'Q', 0x7f, 0xff, 0xff, 0xff}} {
		c, err := net.Dial("tcp", trust)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		fe := pgproto3.NewFrontend(c, c)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u"}})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
		if _, err := c.Write(raw); err != nil {
			t.Fatal(err)
		}
		msg, err := fe.Receive()
		if er, ok := msg.(*pgproto3.ErrorResponse); err != nil || !ok || er.Code != "08P01" || er.Severity != "FATAL" {
			t.Errorf("%s message: %#v %v", name, msg, err)
		}
		_ = c.Close()
	}
}

// TestCatalogSession: what pgcatalog keeps for a session reaches the
// client — startup parameters (one refused ends the connection),
// ParameterStatus after SET, the transaction status of BEGIN/COMMIT,
// pg_backend_pid() as BackendKeyData says, and a Sluice query's columns
// pointing at their source's pg_class/pg_attribute entries.
func TestCatalogSession(t *testing.T) {
	f := start(t)
	dsn := connString(f.pgAddr, "alice", "secret", "disable")
	conn := connect(t, dsn+" application_name=probe")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if got := conn.PgConn().ParameterStatus("application_name"); got != "probe" {
		t.Errorf("application_name at startup: %q", got)
	}
	if got := conn.PgConn().ParameterStatus("server_version"); got != "15.0" {
		t.Errorf("server_version: %q", got)
	}
	exec(t, conn, "SET application_name = 'other'")
	if got := conn.PgConn().ParameterStatus("application_name"); got != "other" {
		t.Errorf("application_name after SET: %q", got)
	}
	exec(t, conn, "BEGIN")
	if got := conn.PgConn().TxStatus(); got != 'T' {
		t.Errorf("after BEGIN: %c", got)
	}
	exec(t, conn, "COMMIT")
	if got := conn.PgConn().TxStatus(); got != 'I' {
		t.Errorf("after COMMIT: %c", got)
	}
	var pid int64
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil || uint32(pid) != conn.PgConn().PID() {
		t.Errorf("pg_backend_pid() = %d, %v; BackendKeyData %d", pid, err, conn.PgConn().PID())
	}

	st := testkafka.Name(t, "S")
	exec(t, conn, fmt.Sprintf("CREATE STREAM %s (K STRING KEY, V INT) WITH (KAFKA_TOPIC='%s', PARTITIONS=1, VALUE_FORMAT='JSON')", st, testkafka.Name(t, "s")))
	var oid uint32
	if err := conn.QueryRow(ctx, "SELECT oid FROM pg_class WHERE relname = $1", st).Scan(&oid); err != nil || oid == 0 {
		t.Fatalf("pg_class oid of %s: %d, %v", st, oid, err)
	}
	// "char" columns (relkind) in binary, as pgx asks for them.
	var kind byte
	if err := conn.QueryRow(ctx, "SELECT relkind FROM pg_class WHERE relname = $1", st).Scan(&kind); err != nil || kind != 'r' {
		t.Errorf("relkind of %s in binary: %q, %v", st, kind, err)
	}
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT V, K, V * 2 AS W FROM %s EMIT CHANGES LIMIT 0", st))
	if err != nil {
		t.Fatal(err)
	}
	var origins []string
	for _, fd := range rows.FieldDescriptions() {
		origins = append(origins, fmt.Sprintf("%s:%d/%d", fd.Name, fd.TableOID, fd.TableAttributeNumber))
	}
	rows.Close()
	if want := []string{fmt.Sprintf("V:%d/2", oid), fmt.Sprintf("K:%d/1", oid), "W:0/0"}; !cmp.Equal(origins, want) {
		t.Errorf("column origins %q, want %q", origins, want)
	}

	// A windowed table's columns, as SELECT * gives them: the window
	// after the key, both part of the primary key.
	wt := testkafka.Name(t, "W")
	exec(t, conn, fmt.Sprintf("CREATE TABLE %s AS SELECT K, COUNT(*) AS N FROM %s WINDOW TUMBLING (SIZE 1 MINUTE) GROUP BY K", wt, st))
	cols, err := conn.Query(ctx, "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = $1 AND a.attnum > 0 ORDER BY a.attnum", wt)
	if err != nil {
		t.Fatal(err)
	}
	var described []string
	for cols.Next() {
		var name, typ string
		var notNull bool
		if err := cols.Scan(&name, &typ, &notNull); err != nil {
			t.Fatal(err)
		}
		described = append(described, fmt.Sprintf("%s %s %v", name, typ, notNull))
	}
	if want := []string{"K text true", "WINDOWSTART bigint true", "WINDOWEND bigint true", "N bigint false"}; !cmp.Equal(described, want) {
		t.Errorf("windowed table's columns %q, want %q", described, want)
	}

	if _, err := connectErr(dsn + " client_encoding=LATIN1"); pgCode(err) != "0A000" {
		t.Errorf("client_encoding LATIN1: %v", err)
	}
}

// selfSigned is a TLS configuration with a certificate for 127.0.0.1.
func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
}

// TestPushEndsWhenClientVanishes checks that a push query whose client
// goes away without a CancelRequest or a Terminate (a killed process, a
// dropped network) ends: its session, which cannot end while the query
// streams, leaves the server.
func TestPushEndsWhenClientVanishes(t *testing.T) {
	f := start(t)
	pg, addr := f.listenServer(pgwire.Options{Users: map[string]string{"alice": "secret"}})
	conn := connect(t, connString(addr, "alice", "secret", "disable"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st := testkafka.Name(t, "S")
	exec(t, conn, fmt.Sprintf("CREATE STREAM %s (K STRING KEY, V INT) WITH (KAFKA_TOPIC='%s', PARTITIONS=1, VALUE_FORMAT='JSON')", st, testkafka.Name(t, "s")))
	exec(t, conn, "INSERT INTO "+st+" (K, V) VALUES ('a', 1)")
	exec(t, conn, "SET 'auto.offset.reset'='earliest'")
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT K, V FROM %s EMIT CHANGES", st))
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("no first row: %v", rows.Err())
	}
	if n := pgwire.Sessions(pg); n != 1 {
		t.Fatalf("%d sessions while the push query streams, want 1", n)
	}
	// The socket closes under the client: no CancelRequest, no Terminate.
	if err := conn.PgConn().Conn().Close(); err != nil {
		t.Fatal(err)
	}
	testkafka.Await(t, 30*time.Second, "the session to end", func() bool { return pgwire.Sessions(pg) == 0 })
}

// TestCancelBeforeTheStatementStarts: a CancelRequest that comes after
// the client sent a query but before the session started it (psql sends
// one right after the query when Ctrl-C follows Enter, on a connection of
// its own) cancels that query: 57014, and the session serves the next.
// Here the query's last bytes are held back until the cancel is in, so
// the session cannot have started it. A cancel to an idle session does
// nothing to the next query.
func TestCancelBeforeTheStatementStarts(t *testing.T) {
	f := start(t)
	pg, addr := f.listenServer(pgwire.Options{Users: map[string]string{"alice": "secret"}})
	conn := connect(t, connString(addr, "alice", "secret", "disable"))
	st := testkafka.Name(t, "S")
	exec(t, conn, fmt.Sprintf("CREATE STREAM %s (K STRING KEY, V INT) WITH (KAFKA_TOPIC='%s', PARTITIONS=1, VALUE_FORMAT='JSON')", st, testkafka.Name(t, "s")))
	exec(t, conn, "INSERT INTO "+st+" (K, V) VALUES ('a', 1)")
	exec(t, conn, "SET 'auto.offset.reset'='earliest'")
	hc, err := conn.PgConn().Hijack()
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Conn.Close()
	sendCancel := func() {
		cc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		cfe := pgproto3.NewFrontend(cc, cc)
		cfe.Send(&pgproto3.CancelRequest{ProcessID: hc.PID, SecretKey: hc.SecretKey})
		if err := cfe.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(cc); err != nil { // closed once acted on
			t.Fatal(err)
		}
	}
	// answer reads one query's answer up to ReadyForQuery: its rows and
	// its error's code, if any.
	answer := func() (rows int, code string) {
		if err := hc.Conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		for {
			msg, err := hc.Frontend.Receive()
			if err != nil {
				t.Fatalf("receive: %v", err)
			}
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				rows++
			case *pgproto3.ErrorResponse:
				code = m.Code
			case *pgproto3.ReadyForQuery:
				return rows, code
			}
		}
	}

	// encode is a Query message of sql; write sends bytes of one.
	encode := func(sql string) []byte {
		q, err := (&pgproto3.Query{String: sql}).Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	write := func(b []byte) {
		if _, err := hc.Conn.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	limitOne := fmt.Sprintf("SELECT K, V FROM %s EMIT CHANGES LIMIT 1", st)

	// An idle session: the cancel does nothing; the next query runs.
	sendCancel()
	write(encode(limitOne))
	if rows, code := answer(); rows != 1 || code != "" {
		t.Errorf("after a cancel to an idle session: %d rows, error %q; want 1 row", rows, code)
	}

	// A push query without LIMIT, its last bytes held back.
	q := encode(fmt.Sprintf("SELECT K, V FROM %s EMIT CHANGES", st))
	_, idle := pgwire.Received(pg, hc.PID)
	write(q[:len(q)-3])
	testkafka.Await(t, 10*time.Second, "the server to receive the query's first bytes", func() bool {
		got, _ := pgwire.Received(pg, hc.PID)
		return got == idle+int64(len(q)-3)
	})
	sendCancel()
	write(q[len(q)-3:])
	if rows, code := answer(); code != "57014" {
		t.Errorf("query canceled before it started: %d rows, error %q; want 57014", rows, code)
	}
	// The cancel is spent: the next query runs.
	write(encode(limitOne))
	if rows, code := answer(); rows != 1 || code != "" {
		t.Errorf("after the canceled query: %d rows, error %q; want 1 row", rows, code)
	}
}
