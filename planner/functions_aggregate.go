package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
	"github.com/sluice-sql/sluice/udf"
)

// User-defined aggregate functions (CREATE AGGREGATE FUNCTION) live in
// the catalog beside the scalar ones, as *expr.UserFunction of Kind
// parser.AggregateFunction; a name is one kind or the other. A query's
// aggregation binds the version it finds when it is planned, as a scalar
// call does.

// WasmAggregate is a WebAssembly aggregate function's definition: the
// module's bytes (which the command carries), its sha256 and the exports.
type WasmAggregate struct {
	Module  []byte
	Sum     string
	Exports udf.AggregateExports
}

// Aggregate function WITH properties, beside MODULE, PATH and EXPORT
// (which, for an aggregate, is the prefix of exports named
// <EXPORT>_init, <EXPORT>_accumulate, …).
const (
	FunctionIntermediateProperty = "INTERMEDIATE"
	FunctionInitProperty         = "INIT"
	FunctionAccumulateProperty   = "ACCUMULATE"
	FunctionMergeProperty        = "MERGE"
	FunctionResultProperty       = "RESULT"
	FunctionUndoProperty         = "UNDO"
)

// createAggregateFunction plans CREATE AGGREGATE FUNCTION: the function
// it defines, checked (the module compiles and each export follows the
// calling convention for its part). dir and module are createFunction's:
// the --udf-dir manifest line and the module its PATH names, when the
// statement comes from a --udf-dir.
func createAggregateFunction(ctx context.Context, cat *Catalog, st *parser.CreateFunction, dir string, module []byte) (*expr.UserFunction, error) {
	switch st.Language {
	case "WASM":
	case JavaScriptLanguage:
		return nil, posErr(st.Pos, fmt.Errorf("%w: LANGUAGE JAVASCRIPT is not supported for aggregate functions; use LANGUAGE WASM", ErrUnsupported))
	default:
		return nil, posErr(st.Pos, fmt.Errorf("%w: unknown LANGUAGE %s: expected WASM", ErrInvalid, st.Language))
	}
	if st.HasBody {
		return nil, posErr(st.Pos, fmt.Errorf("%w: a LANGUAGE WASM function takes its module from WITH (PATH=… or MODULE=…), not AS $$ … $$", ErrInvalid))
	}
	f, err := functionSignature(cat, st, dir)
	if err != nil {
		return nil, err
	}
	if f.Variadic {
		p := st.Params[len(st.Params)-1]
		return nil, posErr(p.Pos, fmt.Errorf("%w: VARIADIC %s: an aggregate function takes no VARIADIC parameter", ErrUnsupported, p.Name))
	}
	if len(f.Args) == 0 {
		return nil, posErr(st.Pos, fmt.Errorf("%w: an aggregate function takes at least one argument", ErrInvalid))
	}
	if len(f.Args) > udf.MaxAggregateArgs {
		return nil, posErr(st.Pos, fmt.Errorf("%w: an aggregate function takes at most %d arguments", ErrInvalid, udf.MaxAggregateArgs))
	}
	lookup := func(n string) (types.Type, bool) { return cat.LookupType(n) }
	impl := &WasmAggregate{}
	var text, prefix string
	var hasModule, hasIntermediate bool
	named := map[string]*string{
		FunctionInitProperty: &impl.Exports.Init, FunctionAccumulateProperty: &impl.Exports.Accumulate,
		FunctionMergeProperty: &impl.Exports.Merge, FunctionResultProperty: &impl.Exports.Result, FunctionUndoProperty: &impl.Exports.Undo,
	}
	for _, p := range st.With {
		switch p.Name {
		case FunctionModuleProperty:
			text, hasModule = p.Value.Str, true
		case FunctionExportProperty:
			prefix = p.Value.Str
		case FunctionIntermediateProperty:
			tn, err := parser.ParseType(p.Value.Str)
			if err == nil {
				f.Intermediate, err = expr.ResolveTypeWith(tn, lookup)
			}
			if err != nil {
				return nil, posErr(p.Pos, fmt.Errorf("%w: INTERMEDIATE: %v", ErrInvalid, err))
			}
			hasIntermediate = true
		case FunctionPathProperty:
			if module != nil {
				hasModule = true
				continue
			}
			return nil, posErr(p.Pos, fmt.Errorf("%w: PATH is read where the statement is issued; this one still names %q", ErrInvalid, p.Value.Str))
		default:
			dst, ok := named[p.Name]
			if !ok {
				return nil, posErr(p.Pos, fmt.Errorf("%w: unknown property %s of CREATE AGGREGATE FUNCTION: expected PATH, MODULE, INTERMEDIATE, EXPORT, INIT, ACCUMULATE, MERGE, RESULT or UNDO", ErrInvalid, p.Name))
			}
			*dst = p.Value.Str
		}
	}
	if !hasModule {
		return nil, posErr(st.Pos, fmt.Errorf("%w: CREATE AGGREGATE FUNCTION … LANGUAGE WASM needs WITH (PATH='file.wasm' or MODULE='<base64>', INTERMEDIATE='<type>', EXPORT='<prefix>')", ErrInvalid))
	}
	if !hasIntermediate {
		return nil, posErr(st.Pos, fmt.Errorf("%w: CREATE AGGREGATE FUNCTION needs INTERMEDIATE='<type>', the type of the state its exports pass on", ErrInvalid))
	}
	impl.Module = module
	if module == nil {
		if impl.Module, err = decodeModule(text); err != nil {
			return nil, posErr(st.Pos, err)
		}
	}
	if err := defaultAggregateExports(ctx, cat, impl, prefix); err != nil {
		return nil, posErr(st.Pos, err)
	}
	impl.Sum = udf.Sum(impl.Module)
	sig := udf.AggregateSignature{Args: f.Args, Intermediate: f.Intermediate, Result: f.Result}
	if err := cat.FunctionRuntime().CheckAggregate(ctx, impl.Module, impl.Exports, sig); err != nil {
		return nil, posErr(st.Pos, fmt.Errorf("%w: %v", ErrInvalid, err))
	}
	f.Impl = impl
	f.Origin = "sha256:" + impl.Sum + " " + aggregateExportsText(impl.Exports) + " intermediate:" + f.Intermediate.String()
	return f, versionOf(cat, st, f)
}

// defaultAggregateExports fills the exports not named: <prefix>_init,
// _accumulate and _result (needed), _merge and _undo (when the module
// exports them).
func defaultAggregateExports(ctx context.Context, cat *Catalog, impl *WasmAggregate, prefix string) error {
	ex := &impl.Exports
	if prefix != "" {
		names := map[string]string{}
		for phase, dst := range map[string]*string{udf.PhaseMerge: &ex.Merge, udf.PhaseUndo: &ex.Undo} {
			if *dst == "" {
				names[phase] = prefix + "_" + phase
			}
		}
		if len(names) > 0 {
			var want []string
			for _, n := range names {
				want = append(want, n)
			}
			has, err := cat.FunctionRuntime().Exports(ctx, impl.Module, want...)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			if n := names[udf.PhaseMerge]; n != "" && has[n] {
				ex.Merge = n
			}
			if n := names[udf.PhaseUndo]; n != "" && has[n] {
				ex.Undo = n
			}
		}
		for phase, dst := range map[string]*string{udf.PhaseInit: &ex.Init, udf.PhaseAccumulate: &ex.Accumulate, udf.PhaseResult: &ex.Result} {
			if *dst == "" {
				*dst = prefix + "_" + phase
			}
		}
	}
	var missing []string
	for _, m := range []struct{ prop, export string }{
		{FunctionInitProperty, ex.Init}, {FunctionAccumulateProperty, ex.Accumulate}, {FunctionResultProperty, ex.Result},
	} {
		if m.export == "" {
			missing = append(missing, m.prop)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: CREATE AGGREGATE FUNCTION needs EXPORT='<prefix>' (for <prefix>_init, <prefix>_accumulate, …) or %s", ErrInvalid, strings.Join(missing, ", "))
	}
	return nil
}

// aggregateExportsText is the exports as DESCRIBE FUNCTION shows them.
func aggregateExportsText(ex udf.AggregateExports) string {
	parts := []string{"init:" + ex.Init, "accumulate:" + ex.Accumulate}
	if ex.Merge != "" {
		parts = append(parts, "merge:"+ex.Merge)
	}
	parts = append(parts, "result:"+ex.Result)
	if ex.Undo != "" {
		parts = append(parts, "undo:"+ex.Undo)
	}
	return strings.Join(parts, " ")
}

// isAggregate reports whether name is an aggregate function, built-in or
// user-defined.
func (p *planning) isAggregate(name string) bool {
	if expr.IsAggregate(name) {
		return true
	}
	fs := p.cat.Functions(name)
	return len(fs) > 0 && fs[0].IsAggregate()
}

// bindAggregate binds an aggregate call: a built-in, or the version of a
// user-defined aggregate the catalog has now, with its own instances
// under the query's limits.
func (p *planning) bindAggregate(call *parser.FuncCall, argTypes []types.Type) (*expr.Aggregate, error) {
	if expr.IsAggregate(call.Name) {
		return expr.BindAggregateConfigured(call.Name, argTypes, call.Star, p.opts.FunctionConfig)
	}
	f, err := expr.ResolveUserAggregate(call.Name, p.cat.Functions(call.Name), argTypes, p.target != nil)
	if err != nil {
		return nil, err
	}
	if p.usedFunctions == nil {
		p.usedFunctions = functionSet{}
	}
	p.usedFunctions[f.Name] = true
	impl, ok := f.Impl.(*WasmAggregate)
	if !ok {
		return nil, fmt.Errorf("%w: LANGUAGE %s", ErrUnsupported, f.Language)
	}
	a, err := p.cat.FunctionRuntime().Aggregate(context.Background(), f.Name, impl.Module, impl.Exports,
		udf.AggregateSignature{Args: f.Args, Intermediate: f.Intermediate, Result: f.Result}, p.opts.UDFLimits)
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", f.Name, err)
	}
	calls := expr.AggregateCalls{Init: a.Init, Accumulate: a.Accumulate, Result: a.Result}
	if a.HasMerge() {
		calls.Merge = a.Merge
	}
	if a.HasUndo() {
		calls.Undo = a.Undo
	}
	return expr.BindUserAggregate(f, argTypes, calls)
}

// refuseFallibleSliding refuses a user-defined aggregate in a SLIDING
// window: a record changes several windows there, each written as it
// goes, so a failing call could not leave them all as they were.
func refuseFallibleSliding(w *exec.WindowSpec, aggs []exec.AggCall, calls []*parser.FuncCall) error {
	if w.Kind != exec.Sliding {
		return nil
	}
	for i, call := range aggs {
		if call.Agg.Fallible {
			return posErr(calls[i].Pos, fmt.Errorf("%w: the user-defined aggregate function %s cannot be used with SLIDING windows; use TUMBLING, HOPPING or SESSION windows", ErrUnsupported, call.Agg.Name))
		}
	}
	return nil
}
