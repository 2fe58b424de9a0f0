package testcdc

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// Postgres is a PostgreSQL server started by scripts/postgres for one test:
// wal_level=logical, on a free loopback port, with a user (REPLICATION,
// superuser) and a database of its own. It is stopped when the test ends.
type Postgres struct {
	// DSN is postgres://user:password@127.0.0.1:port/database.
	DSN string
	// Host, Port, User, Password and Database are the DSN's parts, as a
	// Debezium connector's database.* settings want them.
	Host, Port, User, Password, Database string
	script                               *script
}

// StartPostgres starts a server in a run dir of its own, or skips the test
// when SLUICE_TEST_CDC is not 1.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	requireCDC(t)
	s := newScript(t, "postgres", "SLUICE_PG_DIR")
	s.stopAtCleanup(t)
	out, err := s.run("", nil, "start")
	if err != nil {
		t.Fatalf("scripts/postgres start: %v", err)
	}
	p, err := parseDSN(lastLine(out))
	if err != nil {
		t.Fatalf("scripts/postgres start: %v", err)
	}
	p.script = s
	return p
}

func parseDSN(dsn string) (*Postgres, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "postgres" || u.User == nil || len(u.Path) < 2 {
		return nil, fmt.Errorf("want a DSN postgres://user:pass@host:port/db on the last line, got %q", dsn)
	}
	pass, _ := u.User.Password()
	return &Postgres{
		DSN: dsn, Host: u.Hostname(), Port: u.Port(), User: u.User.Username(), Password: pass,
		Database: strings.TrimPrefix(u.Path, "/"),
	}, nil
}

// Exec runs sql (one or more statements) with psql in one session, stopping
// at the first error, which fails the test. It returns what the statements
// print, unaligned: one line per row, columns separated by '|'.
func (p *Postgres) Exec(t testing.TB, sql string) string {
	t.Helper()
	out, err := p.script.run(sql, nil, "psql", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1")
	if err != nil {
		t.Fatalf("psql: %v\nSQL:\n%s", err, sql)
	}
	return out
}

// DebeziumConfig is the configuration of a Debezium PostgreSQL connector
// that captures tables (schema.table) of this server through pgoutput:
// its replication slot, its publication (created for these tables only) and
// its topic prefix are all called name (lower-case letters, digits and _),
// so connectors of different tests never share them; the topics it writes,
// name.schema.table, are created with one partition and replication 1 by the
// worker. It snapshots the tables' existing rows first (snapshot.mode
// initial, Debezium's default). Change or add entries before creating it.
func (p *Postgres) DebeziumConfig(name string, tables ...string) map[string]string {
	list := ""
	for i, tb := range tables {
		if i > 0 {
			list += ","
		}
		list += tb
	}
	return map[string]string{
		"connector.class":             "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname":           p.Host,
		"database.port":               p.Port,
		"database.user":               p.User,
		"database.password":           p.Password,
		"database.dbname":             p.Database,
		"plugin.name":                 "pgoutput",
		"slot.name":                   name,
		"publication.name":            name,
		"publication.autocreate.mode": "filtered",
		"topic.prefix":                name,
		"table.include.list":          list,
		"snapshot.mode":               "initial",
		"topic.creation.default.replication.factor": "1",
		"topic.creation.default.partitions":         "1",
	}
}
