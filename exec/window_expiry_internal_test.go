package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sluice-sql/sluice/state"
)

// TestWindowExpiryAgainstModel runs random keyed records, a fifth of
// them late (some beyond the grace), through COUNT(*) and SUM(PRICE) in
// tumbling and hopping windows, with the default cache, one that writes
// back and evicts at every record, and none, committing every few dozen
// records, and checks against a model computed here: each record's
// output (one per window it updates) and, after every record, the
// windows the store holds (those whose retention has not ended).
func TestWindowExpiryAgainstModel(t *testing.T) {
	windows := map[string]*WindowSpec{
		"tumbling": {Kind: Tumbling, Size: 10, Grace: 5},
		"hopping":  {Kind: Hopping, Size: 10, Advance: 4, Grace: 3},
		"retained": {Kind: Tumbling, Size: 10, Grace: 2, Retention: 40},
	}
	for name, w := range windows {
		for _, cache := range []string{"default", "tiny", "none"} {
			t.Run(name+"/"+cache, func(t *testing.T) {
				runExpiryModel(t, w, cache, rand.New(rand.NewPCG(uint64(len(name)), uint64(len(cache)))))
			})
		}
	}
}

func runExpiryModel(t *testing.T, w *WindowSpec, cache string, rng *rand.Rand) {
	db := openState(t, t.TempDir())
	defer func() { _ = db.Close() }()
	node := countSumNode(t, false)
	node.Window = w
	if cache == "none" {
		node.CacheBytes = -1
	}
	var got []string
	sink := &countingOp{fn: func(r *Row) {
		got = append(got, fmt.Sprintf("%v [%v] %v %v", r.Cols[0], r.Cols[3], r.Cols[1], r.Cols[2]))
	}}
	tc := &TaskContext{QueryID: "q", Metrics: &Metrics{}, Log: quietLog, stores: map[string]*state.Store{}, StreamTime: -1 << 63}
	store := db.Store("agg", 0)
	tc.stores["agg"] = store
	op, err := node.New(sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(tc); err != nil {
		t.Fatal(err)
	}
	if cache == "tiny" {
		op.(*aggregate).cache.limit = 1
	}
	type win struct {
		key   string
		start int64
	}
	type acc struct{ n, sum int64 }
	model := map[win]acc{}
	now := int64(0)
	for i := range 3000 {
		now += rng.Int64N(3)
		ts := now
		if rng.IntN(5) == 0 {
			ts -= rng.Int64N(w.Grace + 4)
		}
		key := fmt.Sprintf("k%d", rng.IntN(8))
		price := rng.Int64N(100)
		tc.StreamTime = max(tc.StreamTime, ts)
		var want []string
		for _, s := range w.starts(ts, nil) {
			if s+w.Size+w.Grace <= tc.StreamTime {
				continue // closed: late
			}
			a := model[win{key, s}]
			a.n++
			a.sum += price
			model[win{key, s}] = a
			want = append(want, fmt.Sprintf("%s [%d] %d %d", key, s, a.n, a.sum))
		}
		got = got[:0]
		if err := op.Process(tc, &Row{Cols: []any{key, price}, Ts: ts}); err != nil {
			t.Fatal(err)
		}
		if err := op.AdvanceTime(tc); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("record %d (%s @%d, stream time %d): output (-want +got):\n%s", i, key, ts, tc.StreamTime, diff)
		}
		cutoff := tc.StreamTime - w.retention()
		var live []string
		for k, a := range model {
			if k.start+w.Size <= cutoff {
				delete(model, k)
				continue
			}
			live = append(live, fmt.Sprintf("%s [%d] %d %d", k.key, k.start, a.n, a.sum))
		}
		if i%7 == 0 || i > 2990 {
			stored := storedWindows(t, store)
			slices.Sort(live)
			if diff := cmp.Diff(live, stored, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("record %d (stream time %d): windows in the store (-want +got):\n%s", i, tc.StreamTime, diff)
			}
		}
		if i%37 == 36 {
			store.Pending()
			if err := store.Commit(state.Checkpoint{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// storedWindows lists a COUNT(*), SUM windowed store's windows, in order.
func storedWindows(t *testing.T, s *state.Store) []string {
	t.Helper()
	var out []string
	if err := s.Range(nil, func(k, v []byte) bool {
		w, _ := showWindow(t, k, v)
		out = append(out, w)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
