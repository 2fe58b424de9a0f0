package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestServerPostgres runs the real binary with the Postgres front door
// (SLUICE_PG_LISTEN, cleartext passwords by --pg-auth): the start line
// says where it listens, psql-protocol clients read a pull query by key
// with a parameter and a push query, and SIGTERM ends the push query
// with FATAL 57P01 before the process exits 0.
func TestServerPostgres(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(sluiceBin, "server", "--service-id", testkafka.Name(t, "svc"), "--listen", "127.0.0.1:0", "--data-dir", dir,
		"--auth", "alice:secret", "--pg-auth", "password", "--file", "cmd/sluice/testdata/server.sql")
	cmd.Env = append(cmd.Environ(), "SLUICE_PG_LISTEN=127.0.0.1:0")
	p := startCmd(t, cmd)
	var addr string
	p.waitFor(t, time.Minute, "the postgres line", func(lines []string) bool {
		for _, l := range lines {
			if a, ok := strings.CutPrefix(l, "postgres: listening on "); ok {
				if !strings.HasSuffix(a, " (tls off, auth password)") {
					t.Fatalf("start line %q", l)
				}
				addr = strings.TrimSuffix(a, " (tls off, auth password)")
				return true
			}
		}
		return false
	})
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=alice password=secret dbname=sluice sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	var gotHost string
	var n, total int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		err = conn.QueryRow(ctx, "SELECT * FROM ping_totals WHERE host = $1", "a").Scan(&gotHost, &n, &total)
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || gotHost != "a" || n != 1 || total != 12 {
		t.Fatalf("pull query: %q %d %d, %v", gotHost, n, total, err)
	}

	if _, err := conn.Exec(ctx, "SET 'auto.offset.reset'='earliest'"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "SELECT host, ms FROM pings EMIT CHANGES")
	if err != nil {
		t.Fatal(err)
	}
	var h string
	var ms int32
	if !rows.Next() || rows.Scan(&h, &ms) != nil || h != "a" || ms != 12 {
		t.Fatalf("push query: %q %d, %v", h, ms, rows.Err())
	}
	ended := make(chan error, 1)
	go func() {
		for rows.Next() {
		}
		ended <- rows.Err()
	}()
	p.stop(t, 30*time.Second)
	var pe *pgconn.PgError
	if err := <-ended; !errors.As(err, &pe) || pe.Code != "57P01" || pe.Severity != "FATAL" {
		t.Errorf("push query at SIGTERM: %v", err)
	}
}

// pgConnect connects as alice to the Postgres port a server started with
// --pg-listen named on its start lines; closed at cleanup.
func (s *serverProc) pgConnect(t *testing.T) *pgx.Conn {
	t.Helper()
	var addr string
	for _, l := range s.all {
		if a, ok := strings.CutPrefix(l, "postgres: listening on "); ok {
			addr, _, _ = strings.Cut(a, " ")
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("no postgres start line from %s: %v", s.base, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=alice password=secret dbname=sluice sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
