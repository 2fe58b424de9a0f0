package engine_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
)

// TestPullKeyRange answers pull queries whose WHERE bounds an INT key
// (negative and positive keys, so the range crosses the sign, where the
// state encoding's bytes wrap), a STRING key of several lengths and a
// DOUBLE group key from the store by key range: the exact rows in ascending key order, and the store
// entries read (RowStream.KeysRead) only those in range. With
// ksql.query.pull.range.scan.enabled=false the same rows come from a
// scan of every key, in the store's order.
func TestPullKeyRange(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE SOURCE TABLE nums (id INT PRIMARY KEY, v VARCHAR) WITH (KAFKA_TOPIC='nums', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE STREAM pts (id INT KEY, d DOUBLE) WITH (KAFKA_TOPIC='pts', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE per_d AS SELECT d, COUNT(*) AS n FROM pts GROUP BY d;
		CREATE SOURCE TABLE words (w VARCHAR PRIMARY KEY, n INT) WITH (KAFKA_TOPIC='words', VALUE_FORMAT='JSON', PARTITIONS=1);`)
	for i, w := range []string{"a", "b", "ba", "bz", "c", "cat", "d", "dog", "zebra", "bb", "", "b0"} {
		if _, err := e.Memory().Send(exec.Record{Topic: "words", Key: []byte(w), Value: fmt.Appendf(nil, `{"N":%d}`, i), Timestamp: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for id := int32(-6); id < 14; id++ {
		key := binary.BigEndian.AppendUint32(nil, uint32(id))
		if _, err := e.Memory().Send(exec.Record{Topic: "nums", Key: key, Value: fmt.Appendf(nil, `{"V":"v%d"}`, id), Timestamp: int64(100 + id)}); err != nil {
			t.Fatal(err)
		}
	}
	for i, d := range []float64{-2.5, -1, -0.5, 0, 0.5, 1, 2.5, 3, -2.5} {
		key := binary.BigEndian.AppendUint32(nil, uint32(i))
		if _, err := e.Memory().Send(exec.Record{Topic: "pts", Key: key, Value: fmt.Appendf(nil, `{"D":%g}`, d), Timestamp: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// EXPLAIN shows the range read and the rule that chose it.
	d, ok := execute(t, e, "EXPLAIN SELECT id, v FROM nums WHERE id >= -2 AND id < 3;")[0].Entity.(*engine.QueryDescription)
	if !ok {
		t.Fatal("EXPLAIN gave no query description")
	}
	for _, want := range []string{"└─ store range NUMS (key1 in [-2, 3))\nRules applied: key-range\n", "├─ store range NUMS (key1 in [-2, 3), from state store CST_NUMS-Materialize, as of its last commit)\n"} {
		if !strings.Contains(d.Topology, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, d.Topology)
		}
	}
	for _, tt := range []struct {
		sql, props, want string
		keysRead         int64
	}{
		{"SELECT id, v FROM nums WHERE id >= -2 AND id < 3;", "", "ID V\n-2 v-2\n-1 v-1\n0 v0\n1 v1\n2 v2", 5},
		{"SELECT id, v FROM nums WHERE id BETWEEN -1 AND 1;", "", "ID V\n-1 v-1\n0 v0\n1 v1", 3},
		{"SELECT id FROM nums WHERE 10 < id;", "", "ID\n11\n12\n13", 3},
		{"SELECT id FROM nums WHERE id <= -5;", "", "ID\n-6\n-5", 2},
		{"SELECT id FROM nums WHERE id > 2 AND id < 5 AND v <> 'v3';", "", "ID\n4", 2},
		{"SELECT id FROM nums WHERE id > 20;", "", "ID", 0},
		// Key lookups joined by OR read those keys; OR with a range
		// is a scan.
		{"SELECT id FROM nums WHERE id = 7 OR id IN (-3, 7, 12);", "", "ID\n7\n-3\n12", 3},
		{"SELECT id FROM nums WHERE id = 7 OR id > 12;", "", "ID\n7\n13", 20},
		// A scan reads the store in its byte order: two's complement puts
		// the negative keys last.
		{"SELECT id, v FROM nums WHERE id >= -2 AND id < 3;", "false", "ID V\n0 v0\n1 v1\n2 v2\n-2 v-2\n-1 v-1", 20},
		// STRING: one run per key length present (lengths 0, 1, 2, 3
		// and 5), each found by one seek that reads one key.
		{"SELECT w, n FROM words WHERE w BETWEEN 'b' AND 'ca';", "", "W N\nb 1\nb0 11\nba 2\nbb 9\nbz 3\nc 4", 6 + 5},
		// An exclusive bound is read inclusively ('d', 'b': one key
		// more) and WHERE drops it.
		{"SELECT w FROM words WHERE w > 'd';", "", "W\ndog\nzebra", 3 + 5},
		{"SELECT w FROM words WHERE w < 'b';", "", "W\n\na", 3 + 5},
		{"SELECT d, n FROM per_d WHERE d >= -1 AND d <= 2.5;", "", "D N\n-1 1\n-0.5 1\n0 1\n0.5 1\n1 1\n2.5 1", 6},
		// An exclusive DOUBLE bound is read inclusively (one more key)
		// and WHERE drops it.
		{"SELECT d, n FROM per_d WHERE d < 0;", "", "D N\n-2.5 2\n-1 1\n-0.5 1", 4},
	} {
		t.Run(tt.sql+tt.props, func(t *testing.T) {
			if tt.props != "" {
				execute(t, e, "SET 'ksql.query.pull.range.scan.enabled'='"+tt.props+"';")
				defer execute(t, e, "UNSET 'ksql.query.pull.range.scan.enabled';")
			}
			rs := execute(t, e, tt.sql)[0].Rows
			if rs == nil || !rs.Pull {
				t.Fatalf("not answered as a pull query")
			}
			if got := rowsText(rs); got != tt.want {
				t.Errorf("rows:\n%s\nwant:\n%s", got, tt.want)
			}
			if rs.KeysRead != tt.keysRead {
				t.Errorf("keys read %d, want %d", rs.KeysRead, tt.keysRead)
			}
		})
	}
}

// TestPullWindowBounds answers pull queries bounding a windowed table's
// WINDOWSTART and WINDOWEND from the store by ranges of window start: a
// TUMBLING table's windows (start first in the store) with and without
// a key, and one key's SESSION windows (key first); the rows exact and
// the store entries read only the windows in bounds.
func TestPullWindowBounds(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE STREAM clicks (id INT KEY, x INT) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE per_w AS SELECT id, COUNT(*) AS n FROM clicks WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY id;
		CREATE TABLE per_s AS SELECT id, COUNT(*) AS n FROM clicks WINDOW SESSION (5 SECONDS) GROUP BY id;`)
	for _, c := range []struct {
		id int32
		ts int64
	}{{1, 1000}, {2, 1000}, {1, 2000}, {1, 11000}, {1, 21000}, {2, 21000}, {1, 31000}} {
		key := binary.BigEndian.AppendUint32(nil, uint32(c.id))
		if _, err := e.Memory().Send(exec.Record{Topic: "clicks", Key: key, Value: []byte(`{"X":1}`), Timestamp: c.ts}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		sql, want string
		keysRead  int64
	}{
		{"SELECT id, WINDOWSTART, n FROM per_w WHERE WINDOWSTART >= 10000 AND WINDOWSTART < 30000;", "ID WINDOWSTART N\n1 10000 1\n1 20000 1\n2 20000 1", 3},
		{"SELECT id, WINDOWSTART, n FROM per_w WHERE id = 1 AND WINDOWEND <= 20000;", "ID WINDOWSTART N\n1 0 2\n1 10000 1", 3},
		{"SELECT id, WINDOWSTART, n FROM per_w WHERE WINDOWSTART BETWEEN 30000 AND 40000;", "ID WINDOWSTART N\n1 30000 1", 1},
		{"SELECT id, WINDOWSTART, n FROM per_w;", "ID WINDOWSTART N\n1 0 2\n2 0 1\n1 10000 1\n1 20000 1\n2 20000 1\n1 30000 1", 6},
		{"SELECT id, WINDOWSTART, WINDOWEND, n FROM per_s WHERE id = 1 AND WINDOWSTART > 5000;", "ID WINDOWSTART WINDOWEND N\n1 11000 11000 1\n1 21000 21000 1\n1 31000 31000 1", 3},
		{"SELECT id, WINDOWSTART, WINDOWEND, n FROM per_s WHERE id = 1 AND WINDOWSTART >= 0 AND WINDOWEND < 12000;", "ID WINDOWSTART WINDOWEND N\n1 1000 2000 2\n1 11000 11000 1", 2},
	} {
		t.Run(tt.sql, func(t *testing.T) {
			rs := execute(t, e, tt.sql)[0].Rows
			if rs == nil || !rs.Pull {
				t.Fatalf("not answered as a pull query")
			}
			if got := rowsText(rs); got != tt.want {
				t.Errorf("rows:\n%s\nwant:\n%s", got, tt.want)
			}
			if rs.KeysRead != tt.keysRead {
				t.Errorf("keys read %d, want %d", rs.KeysRead, tt.keysRead)
			}
		})
	}
}

// TestPullSlicedWindows answers pull queries on a HOPPING EMIT FINAL
// table, whose store keeps slices of the advance rather than windows: a
// window's row is the merge of its slices, the windows closed by stream
// time (emitted, their first slice deleted) are not the table's, and
// WINDOWSTART and WINDOWEND bounds read the slices the windows in bounds
// span.
func TestPullSlicedWindows(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	created := execute(t, e, `
		CREATE STREAM clicks (id INT KEY, x INT) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE per_h AS SELECT id, COUNT(*) AS n, SUM(x) AS s FROM clicks
			WINDOW HOPPING (SIZE 10 SECONDS, ADVANCE BY 5 SECONDS, GRACE PERIOD 20 SECONDS) GROUP BY id EMIT FINAL;`)
	plan := shown(execute(t, e, "EXPLAIN "+created[1].Query.ID+";")[0])
	if !strings.Contains(plan, "sliced by 5s") {
		t.Fatalf("the table's aggregation is not sliced:\n%s", plan)
	}
	for i, c := range []struct {
		id int32
		ts int64
	}{{1, 1000}, {2, 1000}, {1, 2000}, {1, 6000}, {1, 11000}, {1, 13000}, {1, 17000}, {1, 21000}, {2, 21000}, {1, 31000}} {
		key := binary.BigEndian.AppendUint32(nil, uint32(c.id))
		if _, err := e.Memory().Send(exec.Record{Topic: "clicks", Key: key, Value: fmt.Appendf(nil, `{"X":%d}`, i+1), Timestamp: c.ts}); err != nil {
			t.Fatal(err)
		}
	}
	// Stream time 31000 closed the window starting at 0 (end 10000 plus
	// 20 s of grace); the others are open. The window at 0 must not come
	// back from the slice at 5000 it held, which open windows still read.
	for _, tt := range []struct{ sql, want string }{
		{"SELECT id, WINDOWSTART, n, s FROM per_h;", "ID WINDOWSTART N S\n1 5000 3 15\n1 10000 3 18\n1 15000 2 15\n2 15000 1 9\n1 20000 1 8\n2 20000 1 9\n1 25000 1 10\n1 30000 1 10"},
		{"SELECT id, WINDOWSTART, n FROM per_h WHERE WINDOWSTART >= 10000 AND WINDOWSTART < 20000;", "ID WINDOWSTART N\n1 10000 3\n1 15000 2\n2 15000 1"},
		{"SELECT id, WINDOWSTART, WINDOWEND, n FROM per_h WHERE id = 1 AND WINDOWEND <= 25000;", "ID WINDOWSTART WINDOWEND N\n1 5000 15000 3\n1 10000 20000 3\n1 15000 25000 2"},
		{"SELECT id, WINDOWSTART, n FROM per_h WHERE WINDOWSTART = 0;", "ID WINDOWSTART N"},
	} {
		t.Run(tt.sql, func(t *testing.T) {
			rs := execute(t, e, tt.sql)[0].Rows
			if rs == nil || !rs.Pull {
				t.Fatalf("not answered as a pull query")
			}
			if got := rowsText(rs); got != tt.want {
				t.Errorf("rows:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
