package expr

import (
	"fmt"
	"testing"
)

func TestCubeCombinations(t *testing.T) {
	cases := []struct {
		in   []any
		want string
	}{
		{[]any{1, 2}, "[[<nil> <nil>] [<nil> 2] [1 <nil>] [1 2]]"},
		// A NULL element kept would repeat the combination without it.
		{[]any{1, nil}, "[[<nil> <nil>] [1 <nil>]]"},
		{[]any{"a", "b", "c"}, "[[<nil> <nil> <nil>] [<nil> <nil> c] [<nil> b <nil>] [<nil> b c] [a <nil> <nil>] [a <nil> c] [a b <nil>] [a b c]]"},
		{[]any{}, "[[]]"},
	}
	for _, tc := range cases {
		if got := fmt.Sprint(cubeCombinations(tc.in)); got != tc.want {
			t.Errorf("cubeCombinations(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
