package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// envPGClients switches on the tests that run real Postgres clients
// (psql, psycopg 3, the PostgreSQL JDBC driver) from scripts/pgclients.
const envPGClients = "SLUICE_TEST_PGCLIENTS"

// pgClients are the client programs `scripts/pgclients env` names.
type pgClients struct {
	psql, python, psycopgQuery, jdbcJar string
}

// requirePGClients skips the test unless SLUICE_TEST_PGCLIENTS=1; then the
// clients must be installed (scripts/pgclients install), or the test fails.
func requirePGClients(t *testing.T) *pgClients {
	t.Helper()
	if os.Getenv(envPGClients) != "1" {
		t.Skipf("set %s=1 (after scripts/pgclients install) to run psql, psycopg and the PostgreSQL JDBC driver against a Postgres server", envPGClients)
	}
	for _, tool := range []string{"bash", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s=1, but %s is not found", envPGClients, tool)
		}
	}
	cmd := exec.Command(filepath.Join(repoRoot, "scripts", "pgclients"), "env")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/pgclients env: %v\n%s", err, errOut.String())
	}
	vars := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "="); ok {
			vars[k] = v
		}
	}
	c := &pgClients{psql: vars["PSQL"], python: vars["PGCLIENTS_PYTHON"], psycopgQuery: vars["PGCLIENTS_PSYCOPG_QUERY"], jdbcJar: vars["PGCLIENTS_JDBC_JAR"]}
	if c.psql == "" || c.python == "" || c.psycopgQuery == "" || c.jdbcJar == "" {
		t.Fatalf("scripts/pgclients env printed %q: want PSQL, PGCLIENTS_PYTHON, PGCLIENTS_PSYCOPG_QUERY and PGCLIENTS_JDBC_JAR", out.String())
	}
	return c
}

// pgTarget is a server speaking the Postgres protocol that holds the
// fixture table PG_ORDERS (pgOrdersRows) and answers for user/password.
type pgTarget struct {
	host, port, user, password, database string
	// push is a statement that runs until canceled.
	push string
}

func (p *pgTarget) dsn() string {
	return fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable", p.host, p.port, p.user, p.password, p.database)
}

func (p *pgTarget) jdbcURL() string {
	return fmt.Sprintf("jdbc:postgresql://%s:%s/%s?sslmode=disable", p.host, p.port, p.database)
}

// The fixture: PG_ORDERS, keyed by ID, a column of every type Sluice maps
// to Postgres, one row with values and one with NULLs; and PG_EVENTS, a
// stream in Sluice (a plain table in PostgreSQL), two rows. The quoted upper-case
// names are Sluice's (unquoted names are upper-cased there) and read the
// same in Postgres, so one set of statements and expected outputs holds for
// both servers.
const pgOrdersPostgres = `CREATE TABLE "PG_ORDERS" ("ID" integer PRIMARY KEY, "QTY" integer, "TOTAL" bigint,
  "PRICE" double precision, "AMOUNT" numeric(10,2), "CUSTOMER" text, "SHIPPED" boolean, "PAYLOAD" bytea,
  "DAY" date, "AT_TIME" time, "TS" timestamp, "TAGS" text[], "NUMS" integer[], "ATTRS" jsonb, "INFO" jsonb);
INSERT INTO "PG_ORDERS" VALUES
  (1, 3, 9000000000, 2.5, 12.34, 'alice', true, '\x0102', '2024-01-02', '03:04:05', '2024-01-02 03:04:05.123', '{a,b}', '{1,2}',
   '{"k":1}', '{"A":1,"B":"x"}'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE "PG_EVENTS" ("ID" integer, "NAME" text);
INSERT INTO "PG_EVENTS" VALUES (1, 'signup'), (2, NULL);
`

// pgOrdersSluice declares the same table in Sluice over topic %s; its MAP
// and STRUCT are jsonb to Postgres clients, its arrays Postgres arrays. The
// rows are pgOrdersRecords.
const pgOrdersSluice = `CREATE SOURCE TABLE pg_orders (id INT PRIMARY KEY, qty INT, total BIGINT, price DOUBLE,
  amount DECIMAL(10,2), customer STRING, shipped BOOLEAN, payload BYTES, day DATE, at_time TIME, ts TIMESTAMP,
  tags ARRAY<STRING>, nums ARRAY<INT>, attrs MAP<STRING, INT>, info STRUCT<a INT, b STRING>) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');`

// pgEventsSluice is the fixture's stream, PG_EVENTS, over topic %s; to
// Postgres clients a stream is a table too (relkind 'r'). Its records are
// pgEventsRecords.
const pgEventsSluice = `CREATE STREAM pg_events (id INT KEY, name STRING) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');`

func pgEventsRecords(topic string) []*kgo.Record {
	key := func(id int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(id)) }
	return []*kgo.Record{
		{Topic: topic, Key: key(1), Value: []byte(`{"NAME":"signup"}`)},
		{Topic: topic, Key: key(2), Value: []byte(`{"NAME":null}`)},
	}
}

// pgOrdersRecords are the fixture's rows as JSON values keyed by the
// KAFKA-format INT: DATE in days, TIME in ms of the day, TIMESTAMP in epoch
// ms, BYTES in base64.
func pgOrdersRecords(topic string) []*kgo.Record {
	key := func(id int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(id)) }
	return []*kgo.Record{
		{Topic: topic, Key: key(1), Value: []byte(`{"QTY":3,"TOTAL":9000000000,"PRICE":2.5,"AMOUNT":12.34,"CUSTOMER":"alice","SHIPPED":true,` +
			`"PAYLOAD":"AQI=","DAY":19724,"AT_TIME":11045000,"TS":1704164645123,"TAGS":["a","b"],"NUMS":[1,2],"ATTRS":{"k":1},"INFO":{"A":1,"B":"x"}}`)},
		{Topic: topic, Key: key(2), Value: []byte(`{"QTY":null,"TOTAL":null,"PRICE":null,"AMOUNT":null,"CUSTOMER":null,"SHIPPED":null,` +
			`"PAYLOAD":null,"DAY":null,"AT_TIME":null,"TS":null,"TAGS":null,"NUMS":null,"ATTRS":null,"INFO":null}`)},
	}
}

// TestPGClientsOnPostgres runs the client checks against a real PostgreSQL
// (scripts/postgres) holding the same fixture: it proves the client
// programs and the expected outputs, which the Sluice test shares.
func TestPGClientsOnPostgres(t *testing.T) {
	c := requirePGClients(t)
	target := startPostgres(t, c)
	target.push = "SELECT pg_sleep(600);"
	runPGClientChecks(t, c, target)
}

// TestPGClientsOnSluice runs psql, psycopg and JDBC against `sluice server
// --pg-listen` (embedded broker, --auth user): the same checks, the same
// expected outputs as on PostgreSQL, and a push query psql cancels.
func TestPGClientsOnSluice(t *testing.T) {
	c := requirePGClients(t)
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "pg_orders")
	testkafka.CreateTopic(t, brokers, topic, 1)
	testkafka.Produce(t, brokers, pgOrdersRecords(topic)...)
	events := testkafka.Name(t, "pg_events")
	testkafka.CreateTopic(t, brokers, events, 1)
	testkafka.Produce(t, brokers, pgEventsRecords(events)...)

	pgAddr := freeLoopbackAddr(t)
	s := startServer(t, "--brokers", brokers, "--service-id", testkafka.Name(t, "svc"), "--data-dir", t.TempDir(),
		"--auth", "sluice:sluice", "--pg-listen", pgAddr)
	defer func() {
		if t.Failed() {
			t.Logf("sluice server stderr:\n%s", s.proc.stderr.String())
		}
	}()
	create := fmt.Sprintf(pgOrdersSluice, topic) + "\n" + fmt.Sprintf(pgEventsSluice, events)
	if code, body := restAs(t, s, "sluice", "sluice", "/ksql", `{"ksql":`+jsonString(create)+`,"streamsProperties":{"auto.offset.reset":"earliest"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	// The source table materialises its topic in the background: wait for
	// the second row over REST before the clients look.
	testkafka.Await(t, 30*time.Second, "row 2 of PG_ORDERS", func() bool {
		_, body := restAs(t, s, "sluice", "sluice", "/query-stream", `{"sql":"SELECT ID FROM PG_ORDERS WHERE ID = 2;"}`)
		return strings.Contains(body, "\n[2]")
	})
	host, port, _ := net.SplitHostPort(pgAddr)
	awaitListening(t, pgAddr)
	target := &pgTarget{host: host, port: port, user: "sluice", password: "sluice", database: "sluice",
		push: `SELECT "ID" FROM "PG_ORDERS" EMIT CHANGES;`}
	runPGClientChecks(t, c, target)
	t.Run("psql-push", func(t *testing.T) { checkPsqlPush(t, c, target) })
	s.proc.stop(t, 30*time.Second)
}

// TestPGClientsOnSluiceTLS: with --tls-cert/--tls-key the Postgres listener
// takes TLS only. psql, psycopg and JDBC connect verifying the certificate
// (sslmode=verify-full, the certificate as root) and run a statement; psql
// without TLS is refused with a FATAL it prints.
func TestPGClientsOnSluiceTLS(t *testing.T) {
	c := requirePGClients(t)
	cert, key := selfSignedCert(t)
	pgAddr := freeLoopbackAddr(t)
	s := startServer(t, "--brokers", testkafka.Brokers(t), "--service-id", testkafka.Name(t, "svc"), "--data-dir", t.TempDir(),
		"--auth", "sluice:sluice", "--pg-listen", pgAddr, "--tls-cert", cert, "--tls-key", key)
	defer func() {
		if t.Failed() {
			t.Logf("sluice server stderr:\n%s", s.proc.stderr.String())
		}
	}()
	awaitListening(t, pgAddr)
	host, port, _ := net.SplitHostPort(pgAddr)
	target := &pgTarget{host: host, port: port, user: "sluice", password: "sluice", database: "sluice"}
	verify := []string{"PGSSLMODE=verify-full", "PGSSLROOTCERT=" + cert}
	const query = "SELECT current_user, current_database();"

	t.Run("psql", func(t *testing.T) {
		stdout, stderr, code := runClient(t, c.psql, append(psqlEnv(target), verify...), "-X", "-A", "-t", "-c", query, "-c", `\conninfo`)
		if code != 0 {
			t.Fatalf("psql over TLS: exit %d\nstderr:\n%s", code, stderr)
		}
		// The cipher is the server's choice; the protocol and the answer are not.
		want := fmt.Sprintf("sluice|sluice\nYou are connected to database \"sluice\" as user \"sluice\" on host \"%s\" at port \"%s\".\nSSL connection (protocol: TLSv1.3, cipher: ", host, port)
		if !strings.HasPrefix(stdout, want) || !strings.HasSuffix(stdout, ", compression: off)\n") {
			t.Errorf("psql over TLS printed\n%s\nwant\n%s…, compression: off)", stdout, want)
		}
	})
	t.Run("psql-no-tls", func(t *testing.T) {
		_, stderr, code := runClient(t, c.psql, psqlEnv(target), "-X", "-c", query)
		want := fmt.Sprintf("psql: error: connection to server at \"%s\", port %s failed: FATAL:  TLS is required: connect with sslmode=require (or verify-ca, verify-full)\n", host, port)
		if code != 2 || stderr != want {
			t.Errorf("psql without TLS: exit %d, stderr\n%s\nwant exit 2, stderr\n%s", code, stderr, want)
		}
	})
	t.Run("psycopg", func(t *testing.T) {
		stdout, stderr, code := runClient(t, c.python, nil, c.psycopgQuery,
			strings.Replace(target.dsn(), "sslmode=disable", "sslmode=verify-full sslrootcert="+cert, 1), query)
		if code != 0 {
			t.Fatalf("psycopg over TLS: exit %d\nstderr:\n%s", code, stderr)
		}
		want := []string{`{"description": [["current_user", 19], ["current_database", 19]]}`, `["'sluice'", "'sluice'"]`}
		if diff := cmp.Diff(want, lines(stdout)); diff != "" {
			t.Errorf("psycopg over TLS (-want +got):\n%s", diff)
		}
	})
	t.Run("jdbc", func(t *testing.T) {
		url := strings.Replace(target.jdbcURL(), "sslmode=disable", "sslmode=verify-full&sslrootcert="+cert, 1)
		stdout, stderr, code := runClient(t, "java", nil, "-jar", c.jdbcJar, url, target.user, target.password, "query", query)
		if code != 0 {
			t.Fatalf("jdbc over TLS: exit %d\nstderr:\n%s", code, stderr)
		}
		want := []string{"COLUMN\tcurrent_user\tVARCHAR\tname", "COLUMN\tcurrent_database\tVARCHAR\tname", "ROW\tString:sluice\tString:sluice"}
		if diff := cmp.Diff(want, lines(stdout)); diff != "" {
			t.Errorf("jdbc over TLS (-want +got):\n%s", diff)
		}
	})
	s.proc.stop(t, 30*time.Second)
}

// selfSignedCert writes a self-signed certificate for 127.0.0.1 (its own
// root) and its key, as PEM files, and returns their paths.
func selfSignedCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// checkPsqlPush runs a push query to its LIMIT in psql, from the table's
// first change (ksqlDB's SET of auto.offset.reset), as psql sends it and,
// with FETCH_COUNT, through a cursor psql declares and fetches from.
func checkPsqlPush(t *testing.T, c *pgClients, target *pgTarget) {
	const want = `SET
 ID | CUSTOMER 
----+----------
  1 | alice
  2 | 
(2 rows)

`
	for _, fetch := range []string{"0", "1"} {
		stdout, stderr, code := runClient(t, c.psql, psqlEnv(target), "-X", "-v", "ON_ERROR_STOP=1", "-v", "FETCH_COUNT="+fetch,
			"-c", "SET 'auto.offset.reset'='earliest';", "-c", `SELECT "ID", "CUSTOMER" FROM "PG_ORDERS" EMIT CHANGES LIMIT 2;`)
		if code != 0 {
			t.Fatalf("psql FETCH_COUNT=%s: exit %d\nstderr:\n%s", fetch, code, stderr)
		}
		if diff := cmp.Diff(want, stdout); diff != "" {
			t.Errorf("psql FETCH_COUNT=%s (-want +got):\n%s\nstderr:\n%s", fetch, diff, stderr)
		}
	}
}

func runPGClientChecks(t *testing.T, c *pgClients, target *pgTarget) {
	t.Run("psql", func(t *testing.T) { checkPsql(t, c, target) })
	t.Run("psql-cancel", func(t *testing.T) { checkPsqlCancel(t, c, target) })
	t.Run("psql-wrong-password", func(t *testing.T) { checkPsqlWrongPassword(t, c, target) })
	t.Run("psycopg", func(t *testing.T) { checkPsycopg(t, c, target) })
	t.Run("jdbc", func(t *testing.T) { checkJDBC(t, c, target) })
	t.Run("pgx", func(t *testing.T) { checkPgx(t, target) })
	t.Run("grafana", func(t *testing.T) { checkGrafana(t, c, target) })
}

// checkGrafana sends the statements of Grafana's PostgreSQL data source
// (testdata/pgclients/grafana.sql, separated by lines "-- next"): its Test
// button's "-- ping", the version and TimescaleDB checks, and the schema,
// table and column pickers' catalog queries, texts as Grafana builds them
// for the table "PG_ORDERS". Grafana sends each as a simple Query, as psql
// -c does; the answers, unaligned, are testdata/pgclients/grafana.golden
// (what PostgreSQL 15 answers).
func checkGrafana(t *testing.T, c *pgClients, target *pgTarget) {
	sql, err := os.ReadFile(filepath.Join("testdata", "pgclients", "grafana.sql"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "pgclients", "grafana.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range strings.Split(strings.TrimSuffix(string(sql), "\n"), "\n-- next\n") {
		stdout, stderr, code := runClient(t, c.psql, psqlEnv(target), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", st)
		if code != 0 {
			t.Errorf("Grafana's statement failed (exit %d):\n%s\nstderr:\n%s", code, st, stderr)
		}
		got = append(got, stdout)
	}
	if diff := cmp.Diff(string(want), strings.Join(got, "-- next\n")); diff != "" {
		t.Errorf("answers to Grafana's statements (-want +got):\n%s", diff)
	}
}

// checkPsql: \dt, \d TABLE and pull queries, as psql prints them.
func checkPsql(t *testing.T, c *pgClients, target *pgTarget) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"dt", []string{"-c", `\dt`}, `          List of relations
 Schema |   Name    | Type  | Owner  
--------+-----------+-------+--------
 public | PG_EVENTS | table | sluice
 public | PG_ORDERS | table | sluice
(2 rows)

`},
		{"d", []string{"-c", `\d "PG_ORDERS"`}, `                        Table "public.PG_ORDERS"
  Column  |            Type             | Collation | Nullable | Default 
----------+-----------------------------+-----------+----------+---------
 ID       | integer                     |           | not null | 
 QTY      | integer                     |           |          | 
 TOTAL    | bigint                      |           |          | 
 PRICE    | double precision            |           |          | 
 AMOUNT   | numeric(10,2)               |           |          | 
 CUSTOMER | text                        |           |          | 
 SHIPPED  | boolean                     |           |          | 
 PAYLOAD  | bytea                       |           |          | 
 DAY      | date                        |           |          | 
 AT_TIME  | time without time zone      |           |          | 
 TS       | timestamp without time zone |           |          | 
 TAGS     | text[]                      |           |          | 
 NUMS     | integer[]                   |           |          | 
 ATTRS    | jsonb                       |           |          | 
 INFO     | jsonb                       |           |          | 
Indexes:
    "PG_ORDERS_pkey" PRIMARY KEY, btree ("ID")

`},
		{"pull", []string{"-c", `SELECT * FROM "PG_ORDERS" WHERE "ID" = 1;`, "-c", `SELECT * FROM "PG_ORDERS" WHERE "ID" = 2;`},
			` ID | QTY |   TOTAL    | PRICE | AMOUNT | CUSTOMER | SHIPPED | PAYLOAD |    DAY     | AT_TIME  |           TS            | TAGS  | NUMS  |  ATTRS   |        INFO        
----+-----+------------+-------+--------+----------+---------+---------+------------+----------+-------------------------+-------+-------+----------+--------------------
  1 |   3 | 9000000000 |   2.5 |  12.34 | alice    | t       | \x0102  | 2024-01-02 | 03:04:05 | 2024-01-02 03:04:05.123 | {a,b} | {1,2} | {"k": 1} | {"A": 1, "B": "x"}
(1 row)

 ID | QTY | TOTAL | PRICE | AMOUNT | CUSTOMER | SHIPPED | PAYLOAD | DAY | AT_TIME | TS | TAGS | NUMS | ATTRS | INFO 
----+-----+-------+-------+--------+----------+---------+---------+-----+---------+----+------+------+-------+------
  2 |     |       |       |        |          |         |         |     |         |    |      |      |       | 
(1 row)

`},
		{"stream", []string{"-c", `SELECT * FROM "PG_EVENTS";`}, ` ID |  NAME  
----+--------
  1 | signup
  2 | 
(2 rows)

`},
		{"pull-unaligned", []string{"-A", "-t", "-c", `SELECT "ID", "CUSTOMER", "AMOUNT", "TS" FROM "PG_ORDERS" WHERE "ID" = 1;`},
			"1|alice|12.34|2024-01-02 03:04:05.123\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runClient(t, c.psql, psqlEnv(target), append([]string{"-X", "-v", "ON_ERROR_STOP=1"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("psql %q: exit %d\nstderr:\n%s", tc.args, code, stderr)
			}
			if diff := cmp.Diff(tc.want, stdout); diff != "" {
				t.Errorf("psql %q (-want +got):\n%s\nstderr:\n%s", tc.args, diff, stderr)
			}
		})
	}
}

// checkPsqlCancel runs a statement that does not end by itself in psql on
// a terminal and interrupts psql as Ctrl-C does: psql sends a
// CancelRequest on a second connection, and the server ends the
// statement with SQLSTATE 57014, which psql prints.
func checkPsqlCancel(t *testing.T, c *pgClients, target *pgTarget) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.psql, "-X", "-c", `\echo started`, "-c", target.push)
	cmd.Env = append(os.Environ(), psqlEnv(target)...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("psql on a pty: %v", err)
	}
	defer tty.Close()
	var out lockedBuffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&out, tty) // ends with EIO when psql exits
	}()
	seen := func(s string) func() bool {
		return func() bool { return strings.Contains(strings.ReplaceAll(out.String(), "\r", ""), s) }
	}
	testkafka.Await(t, 30*time.Second, "psql's \\echo", seen("started\n"))
	// psql connected before the \echo, so its next wait in poll() is for the
	// statement's answer: once there, the statement has been sent.
	testkafka.Await(t, 30*time.Second, "psql waiting for the statement", func() bool { return waitingInPoll(cmd.Process.Pid) })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("psql still runs 30 s after SIGINT; it printed:\n%s", out.String())
	}
	<-copied
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 1 {
		t.Errorf("psql exit: %v, want exit status 1", werr)
	}
	want := "started\nCancel request sent\nERROR:  canceling statement due to user request\n"
	if diff := cmp.Diff(want, strings.ReplaceAll(out.String(), "\r", "")); diff != "" {
		t.Errorf("psql output (-want +got):\n%s", diff)
	}
}

// checkPsqlWrongPassword: a wrong password ends the connection with
// PostgreSQL's FATAL 28P01 message, which psql prints after where it
// connected.
func checkPsqlWrongPassword(t *testing.T, c *pgClients, target *pgTarget) {
	wrong := *target
	wrong.password = "not-" + target.password
	_, stderr, code := runClient(t, c.psql, psqlEnv(&wrong), "-X", "-c", "SELECT 1;")
	want := fmt.Sprintf("psql: error: connection to server at \"%s\", port %s failed: FATAL:  password authentication failed for user \"%s\"\n",
		target.host, target.port, target.user)
	if code != 2 || stderr != want {
		t.Errorf("psql with a wrong password: exit %d, stderr\n%s\nwant exit 2, stderr\n%s", code, stderr, want)
	}
}

// waitingInPoll reports whether process pid sleeps in poll(2); where the
// kernel hides wait channels (wchan reads "0"), whether it sleeps at all.
func waitingInPoll(pid int) bool {
	wchan, err := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	if err != nil {
		return false
	}
	if string(wchan) != "0" {
		return strings.Contains(string(wchan), "poll")
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state …: comm may hold spaces, so the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'S'
}

// checkPsycopg: parameterised pull queries with every mapped type and NULLs,
// results in text and in binary, as Python sees them.
func checkPsycopg(t *testing.T, c *pgClients, target *pgTarget) {
	const desc = `{"description": [["ID", 23], ["QTY", 23], ["TOTAL", 20], ["PRICE", 701], ["AMOUNT", 1700], ["CUSTOMER", 25], ` +
		`["SHIPPED", 16], ["PAYLOAD", 17], ["DAY", 1082], ["AT_TIME", 1083], ["TS", 1114], ["TAGS", 1009], ["NUMS", 1007], ["ATTRS", 3802], ["INFO", 3802]]}`
	const row1 = `["1", "3", "9000000000", "2.5", "Decimal('12.34')", "'alice'", "True", "bytes.fromhex('0102')", ` +
		`"datetime.date(2024, 1, 2)", "datetime.time(3, 4, 5)", "datetime.datetime(2024, 1, 2, 3, 4, 5, 123000)", "['a', 'b']", "[1, 2]", "{'k': 1}", "{'A': 1, 'B': 'x'}"]`
	const row2 = `["2", null, null, null, null, null, null, null, null, null, null, null, null, null, null]`
	const idDesc = `{"description": [["ID", 23]]}`
	for _, tc := range []struct {
		name   string
		binary bool
		sql    string
		params string
		want   []string
	}{
		{"text-row", false, `SELECT * FROM "PG_ORDERS" WHERE "ID" = %t`, `[["int", 1]]`, []string{desc, row1}},
		{"binary-row", true, `SELECT * FROM "PG_ORDERS" WHERE "ID" = %b`, `[["int", 1]]`, []string{desc, row1}},
		{"text-nulls", false, `SELECT * FROM "PG_ORDERS" WHERE "ID" = %t`, `[["int", 2]]`, []string{desc, row2}},
		{"binary-nulls", true, `SELECT * FROM "PG_ORDERS" WHERE "ID" = %b`, `[["int", 2]]`, []string{desc, row2}},
		{"bigint", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "TOTAL" = %s`, `[["bigint", 9000000000]]`, []string{idDesc, `["1"]`}},
		{"double", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "PRICE" = %s`, `[["double", 2.5]]`, []string{idDesc, `["1"]`}},
		{"decimal", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "AMOUNT" = %s`, `[["decimal", "12.34"]]`, []string{idDesc, `["1"]`}},
		{"string", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "CUSTOMER" = %s`, `[["string", "alice"]]`, []string{idDesc, `["1"]`}},
		{"bool", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "SHIPPED" = %s`, `[["bool", true]]`, []string{idDesc, `["1"]`}},
		{"bytes", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "PAYLOAD" = %s`, `[["bytes", "0102"]]`, []string{idDesc, `["1"]`}},
		{"date", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "DAY" = %s`, `[["date", "2024-01-02"]]`, []string{idDesc, `["1"]`}},
		{"time", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "AT_TIME" = %s`, `[["time", "03:04:05"]]`, []string{idDesc, `["1"]`}},
		{"timestamp", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "TS" = %s`, `[["timestamp", "2024-01-02 03:04:05.123"]]`, []string{idDesc, `["1"]`}},
		// NULL compares as unknown: no row, and no error.
		{"null-param", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "CUSTOMER" = %s`, `[["string", null]]`, []string{idDesc}},
		{"is-null", false, `SELECT "ID" FROM "PG_ORDERS" WHERE "CUSTOMER" IS NULL`, `[]`, []string{idDesc, `["2"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{c.psycopgQuery}
			if tc.binary {
				args = append(args, "--binary")
			}
			args = append(args, target.dsn()+" application_name=psycopg-"+tc.name, tc.sql, tc.params)
			stdout, stderr, code := runClient(t, c.python, nil, args...)
			if code != 0 {
				t.Fatalf("psycopg %s %s: exit %d\nstderr:\n%s", tc.sql, tc.params, code, stderr)
			}
			if diff := cmp.Diff(tc.want, lines(stdout)); diff != "" {
				t.Errorf("psycopg %s %s (-want +got):\n%s", tc.sql, tc.params, diff)
			}
		})
	}
}

// checkJDBC: DatabaseMetaData's tables, columns and primary key, and a
// PreparedStatement's rows, through the PostgreSQL JDBC driver.
func checkJDBC(t *testing.T, c *pgClients, target *pgTarget) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"tables", []string{"tables"}, []string{"public\tPG_EVENTS\tTABLE", "public\tPG_ORDERS\tTABLE"}},
		{"stream-columns", []string{"columns", "PG_EVENTS"}, []string{"ID\t4\tint4\t10\t1\t1", "NAME\t12\ttext\t2147483647\t1\t2"}},
		{"columns", []string{"columns", "PG_ORDERS"}, []string{
			"ID\t4\tint4\t10\t0\t1",
			"QTY\t4\tint4\t10\t1\t2",
			"TOTAL\t-5\tint8\t19\t1\t3",
			"PRICE\t8\tfloat8\t17\t1\t4",
			"AMOUNT\t2\tnumeric\t10\t1\t5",
			"CUSTOMER\t12\ttext\t2147483647\t1\t6",
			"SHIPPED\t-7\tbool\t1\t1\t7",
			"PAYLOAD\t-2\tbytea\t2147483647\t1\t8",
			"DAY\t91\tdate\t13\t1\t9",
			"AT_TIME\t92\ttime\t15\t1\t10",
			"TS\t93\ttimestamp\t29\t1\t11",
			"TAGS\t2003\t_text\t2147483647\t1\t12",
			"NUMS\t2003\t_int4\t10\t1\t13",
			"ATTRS\t1111\tjsonb\t2147483647\t1\t14",
			"INFO\t1111\tjsonb\t2147483647\t1\t15",
		}},
		{"pk", []string{"pk", "PG_ORDERS"}, []string{"ID\t1"}},
		{"query", []string{"query", `SELECT * FROM "PG_ORDERS" WHERE "ID" = ?`, "int:1"}, []string{
			"COLUMN\tID\tINTEGER\tint4",
			"COLUMN\tQTY\tINTEGER\tint4",
			"COLUMN\tTOTAL\tBIGINT\tint8",
			"COLUMN\tPRICE\tDOUBLE\tfloat8",
			"COLUMN\tAMOUNT\tNUMERIC\tnumeric",
			"COLUMN\tCUSTOMER\tVARCHAR\ttext",
			"COLUMN\tSHIPPED\tBIT\tbool",
			"COLUMN\tPAYLOAD\tBINARY\tbytea",
			"COLUMN\tDAY\tDATE\tdate",
			"COLUMN\tAT_TIME\tTIME\ttime",
			"COLUMN\tTS\tTIMESTAMP\ttimestamp",
			"COLUMN\tTAGS\tARRAY\t_text",
			"COLUMN\tNUMS\tARRAY\t_int4",
			"COLUMN\tATTRS\tOTHER\tjsonb",
			"COLUMN\tINFO\tOTHER\tjsonb",
			"ROW\tInteger:1\tInteger:3\tLong:9000000000\tDouble:2.5\tBigDecimal:12.34\tString:alice\tBoolean:t\tbyte[]:\\\\x0102\t" +
				"Date:2024-01-02\tTime:03:04:05\tTimestamp:2024-01-02 03:04:05.123\tPgArray:{a,b}\tPgArray:{1,2}\tPGobject:{\"k\": 1}\tPGobject:{\"A\": 1, \"B\": \"x\"}",
		}},
		{"query-nulls", []string{"query", `SELECT "ID", "CUSTOMER", "TS" FROM "PG_ORDERS" WHERE "ID" = ? OR "CUSTOMER" = ?`, "bigint:2", "null:string"}, []string{
			"COLUMN\tID\tINTEGER\tint4",
			"COLUMN\tCUSTOMER\tVARCHAR\ttext",
			"COLUMN\tTS\tTIMESTAMP\ttimestamp",
			"ROW\tInteger:2\tNULL\tNULL",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-jar", c.jdbcJar, target.jdbcURL() + "&ApplicationName=jdbc-" + tc.name, target.user, target.password}, tc.args...)
			stdout, stderr, code := runClient(t, "java", nil, args...)
			if code != 0 {
				t.Fatalf("jdbc %q: exit %d\nstderr:\n%s", tc.args, code, stderr)
			}
			if diff := cmp.Diff(tc.want, lines(stdout)); diff != "" {
				t.Errorf("jdbc %q (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// psqlEnv are libpq's variables that point psql at target.
func psqlEnv(target *pgTarget) []string {
	return []string{"PGHOST=" + target.host, "PGPORT=" + target.port, "PGUSER=" + target.user,
		"PGPASSWORD=" + target.password, "PGDATABASE=" + target.database, "PGSSLMODE=disable",
		"PGAPPNAME=psql", "PAGER=", "PSQL_PAGER=", "LC_ALL=C.UTF-8", "COLUMNS=400"}
}

// runClient runs a client program to completion (two minutes at most).
func runClient(t *testing.T, name string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		code = ee.ExitCode()
	default:
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// startPostgres starts a PostgreSQL of its own (scripts/postgres, stopped
// at the end of the test) and creates the fixture in it with psql.
func startPostgres(t *testing.T, c *pgClients) *pgTarget {
	t.Helper()
	dir, err := os.MkdirTemp("", "sluice-pgclients-postgres-")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(repoRoot, "scripts", "postgres")
	run := func(args ...string) string {
		cmd := exec.Command(script, args...)
		cmd.Env = append(os.Environ(), "SLUICE_PG_DIR="+dir)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("scripts/postgres %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	t.Cleanup(func() {
		run("stop")
		os.RemoveAll(dir)
		os.Remove(dir + ".lock")
	})
	dsn := lines(run("start"))
	// postgres://sluice:sluice@127.0.0.1:PORT/sluice
	rest, ok := strings.CutPrefix(dsn[len(dsn)-1], "postgres://sluice:sluice@")
	hostPort, db, ok2 := strings.Cut(rest, "/")
	host, port, err := net.SplitHostPort(hostPort)
	if !ok || !ok2 || err != nil {
		t.Fatalf("scripts/postgres start printed %q", dsn)
	}
	target := &pgTarget{host: host, port: port, user: "sluice", password: "sluice", database: db}
	if _, stderr, code := runClient(t, c.psql, psqlEnv(target), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", pgOrdersPostgres); code != 0 {
		t.Fatalf("creating the fixture: exit %d\n%s", code, stderr)
	}
	return target
}

// freeLoopbackAddr is a loopback address whose port was free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// awaitListening waits until addr accepts TCP connections.
func awaitListening(t *testing.T, addr string) {
	t.Helper()
	testkafka.Await(t, 30*time.Second, "the Postgres listener on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

// restAs sends body to path with HTTP Basic credentials.
func restAs(t *testing.T, s *serverProc, user, password, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// checkPgx: pgx (in this process) runs the pull queries with a parameter of
// every mapped type, in its default mode (a named prepared statement,
// binary parameters and results) and in its simple-protocol mode (pgx
// writes each value into the text as a quoted literal, '1', which
// PostgreSQL reads as the type the comparison needs, as PgBouncer set-ups
// and every client that interpolates rely on), and sees each row's values
// as Go values.
func checkPgx(t *testing.T, target *pgTarget) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, target.dsn()+" application_name=pgx")
	if err != nil {
		t.Fatalf("pgx connect: %v", err)
	}
	defer conn.Close(context.Background())
	day := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123_000_000, time.UTC)
	row1 := []string{
		"int32(1)", "int32(3)", "int64(9000000000)", "float64(2.5)", "12.34", `"alice"`, "bool(true)", `[]byte{0x1, 0x2}`,
		"2024-01-02", "03:04:05", "2024-01-02 03:04:05.123", `[]interface {}{"a", "b"}`, "[]interface {}{1, 2}",
		`map[string]interface {}{"k":1}`, `map[string]interface {}{"A":1, "B":"x"}`,
	}
	row2 := []string{"int32(2)", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>", "<nil>"}
	for _, m := range []struct {
		name string
		mode pgx.QueryExecMode
	}{{"prepared", pgx.QueryExecModeCacheStatement}, {"simple", pgx.QueryExecModeSimpleProtocol}} {
		for _, tc := range []struct {
			name  string
			sql   string
			param any
			want  [][]string
		}{
			{"row", `SELECT * FROM "PG_ORDERS" WHERE "ID" = $1`, int32(1), [][]string{row1}},
			{"nulls", `SELECT * FROM "PG_ORDERS" WHERE "ID" = $1`, int64(2), [][]string{row2}},
			{"bigint", `SELECT "ID" FROM "PG_ORDERS" WHERE "TOTAL" = $1`, int64(9000000000), [][]string{{"int32(1)"}}},
			{"double", `SELECT "ID" FROM "PG_ORDERS" WHERE "PRICE" = $1`, 2.5, [][]string{{"int32(1)"}}},
			{"decimal", `SELECT "ID" FROM "PG_ORDERS" WHERE "AMOUNT" = $1`, "12.34", [][]string{{"int32(1)"}}},
			{"string", `SELECT "ID" FROM "PG_ORDERS" WHERE "CUSTOMER" = $1`, "alice", [][]string{{"int32(1)"}}},
			{"bool", `SELECT "ID" FROM "PG_ORDERS" WHERE "SHIPPED" = $1`, true, [][]string{{"int32(1)"}}},
			{"bytes", `SELECT "ID" FROM "PG_ORDERS" WHERE "PAYLOAD" = $1`, []byte{1, 2}, [][]string{{"int32(1)"}}},
			{"date", `SELECT "ID" FROM "PG_ORDERS" WHERE "DAY" = $1`, day, [][]string{{"int32(1)"}}},
			{"time", `SELECT "ID" FROM "PG_ORDERS" WHERE "AT_TIME" = $1`, pgtype.Time{Microseconds: 11_045_000_000, Valid: true}, [][]string{{"int32(1)"}}},
			{"timestamp", `SELECT "ID" FROM "PG_ORDERS" WHERE "TS" = $1`, ts, [][]string{{"int32(1)"}}},
			{"null", `SELECT "ID" FROM "PG_ORDERS" WHERE "CUSTOMER" = $1`, nil, nil},
		} {
			t.Run(m.name+"-"+tc.name, func(t *testing.T) {
				rows, err := conn.Query(ctx, tc.sql, m.mode, tc.param)
				if err != nil {
					t.Fatalf("%s with %#v: %v", tc.sql, tc.param, err)
				}
				var got [][]string
				for rows.Next() {
					vals, err := rows.Values()
					if err != nil {
						t.Fatalf("values: %v", err)
					}
					got = append(got, pgxShow(vals))
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("%s with %#v: %v", tc.sql, tc.param, err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s with %#v (-want +got):\n%s", tc.sql, tc.param, diff)
				}
			})
		}
	}
}

// pgxShow prints the values pgx decoded: numbers and booleans with their
// Go type, numerics, dates, times and timestamps in Postgres's text form,
// the rest in Go syntax.
func pgxShow(vals []any) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case pgtype.Numeric:
			f, _ := x.Value()
			out[i] = fmt.Sprint(f)
		case pgtype.Time:
			out[i] = time.UnixMicro(x.Microseconds).UTC().Format("15:04:05.999999")
		case time.Time:
			if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
				out[i] = x.Format("2006-01-02")
			} else {
				out[i] = x.Format("2006-01-02 15:04:05.999999")
			}
		case nil:
			out[i] = "<nil>"
		case int16, int32, int64, float32, float64, bool:
			out[i] = fmt.Sprintf("%T(%v)", v, v)
		default:
			out[i] = fmt.Sprintf("%#v", v)
		}
	}
	return out
}
