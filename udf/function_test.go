package udf_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/internal/testudf"
	"github.com/sluice-sql/sluice/types"
	"github.com/sluice-sql/sluice/udf"
)

var limits = udf.Limits{Timeout: 2 * time.Second, MemoryBytes: 64 << 20}

func fn(t testing.TB, rt *udf.Runtime, module []byte, export string, result types.Type, args ...types.Type) *udf.Function {
	t.Helper()
	f, err := rt.Function(context.Background(), strings.ToUpper(export), module, export, udf.Signature{Args: args, Result: result}, limits)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func dec(s string) *apd.Decimal {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestCallEveryType calls the Go module's functions with a value and a
// NULL of each type and compares the exact results.
func TestCallEveryType(t *testing.T) {
	mod := testudf.GoModule(t)
	rt := udf.NewRuntime()
	defer rt.Close()
	decT := types.DecimalOf(6, 2)
	arrT := types.ArrayOf(types.StringType)
	mapT := types.MapOf(types.StringType, types.BigIntType)
	structT := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.IntegerType}, {Name: "B", Type: types.BytesType}, {Name: "C", Type: decT}}}
	cases := []struct {
		name   string
		f      *udf.Function
		args   []any
		result any
	}{
		{"bigint", fn(t, rt, mod, "add_one", types.BigIntType, types.BigIntType), []any{int64(41)}, int64(42)},
		{"bigint from int", fn(t, rt, mod, "add_one", types.BigIntType, types.BigIntType), []any{int32(-5)}, int64(-4)},
		{"bigint null", fn(t, rt, mod, "add_one", types.BigIntType, types.BigIntType), []any{nil}, nil},
		{"int", fn(t, rt, mod, "add_ints", types.IntegerType, types.IntegerType, types.IntegerType), []any{int32(-7), int32(3)}, int32(-4)},
		{"int null", fn(t, rt, mod, "add_ints", types.IntegerType, types.IntegerType, types.IntegerType), []any{int32(1), nil}, nil},
		{"double", fn(t, rt, mod, "half", types.DoubleType, types.DoubleType), []any{3.0}, 1.5},
		{"double null", fn(t, rt, mod, "half", types.DoubleType, types.DoubleType), []any{nil}, nil},
		{"boolean", fn(t, rt, mod, "negate", types.BooleanType, types.BooleanType), []any{true}, false},
		{"boolean null", fn(t, rt, mod, "negate", types.BooleanType, types.BooleanType), []any{nil}, nil},
		{"string", fn(t, rt, mod, "shout", types.StringType, types.StringType), []any{"héllo"}, "HÉLLO!"},
		{"string empty", fn(t, rt, mod, "shout", types.StringType, types.StringType), []any{""}, "!"},
		{"string null", fn(t, rt, mod, "shout", types.StringType, types.StringType), []any{nil}, nil},
		{"two strings", fn(t, rt, mod, "concat2", types.StringType, types.StringType, types.StringType), []any{"ab", "cde"}, "ab-cde"},
		{"bytes", fn(t, rt, mod, "reverse_bytes", types.BytesType, types.BytesType), []any{[]byte{1, 2, 3}}, []byte{3, 2, 1}},
		{"bytes null", fn(t, rt, mod, "reverse_bytes", types.BytesType, types.BytesType), []any{nil}, nil},
		{"decimal", fn(t, rt, mod, "echo", decT, decT), []any{dec("-12.30")}, dec("-12.30")},
		{"array", fn(t, rt, mod, "echo", arrT, arrT), []any{[]any{"a", nil, "c\"d"}}, []any{"a", nil, "c\"d"}},
		{"map", fn(t, rt, mod, "echo", mapT, mapT), []any{map[string]any{"x": int64(1), "y": nil}}, map[string]any{"x": int64(1), "y": nil}},
		{"struct", fn(t, rt, mod, "echo", structT, structT), []any{[]any{int32(5), []byte("hi"), dec("1.25")}}, []any{int32(5), []byte("hi"), dec("1.25")}},
		{"struct null", fn(t, rt, mod, "echo", structT, structT), []any{nil}, nil},
		{"date", fn(t, rt, mod, "next_day", types.Type{Kind: types.Date}, types.Type{Kind: types.Date}), []any{int32(19000)}, int32(19001)},
		{"timestamp", fn(t, rt, mod, "later", types.Type{Kind: types.Timestamp}, types.Type{Kind: types.Timestamp}), []any{int64(1700000000000)}, int64(1700000001000)},
	}
	for _, c := range cases {
		got, err := c.f.Call(c.args)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d, ok := got.(*apd.Decimal); ok {
			if w, _ := c.result.(*apd.Decimal); w == nil || d.Text('f') != w.Text('f') {
				t.Errorf("%s: got %v, want %v", c.name, got, c.result)
			}
			continue
		}
		if s, ok := got.([]any); ok && len(s) == 3 {
			if d, ok := s[2].(*apd.Decimal); ok {
				s[2] = d.Text('f')
				c.result.([]any)[2] = c.result.([]any)[2].(*apd.Decimal).Text('f')
			}
		}
		if diff := cmp.Diff(c.result, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", c.name, diff)
		}
	}
}

// TestFailures checks that a loop, an unbounded allocation, a trap and a
// bad return are each a *udf.CallError of their kind, and that the next
// call works on a fresh instance.
func TestFailures(t *testing.T) {
	mod := testudf.GoModule(t)
	rt := udf.NewRuntime()
	defer rt.Close()
	small := udf.Limits{Timeout: 200 * time.Millisecond, MemoryBytes: 32 << 20}
	mk := func(module []byte, export string, result types.Type) *udf.Function {
		l := small
		if export == "hog" {
			// Time enough to fill its memory on a loaded machine.
			l.Timeout = 20 * time.Second
		}
		f, err := rt.Function(context.Background(), strings.ToUpper(export), module, export, udf.Signature{Args: []types.Type{types.BigIntType}, Result: result}, l)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cases := []struct {
		f    *udf.Function
		kind string
		ok   any
	}{
		{mk(mod, "spin", types.BigIntType), udf.KindTimeout, int64(7)},
		{mk(mod, "hog", types.BigIntType), udf.KindMemory, int64(7)},
		{mk(testudf.TrapModule, "trap13", types.BigIntType), udf.KindTrap, int64(7)},
		{mk(mod, "bad_string", types.StringType), udf.KindBadReturn, "ok"},
	}
	for _, c := range cases {
		if got, err := c.f.Call([]any{int64(7)}); err != nil || got != c.ok {
			t.Fatalf("%s(7) = %v, %v; want %v", c.f.Name(), got, err, c.ok)
		}
		_, err := c.f.Call([]any{int64(13)})
		var ce *udf.CallError
		if !errors.As(err, &ce) || ce.Kind != c.kind || ce.Function != c.f.Name() {
			t.Fatalf("%s(13): got %v, want a %s", c.f.Name(), err, c.kind)
		}
		if got, err := c.f.Call([]any{int64(7)}); err != nil || got != c.ok {
			t.Fatalf("%s(7) after the failure = %v, %v; want %v", c.f.Name(), got, err, c.ok)
		}
	}
	bb := mk(mod, "bad_bool", types.BooleanType)
	_, err := bb.Call([]any{int64(1)})
	if err == nil || err.Error() != "function BAD_BOOL: bad return: returned 7 for a BOOLEAN, which must be 0 or 1" {
		t.Fatalf("bad_bool: %v", err)
	}
}

// TestCheck refuses exports that do not follow the convention.
func TestCheck(t *testing.T) {
	mod := testudf.GoModule(t)
	rt := udf.NewRuntime()
	defer rt.Close()
	ctx := context.Background()
	for _, c := range []struct {
		module []byte
		export string
		sig    udf.Signature
		want   string
	}{
		{mod, "nope", udf.Signature{Args: []types.Type{types.BigIntType}, Result: types.BigIntType},
			`invalid WebAssembly function: the module exports no function "nope"`},
		{mod, "add_one", udf.Signature{Args: []types.Type{types.StringType}, Result: types.BigIntType},
			`invalid WebAssembly function: export "add_one" is (i64, i64) -> (i64), the calling convention for (STRING) RETURNS BIGINT wants (i64, i32, i32) -> (i64)`},
		{testudf.TrapModule, "trap13", udf.Signature{Args: []types.Type{types.BigIntType}, Result: types.StringType},
			`invalid WebAssembly function: the module exports no memory, which its STRING, BYTES, DECIMAL, ARRAY, MAP or STRUCT values travel in`},
		{[]byte("not wasm"), "f", udf.Signature{Result: types.BigIntType}, ""},
	} {
		err := rt.Check(ctx, c.module, c.export, c.sig)
		if err == nil || !errors.Is(err, udf.ErrModule) || (c.want != "" && err.Error() != c.want) {
			t.Errorf("%s: got %v, want %q", c.export, err, c.want)
		}
	}
	if err := rt.Check(ctx, testudf.TrapModule, "trap13", udf.Signature{Args: []types.Type{types.BigIntType}, Result: types.BigIntType}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkCallScalar is one BIGINT call through the pool: with the time
// limit (wazero's watch of the call's context) and without.
func BenchmarkCallScalar(b *testing.B) {
	mod := testudf.GoModule(b)
	rt := udf.NewRuntime()
	defer rt.Close()
	for _, l := range []struct {
		name string
		l    udf.Limits
	}{{"timeout", limits}, {"no-timeout", udf.Limits{MemoryBytes: 64 << 20}}} {
		b.Run(l.name, func(b *testing.B) {
			f, err := rt.Function(context.Background(), "ADD_INTS", mod, "add_ints", udf.Signature{Args: []types.Type{types.IntegerType, types.IntegerType}, Result: types.IntegerType}, l.l)
			if err != nil {
				b.Fatal(err)
			}
			// Small values: Go boxes them in an interface without
			// allocating, so what is counted is the call's own cost.
			args := []any{int32(1), int32(2)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Call(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	_ = math.Pi
}

// TestOtherLanguages calls functions compiled from C (clang's wasm32
// target) and AssemblyScript, with values and NULLs.
func TestOtherLanguages(t *testing.T) {
	for _, lang := range []struct {
		name   string
		module func(testing.TB) []byte
		calls  func(t *testing.T, rt *udf.Runtime, mod []byte)
	}{
		{"C", testudf.CModule, func(t *testing.T, rt *udf.Runtime, mod []byte) {
			add := fn(t, rt, mod, "c_add_one", types.BigIntType, types.BigIntType)
			upper := fn(t, rt, mod, "c_upper", types.StringType, types.StringType)
			checkCalls(t, []call{{add, []any{int64(-3)}, int64(-2)}, {add, []any{nil}, nil},
				{upper, []any{"mixed Case 1"}, "MIXED CASE 1"}, {upper, []any{""}, ""}, {upper, []any{nil}, nil}})
		}},
		{"AssemblyScript", testudf.ASModule, func(t *testing.T, rt *udf.Runtime, mod []byte) {
			add := fn(t, rt, mod, "as_add_one", types.BigIntType, types.BigIntType)
			rev := fn(t, rt, mod, "as_reverse", types.BytesType, types.BytesType)
			checkCalls(t, []call{{add, []any{int64(41)}, int64(42)}, {add, []any{nil}, nil},
				{rev, []any{[]byte("abc")}, []byte("cba")}, {rev, []any{nil}, nil}})
		}},
	} {
		t.Run(lang.name, func(t *testing.T) {
			mod := lang.module(t)
			rt := udf.NewRuntime()
			defer rt.Close()
			lang.calls(t, rt, mod)
		})
	}
}

type call struct {
	f    *udf.Function
	args []any
	want any
}

func checkCalls(t *testing.T, calls []call) {
	t.Helper()
	for _, c := range calls {
		got, err := c.f.Call(c.args)
		if err != nil {
			t.Errorf("%s%v: %v", c.f.Name(), c.args, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s%v: (-want +got)\n%s", c.f.Name(), c.args, diff)
		}
	}
}

// TestUnreachableFunctionClosesInstances checks that a Function nothing
// refers to any more (its query is gone) has its idle instances closed.
func TestUnreachableFunctionClosesInstances(t *testing.T) {
	mod := testudf.GoModule(t)
	rt := udf.NewRuntime()
	defer rt.Close()
	f := fn(t, rt, mod, "add_one", types.BigIntType, types.BigIntType)
	if _, err := f.Call([]any{int64(1)}); err != nil {
		t.Fatal(err)
	}
	closed := udf.ClosedInstances()
	f = nil
	deadline := time.Now().Add(30 * time.Second)
	for runtime.GC(); udf.ClosedInstances() == closed; runtime.GC() {
		if time.Now().After(deadline) {
			t.Fatal("the idle instance of an unreachable function was not closed in 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBigModule checks that testudf.BigModule is a valid module: the
// engine's test of a module too large for a command relies on it.
func TestBigModule(t *testing.T) {
	rt := udf.NewRuntime()
	defer rt.Close()
	if err := rt.Check(context.Background(), testudf.BigModule(3<<20), "trap13", udf.Signature{Args: []types.Type{types.BigIntType}, Result: types.BigIntType}); err != nil {
		t.Fatal(err)
	}
}
