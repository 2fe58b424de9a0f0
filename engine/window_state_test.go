package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
)

// TestWindowStateStaysFlat runs every window kind over 100 windows of
// data (three keys, one record a second each, one in five late by up to
// 20 s) and samples the query's committed state every ten windows: the
// open windows never exceed what retention allows, and the bytes held at
// the end are no more than after the first twenty windows.
func TestWindowStateStaysFlat(t *testing.T) {
	const keys, windows, size = 3, 100, 10_000 // size in ms
	cases := []struct {
		name, window, emit string
		// maxEntries bounds the windows kept at any time, over all keys.
		maxEntries int64
	}{
		// Windows live size + retention (30 s) after they start: ≤ 5 per key.
		{"tumbling changes", "TUMBLING (SIZE 10 SECONDS, RETENTION 30 SECONDS, GRACE PERIOD 5 SECONDS)", "CHANGES", keys * 5},
		// Open until end + grace: ≤ 3 per key.
		{"tumbling final", "TUMBLING (SIZE 10 SECONDS, GRACE PERIOD 5 SECONDS)", "FINAL", keys * 3},
		// Starts every 5 s, each kept 40 s after it starts: ≤ 9 per key.
		{"hopping changes", "HOPPING (SIZE 10 SECONDS, ADVANCE BY 5 SECONDS, RETENTION 30 SECONDS, GRACE PERIOD 5 SECONDS)", "CHANGES", keys * 9},
		{"hopping final", "HOPPING (SIZE 10 SECONDS, ADVANCE BY 5 SECONDS, GRACE PERIOD 5 SECONDS)", "FINAL", keys * 5},
		// Records a second apart never leave a 2 s gap: one growing
		// session per key, plus sessions that late records start.
		{"session changes", "SESSION (2 SECONDS, RETENTION 30 SECONDS, GRACE PERIOD 5 SECONDS)", "CHANGES", keys * 40},
		{"session final", "SESSION (2 SECONDS, GRACE PERIOD 5 SECONDS)", "FINAL", keys * 40},
		// Up to two windows per record; records kept size + grace.
		{"sliding changes", "SLIDING (SIZE 10 SECONDS, RETENTION 30 SECONDS, GRACE PERIOD 5 SECONDS)", "CHANGES", keys * 2 * 40},
		{"sliding final", "SLIDING (SIZE 10 SECONDS, GRACE PERIOD 5 SECONDS)", "FINAL", keys * 2 * 15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			execute(t, e, fmt.Sprintf(`
				CREATE STREAM ev (k VARCHAR KEY, v BIGINT) WITH (KAFKA_TOPIC='ev', VALUE_FORMAT='JSON');
				CREATE TABLE agg AS SELECT k, COUNT(*) AS n, SUM(v) AS s FROM ev WINDOW %s GROUP BY k EMIT %s;`, c.window, c.emit))
			qid := e.Queries()[0].ID
			r := rand.New(rand.NewPCG(7, 7))
			var samples []engine.StoreState
			for sec := int64(0); sec < windows*size/1000; sec++ {
				for k := range keys {
					ts := sec * 1000
					if r.IntN(5) == 0 {
						ts = max(0, ts-r.Int64N(20_000))
					}
					rec := exec.Record{Topic: "ev", Key: fmt.Appendf(nil, "k%d", k), Value: fmt.Appendf(nil, `{"v":%d}`, sec), Timestamp: ts}
					if _, err := e.Memory().Send(rec); err != nil {
						t.Fatal(err)
					}
				}
				if (sec+1)%(10*size/1000) == 0 {
					st, err := e.QueryState(qid)
					if err != nil || len(st) != 1 {
						t.Fatalf("QueryState: %v %v", st, err)
					}
					if st[0].Entries > c.maxEntries {
						t.Fatalf("after %ds: %d windows open, more than %d", sec+1, st[0].Entries, c.maxEntries)
					}
					samples = append(samples, st[0])
				}
			}
			first, last := samples[1], samples[len(samples)-1]
			if last.Bytes > first.Bytes*3/2 {
				t.Errorf("state grew from %d bytes (20 windows) to %d (100 windows): %+v", first.Bytes, last.Bytes, samples)
			}
			if first.Entries == 0 || last.Entries == 0 {
				t.Errorf("no windows counted: %+v", samples)
			}
		})
	}
}
