package expr_test

import "testing"

// TestResolutionErrors: a call whose argument types no signature takes,
// and a DECIMAL declared out of range, are refused in ksqlDB's words
// (the position first, Sluice's detail after); a DECIMAL wider than
// arithmetic results may be (38 digits) is a type like any other.
func TestResolutionErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"GEO_DISTANCE(CAST(1 AS DOUBLE), CAST(2 AS DOUBLE), 'foo', 0)", "line 1:1: type error: Function 'geo_distance' does not accept parameters (DOUBLE, DOUBLE, STRING, INTEGER). (function GEO_DISTANCE does not accept STRING)"},
		{"CHR(TRUE)", "line 1:1: type error: Function 'chr' does not accept parameters (BOOLEAN). (function CHR does not accept BOOLEAN)"},
		{"GREATEST(1, CAST(2 AS BIGINT), CAST(3 AS DECIMAL(50, 30)))", "line 1:1: type error: Function 'greatest' cannot be resolved due to ambiguous method parameters (INTEGER, BIGINT, DECIMAL(50, 30))."},
		{"LEAST(1, CAST(3.5 AS DECIMAL(5, 2)))", "line 1:1: type error: Function 'least' cannot be resolved due to ambiguous method parameters (INTEGER, DECIMAL(5, 2))."},
		{"GREATEST(i, 1.5)", "line 1:1: type error: Function 'greatest' cannot be resolved due to ambiguous method parameters (INTEGER, DECIMAL(2, 1))."},
		{"CAST(1 AS DECIMAL(0, 0))", "line 1:1: type error: DECIMAL precision must be >= 1: DECIMAL(0,0)"},
		{"CAST(1 AS DECIMAL(2, 3))", "line 1:1: type error: DECIMAL precision must be >= scale: DECIMAL(2,3)"},
		{"CAST(1 AS DECIMAL(50, 30))", ""},
	} {
		t.Run(tc.src, func(t *testing.T) {
			got := ""
			if _, err := compileExpr(t, tc.src); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("error:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
