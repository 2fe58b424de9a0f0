package pgcatalog

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestErrors: each fault answers Postgres's SQLSTATE, message and
// position (as PostgreSQL 15 answers the same statements).
func TestErrors(t *testing.T) {
	cases := []struct {
		sql, code, msg string
		pos            int
	}{
		{"SELECT * FROM pg_nope", "42P01", `relation "pg_nope" does not exist`, 15},
		{"SELECT * FROM information_schema.nope", "42P01", `relation "information_schema.nope" does not exist`, 15},
		{"SELECT nope FROM pg_class", "42703", `column "nope" does not exist`, 8},
		{"SELECT c.nope FROM pg_class c", "42703", `column c.nope does not exist`, 8},
		{"SELECT nope(1)", "42883", `function nope(integer) does not exist`, 8},
		{"SELECT lower(1, 2)", "42883", `function lower(integer, integer) does not exist`, 8},
		{"SELECT 1 +", "42601", `syntax error at end of input`, 11},
		{"SELECT oid FROM pg_class, pg_type", "42702", `column reference "oid" is ambiguous`, 8},
		{"SELECT x.oid FROM pg_class", "42P01", `missing FROM-clause entry for table "x"`, 8},
		{"SELECT 'nope'::regclass", "42P01", `relation "nope" does not exist`, 8},
		{"SELECT 'x'::int", "22P02", `invalid input syntax for type integer: "x"`, 8},
		{"SELECT count(*) FROM pg_class WHERE count(*) > 1", "42803", `aggregate functions are not allowed in WHERE`, 37},
		{"SELECT 1/0", "22012", `division by zero`, 0},
		{"SHOW nope", "42704", `unrecognized configuration parameter "nope"`, 0},
		{"SET nope = 1", "42704", `unrecognized configuration parameter "nope"`, 0},
		{"SET server_version = '1'", "55P02", `parameter "server_version" cannot be changed`, 0},
		{"SET SESSION AUTHORIZATION bob", "55P02", `parameter "session_authorization" cannot be changed`, 0},
		{"SELECT current_setting('nope')", "42704", `unrecognized configuration parameter "nope"`, 0},
		{"SELECT é FROM pg_class WHERE nope", "42703", `column "é" does not exist`, 8},
		{"SELECT 1 FROM pg_class WHERE 'é' = nope", "42703", `column "nope" does not exist`, 36},
	}
	s := NewSession(fixture(), "sluice", "sluice")
	for _, c := range cases {
		_, err := run(s, c.sql, nil, nil)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want a *Error", c.sql, err)
			continue
		}
		if e.Code != c.code || e.Message != c.msg || e.Position != c.pos {
			t.Errorf("%s:\n got %s %q at %d\nwant %s %q at %d", c.sql, e.Code, e.Message, e.Position, c.code, c.msg, c.pos)
		}
	}
}

// TestClaims: Postgres's client statements and catalog-only SELECTs are
// this package's; Sluice's dialect, and SELECTs of its sources, are not.
func TestClaims(t *testing.T) {
	s := NewSession(fixture(), "sluice", "sluice")
	claimed := []string{
		"SELECT 1", "select version()", "SELECT current_schema()", "SELECT * FROM pg_catalog.pg_class",
		"SELECT * FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace",
		"SELECT * FROM information_schema.tables", "WITH t AS (SELECT 1) SELECT * FROM t",
		"SELECT (SELECT count(*) FROM pg_type) UNION SELECT 1", "SELECT * FROM generate_series(1, 2)",
		"SET application_name = 'x'", "SET SESSION TimeZone TO 'UTC'", "SET LOCAL search_path = public",
		"SET TIME ZONE 'UTC'", "SET extra_float_digits = 3", "SET my.custom = 'x'", "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"SHOW server_version", "SHOW ALL", "SHOW TimeZone", "SHOW transaction isolation level", "RESET ALL", "RESET application_name",
		"BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK", "END", "DISCARD ALL", "DEALLOCATE ALL", "DEALLOCATE stmt1",
	}
	for _, sql := range claimed {
		if !s.Claims(sql) {
			t.Errorf("not claimed: %s", sql)
		}
	}
	notClaimed := []string{
		"SHOW TABLES", "SHOW STREAMS", "SHOW QUERIES", "SHOW TOPICS", "SHOW PROPERTIES", "LIST STREAMS",
		"SET 'auto.offset.reset'='earliest'", "UNSET 'auto.offset.reset'",
		"SELECT * FROM orders WHERE id = 1", "SELECT * FROM public.orders", "SELECT * FROM \"PAGEVIEWS\" EMIT CHANGES",
		"SELECT * FROM pg_class, orders", "SELECT (SELECT max(id) FROM orders)", "WITH t AS (SELECT * FROM orders) SELECT * FROM t",
		"CREATE STREAM s (id INT) WITH (kafka_topic='s', value_format='json')", "CREATE TABLE t (id INT PRIMARY KEY)",
		"INSERT INTO orders (id) VALUES (1)", "DESCRIBE orders", "DROP TABLE orders", "TERMINATE ALL",
		"SELECT * FROM unknown_thing", "SELECT * FROM pg_class FOR UPDATE", "EXPLAIN SELECT 1",
		"DECLARE c CURSOR FOR SELECT * FROM orders", "FETCH 10 c", "not sql at all",
	}
	for _, sql := range notClaimed {
		if s.Claims(sql) {
			t.Errorf("claimed: %s", sql)
		}
	}
}

// TestSettings: SET, SHOW, RESET and set_config keep a session's
// parameters apart from another's, and report the GUC_REPORT ones.
func TestSettings(t *testing.T) {
	s := NewSession(fixture(), "alice", "db")
	other := NewSession(fixture(), "bob", "db")
	exec := func(s *Session, sql string) *Result {
		t.Helper()
		res, err := run(s, sql, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return res
	}
	steps := []struct{ sql, want string }{
		{"SHOW application_name", "application_name:25\n\"\"\nSHOW\n"},
		{"SET application_name = 'psql'", "SET\n"},
		{"SHOW application_name", "application_name:25\n\"psql\"\nSHOW\n"},
		{"SET TIME ZONE 'Europe/Paris'", "SET\n"},
		{"SHOW timezone", "TimeZone:25\n\"Europe/Paris\"\nSHOW\n"},
		{"SELECT current_setting('TimeZone'), set_config('search_path', 'public', false)", "current_setting:25, set_config:25\n\"Europe/Paris\" | \"public\"\nSELECT 1\n"},
		{"SET my.var TO 'x'", "SET\n"},
		{"SHOW my.var", "my.var:25\n\"x\"\nSHOW\n"},
		{"SHOW session_authorization", "session_authorization:25\n\"alice\"\nSHOW\n"},
		{"SHOW server_version", "server_version:25\n\"15.0\"\nSHOW\n"},
		{"SET search_path TO public, pg_catalog", "SET\n"},
		{"SHOW search_path", "search_path:25\n\"public, pg_catalog\"\nSHOW\n"},
		{"RESET search_path", "RESET\n"},
		{"SHOW search_path", "search_path:25\n\"\\\"$user\\\", public\"\nSHOW\n"},
		{"BEGIN", "BEGIN\n"},
		{"COMMIT", "COMMIT\n"},
		{"START TRANSACTION", "START TRANSACTION\n"},
		{"ROLLBACK", "ROLLBACK\n"},
		{"DISCARD ALL", "DISCARD ALL\n"},
		{"SHOW application_name", "application_name:25\n\"\"\nSHOW\n"},
	}
	for _, st := range steps {
		if got := formatResult(exec(s, st.sql)); got != st.want {
			t.Errorf("%s:\n got %q\nwant %q", st.sql, got, st.want)
		}
	}
	if got := formatResult(exec(other, "SHOW TimeZone")); got != "TimeZone:25\n\"UTC\"\nSHOW\n" {
		t.Errorf("another session's TimeZone: %q", got)
	}
	s.Changed()
	exec(s, "SET application_name = 'x'")
	exec(s, "SET TimeZone = 'UTC'") // unchanged: DISCARD ALL reset it
	exec(s, "SET DateStyle = 'German'")
	exec(s, "SET extra_float_digits = 3") // not a GUC_REPORT parameter
	if got, want := s.Changed(), map[string]string{"application_name": "x", "DateStyle": "German, MDY"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changed() = %v, want %v", got, want)
	}
	if got := s.Changed(); got != nil {
		t.Errorf("Changed() again = %v, want nil", got)
	}
	for _, st := range []struct{ sql, want string }{
		{"SET DateStyle = ISO, DMY", "DateStyle:25\n\"ISO, DMY\"\nSHOW\n"},
		{"SET client_encoding = 'utf-8'", "client_encoding:25\n\"UTF8\"\nSHOW\n"},
		{"SET standard_conforming_strings = true", "standard_conforming_strings:25\n\"on\"\nSHOW\n"},
	} {
		exec(s, st.sql)
		name := strings.Fields(st.sql)[1]
		if got := formatResult(exec(s, "SHOW "+name)); got != st.want {
			t.Errorf("%s, then SHOW: %q, want %q", st.sql, got, st.want)
		}
	}
	if _, err := run(s, "SET client_encoding = 'LATIN1'", nil, nil); err == nil || err.(*Error).Code != CodeFeatureUnsupported {
		t.Errorf("SET client_encoding = 'LATIN1': %v, want 0A000", err)
	}
	other.SetStartupParameter("DateStyle", "ISO")
	other.SetStartupParameter("client_encoding", "UTF8")
	if got := other.Reported()["DateStyle"]; got != "ISO, MDY" {
		t.Errorf("startup DateStyle=ISO: reported %q, want ISO, MDY", got)
	}
	if got := other.Changed(); got != nil {
		t.Errorf("startup parameters: Changed() = %v, want nil (the server reports them all after authentication)", got)
	}
	rep := s.Reported()
	if rep["server_version"] != "15.0" || rep["application_name"] != "x" || rep["integer_datetimes"] != "on" || rep["session_authorization"] != "alice" {
		t.Errorf("Reported() = %v", rep)
	}
	s.SetSluiceVersion("0.29.0-sluice")
	if got := formatResult(exec(s, "SELECT version() ~ '^PostgreSQL 15\\.0 \\(Sluice 0\\.29\\.0-sluice\\) on ', pg_backend_pid() = 77")); got != "?column?:16, ?column?:16\ntrue | false\nSELECT 1\n" {
		t.Errorf("version(): %q", got)
	}
	s.SetBackendPID(77)
	if got := formatResult(exec(s, "SELECT pg_backend_pid()")); got != "pg_backend_pid:23\n77\nSELECT 1\n" {
		t.Errorf("pg_backend_pid(): %q", got)
	}
	exec(s, "BEGIN")
	if !s.InTransaction() {
		t.Error("BEGIN: not in a transaction")
	}
	exec(s, "END")
	if s.InTransaction() {
		t.Error("END: still in a transaction")
	}
}

// TestPrepare: parameters get the type of what they are compared with
// (the client's declared type wins), fields are known before Execute,
// and each Execute reads the catalog as it is then.
func TestPrepare(t *testing.T) {
	rels := fixture()()
	n := 1
	s := NewSession(func() []Relation { return rels[:n] }, "sluice", "sluice")
	st, err := s.Prepare("SELECT relname, relnatts FROM pg_class WHERE relname LIKE $1 AND relnamespace = $2 AND relnatts > $3 ORDER BY relname", []uint32{0, 0, OIDInt8})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Params(), []uint32{OIDText, OIDOid, OIDInt8}; !reflect.DeepEqual(got, want) {
		t.Errorf("Params() = %v, want %v", got, want)
	}
	if got := describe(st.Fields()); got != "relname:19, relnatts:21" {
		t.Errorf("Fields() = %s", got)
	}
	params := []any{"%", int64(nsPublic), int64(1)}
	res, err := st.Execute(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if got := formatResult(res); got != "relname:19, relnatts:21\n\"orders\" | 12\nSELECT 1\n" {
		t.Errorf("first execution: %q", got)
	}
	n = 2
	res, err = st.Execute(context.Background(), []any{"%", "2200", int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := formatResult(res); got != "relname:19, relnatts:21\n\"PAGEVIEWS\" | 3\n\"orders\" | 12\nSELECT 2\n" {
		t.Errorf("after a stream was created: %q", got)
	}
	if oid := s.RelationOID("PAGEVIEWS"); oid < firstUserOID || oid != NewSession(fixture(), "x", "y").RelationOID("PAGEVIEWS") {
		t.Errorf("RelationOID(PAGEVIEWS) = %d: not a stable user oid", oid)
	}
	if oid, num := s.ColumnOrigin("PAGEVIEWS", "VIEWTIME"); oid != s.RelationOID("PAGEVIEWS") || num != 3 {
		t.Errorf("ColumnOrigin(PAGEVIEWS, VIEWTIME) = %d, %d", oid, num)
	}
	if oid, num := s.ColumnOrigin("PAGEVIEWS", "nope"); oid != 0 || num != 0 {
		t.Errorf("ColumnOrigin(PAGEVIEWS, nope) = %d, %d", oid, num)
	}
	if oid := s.RelationOID("nope"); oid != 0 {
		t.Errorf("RelationOID(nope) = %d", oid)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big, err := s.Prepare("SELECT count(*) FROM pg_attribute a, pg_attribute b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := big.Execute(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled statement: %v, want context.Canceled", err)
	}
}

// TestSplit cuts a simple query into statements as Postgres's scanner
// does: semicolons in quotes, dollar quotes and comments stay.
func TestSplit(t *testing.T) {
	got := Split("SELECT 'a;b'; SELECT $$x;y$$ -- c;d\n; SHOW TABLES;SELECT \"x;\" FROM t;")
	want := []string{"SELECT 'a;b'", "SELECT $$x;y$$ -- c;d", "SHOW TABLES", `SELECT "x;" FROM t`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Split = %q, want %q", got, want)
	}
	if got := Split("SELECT 1"); !reflect.DeepEqual(got, []string{"SELECT 1"}) {
		t.Errorf("Split(one) = %q", got)
	}
	if got := Split("-- ping"); len(got) != 0 {
		t.Errorf("Split(comment only) = %q, want none (EmptyQueryResponse)", got)
	}
	if got := Split("  ;  "); len(got) != 0 {
		t.Errorf("Split(empty) = %q", got)
	}
	if got := Split("SELECT * FROM s EMIT CHANGES; SHOW STREAMS"); strings.Join(got, "|") != "SELECT * FROM s EMIT CHANGES|SHOW STREAMS" {
		t.Errorf("Split(Sluice SQL) = %q", got)
	}
	// Statements whose first word is no Postgres keyword are kept.
	if got := Split("DESCRIBE s; LIST STREAMS;\nTERMINATE q1 ; describe 'x;y'"); strings.Join(got, "|") != "DESCRIBE s|LIST STREAMS|TERMINATE q1|describe 'x;y'" {
		t.Errorf("Split(Sluice statements) = %q", got)
	}
}

// FuzzPrepare: no statement text makes the catalog panic (Prepare and
// Execute recover, but a panic is a bug: this calls what they wrap).
func FuzzPrepare(f *testing.F) {
	data, err := os.ReadFile("testdata/queries.sql")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "--") {
			f.Add(line)
		}
	}
	f.Add("SELECT (information_schema._pg_expandarray(ARRAY[1,2])).x")
	f.Add("SELECT * FROM (VALUES (1), (2, 3)) t")
	s := NewSession(fixture(), "sluice", "sluice")
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := s.prepare(sql, nil)
		if err != nil {
			return
		}
		params := make([]any, len(st.Params()))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st.execute(ctx, params)
	})
}

// TestRowBudget: a cross join too large to answer fails alone (54000),
// and the session answers the next statement.
func TestRowBudget(t *testing.T) {
	s := NewSession(manySources(200), "sluice", "sluice")
	_, err := run(s, "SELECT count(*) FROM pg_attribute a, pg_attribute b", nil, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != "54000" {
		t.Fatalf("a cross join of %s: %v, want 54000", "pg_attribute", err)
	}
	if res, err := run(s, "SELECT 1", nil, nil); err != nil || formatResult(res) != "?column?:23\n1\nSELECT 1\n" {
		t.Errorf("next statement: %v %v", res, err)
	}
}

// TestConcurrentSessions: sessions share nothing mutable (the regexp
// cache, the declarations): many at once give each its own answers (run
// with -race).
func TestConcurrentSessions(t *testing.T) {
	src := fixture()
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func(i int) {
			s := NewSession(src, "sluice", "sluice")
			name := strings.Repeat("x", i+1)
			for _, sql := range []string{"SET application_name = '" + name + "'", "SELECT relname FROM pg_class WHERE relname ~ '^(orders|PAGEVIEWS)$' ORDER BY 1"} {
				if _, err := run(s, sql, nil, nil); err != nil {
					errs <- err
					return
				}
			}
			res, err := run(s, "SELECT current_setting('application_name')", nil, nil)
			if err == nil && res.Rows[0][0] != name {
				err = errors.New("another session's application_name: " + res.Rows[0][0].(string))
			}
			errs <- err
		}(i)
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
