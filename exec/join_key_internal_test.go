package exec

import (
	"bytes"
	"testing"
)

// TestJoinSideKey checks which window bounds a windowed side's join key
// holds: both, or (time windows of different sizes) the start alone.
func TestJoinSideKey(t *testing.T) {
	// Rows: [key, WINDOWSTART, WINDOWEND].
	a := []any{int32(1), int64(0), int64(5000)}
	b := []any{int32(1), int64(0), int64(2000)}
	c := []any{int32(1), int64(1000), int64(3000)}
	for _, tc := range []struct {
		name      string
		startOnly bool
		x, y      []any
		same      bool
	}{
		{"same window", false, a, a, true},
		{"same start, other end", false, a, b, false},
		{"same start, other end, start only", true, a, b, true},
		{"other start, start only", true, a, c, false},
	} {
		s := JoinSide{KeyCol: 0, Window: []int{1, 2}, WindowStartOnly: tc.startOnly}
		if got := bytes.Equal(s.joinKey(nil, tc.x), s.joinKey(nil, tc.y)); got != tc.same {
			t.Errorf("%s: equal keys %t, want %t", tc.name, got, tc.same)
		}
	}
}
