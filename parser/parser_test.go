package parser

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// roundTripCases are statements whose normalized form is given; parsing
// the normalized form must give the same tree again.
var roundTripCases = []struct{ in, want string }{
	{"select * from s", "SELECT * FROM S"},
	{"SELECT a AS `b` FROM `Src` x", "SELECT A AS `b` FROM `Src` AS X"},
	{`SELECT "quoted" FROM s`, "SELECT `quoted` FROM S"},
	{"SELECT `a``b` FROM s", "SELECT `a``b` FROM S"},
	{"SELECT 'it''s' FROM s", "SELECT 'it''s' FROM S"},
	{"SELECT a FROM s WINDOW TUMBLING 5m", "SELECT A FROM S WINDOW TUMBLING 5m"},
	{"SELECT a FROM s WINDOW TUMBLING 300s", "SELECT A FROM S WINDOW TUMBLING 5m"},
	{"SELECT a FROM s WINDOW TUMBLING 5M", "SELECT A FROM S WINDOW TUMBLING 5m"},
	{"SELECT a FROM s WINDOW TUMBLING 1500ms", "SELECT A FROM S WINDOW TUMBLING 1500ms"},
	{"SELECT a FROM s WINDOW HOPPING 10m ADVANCE BY 1m GRACE PERIOD 30s", "SELECT A FROM S WINDOW HOPPING 10m ADVANCE 1m GRACE 30s"},
	{"SELECT a FROM s WINDOW HOPPING 10 MINUTES ADVANCE 60 SECONDS", "SELECT A FROM S WINDOW HOPPING 10m ADVANCE 1m"},
	{"SELECT a FROM s WINDOW SESSION (1 HOUR)", "SELECT A FROM S WINDOW SESSION (1 HOUR)"},
	{"SELECT a FROM l JOIN r WITHIN 1h ON l.k = r.k", "SELECT A FROM L INNER JOIN R WITHIN 1 HOUR ON L.K = R.K"},
	{"SELECT -1, - 1, -(1), 2 - -1 FROM s", "SELECT -1, -1, -(1), 2 - -1 FROM S"},
	{"SELECT NOT NOT a FROM s", "SELECT NOT NOT A FROM S"},
	{"SELECT (a = b) = c FROM s", "SELECT (A = B) = C FROM S"},
	{"SELECT (a OR b) AND c FROM s", "SELECT (A OR B) AND C FROM S"},
	{"SELECT (NOT a) IS NULL FROM s", "SELECT (NOT A) IS NULL FROM S"},
	{"SELECT (a + b)[1], (-a)->f FROM s", "SELECT (A + B)[1], (-A)->F FROM S"},
	{"SELECT `MAP`(), `ARRAY`(1), map, array FROM s", "SELECT `MAP`(), `ARRAY`(1), MAP, `ARRAY` FROM S"},
	{"SELECT map['k'], struct->f, `STRUCT`(1) FROM s", "SELECT MAP['k'], STRUCT->F, `STRUCT`(1) FROM S"},
	{"SELECT a FROM s WHERE a IN (SELECTED)", "SELECT A FROM S WHERE A IN (SELECTED)"},
	{"TERMINATE `ALL`", "TERMINATE `ALL`"},
	{"DESCRIBE `FUNCTION` EXTENDED", "DESCRIBE `FUNCTION` EXTENDED"},
	{"PRINT MyTopic", "PRINT 'MyTopic'"},
	{"EXPLAIN EXPLAIN q", "EXPLAIN EXPLAIN Q"},
	{"CREATE STREAM s (`KEY` STRING KEY, header BYTES HEADER('h')) WITH (X=TRUE)", "CREATE STREAM S (KEY STRING KEY, HEADER BYTES HEADER('h')) WITH (X=TRUE)"},
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases {
		st, err := ParseOne(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := st.String(); got != tc.want {
			t.Errorf("%q printed as\n  %s\nwant\n  %s", tc.in, got, tc.want)
		}
		assertRoundTrip(t, tc.in, st)
	}
}

func TestCompactAndKsqlDBWindowsAgree(t *testing.T) {
	pairs := [][2]string{
		{"WINDOW TUMBLING 5m GRACE 2m", "WINDOW TUMBLING (SIZE 5 MINUTES, GRACE PERIOD 2 MINUTES)"},
		{"WINDOW HOPPING 10m ADVANCE 1m GRACE 30s", "WINDOW HOPPING (SIZE 10 MINUTES, ADVANCE BY 1 MINUTE, GRACE PERIOD 30 SECONDS)"},
		{"WINDOW SESSION 30m GRACE 5m", "WINDOW SESSION (30 MINUTES, GRACE PERIOD 5 MINUTES)"},
		{"WINDOW TUMBLING 1d RETENTION 7d", "WINDOW TUMBLING (SIZE 1 DAY, RETENTION 7 DAYS)"},
	}
	for _, p := range pairs {
		a := mustSelect(t, "SELECT * FROM s "+p[0]).Window
		b := mustSelect(t, "SELECT * FROM s "+p[1]).Window
		if !a.Compact || b.Compact {
			t.Errorf("Compact flags wrong: %v %v", a.Compact, b.Compact)
		}
		b.Compact = true
		if d := astDiff(a, b); d != "" {
			t.Errorf("%s vs %s:\n%s", p[0], p[1], d)
		}
	}
}

func mustSelect(t *testing.T, src string) *Select {
	t.Helper()
	st, err := ParseOne(src)
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return st.(*Select)
}

func TestTree(t *testing.T) {
	st, err := ParseOne(`CREATE TABLE t AS SELECT k, COUNT(*) AS n FROM s LEFT JOIN u WITHIN (1s, 2s) GRACE PERIOD 3 SECONDS ON s.k = u.k
		WINDOW HOPPING (SIZE 10 SECONDS, ADVANCE BY 5 SECONDS) WHERE x BETWEEN 1 AND 2 GROUP BY k EMIT FINAL LIMIT 3`)
	if err != nil {
		t.Fatal(err)
	}
	want := &CreateSource{Kind: KindTable, Name: "T", Query: &Select{
		Items: []SelectItem{
			{Expr: &ColumnRef{Name: "K"}},
			{Expr: &FuncCall{Name: "COUNT", Star: true}, Alias: "N"},
		},
		From: &Relation{Name: "S"},
		Joins: []*Join{{Type: JoinLeft, Right: &Relation{Name: "U"},
			Within: &JoinWindow{Before: time.Second, After: 2 * time.Second, Grace: 3 * time.Second, HasGrace: true},
			On:     &Binary{Op: OpEq, Left: &ColumnRef{Source: "S", Name: "K"}, Right: &ColumnRef{Source: "U", Name: "K"}}}},
		Window:  &WindowSpec{Kind: WindowHopping, Size: 10 * time.Second, Advance: 5 * time.Second},
		Where:   &Between{X: &ColumnRef{Name: "X"}, Lo: &Literal{Kind: LitInteger, Text: "1"}, Hi: &Literal{Kind: LitInteger, Text: "2"}},
		GroupBy: []Expr{&ColumnRef{Name: "K"}},
		Emit:    EmitFinal, Limit: 3, HasLimit: true,
	}}
	if d := astDiff(want, st); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
}

func TestLiteralKinds(t *testing.T) {
	for src, kind := range map[string]LiteralKind{
		"1": LitInteger, "1.5": LitDecimal, "1.": LitDecimal, "1e3": LitDouble, "1.5E-2": LitDouble,
		"'x'": LitString, "NULL": LitNull, "true": LitBool,
	} {
		x, err := ParseExpr(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if l, ok := x.(*Literal); !ok || l.Kind != kind {
			t.Errorf("%q: got %#v, want kind %d", src, x, kind)
		}
	}
}

// TestPositions checks that every node carries the position of its first
// token.
func TestPositions(t *testing.T) {
	src := "SHOW STREAMS;\n  SELECT a,\n    f(b) FROM s WHERE c > 1"
	stmts, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	sel := stmts[1].(*Select)
	check := func(n Node, line, col int) {
		t.Helper()
		p := n.Position()
		if p.Line != line || p.Column != col {
			t.Errorf("%s at %d:%d, want %d:%d", n, p.Line, p.Column, line, col)
		}
		if want := lineColOffset(src, line, col); p.Offset != want {
			t.Errorf("%s at offset %d, want %d", n, p.Offset, want)
		}
	}
	check(stmts[0], 1, 1)
	check(sel, 2, 3)
	check(sel.Items[0].Expr, 2, 10)
	check(sel.Items[1].Expr, 3, 5)
	check(sel.Items[1].Expr.(*FuncCall).Args[0], 3, 7)
	check(sel.From, 3, 15)
	check(sel.Where, 3, 23)
	check(sel.Where.(*Binary).Right, 3, 27)
	assertPositioned(t, reflect.ValueOf(stmts))
}

func lineColOffset(src string, line, col int) int {
	off := 0
	for i := 1; i < line; i++ {
		off += strings.IndexByte(src[off:], '\n') + 1
	}
	return off + col - 1
}

// assertPositioned walks a tree and fails on any Pos left zero.
func assertPositioned(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			assertPositioned(t, v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			assertPositioned(t, v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(Pos{}) {
			if v.Interface().(Pos).Line == 0 {
				t.Errorf("zero Pos")
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			assertPositioned(t, v.Field(i))
		}
	}
}

func TestAllNodesPositioned(t *testing.T) {
	for _, tc := range roundTripCases {
		st, err := ParseOne(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		assertPositioned(t, reflect.ValueOf(st))
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		src, msg, token string
		expected        []string
	}{
		{"SELECT a FORM b", "line 1:10: Syntax Error\nExpecting {'FROM'}\nStatement: SELECT a FORM b", "FORM", []string{`"FROM"`}},
		{"SELECT a\nFROM", "line 2:5: Syntax Error\nSyntax error at or near '<EOF>' at line 2:5: expected source name\nStatement: SELECT a\nFROM", "", []string{"source name"}},
		{"SELECT a FROM s WHERE ?", "line 1:23: Syntax Error\n" + `unexpected character "?"` + "\nStatement: SELECT a FROM s WHERE ?", "?", nil},
		{"SELECT 1 FROM s; SELECT 2 FROM s", "line 1:18: Syntax Error\n" + `expected one statement, found more`, "", nil},
		{"", "line 1:1: Syntax Error\n" + `expected a statement`, "", []string{"statement"}},
	}
	for _, tc := range cases {
		_, err := ParseOne(tc.src)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("%q: error %v is not a *Error", tc.src, err)
		}
		if pe.Error() != tc.msg || pe.Token != tc.token || !reflect.DeepEqual(pe.Expected, tc.expected) {
			t.Errorf("%q:\n got %q token %q expected %q\nwant %q token %q expected %q",
				tc.src, pe.Error(), pe.Token, pe.Expected, tc.msg, tc.token, tc.expected)
		}
	}
}

func TestPretty(t *testing.T) {
	_, err := Parse("SHOW STREAMS;\n\tSELECT a FORM b")
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	want := "line 2:11: Syntax Error\nExpecting {'FROM'}\n\tSELECT a FORM b\n\t         ^"
	if got := pe.Pretty(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestParseScriptText(t *testing.T) {
	src := "/* c */ SHOW STREAMS ;\n\nSELECT a -- note\n  FROM s;;  DROP STREAM s  "
	ps, err := ParseScript(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"SHOW STREAMS", "SELECT a -- note\n  FROM s", "DROP STREAM s"}
	if len(ps) != len(want) {
		t.Fatalf("got %d statements", len(ps))
	}
	for i, p := range ps {
		if p.Text != want[i] {
			t.Errorf("[%d] got %q want %q", i, p.Text, want[i])
		}
		again, err := ParseOne(p.Text)
		if err != nil {
			t.Fatalf("text %q does not parse: %v", p.Text, err)
		}
		if d := astDiff(p.Stmt, again); d != "" {
			t.Errorf("text %q parses differently:\n%s", p.Text, d)
		}
	}
}

func TestNoPanicOnOddInput(t *testing.T) {
	for _, src := range []string{
		"", ";", "(", ")", "'", "`", `"`, "/*", "--", "SELECT", "SELECT *", "SELECT * FROM",
		"SELECT f(", "SELECT CASE END FROM s", "SELECT a FROM s WINDOW TUMBLING 99999999999999999999d",
		"SELECT a FROM s WINDOW TUMBLING (SIZE 9999999999999 DAYS)", "SELECT a FROM s LIMIT 99999999999",
		"CREATE TABLE t (a DECIMAL(99999999999))", "\x00", "SELECT \xff FROM s",
	} {
		_, _ = Parse(src)
		_, _ = ParseExpr(src)
	}
}

// TestNestedConstructorsAreFast guards against exponential backtracking
// between constructors and calls of the same name.
func TestNestedConstructorsAreFast(t *testing.T) {
	for _, open := range []string{"MAP(", "ARRAY[", "STRUCT(", "f(", "(", "CAST("} {
		src := "SELECT " + strings.Repeat(open, 40) + "a FROM s"
		start := time.Now()
		_, _ = Parse(src)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%.30s… took %v", src, d)
		}
	}
}

func TestClientOnly(t *testing.T) {
	for _, tc := range []struct{ src, msg, pretty string }{
		{"RUN SCRIPT 'a.sql'", "line 1:1: Syntax Error\nUnknown statement 'RUN'\nStatement: RUN SCRIPT 'a.sql';",
			"line 1:1: Syntax Error\nUnknown statement 'RUN'\nRUN SCRIPT 'a.sql'\n^"},
		{"SHOW STREAMS;\n  run script 'b.sql';", "line 2:3: Syntax Error\nUnknown statement 'RUN'\nStatement: run script 'b.sql';",
			"line 2:3: Syntax Error\nUnknown statement 'RUN'\n  run script 'b.sql'\n  ^"},
	} {
		ps, err := ParseScript(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		p := ps[len(ps)-1]
		e := ClientOnly(p.Stmt, p.Text)
		if e.Error() != tc.msg || e.Pretty() != tc.pretty {
			t.Errorf("%q:\n got %q\n     %q\nwant %q\n     %q", tc.src, e.Error(), e.Pretty(), tc.msg, tc.pretty)
		}
	}
}

// A CREATE CONNECTOR echoes with every setting but connector.class
// masked, as ksqlDB answers it: settings carry passwords.
func TestCreateConnectorMasked(t *testing.T) {
	st, err := ParseOne(`create source connector pg with ('connector.class'='io.debezium.connector.postgresql.PostgresConnector', 'database.password'='s3cret', tasks_max=1)`)
	if err != nil {
		t.Fatal(err)
	}
	want := "CREATE SOURCE CONNECTOR PG WITH ('connector.class'='io.debezium.connector.postgresql.PostgresConnector', 'database.password'='[string]', 'TASKS_MAX'='[string]')"
	if got := st.(*CreateConnector).Masked(); got != want {
		t.Errorf("Masked() = %q\nwant        %q", got, want)
	}
	if !strings.Contains(st.String(), "'s3cret'") {
		t.Errorf("String() lost the value: %s", st)
	}
}
