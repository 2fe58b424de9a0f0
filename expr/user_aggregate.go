package expr

import (
	"fmt"
	"sync"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// KindAggregate is the type SHOW FUNCTIONS and DESCRIBE FUNCTION give an
// aggregate function, built-in or user-defined.
const KindAggregate = "AGGREGATE"

// IsAggregate reports whether f is an aggregate function (CREATE
// AGGREGATE FUNCTION).
func (f *UserFunction) IsAggregate() bool { return f.Kind == parser.AggregateFunction }

// AggregateCalls are a user-defined aggregate's calls as its language
// binds them, for one query: each may fail (a trap, a timeout, a bad
// return) and may be called from several goroutines at once.
type AggregateCalls struct {
	Init       func() (any, error)
	Accumulate func(state any, args []any) (any, error)
	Result     func(state any) (any, error)
	// Merge and Undo are nil when the function has none: a SESSION window
	// needs Merge, an aggregation of a TABLE needs Undo.
	Merge func(earlier, later any) (any, error)
	Undo  func(state any, args []any) (any, error)
}

// ResolveUserAggregate picks the overload of a user-defined aggregate
// function for the argument types, by the rules of scalar calls; a
// persistent query may only call one declared DETERMINISTIC.
func ResolveUserAggregate(name string, overloads []*UserFunction, argTypes []types.Type, persistent bool) (*UserFunction, error) {
	// Aggregates take no VARIADIC parameter (CREATE refuses one), so no
	// call spreads its arguments.
	f, _, err := resolveOverload(name, overloads, argTypes)
	if err != nil {
		return nil, err
	}
	if persistent && !f.Deterministic {
		return nil, fmt.Errorf("%w: Function '%s' is not declared DETERMINISTIC, which a persistent query needs (CREATE OR REPLACE AGGREGATE FUNCTION … DETERMINISTIC …)", ErrNotDeterministic, f.Name)
	}
	return f, nil
}

// BindUserAggregate makes the *Aggregate calling f through calls, for
// arguments of argTypes (converted to f's declared types). Its
// accumulator is the state, a value of f's intermediate type, so a state
// store keeps it as it keeps a built-in's. A failing call panics with a
// *FunctionError, as a failing scalar call does: the task processing the
// record makes it a bad record.
func BindUserAggregate(f *UserFunction, argTypes []types.Type, calls AggregateCalls) (*Aggregate, error) {
	convs := make([]func(any) any, len(argTypes))
	converts := false
	for i, t := range argTypes {
		if t.Kind == types.Unknown || t.Equal(f.Args[i]) {
			continue
		}
		conv, err := coerceValue(t, f.Args[i])
		if err != nil {
			return nil, err
		}
		convs[i], converts = conv, true
	}
	name := f.Name
	check := func(v any, err error) any {
		if err != nil {
			panic(&FunctionError{Function: name, Err: err})
		}
		return v
	}
	// args converts a row's arguments into a slice of its own: the caller
	// may keep its slice (a sliding window replays stored rows).
	n := len(argTypes)
	argSlices := sync.Pool{New: func() any { s := make([]any, n); return &s }}
	withArgs := func(call func(any, []any) (any, error)) func(any, []any) any {
		if !converts {
			return func(acc any, args []any) any { return check(call(acc, args)) }
		}
		return func(acc any, args []any) any {
			p := argSlices.Get().(*[]any)
			s := *p
			for i, v := range args {
				if convs[i] != nil && v != nil {
					v = convs[i](v)
				}
				s[i] = v
			}
			out, err := call(acc, s)
			clear(s)
			argSlices.Put(p)
			return check(out, err)
		}
	}
	agg := &Aggregate{
		Name:       name,
		ResultType: f.Result,
		StateType:  f.Intermediate,
		Init:       func() any { return check(calls.Init()) },
		Add:        withArgs(calls.Accumulate),
		Result:     func(acc any) any { return check(calls.Result(acc)) },
		Fallible:   true,
	}
	if calls.Merge != nil {
		agg.Merge = func(earlier, later any) any { return check(calls.Merge(earlier, later)) }
	}
	if calls.Undo != nil {
		agg.Undo = withArgs(calls.Undo)
	}
	return agg, nil
}
