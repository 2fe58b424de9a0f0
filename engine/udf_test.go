package engine_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/internal/testudf"
	"github.com/sluice-sql/sluice/planner"
)

// writeModules writes the test modules into a directory and returns the
// paths of the Go one and the trapping one.
func writeModules(t *testing.T) (goPath, trapPath string) {
	t.Helper()
	dir := t.TempDir()
	goPath, trapPath = filepath.Join(dir, "gofuncs.wasm"), filepath.Join(dir, "trap.wasm")
	if err := os.WriteFile(goPath, testudf.GoModule(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trapPath, testudf.TrapModule, 0o644); err != nil {
		t.Fatal(err)
	}
	return goPath, trapPath
}

// awaitOutputs waits until topic holds n records and returns them.
func awaitOutputs(t *testing.T, brokers, topic string, n int) []outRecord {
	t.Helper()
	var got []outRecord
	testkafka.Await(t, 90*time.Second, fmt.Sprintf("%d records in %s", n, topic), func() bool {
		got = outputs(t, brokers, topic)
		return len(got) >= n
	})
	return got
}

func values(rs []outRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Key + " " + r.Value
	}
	return out
}

// TestWasmFunctions runs WebAssembly functions of every type, NULLs and
// overloads in a persistent query; a second instance of the service has
// them from the command topic and gets the same results; OR REPLACE
// leaves the running query on the version it started with; DROP is
// refused while a query uses the function; a restart keeps everything.
func TestWasmFunctions(t *testing.T) {
	brokers := testkafka.Brokers(t)
	goPath, _ := writeModules(t)
	in, out, out2, out3 := testkafka.Name(t, "udf_in"), testkafka.Name(t, "udf_out"), testkafka.Name(t, "udf_out2"), testkafka.Name(t, "udf_out3")
	svc := testkafka.Name(t, "svc")
	d1 := t.TempDir()
	e1 := openShared(t, brokers, d1, svc)
	defer func() { closeEngine(t, e1) }()

	fn := func(sig, returns, export string) string {
		return fmt.Sprintf("CREATE FUNCTION %s RETURNS %s DETERMINISTIC LANGUAGE WASM WITH (PATH='%s', EXPORT='%s');", sig, returns, goPath, export)
	}
	res := execute(t, e1, strings.Join([]string{
		fn("add_one(x BIGINT)", "BIGINT", "add_one"),
		fn("add_one(x INT, y INT)", "INT", "add_ints"),
		fn("half(x DOUBLE)", "DOUBLE", "half"),
		fn("neg(x BOOLEAN)", "BOOLEAN", "negate"),
		fn("shout(s STRING)", "STRING", "shout"),
		fn("rev(b BYTES)", "BYTES", "reverse_bytes"),
		fn("echo_dec(x DECIMAL(6, 2))", "DECIMAL(6, 2)", "echo"),
		fn("echo_arr(x ARRAY<STRING>)", "ARRAY<STRING>", "echo"),
		fn("echo_map(x MAP<STRING, BIGINT>)", "MAP<STRING, BIGINT>", "echo"),
		fn("echo_st(x STRUCT<A INT, B STRING>)", "STRUCT<A INT, B STRING>", "echo"),
		fn("next_day(d DATE)", "DATE", "next_day"),
		fn("later(t TIMESTAMP)", "TIMESTAMP", "later"),
		fmt.Sprintf("CREATE FUNCTION spare(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (PATH='%s', EXPORT='add_one');", goPath),
	}, "\n"))
	if got, want := res[0].Message, "Created function ADD_ONE(X BIGINT) RETURNS BIGINT"; got != want {
		t.Errorf("CREATE FUNCTION: %q, want %q", got, want)
	}
	// The command carries the module, not the path.
	for _, c := range commandRecords(t, brokers, svc) {
		if strings.Contains(c.Value, goPath) || !strings.Contains(c.Value, "MODULE='") {
			t.Fatalf("command names the path or carries no module: %.200s", c.Value)
		}
	}

	execute(t, e1, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, b BIGINT, i INT, d DOUBLE, f BOOLEAN, s STRING, bs BYTES, dec DECIMAL(6, 2),
			arr ARRAY<STRING>, m MAP<STRING, BIGINT>, st STRUCT<A INT, B STRING>, dt DATE, ts TIMESTAMP)
			WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, in))
	query := `SELECT id, ADD_ONE(b) AS b1, ADD_ONE(i) AS i1, ADD_ONE(i, i) AS ii, HALF(d) AS h, NEG(f) AS nf, SHOUT(s) AS ss,
		REV(bs) AS rb, ECHO_DEC(dec) AS ed, ECHO_ARR(arr) AS ea, ECHO_MAP(m) AS em, ECHO_ST(st) AS es, NEXT_DAY(dt) AS nd,
		LATER(ts) AS lt FROM ` + in + ` EMIT CHANGES;`
	execute(t, e1, fmt.Sprintf("CREATE STREAM %s WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON') AS %s", out, out, query))
	testkafka.Produce(t, brokers,
		rec(in, "full", `{"B":41,"I":-7,"D":3.0,"F":true,"S":"héllo","BS":"AQID","DEC":-12.30,"ARR":["a",null,"c\"d"],"M":{"x":1},"ST":{"A":5,"B":"hi"},"DT":19000,"TS":1700000000000}`, 1000),
		rec(in, "nulls", `{}`, 2000))
	want := []string{
		`full {"B1":42,"I1":-6,"II":-14,"H":1.5,"NF":false,"SS":"HÉLLO!","RB":"AwIB","ED":-12.30,"EA":["a",null,"c\"d"],"EM":{"x":1},"ES":{"A":5,"B":"hi"},"ND":19001,"LT":1700000001000}`,
		`nulls {"B1":null,"I1":null,"II":null,"H":null,"NF":null,"SS":null,"RB":null,"ED":null,"EA":null,"EM":null,"ES":null,"ND":null,"LT":null}`,
	}
	if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out, 2))); diff != "" {
		t.Fatalf("first instance's results (-want +got):\n%s", diff)
	}

	// Not DETERMINISTIC: refused in a persistent query.
	_, err := e1.Execute(t.Context(), fmt.Sprintf("CREATE STREAM x_%s AS SELECT SPARE(b) FROM %s;", out, in))
	if !errors.Is(err, expr.ErrNotDeterministic) {
		t.Errorf("non-deterministic function in a persistent query: %v", err)
	}
	// A built-in's name is refused, and so is a second CREATE of one signature.
	for stmt, want := range map[string]string{
		fmt.Sprintf("CREATE FUNCTION ucase(x STRING) RETURNS STRING LANGUAGE WASM WITH (PATH='%s', EXPORT='shout');", goPath): "line 1:1: invalid statement: Function 'UCASE' is a built-in function: a user-defined function cannot take its name",
		fmt.Sprintf("CREATE FUNCTION half(y DOUBLE) RETURNS DOUBLE LANGUAGE WASM WITH (PATH='%s', EXPORT='half');", goPath):   "line 1:1: already exists: Function 'HALF' with parameters (DOUBLE) already exists; CREATE OR REPLACE FUNCTION replaces it",
		"CREATE AGGREGATE FUNCTION a(x INT) RETURNS INT LANGUAGE WASM WITH (MODULE='AA==', EXPORT='a');":                      "line 1:1: not supported: CREATE AGGREGATE FUNCTION is not supported yet",
		"SELECT ADD_ONE('a') FROM " + in + " EMIT CHANGES;":                                                                   "line 1:8: type error: Function 'ADD_ONE' does not accept parameters (STRING). Valid alternatives are: ADD_ONE(X BIGINT), ADD_ONE(X INTEGER, Y INTEGER)",
	} {
		_, err := e1.Execute(t.Context(), stmt)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\ngot %v\nwant %q", stmt, err, want)
		}
	}

	// A second instance of the service has the functions from the
	// command topic; a query it creates gives the same results.
	e2 := openShared(t, brokers, t.TempDir(), svc)
	execute(t, e2, fmt.Sprintf("CREATE STREAM %s WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON') AS %s", out2, out2, query))
	if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out2, 2))); diff != "" {
		t.Fatalf("second instance's results (-want +got):\n%s", diff)
	}
	closeEngine(t, e2)

	// OR REPLACE makes version 2 (adding 1000); the running queries keep
	// version 1, a new query gets version 2.
	res = execute(t, e1, fmt.Sprintf("CREATE OR REPLACE FUNCTION add_one(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM WITH (PATH='%s', EXPORT='later');", goPath))
	if got, want := res[0].Message, "Replaced (version 2) function ADD_ONE(X BIGINT) RETURNS BIGINT"; got != want {
		t.Errorf("OR REPLACE: %q, want %q", got, want)
	}
	execute(t, e1, fmt.Sprintf("CREATE STREAM %s AS SELECT id, ADD_ONE(b) AS b1 FROM %s;", out3, in))
	testkafka.Produce(t, brokers, rec(in, "more", `{"B":1}`, 3000))
	got := values(awaitOutputs(t, brokers, out, 3))
	if w := `more {"B1":2,"I1":null,"II":null,"H":null,"NF":null,"SS":null,"RB":null,"ED":null,"EA":null,"EM":null,"ES":null,"ND":null,"LT":null}`; got[2] != w {
		t.Errorf("running query after OR REPLACE: %s, want %s", got[2], w)
	}
	if diff := cmp.Diff([]string{`full {"B1":1041}`, `nulls {"B1":null}`, `more {"B1":1001}`}, values(awaitOutputs(t, brokers, out3, 3))); diff != "" {
		t.Errorf("new query after OR REPLACE (-want +got):\n%s", diff)
	}

	// A push query may call a function not declared DETERMINISTIC.
	push, err := e1.Execute(t.Context(), "SELECT id, SPARE(b) AS s FROM "+in+" EMIT CHANGES LIMIT 2;")
	if err != nil {
		t.Fatal(err)
	}
	var pushed []string
	for r := range push[0].Rows.C {
		pushed = append(pushed, fmt.Sprintf("%v %v", r.Cols...))
	}
	if diff := cmp.Diff([]string{"full 42", "nulls <nil>"}, pushed); diff != "" {
		t.Errorf("push query with a non-deterministic function (-want +got):\n%s", diff)
	}

	// DROP FUNCTION: refused while queries use it; IF EXISTS of none.
	_, err = e1.Execute(t.Context(), "DROP FUNCTION add_one;")
	wantDrop := fmt.Sprintf("cannot drop function ADD_ONE: the following queries use it: [CSAS_%s, CSAS_%s, CSAS_%s]; terminate them first", strings.ToUpper(out2), strings.ToUpper(out3), strings.ToUpper(out))
	if err == nil || !strings.Contains(err.Error(), wantDrop) || !errors.Is(err, planner.ErrInvalid) {
		t.Errorf("DROP FUNCTION in use: %v, want %q", err, wantDrop)
	}
	if res := execute(t, e1, "DROP FUNCTION spare; DROP FUNCTION IF EXISTS spare;"); res[0].Message != "Dropped function SPARE" || res[1].Message != "Function 'SPARE' does not exist" {
		t.Errorf("DROP FUNCTION: %q, %q", res[0].Message, res[1].Message)
	}

	// SHOW FUNCTIONS and DESCRIBE FUNCTION.
	var listed []string
	for _, f := range execute(t, e1, "SHOW FUNCTIONS;")[0].Entity.(*engine.FunctionList).Functions {
		if f.Category == engine.UserFunctionCategory {
			listed = append(listed, f.Name)
		}
	}
	if diff := cmp.Diff([]string{"ADD_ONE", "ECHO_ARR", "ECHO_DEC", "ECHO_MAP", "ECHO_ST", "HALF", "LATER", "NEG", "NEXT_DAY", "REV", "SHOUT"}, listed); diff != "" {
		t.Errorf("SHOW FUNCTIONS' user-defined functions (-want +got):\n%s", diff)
	}
	describe := func(e *engine.Engine) []string {
		d := execute(t, e, "DESCRIBE FUNCTION add_one;")[0].Entity.(*engine.FunctionDescription)
		var out []string
		for _, f := range d.Overloads {
			out = append(out, fmt.Sprintf("%s RETURNS %s %s v%d", f.Signature(), f.Result, f.Language, f.Version))
		}
		return out
	}
	wantDescribe := []string{"ADD_ONE(X INTEGER, Y INTEGER) RETURNS INTEGER WASM v1", "ADD_ONE(X BIGINT) RETURNS BIGINT WASM v2"}
	if diff := cmp.Diff(wantDescribe, describe(e1)); diff != "" {
		t.Errorf("DESCRIBE FUNCTION (-want +got):\n%s", diff)
	}

	// A restart replays the command topic: the functions are back, and
	// each query binds the version it was created with.
	closeEngine(t, e1)
	e1 = openShared(t, brokers, d1, svc)
	if diff := cmp.Diff(wantDescribe, describe(e1)); diff != "" {
		t.Errorf("DESCRIBE FUNCTION after the restart (-want +got):\n%s", diff)
	}
	testkafka.Produce(t, brokers, rec(in, "after", `{"B":10}`, 4000))
	if got := values(awaitOutputs(t, brokers, out, 4))[3]; !strings.HasPrefix(got, `after {"B1":11,`) {
		t.Errorf("first query after the restart: %s, want B1 11 (version 1)", got)
	}
	if got := values(awaitOutputs(t, brokers, out3, 4))[3]; got != `after {"B1":1010}` {
		t.Errorf("third query after the restart: %s, want B1 1010 (version 2)", got)
	}
}

// TestWasmFunctionBadRecords runs a function that loops forever, one that
// allocates without bound and one that traps, each in a query with an
// error topic: every record the function fails on is counted, logged once
// with the function and the record's position, and dead-lettered, and the
// query goes on with the next records.
func TestWasmFunctionBadRecords(t *testing.T) {
	brokers := testkafka.Brokers(t)
	goPath, trapPath := writeModules(t)
	in := testkafka.Name(t, "bad_in")
	var logs syncBuffer
	e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), slog.New(slog.NewTextHandler(&logs, nil)))
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, x BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE FUNCTION spin(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM WITH (PATH='%[2]s', EXPORT='spin');
		CREATE FUNCTION hog(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM WITH (PATH='%[2]s', EXPORT='hog');
		CREATE FUNCTION trap(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM WITH (PATH='%[3]s', EXPORT='trap13');`, in, goPath, trapPath))
	testkafka.Produce(t, brokers,
		rec(in, "a", `{"X":1}`, 1000), rec(in, "b", `{"X":13}`, 2000), rec(in, "c", `{"X":2}`, 3000),
		rec(in, "d", `{"X":13}`, 4000), rec(in, "e", `{"X":3}`, 5000))
	for _, c := range []struct {
		fn, timeout, kind string
	}{
		{"SPIN", "300ms", "timeout"},
		{"HOG", "20s", "out of memory"},
		{"TRAP", "300ms", "trap"},
	} {
		out, errs := testkafka.Name(t, "bad_"+c.fn), testkafka.Name(t, "dlq_"+c.fn)
		execute(t, e, fmt.Sprintf(`SET 'sluice.udf.timeout'='%s'; SET 'sluice.udf.memory'='33554432';
			CREATE STREAM %s WITH (ERROR_TOPIC='%s') AS SELECT id, %s(x) AS y FROM %s;`, c.timeout, out, errs, c.fn, in))
		want := []string{`a {"Y":1}`, `c {"Y":2}`, `e {"Y":3}`}
		if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out, 3))); diff != "" {
			t.Errorf("%s: outputs (-want +got):\n%s", c.fn, diff)
		}
		var q *engine.Query
		for _, x := range e.Queries() {
			if x.ID == "CSAS_"+strings.ToUpper(out) {
				q = x
			}
		}
		testkafka.Await(t, 30*time.Second, c.fn+" error count", func() bool { return q.Metrics.Errors()["function"] == 2 })
		// The dead letters are produced apart from the count: wait for
		// them to be readable.
		var dead []*kgo.Record
		testkafka.Await(t, 30*time.Second, c.fn+" dead letters", func() bool {
			dead = testkafka.ReadAll(t, brokers, errs)
			return len(dead) >= 2
		})
		var got []string
		for _, r := range dead {
			got = append(got, fmt.Sprintf("%s %s %s", r.Key, header(r, "sluice.offset"), header(r, "sluice.error.kind")))
		}
		if diff := cmp.Diff([]string{"b 1 function", "d 3 function"}, got); diff != "" {
			t.Errorf("%s: dead letters (-want +got):\n%s", c.fn, diff)
		}
		if len(dead) > 0 && !strings.Contains(header(dead[0], "sluice.error"), "function "+c.fn+": "+c.kind+":") {
			t.Errorf("%s: dead letter's error %q, want the function and %q", c.fn, header(dead[0], "sluice.error"), c.kind)
		}
		var lines []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "skipping record a function failed on") && strings.Contains(l, "function="+c.fn+" ") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], fmt.Sprintf("topic=%s partition=0 offset=1", in)) {
			t.Errorf("%s: log lines %q, want one at %s/0@1", c.fn, lines, in)
		}
	}
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// TestWasmModuleTooLargeForCommand: a module that does not fit in one
// record of the command topic is refused with the sizes, and nothing is
// appended.
func TestWasmModuleTooLargeForCommand(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	path := filepath.Join(t.TempDir(), "big.wasm")
	if err := os.WriteFile(path, testudf.BigModule(2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	e := openShared(t, brokers, t.TempDir(), svc)
	defer closeEngine(t, e)
	execute(t, e, "CREATE STREAM s (x BIGINT) WITH (KAFKA_TOPIC='"+testkafka.Name(t, "s")+"', VALUE_FORMAT='JSON', PARTITIONS=1);")
	_, err := e.Execute(t.Context(), fmt.Sprintf("CREATE FUNCTION big(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM WITH (PATH='%s', EXPORT='trap13');", path))
	want := "more than a record of the command topic " + engine.CommandTopicName(svc) + " may hold (999500: the producer's batch limit); a CREATE FUNCTION's module travels in its command, so its module must be smaller"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, planner.ErrInvalid) {
		t.Fatalf("got %v, want %q", err, want)
	}
	if got := len(commandRecords(t, brokers, svc)); got != 1 {
		t.Errorf("%d command records, want 1 (the CREATE STREAM)", got)
	}
}

// TestWasmFunctionFailsPullQuery: a function failing in a pull query
// fails that query with an error naming the function (no process crash).
func TestWasmFunctionFailsPullQuery(t *testing.T) {
	brokers := testkafka.Brokers(t)
	_, trapPath := writeModules(t)
	in, tbl := testkafka.Name(t, "pull_in"), testkafka.Name(t, "pull_t")
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, x BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE FUNCTION trap(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM WITH (PATH='%[3]s', EXPORT='trap13');
		CREATE TABLE %[2]s AS SELECT id, LATEST_BY_OFFSET(x) AS x FROM %[1]s GROUP BY id;`, in, tbl, trapPath))
	testkafka.Produce(t, brokers, rec(in, "a", `{"X":13}`, 1000), rec(in, "b", `{"X":2}`, 2000))
	testkafka.Await(t, 60*time.Second, "both keys in the table", func() bool {
		return len(pullRows(t, e, "SELECT * FROM "+tbl+";")) == 2
	})
	if diff := cmp.Diff([]string{"b2"}, pullRows(t, e, "SELECT id, TRAP(x) FROM "+tbl+" WHERE id='b';")); diff != "" {
		t.Errorf("pull query (-want +got):\n%s", diff)
	}
	for _, sql := range []string{
		"SELECT id, TRAP(x) FROM " + tbl + " WHERE id='a';",
		"SELECT id, TRAP(x) FROM " + tbl + ";",
	} {
		res, err := e.Execute(t.Context(), sql)
		if err == nil {
			for range res[0].Rows.C {
			}
			err = res[0].Rows.Err()
		}
		if err == nil || !strings.Contains(err.Error(), "function TRAP: trap:") {
			t.Errorf("%s: got %v, want the function's trap", sql, err)
		}
	}
	// A pull query scanning the stream runs its records as a task does:
	// the record the function fails on is skipped.
	if diff := cmp.Diff([]string{"b2"}, pullRows(t, e, "SELECT id, TRAP(x) FROM "+in+";")); diff != "" {
		t.Errorf("pull query on the stream (-want +got):\n%s", diff)
	}
}
