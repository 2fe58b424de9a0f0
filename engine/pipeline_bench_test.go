package engine_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
)

// discard is an Output that counts what a task produces.
type discard struct{ n int }

func (d *discard) Produce(*exec.Record) { d.n++ }

// nexmarkBid is a ~200-byte Nexmark bid as the bench harness writes it.
func nexmarkBid(i int) []byte {
	return fmt.Appendf(nil, `{"auction":%d,"bidder":%d,"price":%d,"channel":"channel-%d","url":"https://www.nexmark.com/item.htm?query=1&channel_id=%d","dateTime":%d,"extra":"%s"}`,
		1000+i%997, 2000+i%1301, 100+i%9000, i%10, i%1000, 1_700_000_000_000+int64(i)*10, "padpadpadpadpadpadpadpadpadpadpadpad")
}

// BenchmarkPipeline runs the Nexmark bid queries the bench harness uses
// through a real task (decode, operators, encode), without Kafka: the
// per-record cost of the engine itself, allocations included.
func BenchmarkPipeline(b *testing.B) {
	for _, tc := range []struct{ name, sql string }{
		{"q0", "CREATE STREAM OUT AS SELECT * FROM BIDS;"},
		{"q1", "CREATE STREAM OUT AS SELECT auction, bidder, CAST(price AS DOUBLE) * 0.908 AS price, dateTime FROM BIDS;"},
		{"q2", "CREATE STREAM OUT AS SELECT * FROM BIDS WHERE auction % 123 = 0;"},
		{"agg", "CREATE TABLE OUT AS SELECT auction, COUNT(*) AS n, SUM(price) AS total FROM BIDS WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY auction EMIT CHANGES;"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cat := planner.NewCatalog()
			ddl, err := parser.ParseOne(`CREATE STREAM BIDS (auction BIGINT KEY, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime BIGINT, extra STRING)
				WITH (KAFKA_TOPIC='bids', VALUE_FORMAT='JSON', TIMESTAMP='dateTime', PARTITIONS=1);`)
			if err != nil {
				b.Fatal(err)
			}
			src, err := planner.CreateSource(cat, ddl.(*parser.CreateSource), "")
			if err != nil {
				b.Fatal(err)
			}
			if err := cat.Add(src, false); err != nil {
				b.Fatal(err)
			}
			st, err := parser.ParseOne(tc.sql)
			if err != nil {
				b.Fatal(err)
			}
			cs := st.(*parser.CreateSource)
			props, _ := planner.PropsOf(cs.With)
			q, err := planner.PlanQuery(cat, cs.Query, &planner.Target{Name: cs.Name, Kind: cs.Kind, With: props, Text: tc.sql}, "BENCH", planner.Options{ServiceID: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			db, err := state.Open(state.Options{Dir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			// One sub-topology: the bids are keyed by auction, so the
			// aggregation needs no repartition.
			if len(q.Topology.Subs) != 1 {
				b.Fatalf("%d sub-topologies, want 1", len(q.Topology.Subs))
			}
			sub := q.Topology.Subs[0]
			out := &discard{}
			task, err := exec.NewTask(q.Topology, sub, 0, db, out, &exec.Metrics{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				b.Fatal(err)
			}
			if err := task.Open(); err != nil {
				b.Fatal(err)
			}
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
		})
	}
}
