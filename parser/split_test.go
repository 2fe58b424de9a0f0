package parser_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/parser"
)

func TestSplitStatements(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		stmts []string
		rest  string
	}{
		{"one", "SHOW STREAMS;", []string{"SHOW STREAMS;"}, ""},
		{"two lines", "CREATE STREAM s (id VARCHAR KEY)\n  WITH (KAFKA_TOPIC='s');\n", []string{"CREATE STREAM s (id VARCHAR KEY)\n  WITH (KAFKA_TOPIC='s');"}, "\n"},
		{"unfinished", "SELECT *\nFROM s", nil, "SELECT *\nFROM s"},
		{"several and a rest", "SHOW STREAMS; SHOW TABLES; SELECT", []string{"SHOW STREAMS;", "SHOW TABLES;"}, " SELECT"},
		{"semicolon in a string", "INSERT INTO s VALUES ('a;b');", []string{"INSERT INTO s VALUES ('a;b');"}, ""},
		{"doubled quote", "INSERT INTO s VALUES ('it''s;');", []string{"INSERT INTO s VALUES ('it''s;');"}, ""},
		{"open string", "INSERT INTO s VALUES ('a;", nil, "INSERT INTO s VALUES ('a;"},
		{"quoted identifiers", "SELECT \"a;b\", `c;d` FROM s;", []string{"SELECT \"a;b\", `c;d` FROM s;"}, ""},
		{"line comment", "SHOW -- list them;\nSTREAMS;", []string{"SHOW -- list them;\nSTREAMS;"}, ""},
		{"open line comment", "SHOW STREAMS -- x;", nil, "SHOW STREAMS -- x;"},
		{"block comment", "SHOW /* ; */ TABLES;", []string{"SHOW /* ; */ TABLES;"}, ""},
		{"open block comment", "SHOW /* ; TABLES;", nil, "SHOW /* ; TABLES;"},
		{"empty statements", ";; ;SHOW TABLES;", []string{"SHOW TABLES;"}, ""},
		{"function body", "CREATE FUNCTION f() RETURNS INT LANGUAGE JAVASCRIPT AS $$ a; b $$; SHOW TABLES;",
			[]string{"CREATE FUNCTION f() RETURNS INT LANGUAGE JAVASCRIPT AS $$ a; b $$;", "SHOW TABLES;"}, ""},
		{"open function body", "CREATE FUNCTION f() RETURNS INT LANGUAGE JAVASCRIPT AS $$ a;", nil, "CREATE FUNCTION f() RETURNS INT LANGUAGE JAVASCRIPT AS $$ a;"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stmts, rest := parser.SplitStatements(tc.src)
			if diff := cmp.Diff(tc.stmts, stmts); diff != "" || rest != tc.rest {
				t.Errorf("parser.SplitStatements(%q): rest %q (want %q), statements (-want +got):\n%s", tc.src, rest, tc.rest, diff)
			}
		})
	}
}

// TestSplitAgreesWithParser: every complete statement the splitter cuts
// parses as exactly one statement, with the parser's own text.
func TestSplitAgreesWithParser(t *testing.T) {
	src := `CREATE STREAM s (id VARCHAR KEY, "v;x" INT) WITH (KAFKA_TOPIC='s;t', VALUE_FORMAT='JSON'); -- a comment; with a semicolon
/* block; comment */ INSERT INTO s VALUES ('it''s', 1);
CREATE FUNCTION f(x INT) RETURNS INT LANGUAGE JAVASCRIPT AS $$ return x; $$;
SELECT id, ` + "`v;x`" + ` FROM s EMIT CHANGES;`
	stmts, rest := parser.SplitStatements(src)
	if strings.TrimSpace(rest) != "" {
		t.Fatalf("rest %q", rest)
	}
	whole, err := parser.ParseScript(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != len(whole) {
		t.Fatalf("split %d statements, parser %d", len(stmts), len(whole))
	}
	for i, s := range stmts {
		one, err := parser.ParseScript(s)
		if err != nil || len(one) != 1 {
			t.Fatalf("statement %d %q: %v, %d statements", i, s, err, len(one))
		}
		if one[0].Text != whole[i].Text {
			t.Errorf("statement %d: %q, parser says %q", i, one[0].Text, whole[i].Text)
		}
	}
}
