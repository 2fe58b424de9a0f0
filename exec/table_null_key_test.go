package exec_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/exec"
)

// A table source skips a record whose Kafka key is null, as a KTable
// source does; a stream source passes it on.
func TestTableSourceSkipsNullKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table bool
		want  int
	}{
		{"stream keeps null key", false, 2},
		{"table skips null key", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := statelessTopology(t)
			topo.Subs[0].Source.Table = tc.table
			m := exec.NewMemoryRunner(openDB(t), quiet)
			if err := m.Add(topo); err != nil {
				t.Fatal(err)
			}
			for _, key := range [][]byte{[]byte("o1"), nil} {
				rec := exec.Record{Topic: "orders", Key: key, Value: []byte(`{"ITEM":"tea","QTY":2,"PRICE":1.0}`), Timestamp: 10}
				if _, err := m.Send(rec); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, len(m.Produced())); diff != "" {
				t.Errorf("records produced (-want +got):\n%s", diff)
			}
		})
	}
}
