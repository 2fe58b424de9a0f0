package engine_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestJavaScriptFunctions runs a JavaScript function of every type with
// NULLs in a persistent query; a second instance of the service has them
// from the command topic (the body travels in the statement) and gets the
// same results; OR REPLACE leaves the running query on the version it
// started with while a new query gets the new one.
func TestJavaScriptFunctions(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, out2, out3 := testkafka.Name(t, "js_in"), testkafka.Name(t, "js_out"), testkafka.Name(t, "js_out2"), testkafka.Name(t, "js_out3")
	svc := testkafka.Name(t, "svc")
	e1 := openShared(t, brokers, t.TempDir(), svc)
	defer func() { closeEngine(t, e1) }()

	fn := func(name, typ, body string) string {
		return fmt.Sprintf("CREATE FUNCTION %s(x %s) RETURNS %s DETERMINISTIC LANGUAGE JAVASCRIPT AS $$\n  if (x === null) return null;\n  return %s;\n$$;", name, typ, typ, body)
	}
	res := execute(t, e1, strings.Join([]string{
		fn("js_b", "BIGINT", "typeof x === 'bigint' ? x + 1n : x + 1"),
		fn("js_i", "INT", "x * 2"),
		fn("js_d", "DOUBLE", "x / 2"),
		fn("js_f", "BOOLEAN", "!x"),
		fn("js_s", "STRING", "x.toUpperCase() + '!'"),
		fn("js_bs", "BYTES", "x.slice().reverse()"),
		fn("js_dec", "DECIMAL(6, 2)", "(Number(x) * 2).toFixed(2)"),
		fn("js_arr", "ARRAY<STRING>", "x.map(e => e === null ? null : e + e)"),
		fn("js_m", "MAP<STRING, BIGINT>", "Object.fromEntries(Object.entries(x).map(([k, v]) => [k.toUpperCase(), v === null ? null : v * 10]))"),
		fn("js_st", "STRUCT<A INT, B STRING>", "{A: x.A + 1, B: x.B === null ? 'none' : x.B + '?'}"),
		fn("js_dt", "DATE", "new Date(x.getTime() + 86400000)"),
		fn("js_tm", "TIME", "(x + 1000) % 86400000"),
		fn("js_ts", "TIMESTAMP", "new Date(x.getTime() + 1000)"),
		"CREATE FUNCTION js_two(a STRING, n INT) RETURNS STRING DETERMINISTIC LANGUAGE JAVASCRIPT AS $$ return a + ':' + n; $$;",
	}, "\n"))
	if got, want := res[0].Message, "Created function JS_B(X BIGINT) RETURNS BIGINT"; got != want {
		t.Errorf("CREATE FUNCTION: %q, want %q", got, want)
	}
	execute(t, e1, fmt.Sprintf(`
		CREATE STREAM %[1]s (id VARCHAR KEY, b BIGINT, i INT, d DOUBLE, f BOOLEAN, s STRING, bs BYTES, dec DECIMAL(6, 2),
			arr ARRAY<STRING>, m MAP<STRING, BIGINT>, st STRUCT<A INT, B STRING>, dt DATE, tm TIME, ts TIMESTAMP)
			WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, in))
	query := `SELECT id, JS_B(b) AS b1, JS_I(i) AS i1, JS_D(d) AS d1, JS_F(f) AS f1, JS_S(s) AS s1, JS_BS(bs) AS bs1,
		JS_DEC(dec) AS dec1, JS_ARR(arr) AS arr1, JS_M(m) AS m1, JS_ST(st) AS st1, JS_DT(dt) AS dt1, JS_TM(tm) AS tm1,
		JS_TS(ts) AS ts1, JS_TWO(s, i) AS two FROM ` + in + ` EMIT CHANGES;`
	execute(t, e1, fmt.Sprintf("CREATE STREAM %s WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON') AS %s", out, out, query))
	testkafka.Produce(t, brokers,
		rec(in, "full", `{"B":9007199254740993,"I":-7,"D":3.0,"F":true,"S":"héllo","BS":"AQID","DEC":-12.30,"ARR":["a",null,"c\"d"],"M":{"x":1,"y":null},"ST":{"A":5,"B":null},"DT":19000,"TM":86399500,"TS":1700000000000}`, 1000),
		rec(in, "nulls", `{}`, 2000),
		rec(in, "small", `{"B":41,"S":"x"}`, 3000))
	want := []string{
		`full {"B1":9007199254740994,"I1":-14,"D1":1.5,"F1":false,"S1":"HÉLLO!","BS1":"AwIB","DEC1":-24.60,"ARR1":["aa",null,"c\"dc\"d"],"M1":{"X":10,"Y":null},"ST1":{"A":6,"B":"none"},"DT1":19001,"TM1":500,"TS1":1700000001000,"TWO":"héllo:-7"}`,
		`nulls {"B1":null,"I1":null,"D1":null,"F1":null,"S1":null,"BS1":null,"DEC1":null,"ARR1":null,"M1":null,"ST1":null,"DT1":null,"TM1":null,"TS1":null,"TWO":"null:null"}`,
		`small {"B1":42,"I1":null,"D1":null,"F1":null,"S1":"X!","BS1":null,"DEC1":null,"ARR1":null,"M1":null,"ST1":null,"DT1":null,"TM1":null,"TS1":null,"TWO":"x:null"}`,
	}
	if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out, 3))); diff != "" {
		t.Fatalf("first instance's results (-want +got):\n%s", diff)
	}

	// The command carries the body.
	var bodies int
	for _, c := range commandRecords(t, brokers, svc) {
		if strings.Contains(c.Value, "LANGUAGE JAVASCRIPT AS $$") {
			bodies++
		}
	}
	if bodies != 14 {
		t.Errorf("%d commands carry a JavaScript body, want 14", bodies)
	}

	// A second instance has the functions from the command topic.
	e2 := openShared(t, brokers, t.TempDir(), svc)
	execute(t, e2, fmt.Sprintf("CREATE STREAM %s WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON') AS %s", out2, out2, query))
	if diff := cmp.Diff(want, values(awaitOutputs(t, brokers, out2, 3))); diff != "" {
		t.Fatalf("second instance's results (-want +got):\n%s", diff)
	}
	closeEngine(t, e2)

	// OR REPLACE: version 2 appends '?' instead of '!'; the running
	// queries keep version 1, a new query gets version 2.
	res = execute(t, e1, "CREATE OR REPLACE FUNCTION js_s(x STRING) RETURNS STRING DETERMINISTIC LANGUAGE JAVASCRIPT AS $$ return x === null ? null : x + '?'; $$;")
	if got, want := res[0].Message, "Replaced (version 2) function JS_S(X STRING) RETURNS STRING"; got != want {
		t.Errorf("OR REPLACE: %q, want %q", got, want)
	}
	execute(t, e1, fmt.Sprintf("CREATE STREAM %s AS SELECT id, JS_S(s) AS s1 FROM %s;", out3, in))
	testkafka.Produce(t, brokers, rec(in, "more", `{"S":"abc"}`, 4000))
	if got := values(awaitOutputs(t, brokers, out, 4))[3]; !strings.HasPrefix(got, `more {"B1":null,"I1":null,"D1":null,"F1":null,"S1":"ABC!",`) {
		t.Errorf("running query after OR REPLACE: %s, want S1 ABC! (version 1)", got)
	}
	if diff := cmp.Diff([]string{`full {"S1":"héllo?"}`, `nulls {"S1":null}`, `small {"S1":"x?"}`, `more {"S1":"abc?"}`}, values(awaitOutputs(t, brokers, out3, 4))); diff != "" {
		t.Errorf("new query after OR REPLACE (-want +got):\n%s", diff)
	}
	d := execute(t, e1, "DESCRIBE FUNCTION js_s;")[0].Entity.(*engine.FunctionDescription)
	if len(d.Overloads) != 1 || d.Overloads[0].Language != "JAVASCRIPT" || d.Overloads[0].Version != 2 || !strings.HasPrefix(d.Overloads[0].Origin, "javascript sha256:") {
		t.Errorf("DESCRIBE FUNCTION: %+v", d.Overloads[0])
	}

	// Not DETERMINISTIC: refused in a persistent query, called in a push
	// query.
	execute(t, e1, "CREATE FUNCTION js_loose(x BIGINT) RETURNS STRING LANGUAGE JAVASCRIPT AS $$ return 'v' + x; $$;")
	if _, err := e1.Execute(t.Context(), fmt.Sprintf("CREATE STREAM x_%s AS SELECT JS_LOOSE(b) FROM %s;", out, in)); !errors.Is(err, expr.ErrNotDeterministic) {
		t.Errorf("non-deterministic function in a persistent query: %v", err)
	}
	push, err := e1.Execute(t.Context(), "SELECT id, JS_LOOSE(b) AS s FROM "+in+" EMIT CHANGES LIMIT 3;")
	if err != nil {
		t.Fatal(err)
	}
	var pushed []string
	for r := range push[0].Rows.C {
		pushed = append(pushed, fmt.Sprintf("%v %v", r.Cols...))
	}
	if diff := cmp.Diff([]string{"full v9007199254740993", "nulls vnull", "small v41"}, pushed); diff != "" {
		t.Errorf("push query with a non-deterministic JavaScript function (-want +got):\n%s", diff)
	}

	// Bodies that do not compile, or no body, are refused at CREATE.
	for stmt, want := range map[string]string{
		"CREATE FUNCTION bad(x INT) RETURNS INT LANGUAGE JAVASCRIPT AS $$\n return x +; $$;":                           "line 2:12: invalid statement: invalid JavaScript function: SyntaxError: Unexpected token ;",
		"CREATE FUNCTION bad(x INT) RETURNS INT LANGUAGE JAVASCRIPT AS $$ return x +; $$;":                             "line 1:76: invalid statement: invalid JavaScript function: SyntaxError: Unexpected token ;",
		"CREATE FUNCTION bad(x INT) RETURNS INT LANGUAGE JAVASCRIPT WITH (EXPORT='f');":                                "line 1:1: invalid statement: CREATE FUNCTION … LANGUAGE JAVASCRIPT needs its body: AS $$ return …; $$",
		"CREATE FUNCTION bad(x INT) RETURNS INT LANGUAGE JAVASCRIPT AS $$ return 1; }); (function() { $$;":             "the body must be a function body: it closes the function and goes on after it",
		"CREATE FUNCTION bad(x INT) RETURNS INT LANGUAGE PYTHON AS $$ return 1 $$;":                                    "line 1:1: invalid statement: unknown LANGUAGE PYTHON: expected WASM or JAVASCRIPT",
		"CREATE FUNCTION js_i(x INT) RETURNS INT LANGUAGE JAVASCRIPT AS $$ return 1; $$;":                              "already exists: Function 'JS_I' with parameters (INTEGER) already exists; CREATE OR REPLACE FUNCTION replaces it",
		"CREATE FUNCTION bad(x INT) RETURNS INT LANGUAGE JAVASCRIPT AS $$ return 1; $$ WITH (EXPORT='f');":             "invalid statement: a LANGUAGE JAVASCRIPT function takes no WITH properties",
		"CREATE FUNCTION bad(\"new\" INT) RETURNS INT LANGUAGE JAVASCRIPT AS $$ return 1; $$;":                         "invalid JavaScript function: SyntaxError",
		"CREATE FUNCTION bad(x INT) RETURNS INT LANGUAGE JAVASCRIPT AS $$ return require('fs').readFileSync('/'); $$;": "",
	} {
		_, err := e1.Execute(t.Context(), stmt)
		if want == "" {
			// It compiles: require is only missing when it runs.
			if err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\ngot %v\nwant %q", stmt, err, want)
		}
	}
}

// TestJavaScriptFunctionBadRecords runs a function that throws, one that
// loops forever, one that returns a value of the wrong type, one that
// uses what the sandbox does not have (require) and one that allocates
// without bound, each in a query with an error topic: every record the
// function fails on is counted, logged once with the function and the
// record's position, and dead-lettered, and the query goes on.
func TestJavaScriptFunctionBadRecords(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in := testkafka.Name(t, "jsbad_in")
	var logs syncBuffer
	e := openEngineLog(t, brokers, t.TempDir(), testkafka.Name(t, "svc"), slog.New(slog.NewTextHandler(&logs, nil)))
	defer closeEngine(t, e)
	fn := func(name, failure string) string {
		return fmt.Sprintf("CREATE FUNCTION %s(x BIGINT) RETURNS BIGINT DETERMINISTIC LANGUAGE JAVASCRIPT AS $$\n  if (x === 13) { %s }\n  return x;\n$$;", name, failure)
	}
	execute(t, e, fmt.Sprintf(`CREATE STREAM %[1]s (id VARCHAR KEY, x BIGINT) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);`, in)+
		fn("throws", "throw new TypeError('unlucky ' + x);")+
		fn("spins", "for (;;) {}")+
		fn("wrong", "return 'thirteen';")+
		fn("escapes", "return require('fs');")+
		fn("hogs", "const a = []; for (;;) a.push('x'.repeat(1 << 16) + a.length);"))
	testkafka.Produce(t, brokers,
		rec(in, "a", `{"X":1}`, 1000), rec(in, "b", `{"X":13}`, 2000), rec(in, "c", `{"X":2}`, 3000),
		rec(in, "d", `{"X":13}`, 4000), rec(in, "e", `{"X":3}`, 5000))
	for _, c := range []struct {
		fn, timeout, err string
	}{
		{"THROWS", "300ms", "function THROWS: exception: TypeError: unlucky 13 at THROWS:2:25(9)"},
		{"SPINS", "300ms", "function SPINS: timeout: ran longer than 300ms"},
		{"WRONG", "300ms", `function WRONG: bad return: returned the string "thirteen" where a BIGINT belongs (an integer within 64 bits, as a Number or a BigInt)`},
		{"ESCAPES", "300ms", "function ESCAPES: exception: ReferenceError: require is not defined at ESCAPES:2:33(7)"},
		{"HOGS", "20s", "function HOGS: out of memory: the process's live heap grew by more than 33554432 bytes during the call"},
	} {
		out, errs := testkafka.Name(t, "jsbad_"+c.fn), testkafka.Name(t, "jsdlq_"+c.fn)
		execute(t, e, fmt.Sprintf(`SET 'sluice.udf.timeout'='%s'; SET 'sluice.udf.memory'='33554432';
			CREATE STREAM %s WITH (ERROR_TOPIC='%s') AS SELECT id, %s(x) AS y FROM %s;`, c.timeout, out, errs, c.fn, in))
		if diff := cmp.Diff([]string{`a {"Y":1}`, `c {"Y":2}`, `e {"Y":3}`}, values(awaitOutputs(t, brokers, out, 3))); diff != "" {
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
		// both to be readable.
		var got []string
		testkafka.Await(t, 30*time.Second, c.fn+" dead letters", func() bool {
			got = got[:0]
			for _, r := range testkafka.ReadAll(t, brokers, errs) {
				got = append(got, fmt.Sprintf("%s %s %s %s", r.Key, header(r, "sluice.offset"), header(r, "sluice.error.kind"), header(r, "sluice.error")))
			}
			return len(got) >= 2
		})
		wantDead := []string{"b 1 function " + c.err, "d 3 function " + c.err}
		if diff := cmp.Diff(wantDead, got); diff != "" {
			t.Errorf("%s: dead letters (-want +got):\n%s", c.fn, diff)
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
