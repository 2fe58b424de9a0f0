package expr_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

func TestLambdaFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		// TRANSFORM over an array: the body is typed from the element type.
		{"TRANSFORM(ARRAY[1, 2], x => x + 1)", tArrInt, []any{int32(2), int32(3)}},
		{"TRANSFORM(ARRAY[1, 2], x => x * 0.5E0)", tArrDouble, []any{0.5, 1.0}},
		{"TRANSFORM(ARRAY['a', NS], x => UCASE(x))", tArrString, []any{"A", nil}},
		{"TRANSFORM(CAST(NULL AS ARRAY<INT>), x => x)", tArrInt, nil},
		// Outer columns resolve inside the body; parameters hide them.
		{"TRANSFORM(ARRAY[1, 2], x => x + I)", tArrInt, []any{int32(8), int32(9)}},
		{"TRANSFORM(ARRAY[1, 2], i => i)", tArrInt, []any{int32(1), int32(2)}},
		// Arithmetic on a NULL element fails the whole call, as in ksqlDB;
		// NULL-safe parts (comparisons, functions) do not.
		{"TRANSFORM(ARRAY[1, NI], x => x + 1)", tArrInt, nil},
		{"TRANSFORM(ARRAY[1, NI], x => x > 0)", tArrBool, []any{true, false}},
		// Nested lambdas see the parameters of the lambdas around them.
		{"TRANSFORM(ARRAY[ARRAY[1, 2], ARRAY[3]], x => TRANSFORM(x, y => y * 10 + ARRAY_LENGTH(x)))",
			types.ArrayOf(tArrInt), []any{[]any{int32(12), int32(22)}, []any{int32(31)}}},
		{"TRANSFORM(ARRAY[ARRAY[1, NI]], x => TRANSFORM(x, y => y + 1))", types.ArrayOf(tArrInt), nil},
		// TRANSFORM over a map takes a key and a value lambda.
		{"TRANSFORM(MAP('a' := 1, 'b' := 2), (k, v) => UCASE(k), (k, v) => v * 10)", tMapInt,
			map[string]any{"A": int32(10), "B": int32(20)}},

		// REDUCE folds from the initial state, typed by it.
		{"REDUCE(ARRAY[1, 2, 3], 0, (s, x) => s + x)", tInt, int32(6)},
		{"REDUCE(ARRAY['a', NS, 'b'], '', (s, x) => CONCAT(s, x))", tString, "ab"},
		{"REDUCE(CAST(NULL AS ARRAY<INT>), 5, (s, x) => s + x)", tInt, int32(5)},
		{"REDUCE(ARRAY[1], NI, (s, x) => s + x)", tInt, nil},
		{"REDUCE(MAP('a' := 1, 'bb' := 2), 0, (s, k, v) => s + LEN(k) * v)", tInt, int32(5)},

		// FILTER keeps elements whose lambda is true; NULL drops them.
		{"FILTER(ARRAY[3, 6, NI, 10], x => x > 5)", tArrInt, []any{int32(6), int32(10)}},
		{"FILTER(ARRAY[1, 2], x => x > 5)", tArrInt, []any{}},
		{"FILTER(MAP('a' := 1, 'bb' := 2), (k, v) => LEN(k) = 2)", tMapInt, map[string]any{"bb": int32(2)}},
		{"FILTER(CAST(NULL AS ARRAY<INT>), x => x > 5)", tArrInt, nil},
	})
}

func TestLambdaFunctionErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"TRANSFORM(ARRAY[1], (x, y) => x)", "the lambda of TRANSFORM needs 1 parameters, got 2: X, Y"},
		{"TRANSFORM(ARRAY[1])", "function TRANSFORM does not accept 1 arguments and 0 lambdas"},
		{"TRANSFORM(I, x => x)", "function TRANSFORM needs an ARRAY or a MAP, not INTEGER"},
		{"TRANSFORM(x => x, ARRAY[1])", "takes its lambdas after its other arguments"},
		{"FILTER(ARRAY[1], x => x + 1)", "the lambda of FILTER must return BOOLEAN, got INTEGER"},
		{"REDUCE(ARRAY[1], 0, (s, x) => 'a')", "the lambda of REDUCE returns STRING but its state is INTEGER"},
		{"REDUCE(ARRAY[1], 0, (s, s) => s)", "lambda parameter S is declared twice"},
		{"REDUCE(MAP('a' := 1), 0, (a, b, c, d) => a)", "a lambda takes at most 3 parameters, got 4"},
		{"ABS(x => x)", "a lambda (X => X) is only allowed as an argument of TRANSFORM, REDUCE or FILTER"},
		{"TRANSFORM(ARRAY[1], x => y)", "unknown column Y"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			_, err := compileExpr(t, tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
