package exec_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

// eventsSource: key K BIGINT (KAFKA), value ID BIGINT, TS STRING (JSON).
func eventsSource() *exec.SourceSpec {
	return &exec.SourceSpec{
		Topic: "events", KeyFormat: "KAFKA", ValueFormat: "JSON",
		KeyCols:      []types.Column{{Name: "K", Type: types.BigIntType, Key: true}},
		ValueCols:    []types.Column{{Name: "ID", Type: types.BigIntType}, {Name: "TS", Type: types.StringType}},
		TimestampCol: -1,
	}
}

// copyTopology is SELECT K, ID, TS FROM events into "out", with the
// sink's record timestamp taken from ts (nil: the row's event time).
func copyTopology(src *exec.SourceSpec, ts *exec.SinkTimestamp) *exec.Topology {
	col := func(i int) expr.Eval { return func(row []any) any { return row[i] } }
	return &exec.Topology{
		QueryID: "CSAS_OUT", SinkTopic: "out",
		Subs: []*exec.SubTopology{{ID: 0, Source: src, Nodes: []exec.Node{
			&exec.ProjectNode{Exprs: []expr.Eval{col(0), col(1), col(2)}, Names: []string{"K", "ID", "TS"}, KeyInputs: map[int]int{0: 0}},
			&exec.SinkNode{
				Topic: "out", KeyFormat: "KAFKA", ValueFormat: "JSON",
				KeyCols:   src.KeyCols,
				ValueCols: src.ValueCols,
				KeyIdx:    []int{0}, ValueIdx: []int{1, 2},
				Timestamp: ts,
			},
		}}},
	}
}

// bigKey is the KAFKA encoding of a BIGINT key.
func bigKey(k int64) string {
	return string([]byte{byte(k >> 56), byte(k >> 48), byte(k >> 40), byte(k >> 32), byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)})
}

func TestSinkTimestampColumn(t *testing.T) {
	type in struct {
		key   int64
		value string
		ts    int64
	}
	cases := []struct {
		name       string
		ts         *exec.SinkTimestamp
		inputs     []in
		want       []out
		wantErrors map[string]int64
	}{
		{
			name:   "no TIMESTAMP: the row's event time",
			inputs: []in{{1, `{"ID":7,"TS":null}`, 500}},
			want:   []out{{"out", bigKey(1), `{"ID":7,"TS":null}`, 500}},
		},
		{
			name: "BIGINT value column; negative and null rows are dropped and counted",
			ts:   &exec.SinkTimestamp{Col: 1, Name: "ID"},
			inputs: []in{
				{1, `{"ID":1,"TS":null}`, 1526075913000}, {2, `{"ID":-2,"TS":null}`, 1526075913000},
				{3, `{"ID":null,"TS":null}`, 10}, {4, `{"ID":3,"TS":null}`, 1589234313000},
			},
			want: []out{
				{"out", bigKey(1), `{"ID":1,"TS":null}`, 1},
				{"out", bigKey(4), `{"ID":3,"TS":null}`, 3},
			},
			wantErrors: map[string]int64{exec.ErrKindTimestamp: 2},
		},
		{
			name:   "key column",
			ts:     &exec.SinkTimestamp{Col: 0, Name: "K"},
			inputs: []in{{42, `{"ID":1,"TS":null}`, 9000}},
			want:   []out{{"out", bigKey(42), `{"ID":1,"TS":null}`, 42}},
		},
		{
			name:       "formatted STRING column",
			ts:         &exec.SinkTimestamp{Col: 2, Name: "TS", Format: "yyyy-MM-dd HH:mm:ss"},
			inputs:     []in{{1, `{"ID":1,"TS":"1970-01-01 00:00:02"}`, 9000}, {2, `{"ID":2,"TS":"yesterday"}`, 9000}},
			want:       []out{{"out", bigKey(1), `{"ID":1,"TS":"1970-01-01 00:00:02"}`, 2000}},
			wantErrors: map[string]int64{exec.ErrKindTimestamp: 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := exec.NewMemoryRunner(openDB(t), quiet)
			if err := m.Add(copyTopology(eventsSource(), tc.ts)); err != nil {
				t.Fatal(err)
			}
			for _, r := range tc.inputs {
				send(t, m, "events", bigKey(r.key), r.value, r.ts)
			}
			if diff := cmp.Diff(tc.want, outs(m.Produced())); diff != "" {
				t.Errorf("produced (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrors, m.Metrics("CSAS_OUT").Errors(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// A record whose event time cannot be read is counted and skipped, unless
// the source asks to fail the query (ksql.timestamp.throw.on.invalid).
func TestBadEventTime(t *testing.T) {
	for _, fail := range []bool{false, true} {
		src := eventsSource()
		src.TimestampCol = 2
		src.TimestampFormat = "yy-MM-dd HH:mm:ssX"
		src.FailOnBadTimestamp = fail
		m := exec.NewMemoryRunner(openDB(t), quiet)
		if err := m.Add(copyTopology(src, nil)); err != nil {
			t.Fatal(err)
		}
		_, err := m.Send(exec.Record{Topic: "events", Key: []byte(bigKey(1)), Value: []byte(`{"ID":2,"TS":"!!!!!!"}`), Timestamp: 5})
		if fail {
			if !errors.Is(err, exec.ErrTimestampExtractor) {
				t.Errorf("FailOnBadTimestamp: Send error %v, want ErrTimestampExtractor", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		if got, want := m.Metrics("CSAS_OUT").Errors(), map[string]int64{exec.ErrKindTimestamp: 1}; !cmp.Equal(got, want) {
			t.Errorf("Errors() = %v, want %v", got, want)
		}
		got := send(t, m, "events", bigKey(2), `{"ID":3,"TS":"20-02-10 08:31:44Z"}`, 6)
		if want := []out{{"out", bigKey(2), `{"ID":3,"TS":"20-02-10 08:31:44Z"}`, 1581323504000}}; !cmp.Equal(want, got) {
			t.Errorf("after a bad record: %v, want %v", got, want)
		}
	}
}

// A stream's null-value record is skipped, unless KeepNullValues lets it
// through a projection as a null-value record with its key.
func TestStreamNullValues(t *testing.T) {
	for _, keep := range []bool{false, true} {
		src := eventsSource()
		src.KeepNullValues = keep
		m := exec.NewMemoryRunner(openDB(t), quiet)
		if err := m.Add(copyTopology(src, nil)); err != nil {
			t.Fatal(err)
		}
		got, err := m.Send(exec.Record{Topic: "events", Key: []byte(bigKey(3)), Timestamp: 7})
		if err != nil {
			t.Fatal(err)
		}
		var want []out
		if keep {
			want = []out{{"out", bigKey(3), "<tombstone>", 7}}
		}
		if diff := cmp.Diff(want, outs(got), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("KeepNullValues=%v: produced (-want +got):\n%s", keep, diff)
		}
	}
}
