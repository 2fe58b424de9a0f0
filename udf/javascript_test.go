package udf_test

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/types"
	"github.com/sluice-sql/sluice/udf"
)

func jsFn(t testing.TB, l udf.Limits, params []string, body string, result types.Type, args ...types.Type) *udf.JSFunction {
	t.Helper()
	p, err := udf.CompileJavaScript("F", params, body, udf.Signature{Args: args, Result: result})
	if err != nil {
		t.Fatal(err)
	}
	return p.Function(l)
}

// TestJavaScriptEveryType calls JavaScript functions with a value and a
// NULL of each type, one that echoes its argument and one that shows what
// JavaScript saw (typeof and its printing), and compares exact results.
func TestJavaScriptEveryType(t *testing.T) {
	decT := types.DecimalOf(6, 2)
	arrT := types.ArrayOf(types.StringType)
	mapT := types.MapOf(types.StringType, types.BigIntType)
	structT := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.IntegerType}, {Name: "B", Type: types.BytesType}, {Name: "C", Type: decT}}}
	dateT, timeT, tsT := types.Type{Kind: types.Date}, types.Type{Kind: types.Time}, types.Type{Kind: types.Timestamp}
	// seen prints how a value looks in JavaScript.
	const seen = `return x === null ? 'null' : (x instanceof Uint8Array ? 'Uint8Array ' + Array.from(x).join(',') :
		x instanceof Date ? 'Date ' + x.toISOString() : typeof x + ' ' + JSON.stringify(x, (k, v) => typeof v === 'bigint' ? v + 'n' : v));`
	cases := []struct {
		name   string
		t      types.Type
		arg    any
		seen   string
		result any
	}{
		{"boolean", types.BooleanType, true, "boolean true", true},
		{"int", types.IntegerType, int32(-7), "number -7", int32(-7)},
		{"bigint safe", types.BigIntType, int64(1)<<53 - 1, "number 9007199254740991", int64(1)<<53 - 1},
		{"bigint -2^53", types.BigIntType, int64(-1) << 53, `bigint "-9007199254740992n"`, int64(-1) << 53},
		{"bigint beyond 2^53", types.BigIntType, int64(1)<<53 + 1, `bigint "9007199254740993n"`, int64(1)<<53 + 1},
		{"bigint min", types.BigIntType, int64(-1 << 63), `bigint "-9223372036854775808n"`, int64(-1 << 63)},
		{"double", types.DoubleType, 1.5, "number 1.5", 1.5},
		{"decimal", decT, dec("-12.30"), `string "-12.30"`, dec("-12.30")},
		{"string", types.StringType, "héllo \"q\"", `string "héllo \"q\""`, "héllo \"q\""},
		{"bytes", types.BytesType, []byte{1, 2, 255}, "Uint8Array 1,2,255", []byte{1, 2, 255}},
		{"date", dateT, int32(19000), "Date 2022-01-08T00:00:00.000Z", int32(19000)},
		{"time", timeT, int32(3723004), "number 3723004", int32(3723004)},
		{"timestamp", tsT, int64(1700000000123), "Date 2023-11-14T22:13:20.123Z", int64(1700000000123)},
		{"array", arrT, []any{"a", nil, "c"}, `object ["a",null,"c"]`, []any{"a", nil, "c"}},
		{"map", mapT, map[string]any{"y": nil, "x": int64(1)}, `object {"x":1,"y":null}`, map[string]any{"x": int64(1), "y": nil}},
		{"struct", structT, []any{int32(5), []byte("hi"), dec("1.25")}, `object {"A":5,"B":{"0":104,"1":105},"C":"1.25"}`, []any{int32(5), []byte("hi"), dec("1.25")}},
	}
	for _, c := range cases {
		show := jsFn(t, udf.Limits{}, []string{"X"}, seen, types.StringType, c.t)
		echo := jsFn(t, udf.Limits{}, []string{"X"}, "return x;", c.t, c.t)
		for _, arg := range []any{c.arg, nil} {
			wantSeen, wantEcho := c.seen, c.result
			if arg == nil {
				wantSeen, wantEcho = "null", nil
			}
			got, err := show.Call([]any{arg})
			if err != nil || got != wantSeen {
				t.Errorf("%s %v: JavaScript saw %v (%v), want %q", c.name, arg, got, err, wantSeen)
			}
			got, err = echo.Call([]any{arg})
			if err != nil {
				t.Errorf("%s %v: echo: %v", c.name, arg, err)
				continue
			}
			if diff := cmp.Diff(wantEcho, got, cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 }), decimalCmp); diff != "" {
				t.Errorf("%s %v: echo (-want +got):\n%s", c.name, arg, diff)
			}
		}
	}
}

// TestJavaScriptReturns converts results JavaScript spells in its own
// ways (a Number for a DECIMAL, a BigInt for a BIGINT, undefined for
// NULL), and refuses those that do not fit the declared type as bad
// returns with the value in the error.
func TestJavaScriptReturns(t *testing.T) {
	decT := types.DecimalOf(4, 1)
	structT := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.IntegerType}}}
	ok := []struct {
		body   string
		t      types.Type
		result any
	}{
		{"return 2.25 * 2;", decT, dec("4.5")},
		{"return 12n ** 15n;", types.BigIntType, int64(15407021574586368)},
		{"return 2 ** 40;", types.BigIntType, int64(1) << 40},
		{"return;", types.StringType, nil},
		{"return new Date(Date.UTC(2024, 1, 29));", types.Type{Kind: types.Date}, int32(19782)},
		{"return 19782;", types.Type{Kind: types.Date}, int32(19782)},
		{"return new Uint8Array([7, 8]).buffer;", types.BytesType, []byte{7, 8}},
		{"return {A: 3, extra: 'ignored'};", structT, []any{int32(3)}},
		{"return {};", structT, []any{nil}},
		{"return Date.now();", types.BigIntType, int64(0)},
	}
	for _, c := range ok {
		got, err := jsFn(t, udf.Limits{}, nil, c.body, c.t).Call(nil)
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if diff := cmp.Diff(c.result, got, decimalCmp); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.body, diff)
		}
	}
	bad := []struct {
		body string
		t    types.Type
		err  string
	}{
		{"return 'yes';", types.BooleanType, "function F: bad return: returned the string \"yes\" where a BOOLEAN belongs"},
		{"return 1.5;", types.IntegerType, "returned the number 1.5 where a INTEGER belongs (an integer from -2147483648 to 2147483647)"},
		{"return 2 ** 31;", types.IntegerType, "returned the number 2147483648 where a INTEGER belongs"},
		{"return 2n ** 64n;", types.BigIntType, "returned the BigInt 18446744073709551616 where a BIGINT belongs (an integer within 64 bits, as a Number or a BigInt)"},
		{"return 7;", types.StringType, "returned the number 7 where a STRING belongs"},
		{"return 12345.6;", decT, "does not fit DECIMAL(4, 1)"},
		{"return 'abc';", decT, `returned "abc" for a DECIMAL(4, 1)`},
		{"return [1];", types.BytesType, "returned an Array where a BYTES belongs (a Uint8Array or an ArrayBuffer)"},
		{"return new Date(1);", types.Type{Kind: types.Date}, "returned the Date 1970-01-01T00:00:00.001Z where a DATE belongs (a Date at midnight UTC)"},
		{"return 86400000;", types.Type{Kind: types.Time}, "(milliseconds since midnight, from 0 to 86399999)"},
		{"return ['a', 2];", types.ArrayOf(types.StringType), "element 1: returned the number 2 where a STRING belongs"},
		{"return {A: 'x'};", structT, "field A: returned the string \"x\" where a INTEGER belongs"},
		{"return 'x';", structT, "an object keyed by the field names"},
	}
	for _, c := range bad {
		_, err := jsFn(t, udf.Limits{}, nil, c.body, c.t).Call(nil)
		var ce *udf.CallError
		if !errors.As(err, &ce) || ce.Kind != udf.KindBadReturn || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want a bad return containing %q", c.body, err, c.err)
		}
	}
}

// TestJavaScriptSandbox: a function sees ECMAScript and nothing of the
// host: no require, modules, console, process, timers, network or file
// system; the clock is fixed and Math.random repeats.
func TestJavaScriptSandbox(t *testing.T) {
	body := `return ['require', 'module', 'exports', 'console', 'process', 'setTimeout', 'setInterval', 'fetch',
		'XMLHttpRequest', 'WebSocket', 'Deno', 'Bun', 'global', 'os', 'fs']
		.filter(n => typeof globalThis[n] !== 'undefined').join(',') + '|' + new Date().toISOString();`
	got, err := jsFn(t, udf.Limits{}, nil, body, types.StringType).Call(nil)
	if err != nil || got != "|1970-01-01T00:00:00.000Z" {
		t.Errorf("host objects and clock: %v (%v), want none and the epoch", got, err)
	}
	r1, _ := jsFn(t, udf.Limits{}, nil, "return Math.random();", types.DoubleType).Call(nil)
	r2, _ := jsFn(t, udf.Limits{}, nil, "return Math.random();", types.DoubleType).Call(nil)
	if r1 != r2 {
		t.Errorf("Math.random in two fresh VMs: %v, %v; want the same", r1, r2)
	}
	// Strict mode: an undeclared variable is an error, not a global that
	// would outlive the call in a pooled VM.
	_, err = jsFn(t, udf.Limits{}, nil, "leak = 1; return 1;", types.IntegerType).Call(nil)
	if err == nil || !strings.Contains(err.Error(), "function F: exception: ReferenceError: leak is not defined") {
		t.Errorf("undeclared variable: %v", err)
	}
}

// TestJavaScriptCompile refuses bodies that do not compile or that are
// not one function body, with the body's own line numbers.
func TestJavaScriptCompile(t *testing.T) {
	for body, want := range map[string]string{
		"\n  return x +;":              "invalid JavaScript function: SyntaxError at line 2:13 of the body: Unexpected token ;",
		"return x +;":                  "invalid JavaScript function: SyntaxError at line 1:11 of the body: Unexpected token ;",
		"\ndelete x;":                  "invalid JavaScript function: SyntaxError at line 2:8 of the body: Delete of an unqualified identifier in strict mode",
		"return 1; }); (function() {":  "invalid JavaScript function: the body must be a function body: it closes the function and goes on after it",
		"return 1; }) + (function() {": "invalid JavaScript function: the body must be a function body: it closes the function and goes on after it",
	} {
		_, err := udf.CompileJavaScript("F", []string{"X"}, body, udf.Signature{Args: []types.Type{types.IntegerType}, Result: types.IntegerType})
		if err == nil || !errors.Is(err, udf.ErrJavaScript) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", body, err, want)
		}
	}
}

// TestJavaScriptFailures: a throw, a loop forever, an allocation without
// bound and a runaway recursion each fail their call with their kind; the
// function serves the next call; the interrupted VMs are dropped, the one
// that threw is kept.
func TestJavaScriptFailures(t *testing.T) {
	body := `
		if (x === 1) throw new Error('boom ' + x);
		if (x === 2) for (;;) {}
		if (x === 3) { const a = []; for (;;) a.push('x'.repeat(1 << 16) + a.length); }
		if (x === 4) { const f = n => f(n + 1) + 1; return f(0); }
		return x * 10;`
	f := jsFn(t, udf.Limits{Timeout: 300 * time.Millisecond, MemoryBytes: 32 << 20}, []string{"X"}, body, types.IntegerType, types.IntegerType)
	hog := jsFn(t, udf.Limits{Timeout: time.Minute, MemoryBytes: 32 << 20}, []string{"X"}, body, types.IntegerType, types.IntegerType)
	for _, c := range []struct {
		f          *udf.JSFunction
		x          int32
		kind, text string
		idle       int
	}{
		{f, 1, udf.KindException, "function F: exception: Error: boom 1 at F:2:22(9)", 1},
		{f, 2, udf.KindTimeout, "function F: timeout: ran longer than 300ms", 0},
		{hog, 3, udf.KindMemory, "function F: out of memory: the process's live heap grew by more than 33554432 bytes during the call", 0},
		{f, 4, udf.KindTrap, "function F: trap: more than 10000 nested calls (stack overflow) at f (F:5:34(6))", 0},
	} {
		if _, err := c.f.Call([]any{int32(5)}); err != nil {
			t.Fatal(err)
		}
		_, err := c.f.Call([]any{c.x})
		var ce *udf.CallError
		if !errors.As(err, &ce) || ce.Kind != c.kind || err.Error() != c.text {
			t.Errorf("x=%d: got %v, want %s: %q", c.x, err, c.kind, c.text)
		}
		// The VM the call ran on is back in the pool, or dropped.
		if got := udf.IdleJSVMs(c.f); got != c.idle {
			t.Errorf("x=%d: %d idle VMs, want %d", c.x, got, c.idle)
		}
		if got, err := c.f.Call([]any{int32(5)}); err != nil || got != int32(50) {
			t.Errorf("after x=%d: %v, %v; want 50", c.x, got, err)
		}
	}
}

var decimalCmp = cmp.Comparer(func(a, b interface{ String() string }) bool { return a.String() == b.String() })

// BenchmarkCallJavaScript is one call of a two-INT function through the
// pool, as BenchmarkCallScalar is for WebAssembly.
func BenchmarkCallJavaScript(b *testing.B) {
	for _, timeout := range []time.Duration{udf.DefaultTimeout, 0} {
		b.Run("timeout="+timeout.String(), func(b *testing.B) {
			f := jsFn(b, udf.Limits{Timeout: timeout}, []string{"A", "B"}, "return a + b;", types.IntegerType, types.IntegerType, types.IntegerType)
			args := []any{int32(1), int32(2)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Call(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestJavaScriptConcurrentCalls: goroutines calling one function at once
// each get a VM of their own (a global the body keeps per VM is never
// seen by two calls at once), and every result is exact.
func TestJavaScriptConcurrentCalls(t *testing.T) {
	f := jsFn(t, udf.Limits{Timeout: 5 * time.Second}, []string{"X"},
		"globalThis.busy = (globalThis.busy || 0) + 1; try { if (globalThis.busy !== 1) throw new Error('shared'); return x * 3; } finally { globalThis.busy--; }",
		types.BigIntType, types.BigIntType)
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range 300 {
				x := int64(g*1000 + i)
				got, err := f.Call([]any{x})
				if err == nil && got != 3*x {
					err = fmt.Errorf("F(%d) = %v, want %d", x, got, 3*x)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := udf.IdleJSVMs(f); n < 1 || n > 4 {
		t.Errorf("%d idle VMs after the calls, want 1 to 4", n)
	}
}
