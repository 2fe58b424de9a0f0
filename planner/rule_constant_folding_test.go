package planner

import (
	"testing"

	"github.com/sluice-sql/sluice/parser"
)

// The folding of constant sub-expressions: each folded into a literal of
// exactly its type (a CAST where the literal alone is typed otherwise),
// and left alone what errors, gives NULL, calls a function, reads a
// column, or stands where a literal converts more freely than another
// expression of its type.
func TestFoldConstants(t *testing.T) {
	cases := []struct{ in, want string }{
		// Arithmetic, keeping the type.
		{"MS > 60 * 1000", "MS > 60000"},
		{"1 + 2", "3"},
		{"2 - 5", "-3"},
		{"7 % 4 + A", "3 + A"},
		{"A * (2 + 3)", "A * 5"},
		{"CAST(5 AS BIGINT) * 2", "CAST(10 AS BIGINT)"},
		{"3000000000 + 1", "3000000001"},
		{"1.5 + 1.25", "CAST(2.75 AS DECIMAL(4, 2))"},
		{"1.50 * 2", "CAST(3.00 AS DECIMAL(14, 2))"},
		{"0.5 - 1.5", "CAST(-1.0 AS DECIMAL(3, 1))"},
		{"10.0 / 4", "CAST(2.500000000000 AS DECIMAL(14, 12))"},
		{"1E3 / 8", "1.25E+02"},
		{"-(2 + 3)", "-5"},
		// INTEGER arithmetic wraps, at run time as in Java.
		{"2147483647 + 1", "-2147483648"},
		// Comparisons and boolean logic.
		{"1 < 2", "TRUE"},
		{"A AND 1 = 2", "A AND FALSE"},
		{"NOT (1 > 2) OR A", "TRUE OR A"},
		{"'a' <> 'b'", "TRUE"},
		// Strings: concatenation, CAST of a literal.
		{"'a' + 'b'", "'ab'"},
		{"'a' || 'b' || C", "'ab' || C"},
		{"CAST('42' AS INTEGER) + 1", "43"},
		{"CAST(1 + 2 AS VARCHAR)", "'3'"},
		// Left alone: already literals, errors and NULLs, NULL
		// operands, columns, functions.
		{"5", "5"},
		{"-5", "-5"},
		{"CAST(5 AS BIGINT)", "CAST(5 AS BIGINT)"},
		{"1 / 0", "1 / 0"},
		{"CAST('x' AS INTEGER) + 1", "CAST('x' AS INTEGER) + 1"},
		{"NULL + 1", "NULL + 1"},
		{"A + 1", "A + 1"},
		{"ABS(-3 - 4)", "ABS(-3 - 4)"},
		{"UNIX_TIMESTAMP() > 1 + 1", "UNIX_TIMESTAMP() > 2"},
		{"ABS((1 + 2) * A)", "ABS(3 * A)"},
		// Left alone where a literal converts: a STRING compared (read
		// as a date or time), a member of IN or BETWEEN, a CASE result.
		{"D = '2021-01-' + '01'", "D = '2021-01-' + '01'"},
		{"A IN (1 + 1, 3)", "A IN (1 + 1, 3)"},
		{"A BETWEEN 1 + 1 AND 3", "A BETWEEN 1 + 1 AND 3"},
		{"CASE WHEN A THEN 1 + 1 ELSE 'x' END", "CASE WHEN A THEN 1 + 1 ELSE 'x' END"},
	}
	for _, c := range cases {
		e, err := parser.ParseExpr(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		before := e.String()
		if got := foldConstants(e, siteAny).String(); got != c.want {
			t.Errorf("%s: folded to %s, want %s", c.in, got, c.want)
		}
		if e.String() != before {
			t.Errorf("%s: the expression folded was changed to %s", c.in, e)
		}
	}
}
