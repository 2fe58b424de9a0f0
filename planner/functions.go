package planner

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
	"github.com/sluice-sql/sluice/udf"
)

// User-defined functions (CREATE FUNCTION) live in the catalog beside the
// sources, replayed from the command topic like them: by name, each name
// a list of overloads, each overload the version its last CREATE [OR
// REPLACE] made. A query binds the versions it finds when it is planned
// and keeps them: replacing a function changes what later plans find.

// WasmFunction is a WebAssembly function's definition: the module's
// bytes (which the command carries), its sha256 and the export.
type WasmFunction struct {
	Module []byte
	Sum    string
	Export string
}

// Function WITH properties.
const (
	FunctionModuleProperty = "MODULE"
	FunctionPathProperty   = "PATH"
	FunctionExportProperty = "EXPORT"
)

// Functions lists the overloads of a user-defined function (nil: none).
func (c *Catalog) Functions(name string) []*expr.UserFunction {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.functions[name]
}

// UserFunctions lists every overload of every user-defined function, by
// name, then in creation order.
func (c *Catalog) UserFunctions() []*expr.UserFunction {
	c.mu.RLock()
	defer c.mu.RUnlock()
	names := make([]string, 0, len(c.functions))
	for n := range c.functions {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*expr.UserFunction
	for _, n := range names {
		out = append(out, c.functions[n]...)
	}
	return out
}

// RegisterFunction adds f as an overload of its name, or as the new
// version of the overload with its argument types.
func (c *Catalog) RegisterFunction(f *expr.UserFunction) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.functions == nil {
		c.functions = map[string][]*expr.UserFunction{}
	}
	fs := c.functions[f.Name]
	for i, old := range fs {
		if sameArgs(old.Args, f.Args) && old.Variadic == f.Variadic {
			fs = append(fs[:i:i], fs[i+1:]...)
			break
		}
	}
	c.functions[f.Name] = append(fs, f)
}

// DropFunction removes every overload of name and reports whether there
// were any.
func (c *Catalog) DropFunction(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.functions[name]
	delete(c.functions, name)
	return ok
}

// FunctionRuntime is the WebAssembly runtime the catalog's functions run
// on, made on first use; CloseFunctions releases it.
func (c *Catalog) FunctionRuntime() *udf.Runtime {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.udfRuntime == nil {
		c.udfRuntime = udf.NewRuntime()
	}
	return c.udfRuntime
}

// CloseFunctions releases the WebAssembly runtime and every instance.
func (c *Catalog) CloseFunctions() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	rt := c.udfRuntime
	c.udfRuntime = nil
	c.mu.Unlock()
	if rt == nil {
		return nil
	}
	return rt.Close()
}

func sameArgs(a, b []types.Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// CreateFunction plans CREATE FUNCTION: the function it defines, checked
// (the module compiles and its export follows the calling convention).
// PATH must have been replaced by MODULE where the statement was issued
// (the engine does), so that the command carries the module.
func CreateFunction(ctx context.Context, cat *Catalog, st *parser.CreateFunction) (*expr.UserFunction, error) {
	return createFunction(ctx, cat, st, "", nil)
}

// createFunction is CreateFunction of a statement from dir, the --udf-dir
// manifest line it stands on ("": a statement of the command topic or a
// session). module, when not nil, is the module PATH names, read from the
// directory: it travels nowhere, so it is neither inlined nor compressed.
func createFunction(ctx context.Context, cat *Catalog, st *parser.CreateFunction, dir string, module []byte) (*expr.UserFunction, error) {
	switch st.Kind {
	case parser.AggregateFunction:
		return createAggregateFunction(ctx, cat, st, dir, module)
	}
	switch st.Language {
	case "WASM", JavaScriptLanguage:
	default:
		return nil, posErr(st.Pos, fmt.Errorf("%w: unknown LANGUAGE %s: expected WASM or JAVASCRIPT", ErrInvalid, st.Language))
	}
	if st.HasBody && st.Language == "WASM" {
		return nil, posErr(st.Pos, fmt.Errorf("%w: a LANGUAGE WASM function takes its module from WITH (PATH=… or MODULE=…), not AS $$ … $$", ErrInvalid))
	}
	f, err := functionSignature(cat, st, dir)
	if err != nil {
		return nil, err
	}
	if len(f.Args) > 63 {
		return nil, posErr(st.Pos, fmt.Errorf("%w: a function takes at most 63 arguments", ErrInvalid))
	}
	if st.Kind == parser.TableFunction && f.Result.Kind != types.Array {
		return nil, posErr(st.Returns.Pos, fmt.Errorf("%w: a table function RETURNS ARRAY<T>, one row per element; this one returns %s", ErrInvalid, f.Result))
	}
	if st.Language == JavaScriptLanguage {
		err = javaScriptImpl(f, st)
	} else {
		err = wasmImpl(ctx, cat, f, st, module)
	}
	if err != nil {
		return nil, err
	}
	return f, versionOf(cat, st, f)
}

// functionSignature is the part of CREATE [AGGREGATE|TABLE] FUNCTION that
// every kind checks alike: a name no built-in has and no function of
// another kind or origin has, parameters named once, of known types (a
// VARIADIC one last), and the RETURNS type.
func functionSignature(cat *Catalog, st *parser.CreateFunction, dir string) (*expr.UserFunction, error) {
	if expr.IsBuiltinFunction(st.Name) {
		return nil, posErr(st.Pos, fmt.Errorf("%w: Function '%s' is a built-in function: a user-defined function cannot take its name", ErrInvalid, st.Name))
	}
	f := &expr.UserFunction{Name: st.Name, Kind: st.Kind, Deterministic: st.Deterministic, Language: st.Language, Version: 1, Dir: dir}
	if err := checkFunctionName(cat, f); err != nil {
		return nil, posErr(st.Pos, err)
	}
	lookup := func(n string) (types.Type, bool) { return cat.LookupType(n) }
	seen := map[string]bool{}
	for _, p := range st.Params {
		if seen[p.Name] {
			return nil, posErr(p.Pos, fmt.Errorf("%w: parameter %s appears twice", ErrInvalid, p.Name))
		}
		seen[p.Name] = true
		t, err := expr.ResolveTypeWith(p.Type, lookup)
		if err != nil {
			return nil, posErr(p.Pos, err)
		}
		if err := checkVariadic(p, t, len(f.Args) == len(st.Params)-1); err != nil {
			return nil, err
		}
		f.Params, f.Args = append(f.Params, p.Name), append(f.Args, t)
		f.Variadic = p.Variadic
	}
	t, err := expr.ResolveTypeWith(st.Returns, lookup)
	if err != nil {
		return nil, posErr(st.Returns.Pos, err)
	}
	f.Result = t
	return f, nil
}

// versionOf finishes a CREATE of f: its origin names a --udf-dir's line,
// and an existing overload of the same signature is replaced (OR REPLACE,
// f its next version) or makes the statement fail.
func versionOf(cat *Catalog, st *parser.CreateFunction, f *expr.UserFunction) error {
	if f.Dir != "" {
		f.Origin = "udf-dir " + f.Dir + " " + f.Origin
	}
	for _, old := range cat.Functions(st.Name) {
		if sameArgs(old.Args, f.Args) && old.Variadic == f.Variadic {
			if !st.OrReplace {
				return posErr(st.Pos, fmt.Errorf("%w: Function '%s' with parameters (%s) already exists; CREATE OR REPLACE %sFUNCTION replaces it", ErrExists, st.Name, typeNames(f.Args), kindKeyword(st.Kind)))
			}
			f.Version = old.Version + 1
		}
	}
	return nil
}

// kindKeyword is the word CREATE puts before FUNCTION for a kind.
func kindKeyword(k parser.FunctionKind) string {
	switch k {
	case parser.AggregateFunction:
		return "AGGREGATE "
	case parser.TableFunction:
		return "TABLE "
	}
	return ""
}

// wasmImpl reads a WebAssembly function's module and export into f and
// checks them against the calling convention. module, when not nil, is
// the one PATH names (a --udf-dir's).
func wasmImpl(ctx context.Context, cat *Catalog, f *expr.UserFunction, st *parser.CreateFunction, module []byte) error {
	var err error
	impl := &WasmFunction{}
	var text string
	var hasModule bool
	for _, p := range st.With {
		switch p.Name {
		case FunctionModuleProperty:
			text, hasModule = p.Value.Str, true
		case FunctionExportProperty:
			impl.Export = p.Value.Str
		case FunctionPathProperty:
			if module != nil {
				hasModule = true
				continue
			}
			return posErr(p.Pos, fmt.Errorf("%w: PATH is read where the statement is issued; this one still names %q", ErrInvalid, p.Value.Str))
		default:
			return posErr(p.Pos, fmt.Errorf("%w: unknown property %s of CREATE FUNCTION: expected PATH, MODULE or EXPORT", ErrInvalid, p.Name))
		}
	}
	if !hasModule {
		return posErr(st.Pos, fmt.Errorf("%w: CREATE FUNCTION … LANGUAGE WASM needs WITH (PATH='file.wasm' or MODULE='<base64>', EXPORT='name')", ErrInvalid))
	}
	if impl.Export == "" {
		return posErr(st.Pos, fmt.Errorf("%w: CREATE FUNCTION … LANGUAGE WASM needs EXPORT='name', the module's function", ErrInvalid))
	}
	impl.Module = module
	if module == nil {
		if impl.Module, err = decodeModule(text); err != nil {
			return posErr(st.Pos, err)
		}
	}
	impl.Sum = udf.Sum(impl.Module)
	if err := cat.FunctionRuntime().Check(ctx, impl.Module, impl.Export, udf.Signature{Args: f.Args, Result: f.Result}); err != nil {
		return posErr(st.Pos, fmt.Errorf("%w: %v", ErrInvalid, err))
	}
	f.Impl = impl
	f.Origin = "sha256:" + impl.Sum + " export:" + impl.Export
	return nil
}

// maxModuleBytes bounds a module's size once decompressed.
const maxModuleBytes = 256 << 20

// decodeModule reads MODULE: the base64 of the module's bytes, or of
// their gzip (what the engine makes of PATH, so that more fits in a
// command record).
func decodeModule(text string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: MODULE is not base64: %v", ErrInvalid, err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: MODULE is not a valid gzip stream: %v", ErrInvalid, err)
	}
	out, err := io.ReadAll(io.LimitReader(z, maxModuleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: MODULE is not a valid gzip stream: %v", ErrInvalid, err)
	}
	if len(out) > maxModuleBytes {
		return nil, fmt.Errorf("%w: MODULE is larger than %d bytes", ErrInvalid, maxModuleBytes)
	}
	return out, nil
}

func typeNames(ts []types.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

// queryFunctions is the catalog's functions as one query's expressions
// see them (expr.UserFunctions).
type queryFunctions struct {
	cat        *Catalog
	persistent bool
	limits     udf.Limits
	used       *functionSet
}

// functionSet is a set of function names.
type functionSet map[string]bool

func (s functionSet) names() []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (q queryFunctions) Overloads(name string) []*expr.UserFunction { return q.cat.Functions(name) }
func (q queryFunctions) Persistent() bool                           { return q.persistent }

func (q queryFunctions) Bind(f *expr.UserFunction) (func([]any) (any, error), error) {
	if *q.used == nil {
		*q.used = functionSet{}
	}
	(*q.used)[f.Name] = true
	if js, ok := f.Impl.(*JavaScriptFunction); ok {
		return js.Program.Function(q.limits).Call, nil
	}
	impl, ok := f.Impl.(*WasmFunction)
	if !ok {
		return nil, fmt.Errorf("%w: LANGUAGE %s", ErrUnsupported, f.Language)
	}
	fn, err := q.cat.FunctionRuntime().Function(context.Background(), f.Name, impl.Module, impl.Export,
		udf.Signature{Args: f.Args, Result: f.Result}, q.limits)
	if err != nil {
		return nil, err
	}
	return fn.Call, nil
}

// withFunctions is sc with the catalog's user-defined functions.
func (p *planning) withFunctions(sc expr.Scope) expr.Scope {
	if p.cat == nil {
		return sc
	}
	return expr.WithUserFunctions(sc, queryFunctions{cat: p.cat, persistent: p.target != nil, limits: p.opts.UDFLimits, used: &p.usedFunctions})
}
