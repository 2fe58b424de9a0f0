package pgcatalog

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// queryLines are the statements of testdata/queries.sql.
func queryLines(t *testing.T) []string {
	data, err := os.ReadFile("testdata/queries.sql")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "--") {
			out = append(out, line)
		}
	}
	return out
}

// TestQueries answers the expression, join, aggregate and catalog rules
// of testdata/queries.sql over the fixture; queries.golden holds the
// answers (go test -run TestQueries -rewrite regenerates it).
func TestQueries(t *testing.T) {
	s := NewSession(fixture(), "sluice", "sluice")
	var got strings.Builder
	for _, sql := range queryLines(t) {
		fmt.Fprintf(&got, "> %s\n", sql)
		if !s.Claims(sql) {
			t.Errorf("not claimed: %s", sql)
		}
		res, err := run(s, sql, nil, nil)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			fmt.Fprintf(&got, "error: %v\n\n", err)
			continue
		}
		got.WriteString(formatResult(res) + "\n")
	}
	golden(t, "testdata/queries.golden", got.String())
}

// pgText is a result value as PostgreSQL's text output prints it.
func pgText(v any, typ uint32) string {
	switch x := v.(type) {
	case nil:
		return "<NULL>"
	case bool:
		if x {
			return "t"
		}
		return "f"
	case float64:
		return formatFloat(x, 64)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if e == nil {
				parts[i] = "NULL"
				continue
			}
			parts[i] = quoteArrayElem(pgText(e, elemType(typ)))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}

// TestAgainstPostgres runs testdata/queries.sql and the psql, JDBC,
// Grafana and Metabase captures on a real PostgreSQL 15 (scripts/postgres)
// holding the fixture's tables, and compares: the column names and types
// (psql's \gdesc) and the rows as text, oids of user relations aside
// (each server numbers its own).
func TestAgainstPostgres(t *testing.T) {
	if os.Getenv("SLUICE_TEST_POSTGRES") != "1" {
		t.Skip("set SLUICE_TEST_POSTGRES=1 to compare the catalog's answers with a real PostgreSQL (scripts/postgres starts one)")
	}
	pg := startPostgres(t)
	pg.exec(t, `CREATE TABLE orders (id bigint PRIMARY KEY, qty integer, price double precision, amount numeric(10,2), customer text, shipped boolean, payload bytea, day date, at_time time, ts timestamp, tags text[], attrs jsonb);
CREATE TABLE "PAGEVIEWS" ("USERID" text, "PAGEID" text, "VIEWTIME" bigint);
COMMENT ON TABLE orders IS 'Sluice TABLE over topic orders';
COMMENT ON TABLE "PAGEVIEWS" IS 'Sluice STREAM over topic pageviews';`)
	s := NewSession(fixture(), "sluice", "sluice")
	compare := func(t *testing.T, sql, pgSQL string, oids []uint32, params []any) {
		res, err := run(s, sql, oids, params)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			return
		}
		for i := len(params); i > 0; i-- {
			lit := "NULL"
			if params[i-1] != nil {
				lit = "'" + strings.ReplaceAll(fmt.Sprint(params[i-1]), "'", "''") + "'"
			}
			pgSQL = strings.ReplaceAll(pgSQL, fmt.Sprintf("$%d", i), lit)
		}
		pgSQL = strings.TrimSuffix(strings.TrimSpace(pgSQL), ";")
		desc := pg.csv(t, pgSQL+" \\gdesc")
		sqlText := sql
		sql = firstLine(sql)
		if len(desc)-1 != len(res.Fields) {
			t.Errorf("%s\ncolumns: ours %s, PostgreSQL %v", sql, describe(res.Fields), desc)
			return
		}
		for i, f := range res.Fields {
			want := desc[i+1]
			if got := formatType(f.Type.OID, f.Type.TypeMod); f.Name != want[0] || got != want[1] {
				t.Errorf("%s\ncolumn %d: ours %s %s, PostgreSQL %s %s", sql, i+1, f.Name, got, want[0], want[1])
			}
		}
		rows := pg.csv(t, pgSQL)[1:]
		var ours [][]string
		for _, r := range res.Rows {
			cells := make([]string, len(r))
			for i, v := range r {
				cells[i] = pgText(v, res.Fields[i].Type.OID)
			}
			ours = append(ours, cells)
		}
		if !strings.Contains(strings.ToUpper(sqlText), "ORDER BY") {
			// Without ORDER BY each server has its own order.
			sortRows(ours)
			sortRows(rows)
		}
		if len(ours) != len(rows) {
			t.Errorf("%s\nours %d rows %q\nPostgreSQL %d rows %q", sql, len(ours), ours, len(rows), rows)
			return
		}
		for i := range ours {
			for j := range ours[i] {
				a, b := ours[i][j], rows[i][j]
				if res.Fields[j].Type.OID == OIDOid && isUserOID(a) && isUserOID(b) {
					continue
				}
				if a != b && !mayDiffer[res.Fields[j].Name] {
					t.Errorf("%s\nrow %d column %s: ours %q, PostgreSQL %q", sql, i+1, res.Fields[j].Name, a, b)
				}
			}
		}
	}
	for _, sql := range queryLines(t) {
		compare(t, sql, sql, nil, nil)
	}
	// The client captures whose answers depend only on the two tables
	// (not on what else each server holds: its types, databases, views).
	theirOIDs := map[string]string{}
	for _, name := range []string{"orders", "PAGEVIEWS"} {
		theirOIDs[name] = pg.csv(t, fmt.Sprintf("SELECT '%s'::regclass::oid", quoteIdent(name)))[1][0]
	}
	for _, file := range []string{"psql-dt", "psql-d", "psql-d_table", "psql-dv", "psql-df", "psql-dT", "psql-more", "psql-tab", "pgx-loadtypes", "jdbc-getColumns", "jdbc-getPrimaryKeys", "jdbc-getTables-TABLE", "grafana", "metabase-sync"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata/clients", file+".sql")
			for _, st := range readCapture(t, path) {
				if !s.Claims(st.sql) || strings.HasPrefix(strings.ToUpper(st.sql), "SET ") || strings.HasPrefix(strings.ToUpper(st.sql), "SHOW ") {
					continue
				}
				ours, theirs := ourOIDs(t, path, st.sql, s, theirOIDs)
				compare(t, ours, theirs, st.paramOIDs, st.params)
			}
		})
	}
}

func isUserOID(s string) bool {
	n, err := strconv.ParseUint(s, 10, 32)
	return err == nil && n >= uint64(firstUserOID)
}

// testPostgres is a PostgreSQL started by scripts/postgres for a test.
type testPostgres struct {
	script, dir string
}

func startPostgres(t *testing.T) *testPostgres {
	t.Helper()
	script, err := filepath.Abs("../scripts/postgres")
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: the postgres user must reach the run dir.
	dir, err := os.MkdirTemp("", "sluice-pgcatalog-postgres-")
	if err != nil {
		t.Fatal(err)
	}
	p := &testPostgres{script: script, dir: dir}
	t.Cleanup(func() {
		if _, err := p.run("", "stop"); err != nil {
			t.Errorf("scripts/postgres stop (run dir %s kept): %v", dir, err)
			return
		}
		os.RemoveAll(dir)
		os.Remove(dir + ".lock")
	})
	if _, err := p.run("", "start"); err != nil {
		t.Fatalf("scripts/postgres start: %v", err)
	}
	return p
}

func (p *testPostgres) run(stdin string, args ...string) (string, error) {
	cmd := exec.Command(p.script, args...)
	cmd.Env = append(os.Environ(), "SLUICE_PG_DIR="+p.dir)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%v: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

func (p *testPostgres) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := p.run(sql, "psql", "-q", "-v", "ON_ERROR_STOP=1"); err != nil {
		t.Fatalf("psql: %v", err)
	}
}

// csv runs one statement with psql and returns its header and rows.
func (p *testPostgres) csv(t *testing.T, sql string) [][]string {
	t.Helper()
	out, err := p.run(sql+"\n", "psql", "-q", "--csv", "-P", "null=<NULL>", "-v", "ON_ERROR_STOP=1")
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, sql)
	}
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("psql's CSV: %v\n%s", err, out)
	}
	return records
}

func sortRows(rows [][]string) {
	sort.Slice(rows, func(i, j int) bool { return strings.Join(rows[i], "\x00") < strings.Join(rows[j], "\x00") })
}

// mayDiffer are result columns whose values differ between Sluice and a
// PostgreSQL by construction: sizes (Sluice keeps no Postgres pages, its
// relations are 0 bytes).
var mayDiffer = map[string]bool{"Size": true}
