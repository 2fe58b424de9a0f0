package state

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSnapshot(t *testing.T) {
	long := strings.Repeat("k", 16)
	big := strings.Repeat("v", slabSize+10) // gets a slab of its own
	tests := []struct {
		name   string
		ops    []op
		sorted []kv
		absent []string
	}{
		{
			name:   "last write wins, delete removes, empty value stays",
			ops:    []op{{k: "b", v: "1"}, {k: "a", v: "1"}, {k: "b", v: "2"}, {k: "c", v: "3"}, {k: "c", del: true}, {k: "e", v: ""}},
			sorted: []kv{{"a", "1"}, {"b", "2"}, {"e", ""}},
			absent: []string{"c", "d"},
		},
		{
			name:   "delete of an unknown key, then put again",
			ops:    []op{{k: "x", del: true}, {k: "y", v: "1"}, {k: "y", del: true}, {k: "y", v: "2"}},
			sorted: []kv{{"y", "2"}},
			absent: []string{"x"},
		},
		{
			name: "keys tying on their first 16 bytes sort in full",
			ops: []op{{k: long + "b", v: "2"}, {k: long, v: "0"}, {k: long + "a", v: "1"},
				{k: "a\x00", v: "z"}, {k: "a", v: "y"}, {k: "", v: "empty key"}},
			sorted: []kv{{"", "empty key"}, {"a", "y"}, {"a\x00", "z"}, {long, "0"}, {long + "a", "1"}, {long + "b", "2"}},
		},
		{
			name:   "a value larger than a slab",
			ops:    []op{{k: "small", v: "s"}, {k: "big", v: big}, {k: "tail", v: "t"}},
			sorted: []kv{{"big", big}, {"small", "s"}, {"tail", "t"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSnapshot(int64(len(tt.ops)), 1<<20)
			for _, o := range tt.ops {
				if !s.room(1) {
					t.Fatal("no room")
				}
				if o.del {
					s.delete([]byte(o.k))
				} else {
					s.put([]byte(o.k), []byte(o.v))
				}
			}
			var got []kv
			for _, ref := range s.sorted() {
				k, v := s.entry(ref)
				got = append(got, kv{string(k), string(v)})
			}
			if diff := cmp.Diff(tt.sorted, got); diff != "" {
				t.Errorf("sorted (-want +got):\n%s", diff)
			}
			for _, w := range tt.sorted {
				if v, ok := s.get([]byte(w.K)); !ok || string(v) != w.V || v == nil {
					t.Errorf("get(%q) = %q, %v; want %q, true", w.K, v, ok, w.V)
				}
			}
			for _, k := range tt.absent {
				if v, ok := s.get([]byte(k)); ok {
					t.Errorf("get(%q) = %q, true; want absent", k, v)
				}
			}
		})
	}
}

// The table is sized from the offsets to read and capped; room says when
// the restore must stop filling it.
func TestSnapshotRoom(t *testing.T) {
	tests := []struct {
		records  int64
		maxSlots int
		slots    int
		fits     int // keys that fit
	}{
		{records: 0, maxSlots: 1 << 20, slots: minSlots, fits: minSlots * 3 / 4},
		{records: 3000, maxSlots: 1 << 20, slots: 4096, fits: 3072},
		{records: 1_000_000, maxSlots: 1 << 20, slots: 1 << 20, fits: 3 << 18},
		{records: 1_000_000, maxSlots: 5000, slots: 4096, fits: 3072},
		{records: 1_000_000, maxSlots: 0, slots: minSlots, fits: minSlots * 3 / 4},
	}
	for _, tt := range tests {
		s := newSnapshot(tt.records, tt.maxSlots)
		if len(s.slots) != tt.slots {
			t.Errorf("newSnapshot(%d, %d): %d slots, want %d", tt.records, tt.maxSlots, len(s.slots), tt.slots)
		}
		if !s.room(tt.fits) || s.room(tt.fits+1) {
			t.Errorf("newSnapshot(%d, %d): room(%d) = %v, room(%d) = %v; want true, false", tt.records, tt.maxSlots,
				tt.fits, s.room(tt.fits), tt.fits+1, s.room(tt.fits+1))
		}
	}
}
