package exec_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/exec"
)

// kc is a KeyCount as the tests write it.
type kc struct {
	Key        string
	Count, Max int64
}

func TestHotKeys(t *testing.T) {
	distinct := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("k%02d", i))
		}
		return out
	}
	repeat := func(k string, n int) []string {
		var out []string
		for range n {
			out = append(out, k)
		}
		return out
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name    string
		keys    []string
		top     int // how many of the busiest to compare
		want    []kc
		records int64
	}{
		{"empty", nil, 3, []kc{}, 0},
		{"exact while keys fit", []string{"a", "b", "a", "c", "a", "b"}, 3, []kc{{"a", 3, 3}, {"b", 2, 2}, {"c", 1, 1}}, 6},
		// The 33rd key takes over the first smallest counter (k00) and
		// inherits its count as error: at least 2, at most 3.
		{"a newcomer inherits the smallest count", cat(distinct(32), repeat("x", 2)), 2, []kc{{"x", 2, 3}, {"k01", 1, 1}}, 34},
		// A key with most of the records keeps its counter, and its exact
		// count, whatever the others do.
		{"a heavy key among many", cat(repeat("ritz", 10), distinct(99), repeat("ritz", 90)), 1, []kc{{"ritz", 100, 100}}, 199},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := exec.NewHotKeys()
			for _, k := range tt.keys {
				h.Add([]byte(k))
			}
			top, records := h.Top()
			got := []kc{}
			for i, c := range top {
				if i < tt.top {
					got = append(got, kc{string(c.Key), c.Count, c.Max})
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || records != tt.records {
				t.Errorf("records %d, want %d; top (-want +got):\n%s", records, tt.records, diff)
			}
			if len(top) > exec.HotKeyCounters {
				t.Errorf("%d counters, want at most %d", len(top), exec.HotKeyCounters)
			}
		})
	}
}

// TestMergeHotKeys adds up the sketches of two tasks.
func TestMergeHotKeys(t *testing.T) {
	a, b := exec.NewHotKeys(), exec.NewHotKeys()
	for _, k := range []string{"x", "x", "y"} {
		a.Add([]byte(k))
	}
	for _, k := range []string{"z", "x"} {
		b.Add([]byte(k))
	}
	top, records := exec.MergeHotKeys([]*exec.HotKeys{a, b})
	var got []kc
	for _, c := range top {
		got = append(got, kc{string(c.Key), c.Count, c.Max})
	}
	want := []kc{{"x", 3, 3}, {"y", 1, 1}, {"z", 1, 1}}
	if diff := cmp.Diff(want, got); diff != "" || records != 5 {
		t.Errorf("records %d, want 5; (-want +got):\n%s", records, diff)
	}
}

// BenchmarkHotKeysAdd is the sketch's cost per record: a key among many
// (most records take over a counter) and a key already kept.
func BenchmarkHotKeysAdd(b *testing.B) {
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%05d", i)
	}
	b.Run("many keys", func(b *testing.B) {
		h := exec.NewHotKeys()
		for i := 0; b.Loop(); i++ {
			h.Add(keys[i%len(keys)])
		}
	})
	b.Run("kept key", func(b *testing.B) {
		h := exec.NewHotKeys()
		for b.Loop() {
			h.Add(keys[0])
		}
	})
}
