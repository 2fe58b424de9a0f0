package engine_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// udafTimeout raises the time limit of the queries' calls far above the
// default: on a loaded machine a call may wait for a CPU longer than
// 100 ms, and a timeout would make its record a bad record.
const udafTimeout = "SET 'sluice.udf.timeout'='10s';\n"

// udafStatements creates the test module's aggregate functions (see
// udf/testdata/gofuncs/aggregates.go): MEAN keeps a STRUCT, SUMSQ a
// BIGINT (and traps on 13), TRAIL a STRING and joins merged sessions'
// trails with "|".
func udafStatements(goPath string) string {
	return udafTimeout + fmt.Sprintf(`
		CREATE AGGREGATE FUNCTION mean(x BIGINT) RETURNS DOUBLE DETERMINISTIC LANGUAGE WASM
		  WITH (PATH='%[1]s', INTERMEDIATE='STRUCT<SUM BIGINT, N BIGINT>', EXPORT='mean');
		CREATE AGGREGATE FUNCTION sumsq(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM
		  WITH (PATH='%[1]s', INTERMEDIATE='BIGINT', EXPORT='sumsq');
		CREATE AGGREGATE FUNCTION trail(s STRING) RETURNS STRING DETERMINISTIC LANGUAGE WASM
		  WITH (PATH='%[1]s', INTERMEDIATE='STRING', INIT='trail_init', ACCUMULATE='trail_accumulate', MERGE='trail_merge', RESULT='trail_result');`, goPath)
}

// TestWasmAggregateWindowed runs user-defined aggregates beside built-in
// ones in a tumbling window under exactly-once, with a record SUMSQ traps
// on (a bad record: no aggregate of its window takes it, COUNT neither);
// the changelog holds each window's states as a built-in's; a restart
// with an empty data directory rebuilds them from it and carries on
// exactly. A hopping window with EMIT FINAL runs alongside.
func TestWasmAggregateWindowed(t *testing.T) {
	brokers := testkafka.Brokers(t)
	goPath, _ := writeModules(t)
	in, out, final, errs := testkafka.Name(t, "udaf_in"), testkafka.Name(t, "udaf_5m"), testkafka.Name(t, "udaf_final"), testkafka.Name(t, "udaf_dlq")
	svc := testkafka.Name(t, "svc")
	sql := udafTimeout + fmt.Sprintf(`
		CREATE STREAM %[1]s (hotel VARCHAR KEY, price BIGINT, booked_at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='booked_at', PARTITIONS=1);
		CREATE TABLE %[2]s WITH (ERROR_TOPIC='%[4]s') AS
		  SELECT hotel, COUNT(*) AS n, MEAN(price) AS mean, SUMSQ(price) AS sq, SUM(price) AS total
		  FROM %[1]s WINDOW TUMBLING 5m GRACE 2m GROUP BY hotel EMIT CHANGES;
		CREATE TABLE %[3]s AS
		  SELECT hotel, SUMSQ(price) AS sq, MEAN(price) AS mean
		  FROM %[1]s WINDOW HOPPING (SIZE 10 MINUTES, ADVANCE BY 5 MINUTES, GRACE PERIOD 0 MINUTES) GROUP BY hotel EMIT FINAL;`, in, out, final, errs)
	const m = 60_000
	v := func(price, at int64) string { return fmt.Sprintf(`{"price":%d,"booked_at":%d}`, price, at) }
	var logs syncBuffer
	open := func(first bool) *engine.Engine {
		cfg := testConfig(brokers, t.TempDir(), svc, slog.New(slog.NewTextHandler(&logs, nil)), "processing.guarantee", "exactly_once")
		cfg.CommandTopic = true // the restart replays the functions and queries
		e := openConfig(t, cfg)
		if first {
			res := execute(t, e, udafStatements(goPath))
			if got, want := res[1].Message, "Created aggregate function MEAN(X BIGINT) RETURNS DOUBLE"; got != want {
				t.Errorf("CREATE AGGREGATE FUNCTION: %q, want %q", got, want)
			}
			execute(t, e, sql)
		}
		return e
	}
	e := open(true)
	q := queryByID(t, e, "CTAS_"+strings.ToUpper(out))
	testkafka.Produce(t, brokers,
		rec(in, "ritz", v(2, 0*m), 1),
		rec(in, "savoy", v(10, 1*m), 2),
		rec(in, "ritz", v(13, 2*m), 3), // SUMSQ traps: a bad record
		rec(in, "ritz", v(4, 4*m), 4),
		rec(in, "ritz", v(3, 6*m), 5),
		rec(in, "savoy", v(20, 3*m), 6),
	)
	testkafka.Await(t, 30*time.Second, "5 results", func() bool { return q.Metrics.RecordsOut.Load() >= 5 })
	testkafka.Await(t, 30*time.Second, "1 function error", func() bool { return q.Metrics.Errors()["function"] == 1 })
	changelog := "_sluice-" + svc + "-query-" + q.ID + "-Aggregate-Materialize-changelog"
	closeEngine(t, e)

	// The changelog's last record per window is its state: maxTs, then
	// COUNT, MEAN's STRUCT, SUMSQ's BIGINT and SUM.
	state := map[string]string{}
	for _, r := range testkafka.ReadAll(t, brokers, changelog) {
		start := int64(binary.BigEndian.Uint64(r.Key[:8]) ^ (1 << 63))
		group, _, err := types.DecodeValues(r.Key[8:])
		if err != nil {
			t.Fatalf("changelog key %x: %v", r.Key, err)
		}
		maxTs, rest, err := types.DecodeValue(r.Value)
		if err != nil {
			t.Fatalf("changelog value %x: %v", r.Value, err)
		}
		accs, _, err := types.DecodeValues(rest)
		if err != nil {
			t.Fatalf("changelog value %x: %v", r.Value, err)
		}
		state[fmt.Sprintf("%v [%dm]", group[0], start/m)] = fmt.Sprintf("%v %v %v %v @%dm", accs[0], accs[1], accs[2], accs[3], maxTs.(int64)/m)
	}
	wantState := map[string]string{
		"ritz [0m]":  "2 [6 2] 20 6 @4m",
		"savoy [0m]": "2 [30 2] 500 30 @3m",
		"ritz [5m]":  "1 [3 1] 9 3 @6m",
	}
	if diff := cmp.Diff(wantState, state); diff != "" {
		t.Fatalf("window state in the changelog (-want +got):\n%s", diff)
	}
	var dead []*kgo.Record
	testkafka.Await(t, 30*time.Second, "the dead letter", func() bool {
		dead = testkafka.ReadAll(t, brokers, errs)
		return len(dead) >= 1
	})
	if len(dead) != 1 || string(dead[0].Key) != "ritz" || header(dead[0], "sluice.offset") != "2" ||
		!strings.HasPrefix(header(dead[0], "sluice.error"), "function SUMSQ: trap: accumulate: wasm error: unreachable") {
		t.Errorf("dead letters: %d, want the record at offset 2 with SUMSQ's trap", len(dead))
		for _, d := range dead {
			t.Logf("%s %s %s", d.Key, header(d, "sluice.offset"), header(d, "sluice.error"))
		}
	}
	failed := fmt.Sprintf(`msg="skipping record a function failed on" query=%s function=SUMSQ topic=%s partition=0 offset=2 `, q.ID, in)
	if n := strings.Count(logs.String(), "skipping record a function failed on\" query="+q.ID); n != 1 || !strings.Contains(logs.String(), failed) {
		t.Errorf("log: %d lines on the failing record, want one naming SUMSQ and %s/0@2:\n%s", n, in, logs.String())
	}

	// Empty data directory: the states come back from the changelog.
	e = open(false)
	q = queryByID(t, e, "CTAS_"+strings.ToUpper(out))
	testkafka.Produce(t, brokers,
		rec(in, "savoy", v(6, 2*m), 7), // [0,5m) is open until 7m
		rec(in, "ritz", v(5, 9*m), 8),
		rec(in, "ritz", v(1, 21*m), 9), // closes every window before [15m,25m) (EMIT FINAL)
	)
	testkafka.Await(t, 30*time.Second, "3 more results", func() bool { return q.Metrics.RecordsOut.Load() >= 3 })
	testkafka.Await(t, 30*time.Second, "3 records processed", func() bool { return q.Metrics.RecordsIn.Load() >= 3 })
	want := []windowedOutput{
		{"ritz", 0, `{"N":1,"MEAN":2.0,"SQ":4,"TOTAL":2}`, 0},
		{"savoy", 0, `{"N":1,"MEAN":10.0,"SQ":100,"TOTAL":10}`, 1 * m},
		{"ritz", 0, `{"N":2,"MEAN":3.0,"SQ":20,"TOTAL":6}`, 4 * m},
		{"ritz", 5 * m, `{"N":1,"MEAN":3.0,"SQ":9,"TOTAL":3}`, 6 * m},
		{"savoy", 0, `{"N":2,"MEAN":15.0,"SQ":500,"TOTAL":30}`, 3 * m},
		{"savoy", 0, `{"N":3,"MEAN":12.0,"SQ":536,"TOTAL":36}`, 3 * m},
		{"ritz", 5 * m, `{"N":2,"MEAN":4.0,"SQ":34,"TOTAL":8}`, 9 * m},
		{"ritz", 20 * m, `{"N":1,"MEAN":1.0,"SQ":1,"TOTAL":1}`, 21 * m},
	}
	testkafka.Await(t, 30*time.Second, "8 committed results", func() bool { return len(windowedOutputs(t, brokers, out)) >= 8 })
	if diff := cmp.Diff(want, windowedOutputs(t, brokers, out)); diff != "" {
		t.Errorf("tumbling outputs (-want +got):\n%s", diff)
	}
	// Hopping windows of 10m every 5m (none starts before 0), each
	// emitted once when it closes, states from before the restart
	// included; the record SUMSQ fails on is in none.
	wantFinal := []windowedOutput{
		{"ritz", 0, `{"SQ":54,"MEAN":3.5}`, 9 * m},
		{"savoy", 0, `{"SQ":536,"MEAN":12.0}`, 3 * m},
		{"ritz", 5 * m, `{"SQ":34,"MEAN":4.0}`, 9 * m},
	}
	testkafka.Await(t, 30*time.Second, "3 final windows", func() bool { return len(windowedOutputs(t, brokers, final)) >= 3 })
	if diff := cmp.Diff(wantFinal, windowedOutputs(t, brokers, final)); diff != "" {
		t.Errorf("hopping EMIT FINAL outputs (-want +got):\n%s", diff)
	}

	// A pull query reads the states and computes the results (the
	// windows before [20m,25m) are past their retention).
	pulled := pullRows(t, e, "SELECT hotel, WINDOWSTART, n, mean, sq, total FROM "+out+" WHERE hotel='ritz';")
	if diff := cmp.Diff([]string{"ritz1200000 1 1 1 1"}, pulled); diff != "" {
		t.Errorf("pull query (-want +got):\n%s", diff)
	}

	// SHOW FUNCTIONS and DESCRIBE FUNCTION say AGGREGATE.
	types := map[string]string{}
	for _, f := range execute(t, e, "SHOW FUNCTIONS;")[0].Entity.(*engine.FunctionList).Functions {
		if f.Category == engine.UserFunctionCategory {
			types[f.Name] = f.Type
		}
	}
	if diff := cmp.Diff(map[string]string{"MEAN": "AGGREGATE", "SUMSQ": "AGGREGATE", "TRAIL": "AGGREGATE"}, types); diff != "" {
		t.Errorf("SHOW FUNCTIONS (-want +got):\n%s", diff)
	}
	d := execute(t, e, "DESCRIBE FUNCTION trail;")[0].Entity.(*engine.FunctionDescription)
	if d.Type != "AGGREGATE" || len(d.Overloads) != 1 || d.Overloads[0].Signature() != "TRAIL(S STRING)" ||
		!strings.HasSuffix(d.Overloads[0].Origin, " init:trail_init accumulate:trail_accumulate merge:trail_merge result:trail_result intermediate:STRING") {
		t.Errorf("DESCRIBE FUNCTION: %s %d %+v", d.Type, len(d.Overloads), d.Overloads)
	}
	closeEngine(t, e)
}

func queryByID(t *testing.T, e *engine.Engine, id string) *engine.Query {
	t.Helper()
	for _, q := range e.Queries() {
		if q.ID == id {
			return q
		}
	}
	t.Fatalf("no query %s", id)
	return nil
}

// TestWasmAggregateSessionMerge: a record bridging two sessions merges
// their states through the function's MERGE (TRAIL joins them with
// "|"), earlier session first, then takes the record.
func TestWasmAggregateSessionMerge(t *testing.T) {
	brokers := testkafka.Brokers(t)
	goPath, _ := writeModules(t)
	in, out := testkafka.Name(t, "sess_in"), testkafka.Name(t, "sess_out")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	execute(t, e, udafStatements(goPath)+fmt.Sprintf(`
		CREATE STREAM %[1]s (user VARCHAR KEY, page STRING, at BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='at', PARTITIONS=1);
		CREATE TABLE %[2]s AS
		  SELECT user, TRAIL(page) AS pages, COUNT(*) AS n
		  FROM %[1]s WINDOW SESSION (2 MINUTES) GROUP BY user EMIT CHANGES;`, in, out))
	const m = 60_000
	v := func(page string, at int64) string { return fmt.Sprintf(`{"page":"%s","at":%d}`, page, at) }
	testkafka.Produce(t, brokers,
		rec(in, "ann", v("home", 0), 1),
		rec(in, "ann", v("cart", 3*m), 2),          // 3m after: a session of its own
		rec(in, "ann", `{"at":180001}`, 3),         // a NULL page, in the second session
		rec(in, "ann", v("search", 1*m+30_000), 4), // within 2m of both: they merge
	)
	type sessionOutput struct {
		Key        string
		Start, End int64
		Value      string
	}
	var got []sessionOutput
	testkafka.Await(t, 30*time.Second, "7 session records", func() bool {
		got = got[:0]
		for _, r := range testkafka.ReadAll(t, brokers, out) {
			k, start, end, err := format.DecodeSessionWindowedKey(r.Key)
			if err != nil {
				t.Fatalf("session key %x: %v", r.Key, err)
			}
			got = append(got, sessionOutput{string(k), start, end, string(r.Value)})
		}
		return len(got) >= 7
	})
	want := []sessionOutput{
		{"ann", 0, 0, `{"PAGES":"home","N":1}`},
		{"ann", 3 * m, 3 * m, `{"PAGES":"cart","N":1}`},
		{"ann", 3 * m, 3 * m, ``}, // its bounds change
		{"ann", 3 * m, 3*m + 1, `{"PAGES":"cart,~","N":2}`},
		{"ann", 0, 0, ``}, // both sessions retract; the merged one has every record
		{"ann", 3 * m, 3*m + 1, ``},
		{"ann", 0, 3*m + 1, `{"PAGES":"home|cart,~,search","N":4}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session outputs (-want +got):\n%s", diff)
	}

	// OR REPLACE makes version 2, whose RESULT shouts: the running query
	// keeps version 1, a query created afterwards gets version 2.
	res := execute(t, e, fmt.Sprintf(`CREATE OR REPLACE AGGREGATE FUNCTION trail(s STRING) RETURNS STRING DETERMINISTIC LANGUAGE WASM
		WITH (PATH='%s', INTERMEDIATE='STRING', EXPORT='trail', RESULT='shout');`, goPath))
	if got, want := res[0].Message, "Replaced (version 2) aggregate function TRAIL(S STRING) RETURNS STRING"; got != want {
		t.Errorf("OR REPLACE: %q, want %q", got, want)
	}
	out2 := testkafka.Name(t, "sess_out2")
	execute(t, e, udafTimeout+fmt.Sprintf(`CREATE TABLE %s AS SELECT user, TRAIL(page) AS pages FROM %s WINDOW SESSION (2 MINUTES) GROUP BY user EMIT CHANGES;`, out2, in))
	testkafka.Produce(t, brokers, rec(in, "bob", v("exit", 10*m), 5))
	if got := awaitOutputs(t, brokers, out, 8)[7].Value; got != `{"PAGES":"exit","N":1}` {
		t.Errorf("running query after OR REPLACE: %s, want version 1's result", got)
	}
	var pages []string
	for _, r := range awaitOutputs(t, brokers, out2, 8) {
		pages = append(pages, r.Value)
	}
	want2 := []string{`{"PAGES":"HOME!"}`, `{"PAGES":"CART!"}`, ``, `{"PAGES":"CART,~!"}`, ``, ``, `{"PAGES":"HOME|CART,~,SEARCH!"}`, `{"PAGES":"EXIT!"}`}
	if diff := cmp.Diff(want2, pages); diff != "" {
		t.Errorf("new query after OR REPLACE (-want +got):\n%s", diff)
	}
}

// TestWasmAggregateRefusals: what a user-defined aggregate cannot do is
// refused with the reason.
func TestWasmAggregateRefusals(t *testing.T) {
	brokers := testkafka.Brokers(t)
	goPath, _ := writeModules(t)
	in, tbl := testkafka.Name(t, "ref_in"), testkafka.Name(t, "ref_tbl")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	execute(t, e, udafStatements(goPath)+fmt.Sprintf(`
		CREATE STREAM %[1]s (k VARCHAR KEY, s STRING, x BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE %[2]s (k VARCHAR PRIMARY KEY, s STRING, x BIGINT) WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE FUNCTION plain(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM WITH (PATH='%[3]s', EXPORT='add_one');
		CREATE AGGREGATE FUNCTION moody(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%[3]s', INTERMEDIATE='BIGINT', EXPORT='sumsq');`, in, tbl, goPath))
	for stmt, want := range map[string]string{
		// No UNDO: a table's changes cannot be taken back out.
		"CREATE TABLE t1 AS SELECT s, TRAIL(s) AS t FROM " + tbl + " GROUP BY s;":                                                                              "The aggregation function TRAIL cannot be applied to a table source, only to a stream source.",
		"CREATE TABLE t2 AS SELECT k, TRAIL(s) FROM " + in + " WINDOW SLIDING (SIZE 1 MINUTE) GROUP BY k;":                                                     "the user-defined aggregate function TRAIL cannot be used with SLIDING windows",
		"CREATE TABLE t3 AS SELECT k, MOODY(x) FROM " + in + " GROUP BY k;":                                                                                    "Function 'MOODY' is not declared DETERMINISTIC",
		"CREATE TABLE t5 AS SELECT k, PLAIN(SUMSQ(x)) + 1 AS p FROM " + in + " GROUP BY k;":                                                                    "",
		"CREATE STREAM t6 AS SELECT k, SUMSQ(x) AS p FROM " + in + " PARTITION BY SUMSQ(x);":                                                                   "PARTITION BY with GROUP BY or aggregate functions",
		"SELECT k FROM " + in + " WHERE SUMSQ(x) > 1 EMIT CHANGES;":                                                                                            "aggregate function SUMSQ is not allowed here",
		"SELECT k, TRAIL(x) FROM " + in + " GROUP BY k EMIT CHANGES;":                                                                                          "Function 'TRAIL' does not accept parameters (BIGINT). Valid alternatives are: TRAIL(S STRING)",
		fmt.Sprintf("CREATE AGGREGATE FUNCTION plain(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%s', INTERMEDIATE='BIGINT', EXPORT='sumsq');", goPath): "Function 'PLAIN' already exists as a scalar function; an aggregate function cannot take its name (DROP FUNCTION PLAIN first)",
		fmt.Sprintf("CREATE FUNCTION trail(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%s', EXPORT='add_one');", goPath):                                "Function 'TRAIL' already exists as an aggregate function; a scalar function cannot take its name (DROP FUNCTION TRAIL first)",
		fmt.Sprintf("CREATE AGGREGATE FUNCTION a(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%s', EXPORT='sumsq');", goPath):                            "CREATE AGGREGATE FUNCTION needs INTERMEDIATE='<type>'",
		fmt.Sprintf("CREATE AGGREGATE FUNCTION a(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%s', INTERMEDIATE='STRUCT<', EXPORT='sumsq');", goPath):    "INTERMEDIATE: not a type: STRUCT<",
		fmt.Sprintf("CREATE AGGREGATE FUNCTION a(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%s', INTERMEDIATE='BIGINT', INIT='sumsq_init');", goPath):  "CREATE AGGREGATE FUNCTION needs EXPORT='<prefix>' (for <prefix>_init, <prefix>_accumulate, …) or ACCUMULATE, RESULT",
		fmt.Sprintf("CREATE AGGREGATE FUNCTION a(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%s', INTERMEDIATE='STRING', EXPORT='sumsq');", goPath):     `accumulate: invalid WebAssembly function: export "sumsq_accumulate" is (i64, i64, i64) -> (i64), the calling convention for (STRING, BIGINT) RETURNS STRING wants (i64, i32, i32, i64) -> (i64)`,
		fmt.Sprintf("CREATE AGGREGATE FUNCTION a(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%s', INTERMEDIATE='DOUBLE', EXPORT='sumsq');", goPath):     `init: invalid WebAssembly function: export "sumsq_init" is (i64) -> (i64), the calling convention for () RETURNS DOUBLE wants (i64) -> (f64)`,
	} {
		_, err := e.Execute(t.Context(), stmt)
		if want == "" {
			if err != nil {
				t.Errorf("%s\ngot %v, want it accepted", stmt, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\ngot %v\nwant %q", stmt, err, want)
		}
	}
	// A table aggregation whose functions all UNDO is accepted.
	if _, err := e.Execute(t.Context(), "CREATE TABLE t4 AS SELECT s, SUMSQ(x) AS sq, MEAN(x) AS m FROM "+tbl+" GROUP BY s;"); err != nil {
		t.Errorf("table aggregation with UNDO: %v", err)
	}
	if _, err := e.Execute(t.Context(), "DROP FUNCTION sumsq;"); !errors.Is(err, planner.ErrInvalid) {
		t.Errorf("DROP FUNCTION of an aggregate a query uses: %v", err)
	}
}

// TestWasmAggregateTable aggregates a TABLE with functions that UNDO: an
// update takes the row's old value out before the new one goes in, a
// delete takes it out.
func TestWasmAggregateTable(t *testing.T) {
	brokers := testkafka.Brokers(t)
	goPath, _ := writeModules(t)
	tbl, out := testkafka.Name(t, "tbl_in"), testkafka.Name(t, "tbl_out")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	execute(t, e, udafStatements(goPath)+fmt.Sprintf(`
		CREATE TABLE %[1]s (k VARCHAR PRIMARY KEY, s STRING, x BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE TABLE %[2]s AS SELECT s, COUNT(*) AS n, SUMSQ(x) AS sq, MEAN(x) AS m FROM %[1]s GROUP BY s;`, tbl, out))
	testkafka.Produce(t, brokers,
		rec(tbl, "k1", `{"S":"a","X":2}`, 1000),
		rec(tbl, "k2", `{"S":"a","X":4}`, 2000),
		rec(tbl, "k1", `{"S":"a","X":6}`, 3000),                                     // 2 out, 6 in
		&kgo.Record{Topic: tbl, Key: []byte("k2"), Timestamp: time.UnixMilli(4000)}, // 4 out
	)
	want := []string{
		`a {"N":1,"SQ":4,"M":2.0}`,
		`a {"N":2,"SQ":20,"M":3.0}`,
		`a {"N":2,"SQ":52,"M":5.0}`,
		`a {"N":1,"SQ":36,"M":6.0}`,
	}
	if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out, 4))); diff != "" {
		t.Errorf("table aggregation (-want +got):\n%s", diff)
	}
}

// TestWasmAggregateFailureLeavesState: a record a user-defined aggregate
// fails on changes no window or session it touches, for any aggregate of
// the query (TRAIL, called before SUMSQ fails, and COUNT included), and
// sends none of its output: neither in both of its hopping windows nor
// in the two sessions it would have merged (no retractions either).
func TestWasmAggregateFailureLeavesState(t *testing.T) {
	brokers := testkafka.Brokers(t)
	goPath, _ := writeModules(t)
	in, hop, sess := testkafka.Name(t, "fail_in"), testkafka.Name(t, "fail_hop"), testkafka.Name(t, "fail_sess")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	execute(t, e, udafStatements(goPath)+fmt.Sprintf(`
		CREATE STREAM %[1]s (k VARCHAR KEY, x BIGINT, at BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', TIMESTAMP='at', PARTITIONS=1);
		CREATE TABLE %[2]s AS SELECT k, COUNT(*) AS n, TRAIL(CAST(x AS STRING)) AS tr, SUMSQ(x) AS sq
		  FROM %[1]s WINDOW HOPPING (SIZE 10 MINUTES, ADVANCE BY 5 MINUTES) GROUP BY k EMIT CHANGES;
		CREATE TABLE %[3]s AS SELECT k, COUNT(*) AS n, TRAIL(CAST(x AS STRING)) AS tr, SUMSQ(x) AS sq
		  FROM %[1]s WINDOW SESSION (2 MINUTES) GROUP BY k EMIT CHANGES;`, in, hop, sess))
	const m = 60_000
	v := func(x, at int64) string { return fmt.Sprintf(`{"x":%d,"at":%d}`, x, at) }
	testkafka.Produce(t, brokers,
		rec(in, "a", v(1, 6*m), 1),
		rec(in, "a", v(2, 9*m), 2),         // a session of its own
		rec(in, "a", v(13, 7*m+30_000), 3), // SUMSQ traps: would merge both sessions
		rec(in, "a", v(3, 7*m+30_000), 4),  // merges them
	)
	wantHop := []windowedOutput{
		{"a", 0, `{"N":1,"TR":"1","SQ":1}`, 6 * m},
		{"a", 5 * m, `{"N":1,"TR":"1","SQ":1}`, 6 * m},
		{"a", 0, `{"N":2,"TR":"1,2","SQ":5}`, 9 * m},
		{"a", 5 * m, `{"N":2,"TR":"1,2","SQ":5}`, 9 * m},
		{"a", 0, `{"N":3,"TR":"1,2,3","SQ":14}`, 9 * m},
		{"a", 5 * m, `{"N":3,"TR":"1,2,3","SQ":14}`, 9 * m},
	}
	testkafka.Await(t, 30*time.Second, "6 hopping results", func() bool { return len(windowedOutputs(t, brokers, hop)) >= 6 })
	if diff := cmp.Diff(wantHop, windowedOutputs(t, brokers, hop)); diff != "" {
		t.Errorf("hopping outputs (-want +got):\n%s", diff)
	}
	var got []string
	testkafka.Await(t, 30*time.Second, "5 session records", func() bool {
		got = got[:0]
		for _, r := range testkafka.ReadAll(t, brokers, sess) {
			k, start, end, err := format.DecodeSessionWindowedKey(r.Key)
			if err != nil {
				t.Fatalf("session key %x: %v", r.Key, err)
			}
			got = append(got, fmt.Sprintf("%s [%d,%d] %s", k, start/1000, end/1000, r.Value))
		}
		return len(got) >= 5
	})
	wantSess := []string{
		`a [360,360] {"N":1,"TR":"1","SQ":1}`,
		`a [540,540] {"N":1,"TR":"2","SQ":4}`,
		`a [360,360] `,
		`a [540,540] `,
		`a [360,540] {"N":3,"TR":"1|2,3","SQ":14}`,
	}
	if diff := cmp.Diff(wantSess, got); diff != "" {
		t.Errorf("session outputs (-want +got):\n%s", diff)
	}
	for _, id := range []string{"CTAS_" + strings.ToUpper(hop), "CTAS_" + strings.ToUpper(sess)} {
		q := queryByID(t, e, id)
		testkafka.Await(t, 30*time.Second, id+"'s function error", func() bool { return q.Metrics.Errors()["function"] == 1 })
	}
}
