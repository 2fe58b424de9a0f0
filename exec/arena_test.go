package exec

import (
	"bytes"
	"fmt"
	"testing"
)

// TestOutArena checks that the records an arena holds keep their bytes:
// each lies after the last in its chunk, no append through a handed-out
// record reaches the next one, a record larger than the room left moves
// to a chunk of its own, and a null stays nil.
func TestOutArena(t *testing.T) {
	var a outArena
	var got [][]byte
	var want []string
	for i := range 2000 {
		// Every 500th record is larger than a chunk.
		n := 1 + i%300
		if i%500 == 499 {
			n = arenaChunk + 10
		}
		b := a.begin(64)
		b = append(b, fmt.Sprintf("%d:", i)...)
		b = append(b, bytes.Repeat([]byte{byte('a' + i%26)}, n)...)
		b = a.end(b)
		if cap(b) != len(b) {
			t.Fatalf("record %d: cap %d > len %d", i, cap(b), len(b))
		}
		got, want = append(got, b), append(want, string(b))
		// An append to a handed-out record must copy, not write into the
		// chunk where the next record goes.
		_ = append(b, "clobber"...)
	}
	if a.end(nil) != nil {
		t.Fatal("end(nil) is not nil")
	}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Fatalf("record %d changed: %.20q…, want %.20q…", i, got[i], want[i])
		}
	}
	// No two records start at the same byte.
	starts := map[*byte]bool{}
	for _, b := range got {
		starts[&b[0]] = true
	}
	if len(starts) != len(got) {
		t.Fatal("records share a start")
	}
}

// TestOutArenaShares checks that consecutive small records are laid out
// one after the other in one chunk.
func TestOutArenaShares(t *testing.T) {
	var a outArena
	x := a.end(append(a.begin(8), "first"...))
	y := a.end(append(a.begin(8), "second"...))
	if string(x) != "first" || string(y) != "second" {
		t.Fatalf("%q %q", x, y)
	}
	if &a.chunk[0] != &x[0] || &a.chunk[len(x)] != &y[0] {
		t.Fatal("the second record does not follow the first in the chunk")
	}
	if len(a.chunk) != len("firstsecond") {
		t.Fatalf("chunk holds %d bytes, want %d", len(a.chunk), len("firstsecond"))
	}
}
