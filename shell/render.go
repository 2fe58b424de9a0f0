package shell

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
)

// Format is how results print: `\format table|json|csv`.
type Format string

// The output formats.
const (
	FormatTable Format = "table"
	FormatJSON  Format = "json"
	FormatCSV   Format = "csv"
)

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case FormatTable, FormatJSON, FormatCSV:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q: want table, json or csv", s)
}

// tableStyle is go-pretty's ASCII box, with headers as written (its
// default upper-cases them, which would turn column names written in
// quotes into something else).
var tableStyle = func() table.Style {
	s := table.StyleDefault
	s.Format.Header = text.FormatDefault
	return s
}()

// writeTable prints a finite result in format f.
func writeTable(w io.Writer, f Format, t *Table) {
	switch f {
	case FormatJSON:
		for _, r := range t.Rows {
			vals := make([]any, len(r))
			for i, c := range r {
				vals[i] = c
			}
			io.WriteString(w, jsonObject(t.Columns, vals)+"\n")
		}
	case FormatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write(t.Columns)
		_ = cw.WriteAll(t.Rows)
	default:
		tw := table.NewWriter()
		tw.SetStyle(tableStyle)
		tw.AppendHeader(stringsRow(t.Columns))
		for _, r := range t.Rows {
			tw.AppendRow(stringsRow(r))
		}
		io.WriteString(w, tw.Render()+"\n")
	}
}

func stringsRow(s []string) table.Row {
	r := make(table.Row, len(s))
	for i, v := range s {
		r[i] = v
	}
	return r
}

// jsonObject writes one row as a JSON object with the columns in order
// (a Go map would sort them).
func jsonObject(cols []string, vals []any) string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(vals[i])
		if err != nil {
			v, _ = json.Marshal(fmt.Sprint(vals[i]))
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// cellText prints one value for a table or CSV cell: NULL for a null, so
// it cannot be mistaken for the string "null" or an empty string; a
// DOUBLE keeps its decimal point (JSON writes 12.0 as 12).
func cellText(v any, typ string) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return doubleText(string(x), typ)
	case float64:
		b, _ := json.Marshal(x)
		return doubleText(string(b), typ)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func doubleText(num, typ string) string {
	if typ == "DOUBLE" && !strings.ContainsAny(num, ".eE") {
		return num + ".0"
	}
	return num
}

// rowPrinter prints a query's rows as they arrive: the header once, then
// each row, in the shell's format. Table columns get a width from the
// header and the type when the header prints, since a push query never
// knows the widths that would fit all its rows; a wider value (or one
// with line breaks) wraps onto more lines inside its column, so the
// borders stay straight.
type rowPrinter struct {
	w      io.Writer
	f      Format
	cols   []Column
	names  []string
	widths []int
	csv    *csv.Writer
}

func newRowPrinter(w io.Writer, f Format, cols []Column) *rowPrinter {
	p := &rowPrinter{w: w, f: f, cols: cols}
	for _, c := range cols {
		p.names = append(p.names, c.Name)
		w := c.Width
		if w == 0 {
			w = typeWidth(c.Type)
		}
		p.widths = append(p.widths, max(text.StringWidthWithoutEscSequences(c.Name), w))
	}
	return p
}

// typeWidth fits typical values: epoch millis need 13 digits.
func typeWidth(typ string) int {
	switch typ {
	case "BIGINT", "TIMESTAMP":
		return 13
	case "BOOLEAN":
		return 5
	}
	return 10
}

func (p *rowPrinter) rule() string {
	var b strings.Builder
	b.WriteString("+")
	for _, w := range p.widths {
		b.WriteString(strings.Repeat("-", w+2) + "+")
	}
	return b.String()
}

// line lays out one row: as many lines as its tallest wrapped cell.
func (p *rowPrinter) line(cells []string) string {
	wrapped := make([][]string, len(cells))
	height := 1
	for i, c := range cells {
		wrapped[i] = strings.Split(text.WrapText(c, p.widths[i]), "\n")
		height = max(height, len(wrapped[i]))
	}
	var b strings.Builder
	for l := range height {
		if l > 0 {
			b.WriteString("\n")
		}
		b.WriteString("|")
		for i, parts := range wrapped {
			part := ""
			if l < len(parts) {
				part = parts[l]
			}
			b.WriteString(" " + text.Pad(part, p.widths[i], ' ') + " |")
		}
	}
	return b.String()
}

func (p *rowPrinter) header() {
	switch p.f {
	case FormatJSON:
	case FormatCSV:
		p.csv = csv.NewWriter(p.w)
		_ = p.csv.Write(p.names)
		p.csv.Flush()
	default:
		fmt.Fprintf(p.w, "%s\n%s\n%s\n", p.rule(), p.line(p.names), p.rule())
	}
}

func (p *rowPrinter) row(vals []any) {
	switch p.f {
	case FormatJSON:
		io.WriteString(p.w, jsonObject(p.names, vals)+"\n")
	default:
		cells := make([]string, len(p.cols))
		for i := range p.cols {
			if i < len(vals) {
				cells[i] = cellText(vals[i], p.cols[i].Type)
			}
		}
		if p.f == FormatCSV {
			_ = p.csv.Write(cells)
			p.csv.Flush()
			return
		}
		io.WriteString(p.w, p.line(cells)+"\n")
	}
}

func (p *rowPrinter) footer() {
	if p.f == FormatTable {
		io.WriteString(p.w, p.rule()+"\n")
	}
}

// rowsTable turns a pull query's rows into a table.
func rowsTable(cols []Column, rows [][]any) *Table {
	t := &Table{}
	for _, c := range cols {
		t.Columns = append(t.Columns, c.Name)
	}
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i := range cols {
			if i < len(r) {
				cells[i] = cellText(r[i], cols[i].Type)
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}
