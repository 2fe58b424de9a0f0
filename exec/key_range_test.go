package exec

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/types"
)

// readRuns is what a range read visits: the stored keys (sorted as
// Badger sorts them) inside each run, a reversed run's backwards,
// decoded back to the ranged column's values.
func readRuns(t *testing.T, stored [][]byte, runs []byteRun, skip int) []any {
	t.Helper()
	var out []any
	for _, run := range runs {
		var got []any
		for _, k := range stored {
			if bytes.Compare(k, run.start) < 0 || (run.end != nil && bytes.Compare(k, run.end) >= 0) {
				continue
			}
			v, _, err := types.DecodeValue(k[skip:])
			if err != nil {
				t.Fatalf("decode %x: %v", k, err)
			}
			got = append(got, v)
		}
		if run.reverse {
			slices.Reverse(got)
		}
		out = append(out, got...)
	}
	return out
}

// TestKeyRangeOrder is the order property of the state encoding as the
// range read uses it: for random keys and random bounds, the keys the
// runs hold, read in run order, are exactly the keys in range, in
// ascending value order, for INT, BIGINT and DOUBLE (negatives, zero,
// infinities), one-column and counted (composite or aggregate) layouts.
func TestKeyRangeOrder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(39, 1))
	type gen struct {
		name string
		val  func() any
		less func(a, b any) int
		// open bounds are exact for integers; a DOUBLE's are read
		// inclusively and filtered by WHERE.
		open bool
	}
	gens := []gen{
		{"INT", func() any { return int32(rnd.IntN(2000) - 1000) }, func(a, b any) int { return cmp.Compare(a.(int32), b.(int32)) }, true},
		{"INT extremes", func() any {
			return []int32{math.MinInt32, math.MaxInt32, -1, 0, 1}[rnd.IntN(5)]
		}, func(a, b any) int { return cmp.Compare(a.(int32), b.(int32)) }, true},
		{"BIGINT", func() any { return rnd.Int64() - math.MaxInt64/2 - rnd.Int64N(math.MaxInt64/2) }, func(a, b any) int { return cmp.Compare(a.(int64), b.(int64)) }, true},
		{"DOUBLE", func() any {
			switch rnd.IntN(10) {
			case 0:
				return math.Inf(1)
			case 1:
				return math.Inf(-1)
			case 2:
				return 0.0
			}
			return (rnd.Float64() - 0.5) * math.Pow(10, float64(rnd.IntN(8)))
		}, func(a, b any) int { return cmp.Compare(a.(float64), b.(float64)) }, false},
	}
	prefix := []byte{0x00}
	for _, g := range gens {
		for _, counted := range []bool{false, true} {
			for range 200 {
				seen := map[any]bool{}
				var vals []any
				var stored [][]byte
				for range 1 + rnd.IntN(40) {
					v := g.val()
					if seen[v] {
						continue
					}
					seen[v] = true
					vals = append(vals, v)
					k := append([]byte(nil), prefix...)
					if counted {
						k = types.AppendValues(k, []any{v, "rest"})
					} else {
						k = types.AppendValue(k, v)
					}
					stored = append(stored, k)
				}
				slices.SortFunc(stored, bytes.Compare)
				rng := &KeyRange{NKeys: 1}
				if counted {
					rng.NKeys = 2
				}
				if rnd.IntN(4) > 0 {
					rng.Lo, rng.LoOpen = g.val(), g.open && rnd.IntN(2) == 0
				}
				if rnd.IntN(4) > 0 || rng.Lo == nil {
					rng.Hi, rng.HiOpen = g.val(), g.open && rnd.IntN(2) == 0
				}
				var want []any
				for _, v := range vals {
					if rng.Lo != nil && (g.less(v, rng.Lo) < 0 || rng.LoOpen && g.less(v, rng.Lo) == 0) {
						continue
					}
					if rng.Hi != nil && (g.less(v, rng.Hi) > 0 || rng.HiOpen && g.less(v, rng.Hi) == 0) {
						continue
					}
					want = append(want, v)
				}
				slices.SortFunc(want, g.less)
				runs, ok := rng.rangeRuns(prefix, counted)
				if !ok {
					t.Fatalf("%s: no runs", g.name)
				}
				skip := len(prefix)
				if counted {
					skip++ // the column count
				}
				got := readRuns(t, stored, runs, skip)
				if diff := gocmp.Diff(want, got); diff != "" {
					t.Fatalf("%s counted=%v range %s over %v (-want +got):\n%s", g.name, counted, rng, vals, diff)
				}
			}
		}
	}
}

// TestKeyRangeNaNAndUnordered places NaN after +Infinity, as Java's
// Double.compare does, and refuses runs for the types the encoding
// orders by length first.
func TestKeyRangeNaNAndUnordered(t *testing.T) {
	var stored [][]byte
	for _, v := range []float64{math.NaN(), math.Inf(1), 1, -1, math.Inf(-1)} {
		stored = append(stored, types.AppendValue(nil, v))
	}
	slices.SortFunc(stored, bytes.Compare)
	runs, ok := (&KeyRange{NKeys: 1, Lo: -1.0}).rangeRuns(nil, false)
	if !ok {
		t.Fatal("DOUBLE: no runs")
	}
	got := readRuns(t, stored, runs, 0)
	if len(got) != 4 || got[0] != -1.0 || got[1] != 1.0 || got[2] != math.Inf(1) || !math.IsNaN(got[3].(float64)) {
		t.Fatalf("DOUBLE >= -1 read %v, want [-1 1 +Inf NaN]", got)
	}
	dec, err := types.ParseDecimal("1.5")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"a", []byte("a"), dec} {
		if _, ok := (&KeyRange{NKeys: 1, Lo: v}).rangeRuns(nil, false); ok {
			t.Errorf("%T: runs over an encoding ordered by length", v)
		}
	}
}

// TestKeyRangeText is the order property for STRING and BYTES, whose
// encoding puts the length first: for random texts (bytes 0x00, 0x01,
// 0xfe and 0xff among them, lengths 0 to 5) and random inclusive
// bounds, the runs of each length present, found by seeking to the next
// length as TableReader.readTextRange does, hold exactly the texts in
// range; sorted, they are the texts in range in bytewise order.
func TestKeyRangeText(t *testing.T) {
	rnd := rand.New(rand.NewPCG(39, 2))
	alphabet := []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}
	text := func() string {
		b := make([]byte, rnd.IntN(6))
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return string(b)
	}
	prefix := []byte{0x00}
	for _, counted := range []bool{false, true} {
		for range 500 {
			seen := map[string]bool{}
			var vals []string
			var stored [][]byte
			for range 1 + rnd.IntN(30) {
				v := text()
				if seen[v] {
					continue
				}
				seen[v] = true
				vals = append(vals, v)
				k := append([]byte(nil), prefix...)
				if counted {
					k = types.AppendValues(k, []any{"pinned", v, int64(7)})
				} else {
					k = types.AppendValue(k, v)
				}
				stored = append(stored, k)
			}
			slices.SortFunc(stored, bytes.Compare)
			rng := &KeyRange{NKeys: 1}
			if counted {
				rng.NKeys, rng.Eq = 3, []any{"pinned"}
			}
			if rnd.IntN(4) > 0 {
				rng.Lo = text()
			}
			if rnd.IntN(4) > 0 || rng.Lo == nil {
				rng.Hi = text()
			}
			var want []string
			for _, v := range vals {
				if (rng.Lo == nil || v >= rng.Lo.(string)) && (rng.Hi == nil || v <= rng.Hi.(string)) {
					want = append(want, v)
				}
			}
			slices.Sort(want)
			head := rng.head(prefix, counted)
			tagged := rng.textTagged(head)
			storeEnd := prefixEndOf(tagged)
			var got []string
			for length := uint64(0); ; {
				seek := binary.AppendUvarint(append([]byte(nil), tagged...), length)
				i, _ := slices.BinarySearchFunc(stored, seek, bytes.Compare)
				if i == len(stored) || bytes.Compare(stored[i], storeEnd) >= 0 {
					break
				}
				n, _ := binary.Uvarint(stored[i][len(tagged):])
				if run, ok := rng.textRun(tagged, n, storeEnd); ok {
					for _, k := range stored {
						if bytes.Compare(k, run.start) >= 0 && (run.end == nil || bytes.Compare(k, run.end) < 0) {
							v, _, err := types.DecodeValue(k[len(head):])
							if err != nil {
								t.Fatal(err)
							}
							got = append(got, v.(string))
						}
					}
				}
				length = n + 1
			}
			slices.Sort(got)
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Fatalf("counted=%v range %q over %q (-want +got):\n%s", counted, rng, vals, diff)
			}
		}
	}
}
