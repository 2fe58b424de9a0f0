package udf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/types"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Default limits, what sluice.udf.timeout and sluice.udf.memory say when
// not set. The time limit is wall-clock time: it is there to stop a call
// that loops, and at 1 s a call that only waited for a CPU on a loaded
// machine (100 ms and more under a 2-core machine's full load) is not
// mistaken for one.
const (
	DefaultTimeout     = time.Second
	DefaultMemoryBytes = 64 << 20
)

// Names in the calling convention (see the package documentation).
const (
	AllocExport      = "sluice_alloc"
	InitializeExport = "_initialize"
	HostModule       = "sluice"
	ResultNullImport = "result_null"
)

const wasmPage = 65536

// ErrModule is wrapped by errors about a module or an export that does not
// follow the calling convention: CREATE FUNCTION refuses it.
var ErrModule = errors.New("invalid WebAssembly function")

// Limits bound every call of a function: Timeout its run time (0: none),
// MemoryBytes the linear memory of each instance.
type Limits struct {
	Timeout     time.Duration
	MemoryBytes int64
}

func (l Limits) pages() uint32 {
	p := l.MemoryBytes / wasmPage
	switch {
	case l.MemoryBytes <= 0:
		p = DefaultMemoryBytes / wasmPage
	case p < 1:
		p = 1
	case p > 65536:
		p = 65536
	}
	return uint32(p)
}

// Signature is a function's argument types and result type.
type Signature struct {
	Args   []types.Type
	Result types.Type
}

// Runtime compiles and runs modules. It keeps one wazero runtime per
// memory limit and time-limit setting (wazero fixes both for everything
// it compiles), and each module compiled once per runtime by its sha256.
// One Runtime serves an engine; Close releases everything.
type Runtime struct {
	mu       sync.Mutex
	runtimes map[runtimeKey]*wasmRuntime
}

type runtimeKey struct {
	pages uint32
	timed bool
}

type wasmRuntime struct {
	r        wazero.Runtime
	compiled map[string]wazero.CompiledModule
}

// NewRuntime returns an empty Runtime.
func NewRuntime() *Runtime { return &Runtime{runtimes: map[runtimeKey]*wasmRuntime{}} }

// Close releases every compiled module and instance.
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var first error
	for k, w := range rt.runtimes {
		if err := w.r.Close(context.Background()); err != nil && first == nil {
			first = err
		}
		delete(rt.runtimes, k)
	}
	return first
}

// Sum is a module's identity: the hex sha256 of its bytes.
func Sum(module []byte) string {
	s := sha256.Sum256(module)
	return hex.EncodeToString(s[:])
}

// compilations is the machine code of every module compiled in this
// process, shared by all Runtimes: a module is compiled once however many
// engines (a test runner opens one per case, each loading the same
// --udf-dir) and limits (CREATE checks with the defaults, a query runs
// with its own) use it. It holds each distinct module the process has
// seen, for the life of the process.
var compilations = wazero.NewCompilationCache()

func (rt *Runtime) runtime(ctx context.Context, l Limits) (*wasmRuntime, error) {
	key := runtimeKey{pages: l.pages(), timed: l.Timeout > 0}
	if w, ok := rt.runtimes[key]; ok {
		return w, nil
	}
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(key.pages).WithCloseOnContextDone(key.timed).
		WithCompilationCache(compilations)
	r := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("udf: instantiate WASI: %w", err)
	}
	_, err := r.NewHostModuleBuilder(HostModule).
		NewFunctionBuilder().WithGoFunction(api.GoFunc(resultNull), nil, nil).Export(ResultNullImport).
		Instantiate(ctx)
	if err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("udf: instantiate host module %s: %w", HostModule, err)
	}
	w := &wasmRuntime{r: r, compiled: map[string]wazero.CompiledModule{}}
	rt.runtimes[key] = w
	return w, nil
}

// resultNull is the host import a function calls to return NULL: it marks
// the call's context, which is the instance's own (see callCtx).
func resultNull(ctx context.Context, _ []uint64) {
	if c, ok := ctx.(*callCtx); ok {
		c.null = true
	}
}

func (rt *Runtime) compile(ctx context.Context, module []byte, l Limits) (*wasmRuntime, wazero.CompiledModule, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	w, err := rt.runtime(ctx, l)
	if err != nil {
		return nil, nil, err
	}
	sum := Sum(module)
	if c, ok := w.compiled[sum]; ok {
		return w, c, nil
	}
	c, err := w.r.CompileModule(ctx, module)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the module does not compile: %v", ErrModule, err)
	}
	if err := checkImports(c); err != nil {
		_ = c.Close(ctx)
		return nil, nil, err
	}
	w.compiled[sum] = c
	return w, c, nil
}

// checkImports refuses a module that needs anything but WASI and the
// host's result_null.
func checkImports(c wazero.CompiledModule) error {
	for _, f := range c.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch {
		case mod == wasi_snapshot_preview1.ModuleName:
		case mod == HostModule && name == ResultNullImport:
		default:
			return fmt.Errorf("%w: the module imports %s.%s, which Sluice does not provide (only %s and %s.%s)",
				ErrModule, mod, name, wasi_snapshot_preview1.ModuleName, HostModule, ResultNullImport)
		}
	}
	if len(c.ImportedMemories()) > 0 {
		return fmt.Errorf("%w: the module imports a memory; it must define its own", ErrModule)
	}
	return nil
}

// Check compiles module and checks that export follows the calling
// convention for sig: what CREATE FUNCTION runs before it accepts one.
func (rt *Runtime) Check(ctx context.Context, module []byte, export string, sig Signature) error {
	_, c, err := rt.compile(ctx, module, Limits{Timeout: DefaultTimeout, MemoryBytes: DefaultMemoryBytes})
	if err != nil {
		return err
	}
	return checkExport(c, export, sig)
}

func checkExport(c wazero.CompiledModule, export string, sig Signature) error {
	fns := c.ExportedFunctions()
	f, ok := fns[export]
	if !ok {
		return fmt.Errorf("%w: the module exports no function %q", ErrModule, export)
	}
	params, result, variable := wasmSignature(sig)
	if !equalTypes(f.ParamTypes(), params) || !equalTypes(f.ResultTypes(), []api.ValueType{result}) {
		return fmt.Errorf("%w: export %q is %s, the calling convention for (%s) RETURNS %s wants %s",
			ErrModule, export, signatureText(f.ParamTypes(), f.ResultTypes()), typesText(sig.Args), sig.Result,
			signatureText(params, []api.ValueType{result}))
	}
	if variable {
		a, ok := fns[AllocExport]
		if !ok || !equalTypes(a.ParamTypes(), []api.ValueType{api.ValueTypeI32}) || !equalTypes(a.ResultTypes(), []api.ValueType{api.ValueTypeI32}) {
			return fmt.Errorf("%w: a function with a STRING, BYTES, DECIMAL, ARRAY, MAP or STRUCT argument needs the export %s (i32) -> i32", ErrModule, AllocExport)
		}
	}
	if len(c.ExportedMemories()) == 0 && (variable || inMemory(sig.Result)) {
		return fmt.Errorf("%w: the module exports no memory, which its STRING, BYTES, DECIMAL, ARRAY, MAP or STRUCT values travel in", ErrModule)
	}
	return nil
}

// inMemory reports whether values of t travel in linear memory.
func inMemory(t types.Type) bool {
	switch t.Kind {
	case types.String, types.Bytes, types.Decimal, types.Array, types.Map, types.Struct:
		return true
	}
	return false
}

// wasmSignature is the export's WebAssembly signature for sig; variable
// says an argument travels in memory.
func wasmSignature(sig Signature) (params []api.ValueType, result api.ValueType, variable bool) {
	params = []api.ValueType{api.ValueTypeI64}
	for _, t := range sig.Args {
		if inMemory(t) {
			params = append(params, api.ValueTypeI32, api.ValueTypeI32)
			variable = true
			continue
		}
		params = append(params, scalarType(t))
	}
	if inMemory(sig.Result) {
		return params, api.ValueTypeI64, variable
	}
	return params, scalarType(sig.Result), variable
}

func scalarType(t types.Type) api.ValueType {
	switch t.Kind {
	case types.BigInt, types.Timestamp:
		return api.ValueTypeI64
	case types.Double:
		return api.ValueTypeF64
	}
	return api.ValueTypeI32
}

func equalTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func signatureText(params, results []api.ValueType) string {
	s := "("
	for i, p := range params {
		if i > 0 {
			s += ", "
		}
		s += api.ValueTypeName(p)
	}
	s += ") -> ("
	for i, r := range results {
		if i > 0 {
			s += ", "
		}
		s += api.ValueTypeName(r)
	}
	return s + ")"
}

func typesText(ts []types.Type) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s
}
