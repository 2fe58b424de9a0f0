package exec_test

import (
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

// A record with a null key keeps a null key through a projection that
// passes the key through (as ksqlDB carries its null key object), but not
// through one that computes the key, and a key of null columns read from
// real bytes is written as such.
func TestNullKeyPassesThrough(t *testing.T) {
	keys := []types.Column{{Name: "K1", Type: types.StringType, Key: true}, {Name: "K2", Type: types.StringType, Key: true}}
	vals := []types.Column{{Name: "V", Type: types.IntegerType}}
	col := func(i int) expr.Eval { return func(row []any) any { return row[i] } }
	topology := func(keepsKey bool) *exec.Topology {
		return &exec.Topology{
			QueryID: "CSAS_OUT", SinkTopic: "out",
			Subs: []*exec.SubTopology{{ID: 0,
				Source: &exec.SourceSpec{Topic: "in", KeyFormat: "DELIMITED", ValueFormat: "DELIMITED", KeyCols: keys, ValueCols: vals, TimestampCol: -1},
				Nodes: []exec.Node{
					&exec.ProjectNode{Exprs: []expr.Eval{col(0), col(1), col(2)}, Names: []string{"K1", "K2", "V"}, KeyInputs: map[int]int{0: 0, 1: 1}, KeepsKey: keepsKey},
					&exec.SinkNode{Topic: "out", KeyFormat: "JSON", ValueFormat: "DELIMITED", KeyCols: keys, ValueCols: vals, KeyIdx: []int{0, 1}, ValueIdx: []int{2}},
				}}},
		}
	}
	cases := []struct {
		name     string
		keepsKey bool
		key      []byte
		wantKey  *string // nil: a null key
	}{
		{"null key passed through", true, nil, nil},
		{"null key, key computed", false, nil, ptr(`{"K1":null,"K2":null}`)},
		{"key of null columns", true, []byte(","), ptr(`{"K1":null,"K2":null}`)},
		{"key", true, []byte("a,b"), ptr(`{"K1":"a","K2":"b"}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := exec.NewMemoryRunner(openDB(t), quiet)
			if err := m.Add(topology(tc.keepsKey)); err != nil {
				t.Fatal(err)
			}
			got, err := m.Send(exec.Record{Topic: "in", Key: tc.key, Value: []byte("1"), Timestamp: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("produced %d records, want 1", len(got))
			}
			switch k := got[0].Key; {
			case tc.wantKey == nil && k != nil:
				t.Errorf("key = %q, want null", k)
			case tc.wantKey != nil && (k == nil || string(k) != *tc.wantKey):
				t.Errorf("key = %q (nil %v), want %s", k, k == nil, *tc.wantKey)
			}
		})
	}
}

func ptr(s string) *string { return &s }
