package exec_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openDB(t testing.TB) *state.DB {
	t.Helper()
	db, err := state.Open(state.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func compileOver(t testing.TB, src string, s types.Schema) expr.Compiled {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	c, err := expr.Compile(e, expr.SchemaScope(s))
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	return c
}

// out is a produced record in a comparable form.
type out struct {
	Topic string
	Key   string
	Value string // "<tombstone>" for a nil value
	Ts    int64
}

func outs(recs []*exec.Record) []out {
	res := make([]out, 0, len(recs))
	for _, r := range recs {
		v := string(r.Value)
		if r.Value == nil {
			v = "<tombstone>"
		}
		res = append(res, out{r.Topic, string(r.Key), v, r.Timestamp})
	}
	return res
}

// winKey is a KAFKA string key with a time window start appended.
func winKey(k string, start int64) string {
	return string(binary.BigEndian.AppendUint64([]byte(k), uint64(start)))
}

func send(t testing.TB, m *exec.MemoryRunner, topic, key, value string, ts int64) []out {
	t.Helper()
	rec := exec.Record{Topic: topic, Key: []byte(key), Value: []byte(value), Timestamp: ts}
	got, err := m.Send(rec)
	if err != nil {
		t.Fatalf("Send(%s %s@%d): %v", key, value, ts, err)
	}
	return outs(got)
}

// ordersSource: key ID STRING, value ITEM STRING, QTY INT, PRICE DOUBLE.
func ordersSource() *exec.SourceSpec {
	return &exec.SourceSpec{
		Topic: "orders", KeyFormat: "KAFKA", ValueFormat: "JSON",
		KeyCols: []types.Column{{Name: "ID", Type: types.StringType, Key: true}},
		ValueCols: []types.Column{
			{Name: "ITEM", Type: types.StringType},
			{Name: "QTY", Type: types.IntegerType},
			{Name: "PRICE", Type: types.DoubleType},
		},
		TimestampCol: -1,
	}
}

// SELECT id, UCASE(item) AS item, qty * price AS total FROM orders WHERE qty > 1
func statelessTopology(t testing.TB) *exec.Topology {
	src := ordersSource()
	in := src.RowSchema()
	where := compileOver(t, "qty > 1", in)
	cols := []expr.Compiled{compileOver(t, "id", in), compileOver(t, "UCASE(item)", in), compileOver(t, "qty * price", in)}
	return &exec.Topology{
		QueryID: "CSAS_1", SinkTopic: "big_orders",
		Subs: []*exec.SubTopology{{ID: 0, Source: src, Nodes: []exec.Node{
			&exec.FilterNode{Pred: where.Eval, Text: "QTY > 1"},
			&exec.ProjectNode{Exprs: []expr.Eval{cols[0].Eval, cols[1].Eval, cols[2].Eval}, Names: []string{"ID", "ITEM", "TOTAL"}, KeyInputs: map[int]int{0: 0}},
			&exec.SinkNode{
				Topic: "big_orders", KeyFormat: "KAFKA", ValueFormat: "JSON",
				KeyCols:   []types.Column{{Name: "ID", Type: types.StringType, Key: true}},
				ValueCols: []types.Column{{Name: "ITEM", Type: cols[1].Type}, {Name: "TOTAL", Type: cols[2].Type}},
				KeyIdx:    []int{0}, ValueIdx: []int{1, 2},
			},
		}}},
	}
}

func TestMemoryRunnerFilterProject(t *testing.T) {
	m := exec.NewMemoryRunner(openDB(t), quiet)
	if err := m.Add(statelessTopology(t)); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		key, value string
		ts         int64
		want       []out
	}{
		{"o1", `{"ITEM":"tea","QTY":2,"PRICE":1.25}`, 100, []out{{"big_orders", "o1", `{"ITEM":"TEA","TOTAL":2.5}`, 100}}},
		{"o2", `{"ITEM":"cup","QTY":1,"PRICE":9.0}`, 200, nil},                                                           // filtered out
		{"o3", `{"item":"pot","qty":3,"price":4}`, 300, []out{{"big_orders", "o3", `{"ITEM":"POT","TOTAL":12.0}`, 300}}}, // field names fold case
		{"o4", `{"ITEM":"x","PRICE":1.0}`, 400, nil},                                                                     // QTY missing: NULL > 1 is not true
		{"o5", `{"QTY":5}`, 50, []out{{"big_orders", "o5", `{"ITEM":null,"TOTAL":null}`, 50}}},                           // NULLs flow through; time may go back
	}
	for i, s := range steps {
		got := send(t, m, "orders", s.key, s.value, s.ts)
		if diff := cmp.Diff(s.want, got); diff != "" && !(len(s.want) == 0 && len(got) == 0) {
			t.Errorf("step %d (%s): produced (-want +got):\n%s", i, s.value, diff)
		}
	}
	var all []out
	for _, s := range steps {
		all = append(all, s.want...)
	}
	if diff := cmp.Diff(all, outs(m.Produced())); diff != "" {
		t.Errorf("Produced() (-want +got):\n%s", diff)
	}
	met := m.Metrics("CSAS_1")
	if in, o := met.RecordsIn.Load(), met.RecordsOut.Load(); in != 5 || o != 3 {
		t.Errorf("RecordsIn %d, RecordsOut %d; want 5, 3", in, o)
	}
}

func TestMemoryRunnerSkipsBadRecords(t *testing.T) {
	m := exec.NewMemoryRunner(openDB(t), quiet)
	if err := m.Add(statelessTopology(t)); err != nil {
		t.Fatal(err)
	}
	bad := []string{`not json`, `{"ITEM":"tea","QTY":2`, `[1,2]`, `{"QTY":"many"}`}
	for _, v := range bad {
		if got := send(t, m, "orders", "o1", v, 1); len(got) != 0 {
			t.Errorf("bad record %q produced %v", v, got)
		}
	}
	// A stream ignores a null value, and it is not an error.
	if got, err := m.Send(exec.Record{Topic: "orders", Key: []byte("o9"), Timestamp: 2}); err != nil || len(got) != 0 {
		t.Errorf("tombstone: %v, %v", got, err)
	}
	// The query goes on after bad records.
	got := send(t, m, "orders", "o2", `{"ITEM":"tea","QTY":2,"PRICE":1.0}`, 3)
	if want := []out{{"big_orders", "o2", `{"ITEM":"TEA","TOTAL":2.0}`, 3}}; !cmp.Equal(want, got) {
		t.Errorf("after bad records: %v, want %v", got, want)
	}
	if got, want := m.Metrics("CSAS_1").Errors(), map[string]int64{exec.ErrKindDeserialize: int64(len(bad))}; !cmp.Equal(got, want) {
		t.Errorf("Errors() = %v, want %v", got, want)
	}
	if got := m.Metrics("CSAS_1").RecordsIn.Load(); got != int64(len(bad))+2 {
		t.Errorf("RecordsIn = %d", got)
	}
}

// bookingsSource: key HOTEL STRING, value PRICE DOUBLE; event time from
// the record timestamp.
func bookingsSource() *exec.SourceSpec {
	return &exec.SourceSpec{
		Topic: "bookings", KeyFormat: "KAFKA", ValueFormat: "JSON",
		KeyCols:      []types.Column{{Name: "HOTEL", Type: types.StringType, Key: true}},
		ValueCols:    []types.Column{{Name: "PRICE", Type: types.DoubleType}},
		TimestampCol: -1,
	}
}

// SELECT hotel, COUNT(*) AS n, SUM(price) AS revenue FROM bookings
// WINDOW TUMBLING (SIZE 10 SECONDS, GRACE PERIOD 2 SECONDS) GROUP BY hotel,
// built the way the planner builds a GROUP BY on the key: aggregate,
// project, sink.
func windowedCountTopology(t testing.TB, emitFinal bool) *exec.Topology {
	src := bookingsSource()
	agg := countSumByHotel(t, src, "CTAS_W-Aggregate-Materialize")
	agg.Window = &exec.WindowSpec{Kind: exec.Tumbling, Size: 10_000, Grace: 2_000}
	agg.EmitFinal = emitFinal
	// The aggregate emits [HOTEL, COUNT, SUM, WINDOWSTART, WINDOWEND].
	col := func(i int) expr.Eval { return func(row []any) any { return row[i] } }
	return &exec.Topology{
		QueryID: "CTAS_W", SinkTopic: "hotel_10s",
		Stores: []exec.StoreSpec{{Name: agg.Store, Changelog: "CTAS_W-changelog", Windowed: true, Partitions: 1}},
		Subs: []*exec.SubTopology{{ID: 0, Source: src, Nodes: []exec.Node{
			agg,
			&exec.ProjectNode{Exprs: []expr.Eval{col(0), col(1), col(2), col(3), col(4)}, Names: []string{"HOTEL", "N", "REVENUE", "WINDOWSTART", "WINDOWEND"}},
			&exec.SinkNode{
				Topic: "hotel_10s", KeyFormat: "KAFKA", ValueFormat: "JSON",
				KeyCols:   []types.Column{{Name: "HOTEL", Type: types.StringType, Key: true}},
				ValueCols: []types.Column{{Name: "N", Type: types.BigIntType}, {Name: "REVENUE", Type: types.DoubleType}},
				KeyIdx:    []int{0}, ValueIdx: []int{1, 2},
				Window: exec.TimeWindowed, WindowStartIdx: 3, WindowEndIdx: 4,
			},
		}}},
	}
}

// countSumByHotel is the aggregate of `SELECT hotel, COUNT(*),
// SUM(price) FROM bookings GROUP BY hotel` over src's rows, unwindowed;
// callers add a window or a retention.
func countSumByHotel(t testing.TB, src *exec.SourceSpec, store string) *exec.AggregateNode {
	t.Helper()
	count, err := expr.BindAggregate("COUNT", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	price := compileOver(t, "price", src.RowSchema())
	sum, err := expr.BindAggregate("SUM", []types.Type{price.Type}, false)
	if err != nil {
		t.Fatal(err)
	}
	return &exec.AggregateNode{
		Store: store, KeyCols: []int{0}, KeyNames: []string{"HOTEL"},
		Aggs: []exec.AggCall{
			{Agg: count, Text: "COUNT(*)"},
			{Agg: sum, Args: []expr.Eval{price.Eval}, Text: "SUM(PRICE)"},
		},
	}
}

type booking struct {
	hotel string
	price float64
	ts    int64
	want  []out
}

func hotelOut(hotel string, start int64, n int, revenue string, ts int64) out {
	return out{"hotel_10s", winKey(hotel, start), fmt.Sprintf(`{"N":%d,"REVENUE":%s}`, n, revenue), ts}
}

// emitChangesScript: windows of 10s, grace 2s.
var emitChangesScript = []booking{
	{"ritz", 10, 1_000, []out{hotelOut("ritz", 0, 1, "10.0", 1_000)}},
	{"ritz", 20, 5_000, []out{hotelOut("ritz", 0, 2, "30.0", 5_000)}},
	{"savoy", 7, 6_000, []out{hotelOut("savoy", 0, 1, "7.0", 6_000)}},
	{"ritz", 5, 11_000, []out{hotelOut("ritz", 10_000, 1, "5.0", 11_000)}},
	// Late but inside grace (window 0 closes at 12000): a correction.
	{"ritz", 1, 9_000, []out{hotelOut("ritz", 0, 3, "31.0", 9_000)}},
	{"ritz", 0.5, 11_999, []out{hotelOut("ritz", 10_000, 2, "5.5", 11_999)}},
	{"ritz", 2, 500, []out{hotelOut("ritz", 0, 4, "33.0", 9_000)}},
	// Stream time reaches end + grace exactly: window 0 is closed.
	{"savoy", 2, 12_000, []out{hotelOut("savoy", 10_000, 1, "2.0", 12_000)}},
	{"ritz", 100, 9_999, nil},
	{"savoy", 100, 0, nil},
	{"ritz", 1, 19_999, []out{hotelOut("ritz", 10_000, 3, "6.5", 19_999)}},
}

func runScript(t *testing.T, m *exec.MemoryRunner, script []booking, restartAt int, wipe bool) {
	t.Helper()
	for i, b := range script {
		if i == restartAt {
			if err := m.Restart(wipe); err != nil {
				t.Fatalf("Restart(%v): %v", wipe, err)
			}
		}
		got := send(t, m, "bookings", b.hotel, fmt.Sprintf(`{"PRICE":%v}`, b.price), b.ts)
		if len(got) == 0 && len(b.want) == 0 {
			continue
		}
		if diff := cmp.Diff(b.want, got); diff != "" {
			t.Errorf("step %d (%s %v @%d): produced (-want +got):\n%s", i, b.hotel, b.price, b.ts, diff)
		}
	}
}

func TestTumblingCountEmitChanges(t *testing.T) {
	m := exec.NewMemoryRunner(openDB(t), quiet)
	if err := m.Add(windowedCountTopology(t, false)); err != nil {
		t.Fatal(err)
	}
	runScript(t, m, emitChangesScript, -1, false)
	if got := m.Metrics("CTAS_W").LateDropped.Load(); got != 2 {
		t.Errorf("LateDropped = %d, want 2", got)
	}
}

var emitFinalScript = []booking{
	{"ritz", 10, 1_000, nil},
	{"savoy", 7, 5_000, nil},
	{"ritz", 20, 9_000, nil},
	{"ritz", 1, 11_000, nil},
	{"ritz", 3, 9_500, nil}, // inside grace: counted, not emitted
	{"ritz", 4, 11_999, nil},
	// Stream time passes end + grace of window 0: each group emitted once,
	// in group-key order, stamped with its latest event time.
	{"savoy", 1, 12_000, []out{
		hotelOut("ritz", 0, 3, "33.0", 9_500),
		hotelOut("savoy", 0, 1, "7.0", 5_000),
	}},
	{"ritz", 50, 8_000, nil}, // too late: dropped, window not emitted again
	{"savoy", 2, 13_000, nil},
	{"ritz", 5, 21_999, nil},
	{"savoy", 1, 22_000, []out{
		hotelOut("ritz", 10_000, 2, "5.0", 11_999),
		hotelOut("savoy", 10_000, 2, "3.0", 13_000),
	}},
	{"savoy", 1, 40_000, []out{
		hotelOut("ritz", 20_000, 1, "5.0", 21_999),
		hotelOut("savoy", 20_000, 1, "1.0", 22_000),
	}},
}

func TestTumblingCountEmitFinal(t *testing.T) {
	m := exec.NewMemoryRunner(openDB(t), quiet)
	if err := m.Add(windowedCountTopology(t, true)); err != nil {
		t.Fatal(err)
	}
	runScript(t, m, emitFinalScript, -1, false)
	if got := m.Metrics("CTAS_W").LateDropped.Load(); got != 1 {
		t.Errorf("LateDropped = %d, want 1", got)
	}
	var want []out
	for _, b := range emitFinalScript {
		want = append(want, b.want...)
	}
	if diff := cmp.Diff(want, outs(m.Produced())); diff != "" {
		t.Errorf("Produced() (-want +got):\n%s", diff)
	}
}

// Stopping and restoring in the middle gives the same output as running
// straight, with local state kept and with it rebuilt from the changelog.
func TestAggregationRestart(t *testing.T) {
	scripts := map[string]struct {
		final  bool
		script []booking
	}{
		"emit changes": {false, emitChangesScript},
		"emit final":   {true, emitFinalScript},
	}
	for name, sc := range scripts {
		for at := 1; at < len(sc.script); at++ {
			for _, wipe := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/restart before step %d/wipe=%v", name, at, wipe), func(t *testing.T) {
					m := exec.NewMemoryRunner(openDB(t), quiet)
					if err := m.Add(windowedCountTopology(t, sc.final)); err != nil {
						t.Fatal(err)
					}
					runScript(t, m, sc.script, at, wipe)
				})
			}
		}
	}
}

// A restarted task skips records it already applied, so a replay of the
// input after a restart does not count twice.
func TestRestartSkipsAppliedOffsets(t *testing.T) {
	db := openDB(t)
	m := exec.NewMemoryRunner(db, quiet)
	if err := m.Add(windowedCountTopology(t, false)); err != nil {
		t.Fatal(err)
	}
	send(t, m, "bookings", "ritz", `{"PRICE":1}`, 1_000) // offset 0
	send(t, m, "bookings", "ritz", `{"PRICE":2}`, 2_000) // offset 1
	if err := m.Restart(false); err != nil {
		t.Fatal(err)
	}
	// The runner's offsets go on from 2, so this is new input.
	got := send(t, m, "bookings", "ritz", `{"PRICE":4}`, 3_000)
	if want := []out{hotelOut("ritz", 0, 3, "7.0", 3_000)}; !cmp.Equal(want, got) {
		t.Errorf("after restart: %v, want %v", got, want)
	}
}
