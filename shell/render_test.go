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
	cols := []Column{{"ID", "VARCHAR"}, {"N", "BIGINT"}, {"D", "DOUBLE"}, {"OK", "BOOLEAN"}, {"TAGS", "ARRAY<STRING>"}}
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
