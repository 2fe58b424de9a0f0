package exec

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func TestWindowStarts(t *testing.T) {
	tumbling := &WindowSpec{Kind: Tumbling, Size: 10}
	hopping := &WindowSpec{Kind: Hopping, Size: 10, Advance: 5}
	uneven := &WindowSpec{Kind: Hopping, Size: 10, Advance: 3}
	sameAsTumbling := &WindowSpec{Kind: Hopping, Size: 10, Advance: 10}
	cases := []struct {
		name string
		w    *WindowSpec
		ts   int64
		want []int64
	}{
		{"tumbling ts 0", tumbling, 0, []int64{0}},
		{"tumbling inside", tumbling, 7, []int64{0}},
		{"tumbling just before boundary", tumbling, 9, []int64{0}},
		{"tumbling on boundary", tumbling, 10, []int64{10}},
		{"tumbling just after boundary", tumbling, 11, []int64{10}},
		{"tumbling large", &WindowSpec{Kind: Tumbling, Size: 300_000}, 1_704_067_412_345, []int64{1_704_067_200_000}},
		// Hopping windows start no earlier than 0, as in Kafka Streams.
		{"hopping ts 0", hopping, 0, []int64{0}},
		{"hopping first advance", hopping, 4, []int64{0}},
		{"hopping on boundary", hopping, 5, []int64{0, 5}},
		{"hopping just before boundary", hopping, 9, []int64{0, 5}},
		{"hopping on size boundary", hopping, 10, []int64{5, 10}},
		{"hopping just before size boundary", hopping, 14, []int64{5, 10}},
		{"hopping later", hopping, 23, []int64{15, 20}},
		{"advance not dividing size", uneven, 10, []int64{3, 6, 9}},
		{"advance not dividing size, on advance", uneven, 12, []int64{3, 6, 9, 12}},
		{"advance not dividing size, just before", uneven, 11, []int64{3, 6, 9}},
		{"advance not dividing size, early", uneven, 4, []int64{0, 3}},
		{"advance equals size", sameAsTumbling, 19, []int64{10}},
		{"advance equals size on boundary", sameAsTumbling, 20, []int64{20}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.w.starts(tc.ts, make([]int64, 3, 8)) // reused buffers start dirty
			if !slices.Equal(got, tc.want) {
				t.Fatalf("starts(%d) = %v, want %v", tc.ts, got, tc.want)
			}
			for _, s := range got {
				if tc.ts < s || tc.ts >= s+tc.w.Size {
					t.Errorf("window [%d, %d) does not contain %d", s, s+tc.w.Size, tc.ts)
				}
			}
		})
	}
}

// Every non-negative timestamp lands in every window containing it, for
// several shapes, checked against brute force.
func TestWindowStartsBruteForce(t *testing.T) {
	specs := []*WindowSpec{
		{Kind: Tumbling, Size: 7},
		{Kind: Hopping, Size: 10, Advance: 5},
		{Kind: Hopping, Size: 10, Advance: 3},
		{Kind: Hopping, Size: 9, Advance: 1},
	}
	for _, w := range specs {
		adv := w.Advance
		if w.Kind == Tumbling {
			adv = w.Size
		}
		var buf []int64
		for ts := int64(0); ts < 60; ts++ {
			var want []int64
			for s := int64(0); s <= ts; s += adv {
				if ts < s+w.Size {
					want = append(want, s)
				}
			}
			buf = w.starts(ts, buf)
			if !slices.Equal(buf, want) {
				t.Errorf("%s: starts(%d) = %v, want %v", w, ts, buf, want)
			}
		}
	}
}

func TestWindowRetention(t *testing.T) {
	cases := []struct {
		w    WindowSpec
		want int64
	}{
		{WindowSpec{Size: 100, Grace: 20}, 120},
		{WindowSpec{Size: 100, Grace: 20, Retention: 50}, 120},
		{WindowSpec{Size: 100, Grace: 20, Retention: 120}, 120},
		{WindowSpec{Size: 100, Grace: 20, Retention: 121}, 121},
		{WindowSpec{Size: 100, Retention: 1000}, 1000},
		{WindowSpec{Size: 100}, 100},
	}
	for _, tc := range cases {
		if got := tc.w.retention(); got != tc.want {
			t.Errorf("%+v.retention() = %d, want %d", tc.w, got, tc.want)
		}
	}
}

func TestWindowSpecString(t *testing.T) {
	cases := []struct {
		w    WindowSpec
		want string
	}{
		{WindowSpec{Kind: Tumbling, Size: 300_000, Grace: 120_000}, "TUMBLING size 5m0s grace 2m0s retention 7m0s"},
		{WindowSpec{Kind: Hopping, Size: 600_000, Advance: 60_000, Grace: 30_000, Retention: 3_600_000}, "HOPPING size 10m0s advance 1m0s grace 30s retention 1h0m0s"},
	}
	for _, tc := range cases {
		if got := tc.w.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestWindowKeyRoundTrip(t *testing.T) {
	starts := []int64{math.MinInt64, -1_000_000, -1, 0, 1, 1_704_067_200_000, math.MaxInt64}
	groups := [][]byte{nil, {}, []byte("k"), {0, 0xff, 0}}
	for _, s := range starts {
		for _, g := range groups {
			k := windowKey([]byte("junk"), s, g)[len("junk"):]
			gotStart, gotGroup, ok := splitWindowKey(k)
			if !ok || gotStart != s || !bytes.Equal(gotGroup, g) {
				t.Errorf("splitWindowKey(windowKey(%d, %x)) = %d, %x, %v", s, g, gotStart, gotGroup, ok)
			}
		}
	}
	for _, short := range [][]byte{nil, {}, {1, 2, 3, 4, 5, 6, 7}} {
		if _, _, ok := splitWindowKey(short); ok {
			t.Errorf("splitWindowKey(%x) ok", short)
		}
	}
	if got, want := windowBound(42), windowKey(nil, 42, nil); !bytes.Equal(got, want) {
		t.Errorf("windowBound(42) = %x, want %x", got, want)
	}
}

// Keys of earlier windows sort first bytewise, whatever the group key,
// so a store scan visits windows in time order.
func TestWindowKeyOrdering(t *testing.T) {
	starts := []int64{math.MinInt64, -20, -10, -1, 0, 1, 10, 20, math.MaxInt64}
	for i := range starts {
		for j := range starts {
			a := windowKey(nil, starts[i], []byte{0xff, 0xff})
			b := windowKey(nil, starts[j], []byte{0x00})
			got := bytes.Compare(a, b)
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if i == j {
				want = 1 // same window: the group key decides
			}
			if got != want {
				t.Errorf("compare(key(%d, ff ff), key(%d, 00)) = %d, want %d", starts[i], starts[j], got, want)
			}
		}
	}
	// A bound sorts before every key of its window and after all earlier ones.
	if bytes.Compare(windowBound(10), windowKey(nil, 10, []byte{0})) >= 0 {
		t.Error("windowBound(10) does not sort before keys of window 10")
	}
	if bytes.Compare(windowKey(nil, 9, []byte{0xff}), windowBound(10)) >= 0 {
		t.Error("keys of window 9 do not sort before windowBound(10)")
	}
}
