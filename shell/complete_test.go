package shell

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestComplete(t *testing.T) {
	names := func() Names {
		return Names{Sources: []string{"CLICKS", "CLICK_COUNTS", "PAGES"}, Columns: []string{"PAGE", "USER_ID"},
			Functions: []string{"UCASE", "UNIX_TIMESTAMP"}, Topics: []string{"clicks", "pages"}}
	}
	tests := []struct {
		name, pending, line string
		want                []string
		wordLen             int
	}{
		{"keyword", "", "SEL", []string{"ECT "}, 3},
		{"lower-case keyword", "", "sel", []string{"ect "}, 3},
		{"show what", "", "SHOW STR", []string{"EAMS "}, 3},
		{"after FROM only sources", "", "SELECT * FROM CL", []string{"ICKS ", "ICK_COUNTS "}, 2},
		{"after FROM, nothing typed", "", "SELECT * FROM ", []string{"CLICKS ", "CLICK_COUNTS ", "PAGES "}, 0},
		{"FROM on an earlier line", "SELECT *\n  FROM\n", "pa", []string{"ges "}, 2},
		{"describe", "", "DESCRIBE cli", []string{"ck_counts ", "cks "}, 3},
		{"drop table if exists", "", "DROP TABLE IF EXISTS P", []string{"AGES "}, 1},
		{"keywords, columns, sources and functions", "", "SELECT U", []string{"CASE(", "NIX_TIMESTAMP(", "NSET ", "SER_ID "}, 1},
		{"property name", "", "SET 'auto.", []string{"offset.reset'"}, 5},
		{"unset property", "", "UNSET 'sluice.t", []string{"able.retention'"}, 8},
		{"print topic", "", "PRINT 'pa", []string{"ges "}, 2},
		{"blank word", "", "SELECT ", nil, 0},
		{"no match", "", "SELECT zz", []string{}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n := complete(tc.pending, tc.line, names)
			if diff := cmp.Diff(tc.want, got); diff != "" || n != tc.wordLen {
				t.Errorf("complete(%q): word length %d (want %d), candidates (-want +got):\n%s", tc.line, n, tc.wordLen, diff)
			}
		})
	}
}
