package pgcatalog

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

var rewrite = flag.Bool("rewrite", false, "rewrite pgcatalog/testdata golden files")

// fixture is the catalog the tests run over: the table the client
// captures ran against on PostgreSQL (orders, every common type, a
// BIGINT primary key), as a Sluice TABLE, and a Sluice STREAM.
func fixture() Source {
	dec := types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}
	return func() []Relation {
		return []Relation{
			{Name: "orders", Kind: "TABLE", Topic: "orders", Columns: []Column{
				{Name: "id", Type: types.BigIntType, Key: true},
				{Name: "qty", Type: types.IntegerType},
				{Name: "price", Type: types.DoubleType},
				{Name: "amount", Type: dec},
				{Name: "customer", Type: types.StringType},
				{Name: "shipped", Type: types.BooleanType},
				{Name: "payload", Type: types.BytesType},
				{Name: "day", Type: types.Type{Kind: types.Date}},
				{Name: "at_time", Type: types.Type{Kind: types.Time}},
				{Name: "ts", Type: types.TimestampType},
				{Name: "tags", Type: types.Type{Kind: types.Array, Elem: &types.StringType}},
				{Name: "attrs", Type: types.Type{Kind: types.Map, Key: &types.StringType, Elem: &types.BigIntType}},
			}},
			{Name: "PAGEVIEWS", Kind: "STREAM", Topic: "pageviews", Columns: []Column{
				{Name: "USERID", Type: types.StringType, Key: true},
				{Name: "PAGEID", Type: types.StringType},
				{Name: "VIEWTIME", Type: types.BigIntType},
			}},
		}
	}
}

// capturedStatement is one statement of a client capture: its text, the
// parameter types and values the client bound, and the RowDescription
// PostgreSQL answered.
type capturedStatement struct {
	sql       string
	paramOIDs []uint32
	params    []any
	rowDesc   string
}

var (
	paramOIDsRe = regexp.MustCompile(`paramOIDs=\[([0-9, ]*)\]`)
	paramsRe    = regexp.MustCompile(`\$(\d+)=('(?:[^']|'')*'|NULL|[^,\]]+)`)
	rowDescRe   = regexp.MustCompile(`PostgreSQL: RowDescription \[(.*)\]`)
)

func readCapture(t *testing.T, path string) []capturedStatement {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []capturedStatement
	chunks := regexp.MustCompile(`(?m)^-- next\n`).Split(string(data), -1)
	for _, chunk := range chunks {
		var st capturedStatement
		var text []string
		lines := strings.Split(chunk, "\n")
		inText := false
		for _, line := range lines {
			if !inText && strings.HasPrefix(line, "--") {
				if m := paramOIDsRe.FindStringSubmatch(line); m != nil {
					for _, f := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ' ' }) {
						n, _ := strconv.Atoi(f)
						st.paramOIDs = append(st.paramOIDs, uint32(n))
					}
				}
				if strings.Contains(line, "client: Bind") {
					for _, m := range paramsRe.FindAllStringSubmatch(line, -1) {
						if m[2] == "NULL" {
							st.params = append(st.params, nil)
							continue
						}
						st.params = append(st.params, strings.ReplaceAll(strings.Trim(m[2], "'"), "''", "'"))
					}
				}
				if m := rowDescRe.FindStringSubmatch(line); m != nil {
					st.rowDesc = m[1]
				}
				continue
			}
			inText = true
			text = append(text, line)
		}
		st.sql = strings.TrimRight(strings.Join(text, "\n"), "\n ")
		if st.sql == "" {
			continue
		}
		out = append(out, st)
	}
	return out
}

// pgOIDRe is the oid PostgreSQL gave orders in the captures; psql and
// JDBC send it back as a literal, so the test sends ours in its place.
var (
	pgOIDRe       = regexp.MustCompile(`\b16386\b`)
	oidHeaderRe   = regexp.MustCompile(`(?m)^-- \(pgcatalog\) oid (\d+) is (\S+)$`)
	capturedOIDRe = regexp.MustCompile(`\b1[6-9][0-9]{3}\b`)
)

// ourOIDs rewrites the oids PostgreSQL gave the tables in a capture (16386
// for orders, else as its "-- (pgcatalog) oid N is NAME" lines say) to
// the ones s gives them; theirs is the capture's own text, for running it
// on a PostgreSQL holding the same tables under other oids.
func ourOIDs(t *testing.T, path, sql string, s *Session, theirs map[string]string) (ours, forPostgres string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"16386": "orders"}
	if m := oidHeaderRe.FindAllStringSubmatch(string(data), -1); m != nil {
		names = map[string]string{}
		for _, x := range m {
			names[x[1]] = x[2]
		}
	}
	swap := func(by func(name string) string) string {
		return capturedOIDRe.ReplaceAllStringFunc(sql, func(oid string) string {
			if name, ok := names[oid]; ok {
				return by(name)
			}
			return oid
		})
	}
	ours = swap(func(name string) string { return fmt.Sprint(s.RelationOID(name)) })
	forPostgres = swap(func(name string) string { return theirs[name] })
	return ours, forPostgres
}

// TestClientCaptures runs every statement the real clients sent
// PostgreSQL (testdata/clients/*.sql, captured by scripts/pgclients) over
// the fixture: the claimed ones must describe the same columns, names and
// type OIDs as PostgreSQL answered, and give the golden rows; the others
// (queries of the table itself) must not be claimed.
func TestClientCaptures(t *testing.T) {
	files, err := filepath.Glob("testdata/clients/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".sql"), func(t *testing.T) {
			s := NewSession(fixture(), "sluice", "sluice")
			var got strings.Builder
			for _, st := range readCapture(t, file) {
				sql, _ := ourOIDs(t, file, st.sql, s, nil)
				fmt.Fprintf(&got, "> %s\n", firstLine(sql))
				if !s.Claims(sql) {
					got.WriteString("not claimed\n\n")
					continue
				}
				res, err := run(s, sql, st.paramOIDs, st.params)
				if err != nil {
					t.Errorf("%s\n%s: %v", file, sql, err)
					fmt.Fprintf(&got, "error: %v\n\n", err)
					continue
				}
				if st.rowDesc != "" {
					if desc := describe(res.Fields); desc != st.rowDesc {
						t.Errorf("%s\n%s\nRowDescription %s\nPostgreSQL     %s", file, sql, desc, st.rowDesc)
					}
				}
				got.WriteString(formatResult(res))
				got.WriteString("\n")
			}
			golden(t, strings.TrimSuffix(file, ".sql")+".golden", got.String())
		})
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 100 {
		s = s[:100] + " …"
	}
	return s
}

func run(s *Session, sql string, oids []uint32, params []any) (*Result, error) {
	st, err := s.Prepare(sql, oids)
	if err != nil {
		return nil, err
	}
	return st.Execute(context.Background(), params)
}

// describe prints fields as the captures do: name:oid, comma separated.
func describe(fields []Field) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = fmt.Sprintf("%s:%d", f.Name, f.Type.OID)
	}
	return strings.Join(parts, ", ")
}

func formatResult(res *Result) string {
	var b strings.Builder
	if res.Fields != nil {
		b.WriteString(describe(res.Fields) + "\n")
		for _, row := range res.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = formatCell(v)
			}
			b.WriteString(strings.Join(cells, " | ") + "\n")
		}
	}
	b.WriteString(res.Tag + "\n")
	return b.String()
}

func formatCell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatCell(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%v", v)
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run with -rewrite and review the diff):\n%s", path, got)
	}
}
