package udf

import (
	"context"
	"fmt"
	"sync"

	"github.com/sluice-sql/sluice/types"
)

// An aggregate function is several exports of one module, each a
// function of the scalar calling convention whose first argument (bit 0
// of nulls) is the intermediate state, a value of the declared
// intermediate type:
//
//	init(nulls i64) -> I                      the empty state
//	accumulate(nulls i64, I, a1…, an…) -> I   one row's arguments folded in
//	merge(nulls i64, I, I) -> I               two states as one (earlier first)
//	result(nulls i64, I) -> R                 the state's value
//	undo(nulls i64, I, a1…, an…) -> I         one row's arguments taken out
//
// merge and undo are optional. The state lives in the host (a query's
// state store), never in the module: every call gets it and returns the
// next, so any instance may serve any call and a restore needs nothing
// of the module.

// AggregateExports names the exports of an aggregate function ("" for
// the optional Merge and Undo: none).
type AggregateExports struct {
	Init, Accumulate, Merge, Result, Undo string
}

// AggregateSignature is an aggregate's argument types, intermediate
// state type and result type.
type AggregateSignature struct {
	Args         []types.Type
	Intermediate types.Type
	Result       types.Type
}

// Phase names of an aggregate's exports, in errors and defaults
// (<prefix>_init, …).
const (
	PhaseInit       = "init"
	PhaseAccumulate = "accumulate"
	PhaseMerge      = "merge"
	PhaseResult     = "result"
	PhaseUndo       = "undo"
)

// MaxAggregateArgs is how many arguments an aggregate takes at most: its
// accumulate export takes the state first, and nulls has 64 bits.
const MaxAggregateArgs = 62

// signatures is the scalar signature of each export the aggregate has.
func (ex AggregateExports) signatures(sig AggregateSignature) []exportSignature {
	withState := append([]types.Type{sig.Intermediate}, sig.Args...)
	out := []exportSignature{
		{PhaseInit, ex.Init, Signature{Result: sig.Intermediate}},
		{PhaseAccumulate, ex.Accumulate, Signature{Args: withState, Result: sig.Intermediate}},
		{PhaseResult, ex.Result, Signature{Args: []types.Type{sig.Intermediate}, Result: sig.Result}},
	}
	if ex.Merge != "" {
		out = append(out, exportSignature{PhaseMerge, ex.Merge, Signature{Args: []types.Type{sig.Intermediate, sig.Intermediate}, Result: sig.Intermediate}})
	}
	if ex.Undo != "" {
		out = append(out, exportSignature{PhaseUndo, ex.Undo, Signature{Args: withState, Result: sig.Intermediate}})
	}
	return out
}

type exportSignature struct {
	phase, export string
	sig           Signature
}

// CheckAggregate compiles module and checks that each export of ex
// follows the calling convention for its part of sig: what CREATE
// AGGREGATE FUNCTION runs before it accepts one.
func (rt *Runtime) CheckAggregate(ctx context.Context, module []byte, ex AggregateExports, sig AggregateSignature) error {
	if len(sig.Args) > MaxAggregateArgs {
		return fmt.Errorf("%w: an aggregate function takes at most %d arguments", ErrModule, MaxAggregateArgs)
	}
	_, c, err := rt.compile(ctx, module, Limits{Timeout: DefaultTimeout, MemoryBytes: DefaultMemoryBytes})
	if err != nil {
		return err
	}
	for _, e := range ex.signatures(sig) {
		if err := checkExport(c, e.export, e.sig); err != nil {
			return fmt.Errorf("%s: %w", e.phase, err)
		}
	}
	return nil
}

// Exports reports which of names the module exports as functions, for
// defaults that apply only when the export is there.
func (rt *Runtime) Exports(ctx context.Context, module []byte, names ...string) (map[string]bool, error) {
	_, c, err := rt.compile(ctx, module, Limits{Timeout: DefaultTimeout, MemoryBytes: DefaultMemoryBytes})
	if err != nil {
		return nil, err
	}
	fns := c.ExportedFunctions()
	out := map[string]bool{}
	for _, n := range names {
		_, out[n] = fns[n]
	}
	return out, nil
}

// Aggregate is an aggregate function's exports bound for one place that
// calls them (a query's aggregation), each with its own pool of
// instances. Its methods may be called from several goroutines at once.
type Aggregate struct {
	name                                  string
	init, accumulate, merge, result, undo *Function
	// argSlices holds the argument slices of accumulate and undo calls
	// (the state, then the row's arguments), so a call allocates none.
	argSlices sync.Pool
}

// Aggregate binds the exports ex of module under name (for errors and
// logs) with the given limits.
func (rt *Runtime) Aggregate(ctx context.Context, name string, module []byte, ex AggregateExports, sig AggregateSignature, l Limits) (*Aggregate, error) {
	a := &Aggregate{name: name}
	n := len(sig.Args) + 1
	a.argSlices.New = func() any { s := make([]any, n); return &s }
	for _, e := range ex.signatures(sig) {
		f, err := rt.Function(ctx, name, module, e.export, e.sig, l)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.phase, err)
		}
		switch e.phase {
		case PhaseInit:
			a.init = f
		case PhaseAccumulate:
			a.accumulate = f
		case PhaseResult:
			a.result = f
		case PhaseMerge:
			a.merge = f
		case PhaseUndo:
			a.undo = f
		}
	}
	return a, nil
}

// Name is the function's name as given.
func (a *Aggregate) Name() string { return a.name }

// HasMerge and HasUndo report whether the function merges states and
// takes rows back out.
func (a *Aggregate) HasMerge() bool { return a.merge != nil }
func (a *Aggregate) HasUndo() bool  { return a.undo != nil }

// Init returns the empty state. A failure is a *CallError, naming the
// phase.
func (a *Aggregate) Init() (any, error) {
	return phase(PhaseInit, a.init, nil)
}

// Accumulate returns state with one row's argument values folded in.
func (a *Aggregate) Accumulate(state any, args []any) (any, error) {
	return a.withState(PhaseAccumulate, a.accumulate, state, args)
}

// Undo returns state with one row's argument values taken out.
func (a *Aggregate) Undo(state any, args []any) (any, error) {
	return a.withState(PhaseUndo, a.undo, state, args)
}

// Merge returns the states earlier and later as one.
func (a *Aggregate) Merge(earlier, later any) (any, error) {
	return phase(PhaseMerge, a.merge, []any{earlier, later})
}

// Result returns the state's value.
func (a *Aggregate) Result(state any) (any, error) {
	return phase(PhaseResult, a.result, []any{state})
}

func (a *Aggregate) withState(name string, f *Function, state any, args []any) (any, error) {
	p := a.argSlices.Get().(*[]any)
	s := *p
	s[0] = state
	copy(s[1:], args)
	out, err := phase(name, f, s)
	clear(s)
	a.argSlices.Put(p)
	return out, err
}

// phase calls f, saying in a failure which export failed.
func phase(name string, f *Function, args []any) (any, error) {
	out, err := f.Call(args)
	if ce, ok := err.(*CallError); ok {
		return nil, &CallError{Function: ce.Function, Kind: ce.Kind, Err: fmt.Errorf("%s: %w", name, ce.Err)}
	}
	return out, err
}
