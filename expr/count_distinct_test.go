package expr_test

import (
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

// TestCountDistinctExact: COUNT_DISTINCT counts every distinct value, past
// the thousand COLLECT_SET keeps (Nexmark q15 counts thousands of bidders a
// day); its state, encoded and decoded as the aggregate stores it between
// commits, goes on counting; a list written as the state by an earlier
// version counts on from its values; equal DECIMALs of different scales
// and a DOUBLE's two zeros are one value each, NULL none.
func TestCountDistinctExact(t *testing.T) {
	agg, err := expr.BindAggregate("COUNT_DISTINCT", []types.Type{tBig}, false)
	if err != nil {
		t.Fatal(err)
	}
	acc := agg.Init()
	for i := range 5000 {
		acc = agg.Add(acc, []any{int64(i % 2500)})
		acc = agg.Add(acc, []any{nil})
	}
	if got := agg.Result(acc); got != int64(2500) {
		t.Fatalf("2,500 distinct values: COUNT_DISTINCT %v", got)
	}
	stored, rest, err := types.DecodeValue(types.AppendValue(nil, acc))
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode the stored state: %v (%d bytes left)", err, len(rest))
	}
	for i := range 3000 {
		stored = agg.Add(stored, []any{int64(i)})
	}
	if got := agg.Result(stored); got != int64(3000) {
		t.Errorf("after a store round trip and 500 more values: %v, want 3000", got)
	}

	old := []any{int64(1), int64(2), int64(3)} // an earlier version's state
	if got := agg.Result(old); got != int64(3) {
		t.Errorf("an earlier version's state: %v, want 3", got)
	}
	if got := agg.Result(agg.Add(old, []any{int64(2)})); got != int64(3) {
		t.Errorf("an earlier version's state, a value it holds added: %v, want 3", got)
	}
	if got := agg.Result(agg.Merge(old, agg.Add(agg.Init(), []any{int64(4)}))); got != int64(4) {
		t.Errorf("an earlier version's state merged with a new one: %v, want 4", got)
	}

	dec, err := expr.BindAggregate("COUNT_DISTINCT", []types.Type{types.DecimalOf(4, 2)}, false)
	if err != nil {
		t.Fatal(err)
	}
	acc = dec.Init()
	for _, s := range []string{"1.0", "1.00", "2.50", "2.5"} {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		acc = dec.Add(acc, []any{d})
	}
	if got := dec.Result(acc); got != int64(2) {
		t.Errorf("DECIMALs 1.0, 1.00, 2.50, 2.5: %v, want 2", got)
	}
	dbl, err := expr.BindAggregate("COUNT_DISTINCT", []types.Type{tDouble}, false)
	if err != nil {
		t.Fatal(err)
	}
	acc = dbl.Init()
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5} {
		acc = dbl.Add(acc, []any{f})
	}
	negZero := dbl.Add(dbl.Add(dbl.Init(), []any{float64(0)}), []any{math.Copysign(0, -1)})
	if got, got2 := dbl.Result(acc), dbl.Result(negZero); got != int64(2) || got2 != int64(1) {
		t.Errorf("DOUBLEs 0, -0, 1.5: %v, want 2; 0 and -0: %v, want 1", got, got2)
	}
}

// TestCountDistinctMembers: COUNT_DISTINCT's members, as operators that
// keep one state entry per value see them: equal values (DECIMALs of
// different scales, a DOUBLE's two zeros) are one member, NULL none; a
// whole set (an earlier version's MAP or list) lists the same members in
// order; Result takes the count kept beside them.
func TestCountDistinctMembers(t *testing.T) {
	dec, err := expr.BindAggregate("COUNT_DISTINCT", []types.Type{types.DecimalOf(4, 2)}, false)
	if err != nil {
		t.Fatal(err)
	}
	member := func(v any) string {
		m, ok := dec.Member([]byte("p"), []any{v})
		if !ok {
			return "none"
		}
		return string(m)
	}
	one, _, _ := apd.NewFromString("1.0")
	oneOO, _, _ := apd.NewFromString("1.00")
	if a, b := member(one), member(oneOO); a != b || a[:1] != "p" {
		t.Errorf("members of 1.0 and 1.00: %q and %q, want one, after the prefix", a, b)
	}
	if got := member(nil); got != "none" {
		t.Errorf("member of NULL: %q, want none", got)
	}
	agg, err := expr.BindAggregate("COUNT_DISTINCT", []types.Type{tBig}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{types.AppendValue(nil, int64(1)), types.AppendValue(nil, int64(2))}
	set := agg.Add(agg.Add(agg.Add(agg.Init(), []any{int64(2)}), []any{int64(1)}), []any{int64(2)})
	for _, acc := range []any{set, []any{int64(2), int64(1), nil}} {
		got := agg.Members(acc)
		if len(got) != len(want) || string(got[0]) != string(want[0]) || string(got[1]) != string(want[1]) {
			t.Errorf("members of %v: %x, want %x", acc, got, want)
		}
	}
	if got := agg.Result(int64(7)); got != int64(7) {
		t.Errorf("Result of the count 7: %v", got)
	}
}
