package pgwire

import (
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

func TestResolveLiterals(t *testing.T) {
	dec := types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}
	schema := types.Schema{Columns: []types.Column{
		{Name: "ID", Type: types.IntegerType, Key: true},
		{Name: "NAME", Type: types.StringType},
		{Name: "PRICE", Type: types.DoubleType},
		{Name: "AMOUNT", Type: dec},
		{Name: "OK", Type: types.BooleanType},
		{Name: "TS", Type: types.TimestampType},
		{Name: "DAY", Type: types.Type{Kind: types.Date}},
		{Name: "RAW", Type: types.BytesType},
	}}
	source := func(name string) (types.Schema, bool) { return schema, name == "T" }
	cases := []struct{ in, want string }{
		// Untyped literals read as the type they meet.
		{`SELECT * FROM T WHERE ID = '1';`, `SELECT * FROM T WHERE ID = 1;`},
		{`SELECT * FROM T WHERE '7' < ID AND PRICE >= '2.5';`, `SELECT * FROM T WHERE 7 < ID AND PRICE >= 2.5E+00;`},
		{`SELECT * FROM T WHERE AMOUNT = '12.50';`, `SELECT * FROM T WHERE AMOUNT = 12.50;`},
		{`SELECT * FROM T WHERE OK = 't';`, `SELECT * FROM T WHERE OK = TRUE;`},
		{`SELECT * FROM T WHERE TS = '2024-01-02 03:04:05.123Z';`, `SELECT * FROM T WHERE TS = FROM_UNIXTIME(1704164645123);`},
		{`SELECT * FROM T WHERE DAY = '2024-01-02 00:00:00Z';`, `SELECT * FROM T WHERE DAY = FROM_DAYS(19724);`},
		{`SELECT * FROM T WHERE ID IN ('1', '2');`, `SELECT * FROM T WHERE ID IN (1, 2);`},
		{`SELECT * FROM T WHERE ID BETWEEN '1' AND '3';`, `SELECT * FROM T WHERE ID BETWEEN 1 AND 3;`},
		{`INSERT INTO T (ID, NAME, PRICE) VALUES ('4', 'x', '1.5');`, `INSERT INTO T (ID, NAME, PRICE) VALUES (4, 'x', 1.5E+00);`},
		// A bare NULL is a NULL of the type it meets.
		{`SELECT * FROM T WHERE NAME = NULL;`, `SELECT * FROM T WHERE NAME = CAST(NULL AS STRING);`},
		// Strings meeting strings, and what is not the type's input,
		// keep Sluice's meaning.
		{`SELECT * FROM T WHERE NAME = '1';`, `SELECT * FROM T WHERE NAME = '1';`},
		{`SELECT * FROM T WHERE ID = 'one';`, `SELECT * FROM T WHERE ID = 'one';`},
		{`SELECT * FROM T WHERE TS = '2024-01-02T03:04:05';`, `SELECT * FROM T WHERE TS = '2024-01-02T03:04:05';`},
		{`SELECT * FROM U WHERE ID = '1';`, `SELECT * FROM U WHERE ID = '1';`},
		// A quote inside a literal does not end it.
		{`SELECT * FROM T WHERE NAME = 'it''s' AND ID = '2';`, `SELECT * FROM T WHERE NAME = 'it''s' AND ID = 2;`},
	}
	for _, c := range cases {
		stmts, err := parser.ParseScript(c.in)
		if err != nil {
			t.Fatalf("parse %s: %v", c.in, err)
		}
		got, err := resolveLiterals(c.in, stmts[0], source)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if s := got.Stmt.String() + ";"; s != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, s, c.want)
		}
	}
}

func TestJSONBText(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"k":1}`, `{"k": 1}`},
		{`{"NAME":"a","AGE":3,"ZIP":[1,2.5,null]}`, `{"AGE": 3, "ZIP": [1, 2.5, null], "NAME": "a"}`},
		{`{"b":{"y":true,"x":false},"a":"<&>\n\"\\"}`, `{"a": "<&>\n\"\\", "b": {"x": false, "y": true}}`},
		{`["\u0001é"]`, `["\u0001é"]`},
		{`null`, `null`},
	}
	for _, c := range cases {
		got, err := jsonbText(nil, []byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("jsonbText(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
