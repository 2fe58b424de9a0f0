package expr

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// UserFunction is one overload of a user-defined function (CREATE
// [TABLE] FUNCTION), one version of it: CREATE OR REPLACE of the same
// signature makes a new *UserFunction, and an expression compiled with
// the old one keeps it.
type UserFunction struct {
	Name   string
	Params []string
	Args   []types.Type
	// Result is what a call returns: for a table function (Kind
	// parser.TableFunction) an ARRAY, whose elements are its rows.
	Result        types.Type
	Kind          parser.FunctionKind
	Deterministic bool
	// Intermediate is an aggregate function's state type.
	Intermediate types.Type
	// Variadic says the last parameter (an ARRAY<T>) takes any number of
	// T arguments, which the call passes as one ARRAY.
	Variadic bool
	// Dir names the --udf-dir manifest line that defined the function
	// (file:line); empty for one from a CREATE statement. Such functions
	// exist on their instance only.
	Dir string
	// Language is WASM or JAVASCRIPT; Origin says where the code came
	// from, for DESCRIBE FUNCTION (the module's sha256 and export, or the
	// JavaScript body's sha256; a --udf-dir's file and line first).
	Language string
	Origin   string
	// Version counts the CREATE FUNCTION statements of this name and
	// signature, from 1.
	Version int
	// Impl is the language's own definition (the module's bytes and
	// export), which the UserFunctions that found it binds.
	Impl any
}

// Signature is the function's call as DESCRIBE FUNCTION shows it:
// NAME(P1 TYPE, …).
func (f *UserFunction) Signature() string {
	parts := make([]string, len(f.Args))
	for i, t := range f.Args {
		parts[i] = t.String()
		if i < len(f.Params) {
			parts[i] = f.Params[i] + " " + parts[i]
		}
		if f.Variadic && i == len(f.Args)-1 {
			parts[i] = "VARIADIC " + parts[i]
		}
	}
	return f.Name + "(" + strings.Join(parts, ", ") + ")"
}

// UserFunctions is what a compile sees of the user-defined functions:
// their overloads by name and how to make a call's implementation. The
// planner passes it with the scope (WithUserFunctions).
type UserFunctions interface {
	// Overloads lists the overloads of name (as the parser spells it).
	Overloads(name string) []*UserFunction
	// Bind makes the implementation one compiled call uses: its own pool
	// of instances, under the query's limits.
	Bind(f *UserFunction) (func(args []any) (any, error), error)
	// Persistent says the expressions belong to a persistent query, which
	// may only call functions declared DETERMINISTIC.
	Persistent() bool
}

// FunctionError is what a compiled user-defined function call panics
// with when the function fails on a row (a trap, a timeout, a bad
// return): the task that processes the record recovers it and treats
// the record as a bad record (exec/task.go), as Eval has no error return.
type FunctionError struct {
	Function string
	Err      error
}

func (e *FunctionError) Error() string { return e.Err.Error() }
func (e *FunctionError) Unwrap() error { return e.Err }

// ErrNotDeterministic is wrapped when a persistent query calls a function
// not declared DETERMINISTIC.
var ErrNotDeterministic = errors.New("function not deterministic")

type userFunctionScope struct {
	Scope
	fns UserFunctions
}

// WithUserFunctions returns scope with the user-defined functions fns:
// calls that name no built-in resolve to them.
func WithUserFunctions(scope Scope, fns UserFunctions) Scope {
	if fns == nil {
		return scope
	}
	return userFunctionScope{Scope: scope, fns: fns}
}

func (s userFunctionScope) userFunctions() UserFunctions { return s.fns }

// userFunctionsOf finds the user functions a scope carries.
func userFunctionsOf(scope Scope) UserFunctions {
	for {
		switch s := scope.(type) {
		case userFunctionScope:
			return s.fns
		case *lambdaScope:
			scope = s.outer
		default:
			return nil
		}
	}
}

// IsBuiltinFunction reports whether name is a built-in function of any
// kind, which a user-defined function may not be named.
func IsBuiltinFunction(name string) bool { return IsFunction(name) }

// resolveOverload picks the overload of fs for the argument types, by
// ksqlDB's rules (its UdfIndex): the candidate needing the fewest
// widenings (INT → BIGINT → DECIMAL → DOUBLE; an exact match needs none;
// a NULL fits any type); among equally good ones a fixed signature before
// a VARIADIC one, then the one declaring more parameters. Candidates
// still level are ambiguous. spread says the call's trailing arguments
// are the VARIADIC parameter's elements (false: the call passes the
// ARRAY itself, or the function is not variadic).
func resolveOverload(name string, fs []*UserFunction, args []types.Type) (best *UserFunction, spread bool, err error) {
	type candidate struct {
		f      *UserFunction
		spread bool
		cost   int
	}
	better := func(a, b candidate) int {
		switch {
		case a.cost != b.cost:
			return b.cost - a.cost
		case a.f.Variadic != b.f.Variadic:
			if a.f.Variadic {
				return -1
			}
			return 1
		}
		return len(a.f.Args) - len(b.f.Args)
	}
	var top candidate
	found, tied := false, false
	for _, f := range fs {
		for _, spread := range []bool{false, true} {
			params, ok := f.paramsFor(len(args), spread)
			if !ok {
				continue
			}
			cost := 0
			for i, a := range args {
				c, ok := widening(a, params[i])
				if !ok {
					cost = -1
					break
				}
				cost += c
			}
			if cost < 0 {
				continue
			}
			c := candidate{f: f, spread: spread, cost: cost}
			switch {
			case !found:
				top, found, tied = c, true, false
			case better(c, top) > 0:
				top, tied = c, false
			case better(c, top) == 0 && c.f != top.f:
				tied = true
			}
		}
	}
	if !found {
		sigs := make([]string, len(fs))
		for i, f := range fs {
			sigs[i] = f.Signature()
		}
		return nil, false, fmt.Errorf("%w: Function '%s' does not accept parameters (%s). Valid alternatives are: %s", ErrType, name, typeList(args), strings.Join(sigs, ", "))
	}
	if tied {
		return nil, false, fmt.Errorf("%w: Function '%s' cannot be resolved due to ambiguous method parameters (%s)", ErrType, name, typeList(args))
	}
	return top.f, top.spread, nil
}

// paramsFor is the declared type each of n arguments is passed as. With
// spread, a variadic function's trailing arguments (any number, none
// too) are each its last parameter's element type; without, a call
// passes one argument per parameter.
func (f *UserFunction) paramsFor(n int, spread bool) ([]types.Type, bool) {
	if !spread {
		return f.Args, n == len(f.Args)
	}
	if !f.Variadic {
		return nil, false
	}
	fixed := len(f.Args) - 1
	if n < fixed {
		return nil, false
	}
	params := make([]types.Type, n)
	copy(params, f.Args[:fixed])
	for i := fixed; i < n; i++ {
		params[i] = *f.Args[fixed].Elem
	}
	return params, true
}

// widening is the cost of passing a value of type from where to is
// declared: 0 for the same type (or NULL), the steps up the numeric
// ladder otherwise; ok is false when ksqlDB would not convert.
func widening(from, to types.Type) (int, bool) {
	if from.Kind == types.Unknown || from.Equal(to) {
		return 0, true
	}
	if _, ok := canCoerce(from, to, false); !ok {
		return 0, false
	}
	if from.IsNumeric() && to.IsNumeric() {
		return numRank(to) - numRank(from) + 1, true
	}
	return 1, true
}

func typeList(ts []types.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		if t.Kind == types.Unknown {
			parts[i] = "null"
			continue
		}
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

// compileUserCall compiles a call of a user-defined scalar function
// found in fns (ok false: no function of that name).
func compileUserCall(call *parser.FuncCall, scope Scope, fns UserFunctions) (Compiled, bool, error) {
	overloads := fns.Overloads(call.Name)
	if len(overloads) == 0 {
		return Compiled{}, false, nil
	}
	if overloads[0].IsAggregate() {
		return Compiled{}, true, fmt.Errorf("%w: aggregate function %s is not allowed here", ErrType, call.Name)
	}
	scalars := overloadsOf(overloads, parser.ScalarFunction)
	if len(scalars) == 0 {
		return Compiled{}, true, fmt.Errorf("%w: table function %s is only allowed in the SELECT list of a stream query", ErrType, call.Name)
	}
	f, impl, args, err := bindUserCall(call, scope, fns, scalars)
	if err != nil {
		return Compiled{}, true, err
	}
	name := f.Name
	// The compiled expression is shared by the query's tasks, which run
	// at once: each call takes an argument slice from a pool rather than
	// allocating one.
	n := len(args)
	argSlices := sync.Pool{New: func() any { s := make([]any, n); return &s }}
	return Compiled{Type: f.Result, Eval: func(row []any) any {
		p := argSlices.Get().(*[]any)
		args := args.fill(*p, row)
		out, err := impl(args)
		clear(args)
		argSlices.Put(p)
		if err != nil {
			panic(&FunctionError{Function: name, Err: err})
		}
		return out
	}}, true, nil
}

// overloadsOf is the overloads of fs of one kind.
func overloadsOf(fs []*UserFunction, kind parser.FunctionKind) []*UserFunction {
	var out []*UserFunction
	for _, f := range fs {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// userArgs computes a call's arguments as its function takes them: one
// Eval per parameter, a VARIADIC parameter's from several.
type userArgs []Eval

func (a userArgs) fill(dst []any, row []any) []any {
	for i, e := range a {
		dst[i] = e(row)
	}
	return dst
}

// bindUserCall resolves call among overloads, checks determinism, and
// compiles its arguments converted to the declared types (the trailing
// ones of a VARIADIC call gathered into one ARRAY).
func bindUserCall(call *parser.FuncCall, scope Scope, fns UserFunctions, overloads []*UserFunction) (*UserFunction, func([]any) (any, error), userArgs, error) {
	argTypes := make([]types.Type, len(call.Args))
	evals := make([]Eval, len(call.Args))
	for i, a := range call.Args {
		c, err := Compile(a, scope)
		if err != nil {
			return nil, nil, nil, err
		}
		argTypes[i], evals[i] = c.Type, c.Eval
	}
	f, spread, err := resolveOverload(call.Name, overloads, argTypes)
	if err != nil {
		return nil, nil, nil, err
	}
	if fns.Persistent() && !f.Deterministic {
		return nil, nil, nil, fmt.Errorf("%w: Function '%s' is not declared DETERMINISTIC, which a persistent query needs (CREATE OR REPLACE FUNCTION … DETERMINISTIC …)", ErrNotDeterministic, f.Name)
	}
	params, _ := f.paramsFor(len(argTypes), spread)
	for i, t := range argTypes {
		if t.Kind == types.Unknown || t.Equal(params[i]) {
			continue
		}
		conv, err := coerceValue(t, params[i])
		if err != nil {
			return nil, nil, nil, err
		}
		e := evals[i]
		evals[i] = func(row []any) any {
			v := e(row)
			if v == nil {
				return nil
			}
			return conv(v)
		}
	}
	if spread {
		fixed := len(f.Args) - 1
		rest := slices.Clone(evals[fixed:])
		evals = append(evals[:fixed:fixed], func(row []any) any {
			// A new ARRAY each call: the function's value may outlive
			// the call (a JSON encoding reads it later, or the row
			// keeps it).
			out := make([]any, len(rest))
			for i, e := range rest {
				out[i] = e(row)
			}
			return out
		})
	}
	impl, err := fns.Bind(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("function %s: %w", f.Name, err)
	}
	return f, impl, evals, nil
}
