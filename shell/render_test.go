package shell

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWriteTable(t *testing.T) {
	tbl := &Table{Columns: []string{"Name", "Value"}, Rows: [][]string{{"a", "1"}, {"longer name", "NULL"}}}
	tests := []struct {
		f    Format
		want string
	}{
		{FormatTable, `+-------------+-------+
| Name        | Value |
+-------------+-------+
| a           | 1     |
| longer name | NULL  |
+-------------+-------+
`},
		{FormatCSV, "Name,Value\na,1\nlonger name,NULL\n"},
		{FormatJSON, `{"Name":"a","Value":"1"}
{"Name":"longer name","Value":"NULL"}
`},
	}
	for _, tc := range tests {
		var b strings.Builder
		writeTable(&b, tc.f, tbl)
		if b.String() != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.f, b.String(), tc.want)
		}
	}
}

func TestRowPrinter(t *testing.T) {
	cols := []Column{{Name: "ID", Type: "VARCHAR"}, {Name: "N", Type: "BIGINT"}, {Name: "D", Type: "DOUBLE"}, {Name: "OK", Type: "BOOLEAN"},
		{Name: "TAGS", Type: "ARRAY<STRING>"}}
	rows := [][]any{
		{"a", json.Number("12"), json.Number("2"), true, []any{"x", "y"}},
		{"b", int64(3), 2.5, nil, nil},
	}
	tests := []struct {
		f    Format
		want string
	}{
		{FormatTable, `+------------+---------------+------------+-------+------------+
| ID         | N             | D          | OK    | TAGS       |
+------------+---------------+------------+-------+------------+
| a          | 12            | 2.0        | true  | ["x","y"]  |
| b          | 3             | 2.5        | NULL  | NULL       |
+------------+---------------+------------+-------+------------+
`},
		{FormatCSV, "ID,N,D,OK,TAGS\na,12,2.0,true,\"[\"\"x\"\",\"\"y\"\"]\"\nb,3,2.5,NULL,NULL\n"},
		{FormatJSON, `{"ID":"a","N":12,"D":2,"OK":true,"TAGS":["x","y"]}
{"ID":"b","N":3,"D":2.5,"OK":null,"TAGS":null}
`},
	}
	for _, tc := range tests {
		var b strings.Builder
		p := newRowPrinter(&b, tc.f, cols)
		p.header()
		for _, r := range rows {
			p.row(r)
		}
		p.footer()
		if b.String() != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.f, b.String(), tc.want)
		}
	}
}

// A value wider than its column, or one with line breaks, wraps inside
// the column: the widths the header fixed hold for every row.
func TestRowPrinterWraps(t *testing.T) {
	cols := []Column{{Name: "ID", Type: "VARCHAR"}, {Name: "N", Type: "BIGINT"}, {Name: "WHEN", Type: "VARCHAR", Width: 4}}
	rows := [][]any{
		{"a", int64(1), "now"},
		{"twenty-one characters", json.Number("12345678901234567"), "x"},
		{"two\nlines", nil, "later"},
		{"équipe née à Noël ok", int64(2), ""},
	}
	want := `+------------+---------------+------+
| ID         | N             | WHEN |
+------------+---------------+------+
| a          | 1             | now  |
| twenty-one | 1234567890123 | x    |
| characters | 4567          |      |
| two        | NULL          | late |
| lines      |               | r    |
| équipe née | 2             |      |
| à Noël ok  |               |      |
+------------+---------------+------+
`
	var b strings.Builder
	p := newRowPrinter(&b, FormatTable, cols)
	p.header()
	for _, r := range rows {
		p.row(r)
	}
	p.footer()
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
