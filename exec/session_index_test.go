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
			end := int64(rng.IntN(2))
			refs = append(refs, &sessionState{end: end, byEnd: end, ks: ks, start: s})
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

// TestPopEndedFollowsExtendedEnds extends sessions after they were indexed
// (setEnd leaves them where they were placed) and checks that popEnded
// still gives every session ending at or before each cutoff, and only
// those, in order of end, then group key and start as the store's index
// keys order them.
func TestPopEndedFollowsExtendedEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := newSessionIndex()
	var all []*sessionState
	for k := range 20 {
		key := []byte{byte(k)}
		ks := x.entry(key, x.lookup(key))
		for i := range 5 {
			s := &sessionState{ks: ks, start: int64(i * 100), end: int64(i*100 + rng.IntN(20))}
			x.add(s)
			all = append(all, s)
		}
	}
	for _, s := range all {
		if rng.IntN(2) == 0 {
			x.setEnd(s, s.end+int64(rng.IntN(80)))
		}
	}
	storeKey := func(s *sessionState) []byte { return sessionIndexKey(nil, s.end, []byte(s.ks.key), s.start) }
	slices.SortFunc(all, func(a, b *sessionState) int { return bytes.Compare(storeKey(a), storeKey(b)) })
	next := 0
	for cutoff := int64(0); cutoff <= 600; cutoff += 37 {
		for {
			s, ok := x.popEnded(cutoff)
			if !ok {
				break
			}
			if next == len(all) || s != all[next] {
				t.Fatalf("cutoff %d: popped %q [%d,%d], want the %d-th session in order of end", cutoff, s.ks.key, s.start, s.end, next)
			}
			next++
		}
		if next < len(all) && all[next].end <= cutoff {
			t.Fatalf("cutoff %d: session %q [%d,%d] not popped", cutoff, all[next].ks.key, all[next].start, all[next].end)
		}
	}
	if next != len(all) || x.len() != 0 || len(x.byKey) != 0 {
		t.Fatalf("popped %d of %d sessions; %d left indexed, %d keys", next, len(all), x.len(), len(x.byKey))
	}
}
