package udf

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	jsast "github.com/dop251/goja/ast"
	jsparser "github.com/dop251/goja/parser"

	"github.com/sluice-sql/sluice/types"
)

// KindException is a JavaScript function that threw: the CallError's Err
// is the exception as JavaScript prints it, with its stack.
const KindException = "exception"

// ErrJavaScript is wrapped by errors about a JavaScript body that does not
// compile: CREATE FUNCTION refuses it.
var ErrJavaScript = errors.New("invalid JavaScript function")

// jsMaxCallStack bounds the depth of a JavaScript function's calls (goja's
// own default is unbounded): a runaway recursion throws a RangeError, a
// bad record, instead of growing the goroutine's memory.
const jsMaxCallStack = 10_000

// JSProgram is a JavaScript function's body compiled once, shared by
// every query that calls the function's version: each call site makes
// its own JSFunction (and so its own pool of VMs) from it.
type JSProgram struct {
	name    string
	sig     Signature
	program *goja.Program
}

// CompileJavaScript compiles a function's body. The body is the body of
// a JavaScript function whose parameters are params in lower case, in
// strict mode; it returns the result with return. The body starts on the
// first line of the source goja compiles, so line numbers in errors are
// the body's own.
func CompileJavaScript(name string, params []string, body string, sig Signature) (*JSProgram, error) {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = strings.ToLower(p)
	}
	prefix := "(function(" + strings.Join(names, ", ") + ") {"
	src := prefix + body + "\n})"
	ast, err := jsparser.ParseFile(nil, name, src, 0)
	if err != nil {
		var list jsparser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			return nil, bodySyntaxError(list[0].Position.Line, list[0].Position.Column, len(prefix), list[0].Message)
		}
		return nil, fmt.Errorf("%w: %v", ErrJavaScript, err)
	}
	// One statement, the function expression: a body that closes the
	// function early and goes on with statements of its own is refused.
	if !oneFunction(ast) {
		return nil, fmt.Errorf("%w: the body must be a function body: it closes the function and goes on after it", ErrJavaScript)
	}
	prog, err := goja.CompileAST(ast, true)
	if err != nil {
		var se *goja.CompilerSyntaxError
		if errors.As(err, &se) && se.File != nil {
			at := se.File.Position(se.Offset)
			return nil, bodySyntaxError(at.Line, at.Column, len(prefix), se.Message)
		}
		return nil, fmt.Errorf("%w: %v", ErrJavaScript, err)
	}
	p := &JSProgram{name: name, sig: sig, program: prog}
	return p, nil
}

// JSSyntaxError is a body that does not compile. Line and Column are in
// the body, from 1 (the body's first line is the one that starts after
// $$), for the planner to place in the statement.
type JSSyntaxError struct {
	Line, Column int
	Message      string
}

func (e *JSSyntaxError) Error() string {
	return fmt.Sprintf("%v: SyntaxError at line %d:%d of the body: %s", ErrJavaScript, e.Line, e.Column, e.Message)
}

func (e *JSSyntaxError) Unwrap() error { return ErrJavaScript }

// bodySyntaxError places an error at line:column of the wrapped source
// in the body: its first line carries the wrapper's prefix.
func bodySyntaxError(line, column, prefix int, msg string) *JSSyntaxError {
	if line == 1 {
		column -= prefix
	}
	return &JSSyntaxError{Line: line, Column: max(column, 1), Message: msg}
}

// oneFunction reports whether the program is the one function expression
// CompileJavaScript wraps the body in.
func oneFunction(p *jsast.Program) bool {
	if len(p.Body) != 1 {
		return false
	}
	st, ok := p.Body[0].(*jsast.ExpressionStatement)
	if !ok {
		return false
	}
	_, ok = st.Expression.(*jsast.FunctionLiteral)
	return ok
}

// JSFunction is a JSProgram bound to a call site's limits, with its pool
// of VMs: each call takes a VM no other goroutine uses and gives it back
// unless the call was interrupted (time or memory limit) or panicked,
// when the VM is dropped. An exception or a bad return leaves the VM
// usable.
type JSFunction struct {
	prog   *JSProgram
	limits Limits
	pool   *idle[*jsVM]
}

// Function binds the program to limits for one call site.
func (p *JSProgram) Function(l Limits) *JSFunction {
	f := &JSFunction{prog: p, limits: l, pool: &idle[*jsVM]{closeOne: (*jsVM).close}}
	runtime.AddCleanup(f, (*idle[*jsVM]).close, f.pool)
	return f
}

// Name is the function's name as given.
func (f *JSFunction) Name() string { return f.prog.name }

// jsVM is one goja runtime with the function evaluated in it. mu orders
// the limits' interrupts against the calls: an interrupt is delivered
// only to the call it was meant for (seq), and a VM that received one is
// never used again, even if the call had returned by then.
type jsVM struct {
	vm    *goja.Runtime
	fn    goja.Callable
	uint8 goja.Value
	date  goja.Value
	args  []goja.Value
	timer *time.Timer

	mu          sync.Mutex
	inCall      bool
	seq         uint64
	started     time.Time
	timeout     time.Duration
	interrupted error
	// heapBase and heapSeq are the memory watch's: the live heap when it
	// first saw call heapSeq running.
	heapBase uint64
	heapSeq  uint64
	limit    uint64
}

var (
	errJSTimeout = errors.New("time limit")
	errJSMemory  = errors.New("memory limit")
)

// jsEpoch is what Date.now() and new Date() read in a function: a fixed
// clock, as a WebAssembly module's is, so that a function cannot depend
// on when it runs.
var jsEpoch = time.Unix(0, 0).UTC()

func (f *JSFunction) newVM() (*jsVM, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(jsMaxCallStack)
	vm.SetTimeSource(func() time.Time { return jsEpoch })
	vm.SetRandSource(newJSRand())
	v, err := vm.RunProgram(f.prog.program)
	if err != nil {
		return nil, &CallError{Function: f.prog.name, Kind: KindStart, Err: err}
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, &CallError{Function: f.prog.name, Kind: KindStart, Err: fmt.Errorf("the body is not a function")}
	}
	j := &jsVM{vm: vm, fn: fn, uint8: vm.Get("Uint8Array"), date: vm.Get("Date"), args: make([]goja.Value, len(f.prog.sig.Args)),
		limit: uint64(f.limits.memoryBytes()), timeout: f.limits.Timeout}
	if f.limits.Timeout > 0 {
		j.timer = time.AfterFunc(time.Hour, j.timeUp)
		j.timer.Stop()
	}
	heapWatch.add(j)
	return j, nil
}

// memoryBytes is the memory limit in bytes, the default when unset.
func (l Limits) memoryBytes() int64 {
	if l.MemoryBytes <= 0 {
		return DefaultMemoryBytes
	}
	return l.MemoryBytes
}

// timeUp is the timer's: it stops the running call if that call has run
// for the whole limit (a timer that fired for an earlier call, late, finds
// a call that started after it was set).
func (j *jsVM) timeUp() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.inCall && j.interrupted == nil && time.Since(j.started) >= j.timeout {
		j.interrupted = errJSTimeout
		j.vm.Interrupt(errJSTimeout)
	}
}

// interrupt stops call seq if it is still running.
func (j *jsVM) interrupt(seq uint64, why error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.inCall && j.seq == seq && j.interrupted == nil {
		j.interrupted = why
		j.vm.Interrupt(why)
	}
}

func (j *jsVM) close() {
	if j.timer != nil {
		j.timer.Stop()
	}
	heapWatch.remove(j)
}

// jsRand is a fixed-seed xorshift generator for Math.random: a function's
// random numbers do not vary between runs of one VM's calls, and no
// global generator is shared between VMs.
type jsRand struct{ s uint64 }

func newJSRand() func() float64 {
	r := &jsRand{s: 0x9e3779b97f4a7c15}
	return func() float64 {
		r.s ^= r.s << 13
		r.s ^= r.s >> 7
		r.s ^= r.s << 17
		return float64(r.s>>11) / (1 << 53)
	}
}

func (f *JSFunction) get() (*jsVM, error) {
	if j, ok := f.pool.take(); ok {
		return j, nil
	}
	return f.newVM()
}

func (f *JSFunction) put(j *jsVM) { f.pool.give(j) }

// Call runs the function on args (Go values of the signature's types, nil
// for NULL) and returns its result (nil for NULL). A failure is a
// *CallError: an exception, the time or memory limit, or a result that
// does not convert to the declared type (see docs/udf.md for the
// mapping).
func (f *JSFunction) Call(args []any) (any, error) {
	j, err := f.get()
	if err != nil {
		return nil, err
	}
	out, kind, err := f.call(j, args)
	j.mu.Lock()
	j.inCall = false
	why := j.interrupted
	j.mu.Unlock()
	if why != nil {
		// The VM holds an interrupt (delivered, or pending for its next
		// run if the call had just returned): it is not used again.
		j.close()
		switch {
		case err == nil:
			return out, nil
		case why == errJSTimeout:
			return nil, &CallError{Function: f.prog.name, Kind: KindTimeout, Err: fmt.Errorf("ran longer than %s", f.limits.Timeout)}
		default:
			return nil, &CallError{Function: f.prog.name, Kind: KindMemory, Err: fmt.Errorf("the process's live heap grew by more than %d bytes during the call", f.limits.memoryBytes())}
		}
	}
	if kind == KindTrap {
		j.close()
	} else {
		f.put(j)
	}
	if err != nil {
		return nil, &CallError{Function: f.prog.name, Kind: kind, Err: err}
	}
	return out, nil
}

func (f *JSFunction) call(j *jsVM, args []any) (out any, kind string, err error) {
	defer func() {
		// goja reports a JavaScript error as an error; a panic here is a
		// bug in the runtime or in the conversion, and it fails this
		// record, not the task.
		if r := recover(); r != nil {
			out, kind, err = nil, KindTrap, fmt.Errorf("the JavaScript runtime panicked: %v", r)
		}
	}()
	for i, t := range f.prog.sig.Args {
		var a any
		if i < len(args) {
			a = args[i]
		}
		if j.args[i], err = toJS(j, t, a); err != nil {
			return nil, KindTrap, fmt.Errorf("argument %d: %w", i+1, err)
		}
	}
	j.mu.Lock()
	j.seq++
	j.inCall = true
	if j.timer != nil {
		j.started = time.Now()
	}
	j.mu.Unlock()
	if j.timer != nil {
		j.timer.Reset(f.limits.Timeout)
	}
	v, err := j.fn(goja.Undefined(), j.args...)
	if j.timer != nil {
		j.timer.Stop()
	}
	if err != nil {
		var ex *goja.Exception
		var overflow *goja.StackOverflowError
		switch {
		case errors.As(err, &overflow):
			// Uncatchable in JavaScript; the VM is dropped as after a
			// trap.
			return nil, KindTrap, fmt.Errorf("more than %d nested calls (stack overflow)%s", jsMaxCallStack, err.Error())
		case errors.As(err, &ex):
			return nil, KindException, errors.New(ex.Error())
		}
		return nil, KindTrap, err
	}
	out, err = fromJS(f.prog.sig.Result, v.Export())
	if err != nil {
		return nil, KindBadReturn, err
	}
	return out, "", nil
}

// maxSafeInt is the largest integer a JavaScript number holds exactly.
const maxSafeInt = 1<<53 - 1

const msPerDay = 86_400_000

// toJS converts a Sluice value of type t to JavaScript (docs/udf.md has
// the table).
func toJS(j *jsVM, t types.Type, v any) (goja.Value, error) {
	if v == nil {
		return goja.Null(), nil
	}
	vm := j.vm
	switch t.Kind {
	case types.Boolean:
		b, _ := v.(bool)
		return vm.ToValue(b), nil
	case types.Integer, types.Time:
		x, _ := types.AsInt64(v)
		return vm.ToValue(x), nil
	case types.BigInt:
		x, _ := types.AsInt64(v)
		if x > maxSafeInt || x < -maxSafeInt {
			return vm.ToValue(big.NewInt(x)), nil
		}
		return vm.ToValue(x), nil
	case types.Double:
		x, _ := types.AsFloat(v)
		return vm.ToValue(x), nil
	case types.Decimal:
		d, ok := types.AsDecimal(v)
		if !ok {
			return nil, fmt.Errorf("%T is no DECIMAL", v)
		}
		return vm.ToValue(d.Text('f')), nil
	case types.String:
		s, _ := v.(string)
		return vm.ToValue(s), nil
	case types.Bytes:
		b, _ := v.([]byte)
		buf := vm.NewArrayBuffer(append([]byte(nil), b...))
		return vm.New(j.uint8, vm.ToValue(buf))
	case types.Date:
		x, _ := types.AsInt64(v)
		return vm.New(j.date, vm.ToValue(x*msPerDay))
	case types.Timestamp:
		x, _ := types.AsInt64(v)
		return vm.New(j.date, vm.ToValue(x))
	case types.Array:
		xs, _ := v.([]any)
		items := make([]any, len(xs))
		for i, x := range xs {
			e, err := toJS(j, *t.Elem, x)
			if err != nil {
				return nil, err
			}
			items[i] = e
		}
		return vm.NewArray(items...), nil
	case types.Map:
		m, _ := v.(map[string]any)
		o := vm.NewObject()
		for _, k := range sortedKeys(m) {
			e, err := toJS(j, *t.Elem, m[k])
			if err != nil {
				return nil, err
			}
			if err := o.Set(k, e); err != nil {
				return nil, err
			}
		}
		return o, nil
	case types.Struct:
		xs, _ := v.([]any)
		o := vm.NewObject()
		for i, fd := range t.Fields {
			var x any
			if i < len(xs) {
				x = xs[i]
			}
			e, err := toJS(j, fd.Type, x)
			if err != nil {
				return nil, err
			}
			if err := o.Set(fd.Name, e); err != nil {
				return nil, err
			}
		}
		return o, nil
	}
	return nil, fmt.Errorf("type %s has no JavaScript mapping", t)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}

// fromJS converts a function's result, as goja exports it (numbers as
// int64 or float64, BigInt as *big.Int, a Date as time.Time, a Uint8Array
// as a view of its bytes, an ArrayBuffer, an Array as []any, an object as
// map[string]any, null and undefined as nil), to the Go value of type t.
func fromJS(t types.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func(why string) (any, error) {
		return nil, fmt.Errorf("returned %s where a %s belongs%s", jsDescribe(v), t, why)
	}
	switch t.Kind {
	case types.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case types.Integer:
		if x, ok := jsInteger(v); ok && x >= math.MinInt32 && x <= math.MaxInt32 {
			return int32(x), nil
		}
		return bad(" (an integer from -2147483648 to 2147483647)")
	case types.BigInt:
		if x, ok := jsInteger(v); ok {
			return x, nil
		}
		return bad(" (an integer within 64 bits, as a Number or a BigInt)")
	case types.Double:
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		}
	case types.Decimal:
		var text string
		switch x := v.(type) {
		case string:
			text = x
		case int64:
			text = fmt.Sprint(x)
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return bad("")
			}
			text = fmt.Sprint(x)
		case *big.Int:
			text = x.String()
		default:
			return bad(" (a string of decimal text or a number)")
		}
		return decodeDecimal(t, text)
	case types.String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case types.Bytes:
		switch x := v.(type) {
		case []byte:
			return append([]byte{}, x...), nil
		case goja.ArrayBuffer:
			return append([]byte{}, x.Bytes()...), nil
		}
		return bad(" (a Uint8Array or an ArrayBuffer)")
	case types.Date:
		switch x := v.(type) {
		case time.Time:
			ms := x.UnixMilli()
			if ms%msPerDay != 0 {
				return bad(" (a Date at midnight UTC)")
			}
			return int32(ms / msPerDay), nil
		default:
			if d, ok := jsInteger(v); ok && d >= math.MinInt32 && d <= math.MaxInt32 {
				return int32(d), nil
			}
		}
		return bad(" (a Date at midnight UTC or a number of days since 1970-01-01)")
	case types.Time:
		if x, ok := jsInteger(v); ok && x >= 0 && x < msPerDay {
			return int32(x), nil
		}
		return bad(" (milliseconds since midnight, from 0 to 86399999)")
	case types.Timestamp:
		if x, ok := v.(time.Time); ok {
			return x.UnixMilli(), nil
		}
		if x, ok := jsInteger(v); ok {
			return x, nil
		}
		return bad(" (a Date or milliseconds since the epoch)")
	case types.Array:
		xs, ok := v.([]any)
		if !ok {
			return bad(" (an Array)")
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			e, err := fromJS(*t.Elem, x)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = e
		}
		return out, nil
	case types.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad(" (an object)")
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			e, err := fromJS(*t.Elem, x)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k, err)
			}
			out[k] = e
		}
		return out, nil
	case types.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return bad(" (an object keyed by the field names)")
		}
		out := make([]any, len(t.Fields))
		for i, fd := range t.Fields {
			e, err := fromJS(fd.Type, m[fd.Name])
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", fd.Name, err)
			}
			out[i] = e
		}
		return out, nil
	}
	return bad("")
}

// jsInteger reads an exported Number or BigInt that is an exact integer
// within 64 bits.
func jsInteger(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return int64(x), true
		}
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
	}
	return 0, false
}

// jsDescribe names a returned value for an error: its JavaScript kind and,
// for a scalar, the value.
func jsDescribe(v any) string {
	switch x := v.(type) {
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case int64, float64:
		return fmt.Sprintf("the number %v", x)
	case *big.Int:
		return fmt.Sprintf("the BigInt %s", x)
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("the string %q", x)
	case time.Time:
		return "the Date " + x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return "a Uint8Array"
	case goja.ArrayBuffer:
		return "an ArrayBuffer"
	case []any:
		return "an Array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
