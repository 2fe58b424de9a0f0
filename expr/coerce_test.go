package expr_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

// TestInCoercion: the IN list and the tested value share one common
// type; literals convert more freely than columns.
func TestInCoercion(t *testing.T) {
	runEvalCases(t, []evalCase{
		// numbers widen both ways; string literals parse as numbers
		{"i IN ('7')", tBool, true},
		{"i IN ('7.000')", tBool, true},
		{"i IN ('2147483648', 7)", tBool, true},
		{"i IN (7.01)", tBool, false},
		{"d IN ('2.5')", tBool, true},
		{"b IN (10.00)", tBool, true},
		// string literals parse as booleans: prefixes of TRUE/YES/FALSE/NO
		{"t IN ('TrUe')", tBool, true},
		{"t IN ('y')", tBool, true},
		{"f IN ('n')", tBool, true},
		{"t IN ('fa')", tBool, false},
		// number and boolean literals become text against a STRING
		{"s IN (10, true, 'abc')", tBool, true},
		{"'10.30' IN (10.30)", tBool, true},
		{"'10.3' IN (10.30)", tBool, false},
		{"'true' IN (true)", tBool, true},
		// constructors coerce element by element; nested NULLs are equal
		{"ARRAY[1, 2] IN (ARRAY['1', '2'])", tBool, true},
		{"ARRAY[b, 2] IN (ARRAY[10, 2])", tBool, true},
		{"ARRAY[ni, 2] IN (ARRAY[null, 2])", tBool, true},
		{"MAP('a' := b) IN (MAP('a' := '10'))", tBool, true},
		{"STRUCT(A := b) IN (STRUCT(A := 10))", tBool, true},
		{"STRUCT(A := b, C := ni) IN (STRUCT(A := 10))", tBool, true},
		{"STRUCT(A := b) IN (STRUCT(A := 10, C := 1))", tBool, false},
		{"STRUCT(A := b) IN (STRUCT(`a` := 10))", tBool, false},
	})
}

func TestInCoercionErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"t IN (true, 10)", "Invalid Predicate: operator does not exist: BOOLEAN = INTEGER (10)\nHint: You might need to add explicit type casts."},
		{"t IN (s)", "Invalid Predicate: operator does not exist: BOOLEAN = STRING (S)"},
		{"t IN ('maybe')", `Invalid Predicate: invalid input syntax for type BOOLEAN: "maybe".`},
		{"i IN ('7 apples')", `invalid input syntax for type INTEGER: "7 apples".`},
		{"i IN ('NaN')", `invalid input syntax for type INTEGER: "NaN".`},
		{"CAST(d AS DECIMAL(4, 2)) IN (10, true)", "operator does not exist: DECIMAL(12, 2) = BOOLEAN (true)"},
		{"s IN (d)", "operator does not exist: STRING = DOUBLE (D)"},
		{"i IN (s)", "operator does not exist: INTEGER = STRING (S)"},
		{"ARRAY[b] IN (ARRAY[t])", "operator does not exist: ARRAY<BIGINT> = ARRAY<BOOLEAN> (ARRAY[T])"},
		{"ARRAY[b] IN (ARRAY['x'])", `invalid input syntax for type BIGINT: "x"`},
		{"ARRAY[b] IN (ARRAY_LENGTH(ARRAY[1]))", "operator does not exist: ARRAY<BIGINT> = INTEGER (ARRAY_LENGTH(ARRAY[1]))"},
		{"MAP('a' := b) IN (MAP('a' := t))", "operator does not exist: MAP<STRING, BIGINT> = MAP<STRING, BOOLEAN> (MAP('a':=T))"},
		{"STRUCT(F0 := b) IN (STRUCT(F0 := t))", "operator does not exist: STRUCT<`F0` BIGINT> = STRUCT<`F0` BOOLEAN> (STRUCT(F0:=T))"},
		{"STRUCT(F0 := b) IN (ARRAY[10])", "operator does not exist: STRUCT<`F0` BIGINT> = ARRAY<INTEGER> (ARRAY[10])"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			_, err := compileExpr(t, tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile(%s) error = %v, want it to contain %q", tc.src, err, tc.want)
			}
		})
	}
}

// TestCollectionComparison: ARRAY, MAP and STRUCT have deep equality
// (NULL elements equal each other) but no order.
func TestCollectionComparison(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ARRAY[1, 2] = ARRAY[1, 2]", tBool, true},
		{"ARRAY[1, 2] = ARRAY[1]", tBool, false},
		{"ARRAY[1, 2] <> ARRAY[2, 1]", tBool, true},
		{"ARRAY[ni, 2] = ARRAY[ni, 2]", tBool, true},
		{"ARRAY[b] = ARRAY[10]", tBool, true},
		{"MAP('a' := 1) = MAP('a' := 1)", tBool, true},
		{"MAP('a' := 1) = MAP('b' := 1)", tBool, false},
		{"STRUCT(A := 1) = STRUCT(A := 1)", tBool, true},
		{"STRUCT(A := 1) IS DISTINCT FROM STRUCT(A := 2)", tBool, true},
		{"STRUCT(A := 1) IS NOT DISTINCT FROM STRUCT(A := 1)", tBool, true},
	})
	for _, tc := range []struct{ src, want string }{
		{"ARRAY[i] < ARRAY[b]", "Cannot compare ARRAY[I] (ARRAY<INTEGER>) to ARRAY[B] (ARRAY<BIGINT>) with LESS_THAN."},
		{"MAP('a' := i) >= MAP('a' := i)", "with GREATER_THAN_OR_EQUAL."},
		{"ARRAY[i] = ARRAY[s]", "Cannot compare ARRAY[I] (ARRAY<INTEGER>) to ARRAY[S] (ARRAY<STRING>) with EQUAL."},
		{"STRUCT(A := 1) = STRUCT(B := 1)", "with EQUAL."},
		{"s = 1", "Cannot compare S (STRING) to 1 (INTEGER) with EQUAL."},
	} {
		t.Run(tc.src, func(t *testing.T) {
			_, err := compileExpr(t, tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile(%s) error = %v, want it to contain %q", tc.src, err, tc.want)
			}
		})
	}
}

// TestComparisonNulls: comparisons are two-valued, and a bare NULL
// operand is an error, as in ksqlDB.
func TestComparisonNulls(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ni = 1", tBool, false},
		{"ni <> 1", tBool, false},
		{"ni < i", tBool, false},
		{"ARRAY[ni] = CAST(null AS ARRAY<INT>)", tBool, false},
		{"ni IS DISTINCT FROM null", tBool, false},
	})
	for _, src := range []string{"null = null", "i <> NULL", "NULL < 1"} {
		_, err := compileExpr(t, src)
		if err == nil || !strings.Contains(err.Error(), "Comparison with NULL not supported: ") {
			t.Errorf("Compile(%s) error = %v, want Comparison with NULL not supported", src, err)
		}
	}
}

// A STRING literal compared with a TIME or DATE reads as that type, as
// in ksqlDB; other strings stay strings (and then do not compare).
func TestTemporalLiteralComparisons(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"CAST('00:00:01' AS TIME) > '00:00:00.010'", types.BooleanType, true},
		{"'00:00:00.010' = CAST('00:00:00.010' AS TIME)", types.BooleanType, true},
		{"CAST('2021-03-01' AS DATE) BETWEEN '2021-01-01' AND '2021-12-31'", types.BooleanType, true},
		{"CAST('2021-03-01' AS DATE) < '2021-02-01'", types.BooleanType, false},
	})
}
