package parser_test

import (
	"testing"

	"github.com/sluice-sql/sluice/parser"
)

func TestClosest(t *testing.T) {
	names := []string{"SUBSTRING", "SUM", "UCASE", "LCASE", "CONCAT"}
	for _, tc := range []struct{ word, want string }{
		{"SUBSTRNG", "SUBSTRING"},
		{"substirng", "SUBSTRING"}, // transposition, any case
		{"SUMM", "SUM"},
		{"UCAES", "UCASE"},
		{"XYZ", ""},         // nothing near
		{"SUM", ""},         // an exact name is no typo
		{"CONCATENATE", ""}, // too far
		{"SU", ""},          // too short to tell a typo
	} {
		if got := parser.Closest(tc.word, names); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}
