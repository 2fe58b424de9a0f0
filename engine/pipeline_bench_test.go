package engine_test

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testudf"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/udf"
)

// discard is an Output that counts what a task produces.
type discard struct{ n int }

func (d *discard) Produce(*exec.Record) { d.n++ }

// nexmarkBid is a ~200-byte Nexmark bid as the bench harness writes it.
func nexmarkBid(i int) []byte {
	return fmt.Appendf(nil, `{"auction":%d,"bidder":%d,"price":%d,"channel":"channel-%d","url":"https://www.nexmark.com/item.htm?query=1&channel_id=%d","dateTime":%d,"extra":"%s"}`,
		1000+i%997, 2000+i%1301, 100+i%9000, i%10, i%1000, 1_700_000_000_000+int64(i)*10, "padpadpadpadpadpadpadpadpadpadpadpad")
}

// bidsDDL is the bids stream of the pipeline benchmark, keyed by auction.
const bidsDDL = `CREATE STREAM BIDS (auction BIGINT KEY, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime BIGINT, extra STRING)
	WITH (KAFKA_TOPIC='bids', VALUE_FORMAT='JSON', TIMESTAMP='dateTime', PARTITIONS=1);`

// planTask plans sql over the source ddl creates and opens the task of
// its one sub-topology for partition 0, writing to out; noCopy sends
// every record through the operator chain.
func planTask(tb testing.TB, ddl, sql string, noCopy bool, out exec.Output) (*exec.Task, *exec.SubTopology) {
	tb.Helper()
	return planTaskWith(tb, ddl, sql, noCopy, planner.Options{ServiceID: "bench"}, out, nil)
}

// planTaskWith is planTask with planning options and a hook that adds to
// the catalog before the query is planned.
func planTaskWith(tb testing.TB, ddl, sql string, noCopy bool, opts planner.Options, out exec.Output, prepare func(*planner.Catalog)) (*exec.Task, *exec.SubTopology) {
	tb.Helper()
	cat := planner.NewCatalog()
	st, err := parser.ParseOne(ddl)
	if err != nil {
		tb.Fatal(err)
	}
	src, err := planner.CreateSource(cat, st.(*parser.CreateSource), "")
	if err != nil {
		tb.Fatal(err)
	}
	if err := cat.Add(src, false); err != nil {
		tb.Fatal(err)
	}
	if st, err = parser.ParseOne(sql); err != nil {
		tb.Fatal(err)
	}
	cs := st.(*parser.CreateSource)
	props, _ := planner.PropsOf(cs.With)
	if prepare != nil {
		prepare(cat)
	}
	q, err := planner.PlanQuery(cat, cs.Query, &planner.Target{Name: cs.Name, Kind: cs.Kind, With: props, Text: sql}, "BENCH", opts)
	if err != nil {
		tb.Fatal(err)
	}
	q.Topology.NoCopy = noCopy
	db, err := state.Open(state.Options{Dir: tb.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	// One sub-topology: the bids are keyed by auction, so even the
	// aggregation needs no repartition.
	if len(q.Topology.Subs) != 1 {
		tb.Fatalf("%d sub-topologies, want 1", len(q.Topology.Subs))
	}
	sub := q.Topology.Subs[0]
	task, err := exec.NewTask(q.Topology, sub, 0, db, out, &exec.Metrics{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	if err := task.Open(); err != nil {
		tb.Fatal(err)
	}
	return task, sub
}

// BenchmarkPipeline runs the Nexmark bid queries the bench harness uses
// through a real task (decode, operators, encode), without Kafka: the
// per-record cost of the engine itself, allocations included.
func BenchmarkPipeline(b *testing.B) {
	for _, tc := range []struct {
		name, sql string
		noCopy    bool
	}{
		{"q0", "CREATE STREAM OUT AS SELECT * FROM BIDS;", false},
		// q0 with every record through decode, projection and encode, as
		// before the task learned to copy a plain selection's text.
		{"q0-chain", "CREATE STREAM OUT AS SELECT * FROM BIDS;", true},
		{"q1", "CREATE STREAM OUT AS SELECT auction, bidder, CAST(price AS DOUBLE) * 0.908 AS price, dateTime FROM BIDS;", false},
		{"q2", "CREATE STREAM OUT AS SELECT * FROM BIDS WHERE auction % 123 = 0;", false},
		{"agg", "CREATE TABLE OUT AS SELECT auction, COUNT(*) AS n, SUM(price) AS total FROM BIDS WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY auction EMIT CHANGES;", false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			out := &discard{}
			task, sub := planTask(b, bidsDDL, tc.sql, tc.noCopy, out)
			recs := make([]exec.Record, 4096)
			for i := range recs {
				v := nexmarkBid(i)
				key := binary.BigEndian.AppendUint64(nil, uint64(1000+i%997)) // KAFKA BIGINT
				recs[i] = exec.Record{Topic: sub.Source.Topic, Key: key, Value: v, Timestamp: 1_700_000_000_000 + int64(i)*10}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r := recs[i%len(recs)]
				r.Offset = int64(i)
				if err := task.Process(&r); err != nil {
					b.Fatal(err)
				}
				i++
				if i%len(recs) == 0 {
					task.FlushBatch() // as a runner does after each poll
				}
			}
			if out.n == 0 {
				b.Fatal("the query produced nothing")
			}
			if copied := task.Copied(); (copied > 0) == (tc.noCopy || tc.name == "agg") {
				b.Fatalf("%d records copied", copied)
			}
		})
	}
}

// BenchmarkPipelineUDF is q1 with its conversion done by the built-in
// arithmetic, by a WebAssembly function (udf/testdata/gofuncs's to_euro,
// built from source) and by a JavaScript one (TO_EURO_JS, the same
// arithmetic), in the same run: with the default time limit per call and
// without one (sluice.udf.timeout=0).
func BenchmarkPipelineUDF(b *testing.B) {
	module := base64.StdEncoding.EncodeToString(testudf.GoModule(b))
	for _, tc := range []struct {
		name, sql string
		limits    udf.Limits
	}{
		{"q1-builtin", "CREATE STREAM OUT AS SELECT auction, bidder, CAST(price AS DOUBLE) * 0.908 AS price, dateTime FROM BIDS;", udf.Limits{}},
		{"q1-wasm", "CREATE STREAM OUT AS SELECT auction, bidder, TO_EURO(price) AS price, dateTime FROM BIDS;",
			udf.Limits{Timeout: udf.DefaultTimeout, MemoryBytes: udf.DefaultMemoryBytes}},
		{"q1-wasm-no-timeout", "CREATE STREAM OUT AS SELECT auction, bidder, TO_EURO(price) AS price, dateTime FROM BIDS;",
			udf.Limits{MemoryBytes: udf.DefaultMemoryBytes}},
		{"q1-js", "CREATE STREAM OUT AS SELECT auction, bidder, TO_EURO_JS(price) AS price, dateTime FROM BIDS;",
			udf.Limits{Timeout: udf.DefaultTimeout, MemoryBytes: udf.DefaultMemoryBytes}},
		{"q1-js-no-timeout", "CREATE STREAM OUT AS SELECT auction, bidder, TO_EURO_JS(price) AS price, dateTime FROM BIDS;",
			udf.Limits{MemoryBytes: udf.DefaultMemoryBytes}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			out := &discard{}
			task, sub := planTaskWith(b, bidsDDL, tc.sql, false, planner.Options{ServiceID: "bench", UDFLimits: tc.limits}, out, func(cat *planner.Catalog) {
				for _, create := range []string{
					"CREATE FUNCTION to_euro(price BIGINT) RETURNS DOUBLE DETERMINISTIC LANGUAGE WASM WITH (MODULE='" + module + "', EXPORT='to_euro')",
					"CREATE FUNCTION to_euro_js(price BIGINT) RETURNS DOUBLE DETERMINISTIC LANGUAGE JAVASCRIPT AS $$ return price * 0.908; $$",
				} {
					st, err := parser.ParseOne(create)
					if err != nil {
						b.Fatal(err)
					}
					f, err := planner.CreateFunction(b.Context(), cat, st.(*parser.CreateFunction))
					if err != nil {
						b.Fatal(err)
					}
					cat.RegisterFunction(f)
				}
				b.Cleanup(func() { cat.CloseFunctions() })
			})
			recs := make([]exec.Record, 4096)
			for i := range recs {
				key := binary.BigEndian.AppendUint64(nil, uint64(1000+i%997))
				recs[i] = exec.Record{Topic: sub.Source.Topic, Key: key, Value: nexmarkBid(i), Timestamp: 1_700_000_000_000 + int64(i)*10}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r := recs[i%len(recs)]
				r.Offset = int64(i)
				if err := task.Process(&r); err != nil {
					b.Fatal(err)
				}
				i++
				if i%len(recs) == 0 {
					task.FlushBatch()
				}
			}
			if out.n != i {
				b.Fatalf("%d records in, %d out", i, out.n)
			}
		})
	}
}
