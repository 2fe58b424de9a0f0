package engine_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/broker"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestBrokerOutage stops the broker under a running aggregation and
// starts it again on the same address and data: the query waits, then
// resumes, and the totals are exact. It always uses its own embedded
// broker, even when SLUICE_TEST_BROKERS names a cluster, because it must
// stop and restart the broker.
func TestBrokerOutage(t *testing.T) {
	dataDir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	b, err := broker.Start(broker.Config{Listen: addr, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			b.Close()
		}
	}()
	in, out, svc := testkafka.Name(t, "pings"), testkafka.Name(t, "per_host"), testkafka.Name(t, "svc")
	e := openEngine(t, addr, t.TempDir(), svc)
	defer func() { _ = e.Close() }()
	res := execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (host VARCHAR KEY, ms BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);
		CREATE TABLE %[2]s AS SELECT host, COUNT(*) AS n, SUM(ms) AS total FROM %[1]s GROUP BY host;`, in, out))
	q := res[1].Query
	batch := func(from, n int) []*kgo.Record {
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			recs = append(recs, rec(in, fmt.Sprintf("h%d", i%3), fmt.Sprintf(`{"ms":%d}`, i), time.Now().UnixMilli()))
		}
		return recs
	}
	testkafka.Produce(t, addr, batch(0, 300)...)
	testkafka.Await(t, 30*time.Second, "first batch aggregated", func() bool { return q.Metrics.RecordsOut.Load() >= 300 })

	b.Close()
	stopped = true
	b, err = broker.Start(broker.Config{Listen: addr, DataDir: dataDir})
	if err != nil {
		t.Fatalf("restart broker: %v", err)
	}
	stopped = false
	testkafka.Produce(t, addr, batch(300, 300)...)
	testkafka.Await(t, 60*time.Second, "second batch aggregated", func() bool { return q.Metrics.RecordsOut.Load() >= 600 })
	if err := q.Err(); err != nil {
		t.Fatalf("query failed during the outage: %v", err)
	}
	closeEngine(t, e)
	got := latestTotals(t, addr, out)
	for h := 0; h < 3; h++ {
		var n, total int64
		for i := h; i < 600; i += 3 {
			n++
			total += int64(i)
		}
		g := got[fmt.Sprintf("h%d", h)]
		if g["N"] != float64(n) || g["TOTAL"] != float64(total) {
			t.Errorf("h%d = %v, want N %d TOTAL %d", h, g, n, total)
		}
	}
}
