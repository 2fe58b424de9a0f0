package shell

import (
	"testing"

	"github.com/chzyer/readline"
	"github.com/google/go-cmp/cmp"
)

func TestComplete(t *testing.T) {
	names := func() Names {
		return Names{Sources: []string{"CLICKS", "CLICK_COUNTS", "PAGES", "clicks_raw", "Mixed`Name"}, Columns: []string{"PAGE", "USER_ID", "user_agent"},
			Functions: []string{"UCASE", "UNIX_TIMESTAMP"}, Topics: []string{"clicks", "pages", "Pages"}}
	}
	tests := []struct {
		name, pending, line string
		want                []string
		typed               string
	}{
		{"keyword", "", "SEL", []string{"SELECT "}, "SEL"},
		{"lower-case keyword", "", "sel", []string{"select "}, "sel"},
		{"show what", "", "SHOW STR", []string{"STREAMS "}, "STR"},
		{"show connectors", "", "SHOW CONN", []string{"CONNECTORS "}, "CONN"},
		{"after FROM only sources", "", "SELECT * FROM CL", []string{"CLICKS ", "CLICK_COUNTS ", "`clicks_raw` "}, "CL"},
		{"after FROM, nothing typed", "", "SELECT * FROM ", []string{"CLICKS ", "CLICK_COUNTS ", "PAGES ", "`Mixed``Name` ", "`clicks_raw` "}, ""},
		{"FROM on an earlier line keeps the catalog's case", "SELECT *\n  FROM\n", "pa", []string{"PAGES "}, "pa"},
		{"describe keeps the catalog's case", "", "DESCRIBE cli", []string{"CLICKS ", "CLICK_COUNTS ", "`clicks_raw` "}, "cli"},
		{"after an opening backquote, names as written", "", "DESCRIBE `cli", []string{"clicks_raw` "}, "cli"},
		{"after an opening double quote", "", `SELECT "user`, []string{`user_agent" `}, "user"},
		{"a quote in a name is doubled", "", "DESCRIBE `Mix", []string{"Mixed``Name` "}, "Mix"},
		{"drop table if exists", "", "DROP TABLE IF EXISTS P", []string{"PAGES "}, "P"},
		{"keywords, columns, sources and functions", "", "SELECT U", []string{"UCASE(", "UNIX_TIMESTAMP(", "UNSET ", "USER_ID ", "`user_agent` "}, "U"},
		{"lower-case: keywords and functions follow, catalog names do not", "", "SELECT u", []string{"USER_ID ", "`user_agent` ", "ucase(", "unix_timestamp(", "unset "}, "u"},
		{"WITH properties inside WITH (", "", "CREATE STREAM s (id INT) WITH (KAFKA_TOPIC='t', VALUE_", []string{"VALUE_FORMAT "}, "VALUE_"},
		{"WITH ( on an earlier line, lower case", "CREATE TABLE t AS SELECT * FROM s\n  WITH (\n", "  key_", []string{"key_format "}, "key_"},
		{"inside WITH only properties", "", "CREATE STREAM s (id INT) WITH (P", []string{"PARTITIONS "}, "P"},
		{"a quoted ( inside WITH does not close it", "", "CREATE STREAM s (id INT) WITH (KAFKA_TOPIC=')', PART", []string{"PARTITIONS "}, "PART"},
		{"no WITH properties after WHERE", "", "SELECT * FROM s WHERE VALUE_", []string{}, "VALUE_"},
		{"none after a closed WITH", "", "CREATE STREAM s (id INT) WITH (KAFKA_TOPIC='t') PART", []string{"PARTITION "}, "PART"},
		{"property name", "", "SET 'auto.", []string{"auto.offset.reset'"}, "auto."},
		{"unset property", "", "UNSET 'sluice.t", []string{"sluice.table.retention'"}, "sluice.t"},
		{"print topic keeps its case", "", "PRINT 'pa", []string{"Pages ", "pages "}, "pa"},
		{"blank word", "", "SELECT ", nil, ""},
		{"no match", "", "SELECT zz", []string{}, "zz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, typed := complete(tc.pending, tc.line, names)
			if got == nil && tc.want != nil {
				got = []string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || typed != tc.typed {
				t.Errorf("complete(%q): typed %q (want %q), candidates (-want +got):\n%s", tc.line, typed, tc.typed, diff)
			}
		})
	}
}

// readline only appends a candidate's remainder to the typed word; the
// adapter then rewrites the word as complete gave it.
func TestCompleterAdapter(t *testing.T) {
	ca := &completerAdapter{pending: func() string { return "" }, complete: func(_, line string) ([]string, string) {
		return complete("", line, func() Names { return Names{Sources: []string{"CLICKS", "clicks_raw"}} })
	}}
	tests := []struct {
		name, line string
		// choose is the remainder readline writes, then key is pressed.
		choose string
		key    rune
		rests  []string
		after  string
		pos    int
	}{
		{"upper-case name typed in lower case", "DESCRIBE clic", "KS ", readline.CharTab, []string{"KS ", "ks_raw` "}, "DESCRIBE CLICKS ", 16},
		{"lower-case name gets its backquotes", "DESCRIBE clicks_", "raw` ", readline.CharTab, []string{"raw` "}, "DESCRIBE `clicks_raw` ", 22},
		{"chosen from the menu, fixed at the next key", "DESCRIBE clic", "ks_raw` ;", ';', []string{"KS ", "ks_raw` "}, "DESCRIBE `clicks_raw` ;", 23},
		{"already as it should be", "DESCRIBE CLIC", "KS ", readline.CharTab, []string{"KS ", "ks_raw` "}, "DESCRIBE CLICKS ", 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := []rune(tc.line)
			rests, n := ca.Do(line, len(line))
			var got []string
			for _, r := range rests {
				got = append(got, string(r))
			}
			if diff := cmp.Diff(tc.rests, got); diff != "" {
				t.Fatalf("rests (-want +got):\n%s", diff)
			}
			if want := len([]rune(trailingWord(tc.line))); n != want {
				t.Fatalf("word length %d, want %d", n, want)
			}
			written := append(line, []rune(tc.choose)...)
			newLine, pos, ok := ca.OnChange(written, len(written), tc.key)
			if !ok {
				newLine, pos = written, len(written)
			}
			if string(newLine) != tc.after || pos != tc.pos {
				t.Errorf("after %q: %q at %d, want %q at %d", tc.choose, string(newLine), pos, tc.after, tc.pos)
			}
			if ca.offered != nil && tc.key != readline.CharTab {
				t.Errorf("offer kept after key %q", tc.key)
			}
		})
	}
}
