package udf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/types"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// Failure kinds a *CallError names.
const (
	KindTrap      = "trap"
	KindTimeout   = "timeout"
	KindExit      = "exit"
	KindBadReturn = "bad return"
	// KindMemory is a trap or exit of an instance whose memory had grown
	// to within a quarter of the limit: the module ran out of memory
	// (wazero refuses a memory.grow past the limit; what the module does
	// then, a Go module aborts, is the module's).
	KindMemory = "out of memory"
	KindStart  = "start"
)

// CallError is a call that did not return a value: the module trapped,
// exited (a Go module out of memory exits), ran past the time limit, or
// returned a value that breaks the calling convention.
type CallError struct {
	Function string
	Kind     string
	Err      error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("function %s: %s: %v", e.Function, e.Kind, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// Function is one export of a module bound to a signature, with a pool of
// module instances: each call takes an instance no other goroutine uses,
// and gives it back unless the call failed, when it is closed instead.
// Make one per place that calls it (a query's compiled expression), so
// the pool is that place's own.
type Function struct {
	name     string
	export   string
	sig      Signature
	limits   Limits
	w        *wasmRuntime
	compiled wazero.CompiledModule
	variable bool
	stackLen int

	pool *idle[*instance]
}

// idle is a call site's idle instances (WebAssembly module instances or
// JavaScript VMs): a call takes one no other goroutine is using and gives
// it back after. It is apart from the function that owns it so that a
// cleanup can close the instances once that function is unreachable (the
// query that compiled it is gone) without keeping it reachable.
type idle[T any] struct {
	mu       sync.Mutex
	free     []T
	closeOne func(T)
}

// take returns an idle instance, or false when there is none (the caller
// makes one).
func (p *idle[T]) take() (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var v T
	n := len(p.free)
	if n == 0 {
		return v, false
	}
	v = p.free[n-1]
	p.free = p.free[:n-1]
	return v, true
}

// give returns an instance a call is done with.
func (p *idle[T]) give(v T) {
	p.mu.Lock()
	p.free = append(p.free, v)
	p.mu.Unlock()
}

func (p *idle[T]) close() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, v := range free {
		p.closeOne(v)
	}
}

// Function binds export of module under name (for errors and logs) with
// the given limits. The module is compiled once per Runtime and limits.
func (rt *Runtime) Function(ctx context.Context, name string, module []byte, export string, sig Signature, l Limits) (*Function, error) {
	w, c, err := rt.compile(ctx, module, l)
	if err != nil {
		return nil, err
	}
	if err := checkExport(c, export, sig); err != nil {
		return nil, err
	}
	params, _, variable := wasmSignature(sig)
	f := &Function{name: name, export: export, sig: sig, limits: l, w: w, compiled: c, variable: variable,
		stackLen: max(len(params), 1), pool: &idle[*instance]{closeOne: closeInstance}}
	runtime.AddCleanup(f, (*idle[*instance]).close, f.pool)
	return f, nil
}

// Name is the function's name as given.
func (f *Function) Name() string { return f.name }

// instance is one instantiated module with what a call reuses.
type instance struct {
	mod   api.Module
	fn    api.Function
	alloc api.Function
	mem   api.Memory
	ctx   *callCtx
	stack []uint64
	one   [1]uint64
	// buf holds the call's variable-length arguments one after another,
	// lengths each one's length; base is where the module put buf.
	buf     []byte
	lengths []uint32
	base    uint32
}

func (in *instance) lens(i int) uint32 { return in.lengths[i] }

// callCtx is the context every call of an instance runs with: made once,
// so a call allocates none. Its Done channel closes when the instance's
// timer fires during a call; wazero then stops the module (the runtime
// is built WithCloseOnContextDone) and the instance is not used again.
// result_null marks null on it.
type callCtx struct {
	done    chan struct{}
	timer   *time.Timer
	expired atomic.Bool
	null    bool
}

func (c *callCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *callCtx) Done() <-chan struct{}       { return c.done }
func (c *callCtx) Value(any) any               { return nil }
func (c *callCtx) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

func (f *Function) get() (*instance, error) {
	if in, ok := f.pool.take(); ok {
		return in, nil
	}
	return f.instantiate()
}

func (f *Function) put(in *instance) { f.pool.give(in) }

func (f *Function) discard(in *instance) { closeInstance(in) }

// closedInstances counts instances closed, for the tests.
var closedInstances atomic.Int64

func closeInstance(in *instance) {
	closedInstances.Add(1)
	if in.ctx.timer != nil {
		in.ctx.timer.Stop()
	}
	_ = in.mod.Close(context.Background())
}

func (f *Function) instantiate() (*instance, error) {
	c := &callCtx{}
	if f.limits.Timeout > 0 {
		c.done = make(chan struct{})
		c.timer = time.AfterFunc(time.Hour, func() {
			c.expired.Store(true)
			close(c.done)
		})
		c.timer.Stop()
	}
	// No file system, environment, arguments or real clock: the default
	// module config grants none of them. The name is empty so that any
	// number of instances may live in one runtime.
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	mod, err := f.w.r.InstantiateModule(c, f.compiled, cfg)
	if err != nil {
		return nil, f.failure(c, KindStart, err)
	}
	in := &instance{mod: mod, ctx: c, fn: mod.ExportedFunction(f.export), alloc: mod.ExportedFunction(AllocExport),
		stack: make([]uint64, f.stackLen)}
	if len(f.compiled.ExportedMemories()) > 0 {
		in.mem = mod.Memory()
	}
	if init := mod.ExportedFunction(InitializeExport); init != nil {
		if err := f.run(in, init, in.one[:0]); err != nil {
			f.discard(in)
			return nil, f.failure(c, KindStart, err)
		}
	}
	return in, nil
}

// run calls fn on in under the time limit.
func (f *Function) run(in *instance, fn api.Function, stack []uint64) error {
	c := in.ctx
	if c.timer != nil {
		c.timer.Reset(f.limits.Timeout)
	}
	err := fn.CallWithStack(c, stack)
	if c.timer != nil && !c.timer.Stop() && err == nil {
		// The timer fired as the call returned: the result stands, but
		// the instance's context is done for good.
		err = errTimerSpent
	}
	return err
}

var errTimerSpent = errors.New("time limit reached as the call returned")

// failure classifies a failed call.
func (f *Function) failure(c *callCtx, kind string, err error) *CallError {
	var exit *sys.ExitError
	switch {
	case c.expired.Load() || (errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded):
		return &CallError{Function: f.name, Kind: KindTimeout, Err: fmt.Errorf("ran longer than %s", f.limits.Timeout)}
	case errors.As(err, &exit):
		return &CallError{Function: f.name, Kind: KindExit, Err: fmt.Errorf("the module exited with code %d", exit.ExitCode())}
	case kind == KindBadReturn:
		return &CallError{Function: f.name, Kind: kind, Err: err}
	}
	if kind == "" {
		kind = KindTrap
	}
	return &CallError{Function: f.name, Kind: kind, Err: err}
}

// Call runs the function on args (Go values of the signature's types, nil
// for NULL) and returns its result (nil for NULL). Arguments of other
// numeric Go types than the declared one are converted (an int32 for a
// BIGINT). A failure is a *CallError.
func (f *Function) Call(args []any) (any, error) {
	in, err := f.get()
	if err != nil {
		return nil, err
	}
	out, kind, err := f.call(in, args)
	if err == nil {
		f.put(in)
		return out, nil
	}
	if err == errTimerSpent {
		f.discard(in)
		return out, nil
	}
	if kind == KindBadReturn {
		// The instance did nothing wrong by the runtime's rules: it
		// stays in the pool.
		f.put(in)
		return nil, f.failure(in.ctx, kind, err)
	}
	var used int64
	if in.mem != nil && !in.mod.IsClosed() {
		used = int64(in.mem.Size())
	}
	f.discard(in)
	if limit := int64(f.limits.pages()) * wasmPage; used > limit*3/4 && !in.ctx.expired.Load() {
		return nil, &CallError{Function: f.name, Kind: KindMemory, Err: fmt.Errorf("the instance used %d of its %d bytes of memory: %v", used, limit, err)}
	}
	return nil, f.failure(in.ctx, kind, err)
}

func (f *Function) call(in *instance, args []any) (any, string, error) {
	stack := in.stack
	var nulls uint64
	slot := 1
	if f.variable {
		if err := f.writeArgs(in, args); err != nil {
			return nil, "", err
		}
	}
	var off uint32
	for i, t := range f.sig.Args {
		v := args[i]
		if v == nil {
			nulls |= 1 << uint(i)
		}
		if inMemory(t) {
			n := uint32(0)
			if v != nil {
				n = in.lens(i)
			}
			stack[slot], stack[slot+1] = uint64(in.base+off), uint64(n)
			off += n
			slot += 2
			continue
		}
		stack[slot] = encodeScalar(t, v)
		slot++
	}
	stack[0] = nulls
	in.ctx.null = false
	if err := f.run(in, in.fn, stack); err != nil {
		return nil, "", err
	}
	if in.ctx.null {
		return nil, "", nil
	}
	out, err := f.decodeResult(in, stack[0])
	if err != nil {
		return nil, KindBadReturn, err
	}
	return out, "", nil
}

func encodeScalar(t types.Type, v any) uint64 {
	if v == nil {
		return 0
	}
	switch t.Kind {
	case types.Boolean:
		if b, _ := v.(bool); b {
			return 1
		}
		return 0
	case types.Double:
		x, _ := types.AsFloat(v)
		return math.Float64bits(x)
	case types.BigInt, types.Timestamp:
		x, _ := types.AsInt64(v)
		return uint64(x)
	}
	x, _ := types.AsInt64(v)
	return uint64(uint32(int32(x)))
}

func (f *Function) decodeResult(in *instance, r uint64) (any, error) {
	t := f.sig.Result
	switch t.Kind {
	case types.Boolean:
		switch uint32(r) {
		case 0:
			return false, nil
		case 1:
			return true, nil
		}
		return nil, fmt.Errorf("returned %d for a BOOLEAN, which must be 0 or 1", uint32(r))
	case types.Integer, types.Date, types.Time:
		return int32(uint32(r)), nil
	case types.BigInt, types.Timestamp:
		return int64(r), nil
	case types.Double:
		return math.Float64frombits(r), nil
	}
	ptr, n := uint32(r>>32), uint32(r)
	b, ok := in.mem.Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("returned %d bytes at %d, outside its %d bytes of memory", n, ptr, in.mem.Size())
	}
	return decodeBytes(t, b)
}
