package expr

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// UserFunction is one overload of a user-defined scalar function (CREATE
// FUNCTION), one version of it: CREATE OR REPLACE of the same signature
// makes a new *UserFunction, and an expression compiled with the old one
// keeps it.
type UserFunction struct {
	Name          string
	Params        []string
	Args          []types.Type
	Result        types.Type
	Deterministic bool
	// Language is WASM or JAVASCRIPT; Origin says where the code came
	// from, for DESCRIBE FUNCTION (the module's sha256 and export, or the
	// JavaScript body's sha256).
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
// ksqlDB's rules: an exact match first, then the one needing the fewest
// widenings (INT → BIGINT → DECIMAL → DOUBLE); a NULL fits any type. Two
// equally good candidates are ambiguous.
func resolveOverload(name string, fs []*UserFunction, args []types.Type) (*UserFunction, error) {
	var best *UserFunction
	bestCost, tied := -1, false
	for _, f := range fs {
		if len(f.Args) != len(args) {
			continue
		}
		cost := 0
		for i, a := range args {
			c, ok := widening(a, f.Args[i])
			if !ok {
				cost = -1
				break
			}
			cost += c
		}
		switch {
		case cost < 0:
		case bestCost < 0 || cost < bestCost:
			best, bestCost, tied = f, cost, false
		case cost == bestCost:
			tied = true
		}
	}
	if best == nil {
		sigs := make([]string, len(fs))
		for i, f := range fs {
			sigs[i] = f.Signature()
		}
		return nil, fmt.Errorf("%w: Function '%s' does not accept parameters (%s). Valid alternatives are: %s", ErrType, name, typeList(args), strings.Join(sigs, ", "))
	}
	if tied {
		return nil, fmt.Errorf("%w: Function '%s' cannot be resolved due to ambiguous method parameters (%s)", ErrType, name, typeList(args))
	}
	return best, nil
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

// compileUserCall compiles a call of a user-defined function found in
// fns (ok false: no function of that name).
func compileUserCall(call *parser.FuncCall, scope Scope, fns UserFunctions) (Compiled, bool, error) {
	overloads := fns.Overloads(call.Name)
	if len(overloads) == 0 {
		return Compiled{}, false, nil
	}
	argTypes := make([]types.Type, len(call.Args))
	evals := make([]Eval, len(call.Args))
	for i, a := range call.Args {
		c, err := Compile(a, scope)
		if err != nil {
			return Compiled{}, true, err
		}
		argTypes[i], evals[i] = c.Type, c.Eval
	}
	f, err := resolveOverload(call.Name, overloads, argTypes)
	if err != nil {
		return Compiled{}, true, err
	}
	if fns.Persistent() && !f.Deterministic {
		return Compiled{}, true, fmt.Errorf("%w: Function '%s' is not declared DETERMINISTIC, which a persistent query needs (CREATE OR REPLACE FUNCTION … DETERMINISTIC …)", ErrNotDeterministic, f.Name)
	}
	for i, t := range argTypes {
		if t.Kind == types.Unknown || t.Equal(f.Args[i]) {
			continue
		}
		conv, err := coerceValue(t, f.Args[i])
		if err != nil {
			return Compiled{}, true, err
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
	impl, err := fns.Bind(f)
	if err != nil {
		return Compiled{}, true, fmt.Errorf("function %s: %w", f.Name, err)
	}
	name := f.Name
	// The compiled expression is shared by the query's tasks, which run
	// at once: each call takes an argument slice from a pool rather than
	// allocating one.
	n := len(evals)
	argSlices := sync.Pool{New: func() any { s := make([]any, n); return &s }}
	return Compiled{Type: f.Result, Eval: func(row []any) any {
		p := argSlices.Get().(*[]any)
		args := *p
		for i, e := range evals {
			args[i] = e(row)
		}
		out, err := impl(args)
		clear(args)
		argSlices.Put(p)
		if err != nil {
			panic(&FunctionError{Function: name, Err: err})
		}
		return out
	}}, true, nil
}
