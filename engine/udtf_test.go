package engine_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/internal/testudf"
)

// TestWasmTableFunctions runs user-defined table functions as EXPLODE
// runs: two in one SELECT list zip (the shorter padded with NULL), a NULL
// result gives no rows, and a failing call is a bad record none of whose
// rows is emitted; a VARIADIC function takes none, one or several
// arguments. A second instance of the service has the functions from the
// command topic and gives the same rows.
func TestWasmTableFunctions(t *testing.T) {
	brokers := testkafka.Brokers(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "tablefuncs.wasm")
	if err := os.WriteFile(path, testudf.TableModule(t), 0o644); err != nil {
		t.Fatal(err)
	}
	in, out, out2 := testkafka.Name(t, "udtf_in"), testkafka.Name(t, "udtf_out"), testkafka.Name(t, "udtf_out2")
	svc := testkafka.Name(t, "svc")
	e1 := openShared(t, brokers, t.TempDir(), svc)
	defer func() { closeEngine(t, e1) }()
	res := execute(t, e1, fmt.Sprintf(`
		CREATE TABLE FUNCTION split_on(s STRING, sep STRING) RETURNS ARRAY<STRING> DETERMINISTIC LANGUAGE WASM WITH (PATH='%[1]s', EXPORT='split');
		CREATE TABLE FUNCTION upto(n INT) RETURNS ARRAY<INT> DETERMINISTIC LANGUAGE WASM WITH (PATH='%[1]s', EXPORT='upto');
		CREATE FUNCTION join_all(sep STRING, VARIADIC parts ARRAY<STRING>) RETURNS STRING DETERMINISTIC LANGUAGE WASM WITH (PATH='%[1]s', EXPORT='join_all');
		CREATE TABLE FUNCTION js_twice(s STRING, VARIADIC tags ARRAY<STRING>) RETURNS ARRAY<STRING> DETERMINISTIC LANGUAGE JAVASCRIPT AS $$
		  if (s === null) return null;
		  return [s + tags.join(''), s + tags.length];
		$$;
		CREATE STREAM %[2]s (id VARCHAR KEY, s STRING, n INT) WITH (KAFKA_TOPIC='%[2]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, path, in))
	msgs := []string{res[0].Message, res[1].Message, res[2].Message, res[3].Message}
	wantMsgs := []string{
		"Created function SPLIT_ON(S STRING, SEP STRING) RETURNS ARRAY<STRING>",
		"Created function UPTO(N INTEGER) RETURNS ARRAY<INTEGER>",
		"Created function JOIN_ALL(SEP STRING, VARIADIC PARTS ARRAY<STRING>) RETURNS STRING",
		"Created function JS_TWICE(S STRING, VARIADIC TAGS ARRAY<STRING>) RETURNS ARRAY<STRING>",
	}
	if diff := cmp.Diff(wantMsgs, msgs); diff != "" {
		t.Errorf("CREATE messages (-want +got):\n%s", diff)
	}
	query := `SELECT id, SPLIT_ON(s, ',') AS part, UPTO(n) AS r, JOIN_ALL('-', id, s) AS j, JOIN_ALL('-') AS z, JOIN_ALL('-', s) AS o FROM ` + in
	execute(t, e1, fmt.Sprintf("CREATE STREAM %s AS %s;", out, query))
	testkafka.Produce(t, brokers,
		rec(in, "a", `{"S":"x,y,z","N":2}`, 1000),
		rec(in, "b", `{}`, 2000),
		rec(in, "c", `{"S":"q","N":13}`, 3000),
		rec(in, "d", `{"S":"w","N":0}`, 4000))
	want := []string{
		`a {"PART":"x","R":1,"J":"2:a-x,y,z","Z":"0:","O":"1:x,y,z"}`,
		`a {"PART":"y","R":2,"J":"2:a-x,y,z","Z":"0:","O":"1:x,y,z"}`,
		`a {"PART":"z","R":null,"J":"2:a-x,y,z","Z":"0:","O":"1:x,y,z"}`,
		`d {"PART":"w","R":null,"J":"2:d-w","Z":"0:","O":"1:w"}`,
	}
	if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out, len(want)))); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	q := queryByID(t, e1, "CSAS_"+strings.ToUpper(out))
	testkafka.Await(t, 30*time.Second, "one function error", func() bool { return q.Metrics.Errors()["function"] == 1 })

	// A table function in JavaScript, VARIADIC too.
	js := testkafka.Name(t, "udtf_js")
	execute(t, e1, fmt.Sprintf("CREATE STREAM %s AS SELECT id, JS_TWICE(s, '+', '-') AS a, JS_TWICE(s) AS b FROM %s;", js, in))
	wantJS := []string{
		`a {"A":"x,y,z+-","B":"x,y,z"}`,
		`a {"A":"x,y,z2","B":"x,y,z0"}`,
		`c {"A":"q+-","B":"q"}`,
		`c {"A":"q2","B":"q0"}`,
		`d {"A":"w+-","B":"w"}`,
		`d {"A":"w2","B":"w0"}`,
	}
	if diff := cmp.Diff(wantJS, values(awaitOutputs(t, brokers, js, len(wantJS)))); diff != "" {
		t.Errorf("JavaScript table function's rows (-want +got):\n%s", diff)
	}

	// Where a scalar belongs, a table function is refused, as EXPLODE is.
	for sql, wantErr := range map[string]string{
		"SELECT id FROM " + in + " WHERE UPTO(n) IS NOT NULL EMIT CHANGES;":                                                    "table function UPTO is only allowed in the SELECT list of a stream query",
		"SELECT id, UPTO(n), COUNT(*) FROM " + in + " GROUP BY id EMIT CHANGES;":                                               "Table functions cannot be used with aggregations.",
		"CREATE TABLE FUNCTION bad(n INT) RETURNS INT LANGUAGE WASM WITH (PATH='" + path + "', EXPORT='upto');":                "a table function RETURNS ARRAY<T>, one row per element; this one returns INT",
		"CREATE FUNCTION upto(n BIGINT) RETURNS INT LANGUAGE WASM WITH (PATH='" + path + "', EXPORT='upto');":                  "Function 'UPTO' already exists as a table function; a scalar function cannot take its name (DROP FUNCTION UPTO first)",
		"CREATE FUNCTION v(VARIADIC a ARRAY<INT>, b INT) RETURNS INT LANGUAGE WASM WITH (PATH='" + path + "', EXPORT='upto');": "VARIADIC A: only the last parameter can be VARIADIC",
		"CREATE FUNCTION v(VARIADIC a INT) RETURNS INT LANGUAGE WASM WITH (PATH='" + path + "', EXPORT='upto');":               "VARIADIC A INTEGER: a VARIADIC parameter is an ARRAY<T> (each argument a T)",
	} {
		_, err := e1.Execute(t.Context(), sql)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want one containing %q", sql, err, wantErr)
		}
	}

	// The second instance learns the functions from the command topic.
	e2 := openShared(t, brokers, t.TempDir(), svc)
	defer func() { closeEngine(t, e2) }()
	fl, ok := execute(t, e2, "SHOW FUNCTIONS;")[0].Entity.(*engine.FunctionList)
	if !ok {
		t.Fatal("SHOW FUNCTIONS: no function list")
	}
	types := map[string]string{}
	for _, f := range fl.Functions {
		if f.Category == engine.UserFunctionCategory {
			types[f.Name] = f.Type
		}
	}
	if diff := cmp.Diff(map[string]string{"SPLIT_ON": "TABLE", "UPTO": "TABLE", "JOIN_ALL": "SCALAR", "JS_TWICE": "TABLE"}, types); diff != "" {
		t.Errorf("SHOW FUNCTIONS on the second instance (-want +got):\n%s", diff)
	}
	execute(t, e2, fmt.Sprintf("CREATE STREAM %s AS %s;", out2, query))
	if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out2, len(want)))); diff != "" {
		t.Fatalf("second instance's rows (-want +got):\n%s", diff)
	}
}

// TestWasmFunctionPartitionByNull: a PARTITION BY key whose function
// fails is NULL and the record goes on, as ksqlDB writes it, counted as a
// function error and logged with the record's position; a failure in the
// value columns still makes a bad record.
func TestWasmFunctionPartitionByNull(t *testing.T) {
	brokers := testkafka.Brokers(t)
	_, trapPath := writeModules(t)
	in, out := testkafka.Name(t, "pby_in"), testkafka.Name(t, "pby_out")
	var logs syncBuffer
	e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), slog.New(slog.NewTextHandler(&logs, nil)))
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, x BIGINT, y BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		CREATE FUNCTION trap(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE WASM WITH (PATH='%[2]s', EXPORT='trap13');
		CREATE STREAM %[3]s WITH (KEY_FORMAT='JSON') AS SELECT TRAP(x) AS k, id, TRAP(y) AS v FROM %[1]s PARTITION BY TRAP(x);`, in, trapPath, out))
	testkafka.Produce(t, brokers,
		rec(in, "a", `{"X":1,"Y":1}`, 1000), rec(in, "b", `{"X":13,"Y":2}`, 2000),
		rec(in, "c", `{"X":3,"Y":13}`, 3000), rec(in, "d", `{"X":4,"Y":4}`, 4000))
	want := []string{`1 {"ID":"a","V":1}`, ` {"ID":"b","V":2}`, `4 {"ID":"d","V":4}`}
	if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out, len(want)))); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	q := queryByID(t, e, "CSAS_"+strings.ToUpper(out))
	testkafka.Await(t, 30*time.Second, "two function errors", func() bool { return q.Metrics.Errors()["function"] == 2 })
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "PARTITION BY key is NULL") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "function=TRAP") || !strings.Contains(lines[0], fmt.Sprintf("topic=%s partition=0 offset=1", in)) {
		t.Errorf("log lines %q, want one naming TRAP at %s/0@1", lines, in)
	}
}
