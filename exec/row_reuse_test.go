package exec

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

// borrowingOp records what each row held while it had it, and keeps
// nothing of it (a rowBorrower, as a sink).
type borrowingOp struct {
	countingOp
	rows []*Row
}

func (b *borrowingOp) borrowsRows() bool { return true }

// TestRowReuseOnlyBeforeBorrowers checks when an operator may emit the
// same Row for every row: only when what follows borrows rows, through a
// filter and the per-operator counter. Before an operator that keeps rows
// every row is a Row and columns of its own, and what it kept still holds
// each row's values after the later ones went by.
func TestRowReuseOnlyBeforeBorrowers(t *testing.T) {
	double := &ProjectNode{Exprs: []expr.Eval{func(c []any) any { return c[0].(int64) * 2 }}, Names: []string{"D"}}
	pass := &FilterNode{Pred: func([]any) any { return true }, Text: "TRUE"}
	for _, tc := range []struct {
		name   string
		borrow bool
		chain  func(last Operator) Operator // what follows the projection
	}{
		{"keeper", false, func(last Operator) Operator { return last }},
		{"borrower", true, func(last Operator) Operator { return last }},
		{"counted borrower", true, func(last Operator) Operator { return &countedOp{Operator: last, rows: new(atomic.Int64)} }},
		{"filter, borrower", true, func(last Operator) Operator { f, _ := pass.New(last); return f }},
		{"filter, keeper", false, func(last Operator) Operator { f, _ := pass.New(last); return f }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []string
			var kept []*Row
			var last Operator
			record := func(r *Row) { seen = append(seen, fmt.Sprint(r.Cols...)); kept = append(kept, r) }
			if tc.borrow {
				last = &borrowingOp{countingOp: countingOp{fn: record}}
			} else {
				last = &countingOp{fn: record}
			}
			p, err := double.New(tc.chain(last))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.(*project).reuse; got != tc.borrow {
				t.Fatalf("projection reuses its row: %v, want %v", got, tc.borrow)
			}
			for i := range int64(3) {
				if err := p.Process(&TaskContext{}, &Row{Cols: []any{i + 1}}); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff([]string{"2", "4", "6"}, seen); diff != "" {
				t.Fatalf("rows as handed on (-want +got):\n%s", diff)
			}
			same := kept[0] == kept[1] && kept[1] == kept[2]
			if same != tc.borrow {
				t.Fatalf("one Row for every row: %v, want %v", same, tc.borrow)
			}
			if !tc.borrow {
				var now []string
				for _, r := range kept {
					now = append(now, fmt.Sprint(r.Cols...))
				}
				if diff := cmp.Diff([]string{"2", "4", "6"}, now); diff != "" {
					t.Fatalf("rows kept, after the others went by (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestDecoderReuseReadsMissingAsNull decodes records into the same
// columns, as a task does before a chain that borrows rows: a column a
// record lacks, and every value column of a tombstone (a record without a
// value, which the value codec never sees), must read NULL, not an
// earlier record's value.
func TestDecoderReuseReadsMissingAsNull(t *testing.T) {
	spec := &SourceSpec{Topic: "in", KeyFormat: "KAFKA", ValueFormat: "JSON", TimestampCol: -1,
		KeyCols:   []types.Column{{Name: "K", Type: types.StringType}},
		ValueCols: []types.Column{{Name: "A", Type: types.BigIntType}, {Name: "B", Type: types.BigIntType}}}
	for _, reuse := range []bool{false, true} {
		dec, err := newDecoder(spec)
		if err != nil {
			t.Fatal(err)
		}
		dec.reuse = reuse
		var got []string
		for i, v := range []string{`{"A":1,"B":2}`, `{"A":3}`, `{"B":4}`, `{"A":5,"B":6}`, ""} {
			var value []byte // "": a tombstone
			if v != "" {
				value = []byte(v)
			}
			var row Row
			if err := dec.decode(&Record{Topic: "in", Key: []byte("k"), Value: value, Offset: int64(i), Timestamp: 10}, &row); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%v %v %v", row.Cols[0], row.Cols[1], row.Cols[2]))
		}
		want := []string{"k 1 2", "k 3 <nil>", "k <nil> 4", "k 5 6", "k <nil> <nil>"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("reuse %v: rows (-want +got):\n%s", reuse, diff)
		}
	}
}

// TestProjectionReuseTombstone: a projection reusing its row before a
// borrower writes a tombstone's key columns only; the value columns must
// read NULL, not the row before's.
func TestProjectionReuseTombstone(t *testing.T) {
	node := &ProjectNode{Exprs: []expr.Eval{
		func(c []any) any { return c[0] },
		func(c []any) any { return c[1] },
	}, Names: []string{"K", "V"}, KeyInputs: map[int]int{0: 0}}
	var seen []string
	p, err := node.New(&borrowingOp{countingOp: countingOp{fn: func(r *Row) {
		seen = append(seen, fmt.Sprintf("%v %v %v", r.Cols[0], r.Cols[1], r.Tombstone))
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Row{{Cols: []any{"a", int64(1)}}, {Cols: []any{"b", nil}, Tombstone: true}} {
		if err := p.Process(&TaskContext{}, r); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"a 1 false", "b <nil> true"}, seen); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
}
