package exec

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSessionRefOrderIsStoreOrder checks that the index orders sessions
// ending together as the store's index keys order them, so EMIT FINAL
// emits them in the order it did when it scanned the store: group keys
// that are prefixes of one another, equal keys, and starts of both signs.
func TestSessionRefOrderIsStoreOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []string{"", "a", "ab", "a\x00", "a\xff", "b", "\x80", "a\x80\x00\x00"}
	starts := []int64{-1 << 63, -5, -1, 0, 1, 255, 256, 1 << 40, 1<<63 - 1}
	var refs []*sessionState
	for _, k := range keys {
		ks := &keySessions{key: k}
		for _, s := range starts {
			refs = append(refs, &sessionState{end: int64(rng.IntN(2)), ks: ks, start: s})
		}
	}
	storeKey := func(r *sessionState) []byte { return sessionIndexKey(nil, r.end, []byte(r.ks.key), r.start) }
	want := slices.Clone(refs)
	slices.SortFunc(want, func(a, b *sessionState) int { return bytes.Compare(storeKey(a), storeKey(b)) })
	for range 20 {
		rng.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
		x := newSessionIndex()
		for _, r := range refs {
			x.byEnd.ReplaceOrInsert(r)
		}
		var got []*sessionState
		x.byEnd.Ascend(func(r *sessionState) bool { got = append(got, r); return true })
		if !slices.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("position %d: index has %q start %d end %d, store order %q start %d end %d",
						i, got[i].ks.key, got[i].start, got[i].end, want[i].ks.key, want[i].start, want[i].end)
				}
			}
		}
	}
}
