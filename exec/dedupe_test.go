package exec

import "testing"

// Records read from different inputs of the upstream task at the same
// partition and offset stay apart, in the header and in checkpoints.
func TestUpstreamPositions(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  upstreamSource
		off  int64
		seq  int64
		key  string
	}{
		{"first input", upstreamSource{0, 3}, 17, 0, "#upos/3"},
		{"first input, second record", upstreamSource{0, 3}, 17, 1, "#upos/3"},
		{"second input", upstreamSource{1, 3}, 17, 0, "#upos/i1/3"},
		{"second input, second record", upstreamSource{1, 0}, 0, 1, "#upos/i1/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, off, seq, ok := decodeUpstream(encodeUpstream(tc.src.partition, tc.off, tc.seq, tc.src.input))
			if !ok || src != tc.src || off != tc.off || seq != tc.seq {
				t.Errorf("header round trip = %v %d %d %v, want %v %d %d", src, off, seq, ok, tc.src, tc.off, tc.seq)
			}
			key := upstreamKey(upstreamKeyPrefix, tc.src)
			if key != tc.key {
				t.Errorf("upstreamKey = %q, want %q", key, tc.key)
			}
			if back, ok := parseUpstreamKey(key, upstreamKeyPrefix); !ok || back != tc.src {
				t.Errorf("parseUpstreamKey(%q) = %v %v, want %v", key, back, ok, tc.src)
			}
		})
	}
	in := &taskInput{}
	a := &Record{Headers: []Header{{Key: upstreamHeader, Value: encodeUpstream(0, 0, 0, 0)}}}
	b := &Record{Headers: []Header{{Key: upstreamHeader, Value: encodeUpstream(0, 0, 0, 1)}}}
	if !in.freshUpstream(a) || !in.freshUpstream(b) {
		t.Error("records of two upstream inputs at one position: one was taken for a replay")
	}
	if in.freshUpstream(a) {
		t.Error("a replayed record counted as fresh")
	}
}
