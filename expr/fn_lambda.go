package expr

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// Lambda functions: TRANSFORM, REDUCE and FILTER take a collection and one
// or more lambdas (x => …, (k, v) => …) that they call per element, as
// ksqlDB's invocation UDFs do.
//
// A lambda's body is compiled in a lambdaScope: its parameters resolve to
// the values the function passes, every other name to the enclosing
// scope. At run time the body reads a row extended with those values: the
// outer row first (so outer columns keep their positions), then each
// enclosing lambda's parameters, innermost last. A parameter is therefore
// found at a fixed distance from the row's end, known when compiling.
//
// Each lambda's slice of the row ends with a fault slot. ksqlDB runs a
// lambda as Java code in which arithmetic unboxes its operands, so a NULL
// operand (x + 5 with x NULL) throws and the whole call yields NULL,
// where a NULL-safe part (a comparison, a function such as UCASE) just
// gives NULL for that element. Arithmetic inside a lambda marks the slot
// on a NULL operand; the function then returns NULL, and marks the slot
// of the lambda around it, if any, in turn.
//
// Maps are visited by key order: ksqlDB visits a Java HashMap's order,
// which depends on its hashing and capacity, not on the data's meaning.

// maxLambdaParams is ksqlDB's limit on a lambda's parameters.
const maxLambdaParams = 3

type lambdaScope struct {
	outer  Scope
	params []string
	types  []types.Type
}

func (l *lambdaScope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	return l.outer.Resolve(ref)
}

// lambdaParam resolves ref to a parameter of scope or of a lambda around
// it, returning an Eval that reads it from the extended row.
func lambdaParam(scope Scope, ref *parser.ColumnRef) (Compiled, bool) {
	if ref.Source != "" {
		return Compiled{}, false
	}
	inner := 0 // parameters of the lambdas inside the one being searched
	for {
		l, ok := scope.(*lambdaScope)
		if !ok {
			return Compiled{}, false
		}
		for k, p := range l.params {
			if p == ref.Name {
				fromEnd := inner + len(l.params) + 1 - k
				return Compiled{Type: l.types[k], Eval: func(row []any) any { return row[len(row)-fromEnd] }}, true
			}
		}
		inner += len(l.params) + 1
		scope = l.outer
	}
}

// inLambda reports whether expressions compiled in scope run inside a
// lambda body, where the last slot of the row is the fault slot.
func inLambda(scope Scope) bool {
	_, ok := scope.(*lambdaScope)
	return ok
}

// faultMark fills a lambda row's fault slot once a call has faulted.
type faultMark struct{}

func markFault(row []any) {
	if len(row) > 0 { // a constant folded at plan time has no row
		row[len(row)-1] = faultMark{}
	}
}

// faultOnNull wraps an arithmetic operand compiled inside a lambda so
// that a NULL value marks the lambda's fault slot.
func faultOnNull(e Eval) Eval {
	return func(row []any) any {
		v := e(row)
		if v == nil {
			markFault(row)
		}
		return v
	}
}

// lambdaFn is a compiled lambda body.
type lambdaFn struct {
	n    int
	body Eval
}

// bind returns a function calling the lambda for one outer row; it reuses
// one extended row, so it must not be shared between rows. ok is false
// when the call faulted.
func (l lambdaFn) bind(row []any) func(args ...any) (v any, ok bool) {
	ext := make([]any, len(row)+l.n+1)
	copy(ext, row)
	base, last := len(row), len(ext)-1
	return func(args ...any) (any, bool) {
		copy(ext[base:], args)
		ext[last] = nil
		v := l.body(ext)
		return v, ext[last] == nil
	}
}

// guard makes f return NULL when a lambda call faulted, passing the fault
// on to the enclosing lambda when the call itself is inside one.
func guard(scope Scope, f func(row []any) (any, bool)) Eval {
	nested := inLambda(scope)
	return func(row []any) any {
		v, ok := f(row)
		if !ok {
			if nested {
				markFault(row)
			}
			return nil
		}
		return v
	}
}

// lambdaFunctions are the functions whose arguments include lambdas,
// with what they compute for SHOW FUNCTIONS and DESCRIBE FUNCTION.
var lambdaFunctions = map[string]string{
	"TRANSFORM": "TRANSFORM(array, x => …) applies the lambda to each element; TRANSFORM(map, (k, v) => key, (k, v) => value) builds a map of new keys and values.",
	"REDUCE":    "REDUCE(array, state, (s, x) => …) or REDUCE(map, state, (s, k, v) => …) folds the elements into the state, starting from state.",
	"FILTER":    "FILTER(array, x => …) or FILTER(map, (k, v) => …) keeps the elements for which the lambda is true.",
}

// compileLambdaCall compiles calls of the lambda functions; handled is
// false for every other call.
func compileLambdaCall(call *parser.FuncCall, scope Scope) (c Compiled, handled bool, err error) {
	if _, ok := lambdaFunctions[call.Name]; !ok {
		return Compiled{}, false, nil
	}
	var plain []parser.Expr
	var lambdas []*parser.Lambda
	for _, a := range call.Args {
		if l, ok := a.(*parser.Lambda); ok {
			lambdas = append(lambdas, l)
			continue
		}
		if len(lambdas) > 0 {
			return Compiled{}, true, errAt(a, fmt.Errorf("%w: function %s takes its lambdas after its other arguments", ErrType, call.Name))
		}
		plain = append(plain, a)
	}
	args := make([]Compiled, len(plain))
	for i, a := range plain {
		if args[i], err = Compile(a, scope); err != nil {
			return Compiled{}, true, err
		}
	}
	switch call.Name {
	case "TRANSFORM":
		c, err = compileTransform(call, args, lambdas, scope)
	case "REDUCE":
		c, err = compileReduce(call, args, lambdas, scope)
	default:
		c, err = compileFilter(call, args, lambdas, scope)
	}
	return c, true, err
}

// lambdaSignature checks the shape of a lambda-function call: nPlain ordinary
// arguments, the first a collection, then nLambdas lambdas.
func lambdaSignature(call *parser.FuncCall, args []Compiled, lambdas []*parser.Lambda, nPlain, nLambdas int, usage string) error {
	if len(args) != nPlain || len(lambdas) != nLambdas {
		return fmt.Errorf("%w: function %s does not accept %d arguments and %d lambdas; use %s", ErrType, call.Name, len(args), len(lambdas), usage)
	}
	return nil
}

// compileLambda compiles l's body with its parameters typed as given.
func compileLambda(call *parser.FuncCall, l *parser.Lambda, scope Scope, params ...types.Type) (lambdaFn, types.Type, error) {
	if len(l.Params) > maxLambdaParams {
		return lambdaFn{}, types.Type{}, errAt(l, fmt.Errorf("%w: a lambda takes at most %d parameters, got %d", ErrType, maxLambdaParams, len(l.Params)))
	}
	if len(l.Params) != len(params) {
		return lambdaFn{}, types.Type{}, errAt(l, fmt.Errorf("%w: the lambda of %s needs %d parameters, got %d: %s",
			ErrType, call.Name, len(params), len(l.Params), strings.Join(l.Params, ", ")))
	}
	seen := map[string]bool{}
	for _, p := range l.Params {
		if seen[p] {
			return lambdaFn{}, types.Type{}, errAt(l, fmt.Errorf("%w: lambda parameter %s is declared twice", ErrType, p))
		}
		seen[p] = true
	}
	body, err := Compile(l.Body, &lambdaScope{outer: scope, params: l.Params, types: params})
	if err != nil {
		return lambdaFn{}, types.Type{}, err
	}
	return lambdaFn{n: len(params), body: body.Eval}, body.Type, nil
}

func compileTransform(call *parser.FuncCall, args []Compiled, lambdas []*parser.Lambda, scope Scope) (Compiled, error) {
	const usage = "TRANSFORM(array, x => …) or TRANSFORM(map, (k, v) => …, (k, v) => …)"
	if len(args) != 1 {
		return Compiled{}, lambdaSignature(call, args, lambdas, 1, 1, usage)
	}
	coll := args[0]
	switch coll.Type.Kind {
	case types.Array, types.Unknown:
		if err := lambdaSignature(call, args, lambdas, 1, 1, usage); err != nil {
			return Compiled{}, err
		}
		fn, rt, err := compileLambda(call, lambdas[0], scope, collElem(coll.Type))
		if err != nil {
			return Compiled{}, err
		}
		get := coll.Eval
		return Compiled{Type: types.ArrayOf(rt), Eval: guard(scope, func(row []any) (any, bool) {
			list, ok := get(row).([]any)
			if !ok {
				return nil, true
			}
			f := fn.bind(row)
			out := make([]any, len(list))
			for i, v := range list {
				if out[i], ok = f(v); !ok {
					return nil, false
				}
			}
			return out, true
		})}, nil
	case types.Map:
		if err := lambdaSignature(call, args, lambdas, 1, 2, usage); err != nil {
			return Compiled{}, err
		}
		kt, vt := *coll.Type.Key, *coll.Type.Elem
		kfn, krt, err := compileLambda(call, lambdas[0], scope, kt, vt)
		if err != nil {
			return Compiled{}, err
		}
		if krt.Kind != types.String {
			return Compiled{}, errAt(lambdas[0], fmt.Errorf("%w: the key lambda of TRANSFORM must return STRING, as map keys are strings; got %s", ErrType, krt))
		}
		vfn, vrt, err := compileLambda(call, lambdas[1], scope, kt, vt)
		if err != nil {
			return Compiled{}, err
		}
		get := coll.Eval
		return Compiled{Type: types.MapOf(krt, vrt), Eval: guard(scope, func(row []any) (any, bool) {
			m, ok := get(row).(map[string]any)
			if !ok {
				return nil, true
			}
			kf, vf := kfn.bind(row), vfn.bind(row)
			out := make(map[string]any, len(m))
			for _, k := range collSortedKeys(m) {
				nk, ok := kf(k, m[k])
				if !ok {
					return nil, false
				}
				key, isKey := nk.(string)
				if !isKey {
					return nil, true // a NULL key has no place in a map
				}
				if out[key], ok = vf(k, m[k]); !ok {
					return nil, false
				}
			}
			return out, true
		})}, nil
	}
	return Compiled{}, fmt.Errorf("%w: function TRANSFORM needs an ARRAY or a MAP, not %s", ErrType, coll.Type)
}

func compileReduce(call *parser.FuncCall, args []Compiled, lambdas []*parser.Lambda, scope Scope) (Compiled, error) {
	const usage = "REDUCE(array, state, (s, x) => …) or REDUCE(map, state, (s, k, v) => …)"
	if err := lambdaSignature(call, args, lambdas, 2, 1, usage); err != nil {
		return Compiled{}, err
	}
	coll, init := args[0], args[1]
	st := init.Type
	var params []types.Type
	switch coll.Type.Kind {
	case types.Array, types.Unknown:
		params = []types.Type{st, collElem(coll.Type)}
	case types.Map:
		params = []types.Type{st, *coll.Type.Key, *coll.Type.Elem}
	default:
		return Compiled{}, fmt.Errorf("%w: function REDUCE needs an ARRAY or a MAP, not %s", ErrType, coll.Type)
	}
	fn, rt, err := compileLambda(call, lambdas[0], scope, params...)
	if err != nil {
		return Compiled{}, err
	}
	// The lambda's result becomes the next state, so it must have the
	// state's type; a NULL result fits any.
	if rt.Kind != types.Unknown && st.Kind != types.Unknown && !rt.Equal(st) && !(rt.Kind == types.Decimal && st.Kind == types.Decimal) {
		return Compiled{}, errAt(lambdas[0], fmt.Errorf("%w: the lambda of REDUCE returns %s but its state is %s; CAST the initial state to the type the lambda returns", ErrType, rt, st))
	}
	if st.Kind == types.Unknown {
		st = rt
	}
	get, getInit := coll.Eval, init.Eval
	// A NULL state gives NULL; a NULL collection leaves the initial state.
	return Compiled{Type: st, Eval: guard(scope, func(row []any) (any, bool) {
		state := getInit(row)
		if state == nil {
			return nil, true
		}
		f := fn.bind(row)
		ok := true
		switch c := get(row).(type) {
		case []any:
			for _, v := range c {
				if state, ok = f(state, v); !ok {
					return nil, false
				}
			}
		case map[string]any:
			for _, k := range collSortedKeys(c) {
				if state, ok = f(state, k, c[k]); !ok {
					return nil, false
				}
			}
		}
		return state, true
	})}, nil
}

func compileFilter(call *parser.FuncCall, args []Compiled, lambdas []*parser.Lambda, scope Scope) (Compiled, error) {
	const usage = "FILTER(array, x => …) or FILTER(map, (k, v) => …)"
	if err := lambdaSignature(call, args, lambdas, 1, 1, usage); err != nil {
		return Compiled{}, err
	}
	coll := args[0]
	var params []types.Type
	switch coll.Type.Kind {
	case types.Array, types.Unknown:
		params = []types.Type{collElem(coll.Type)}
	case types.Map:
		params = []types.Type{*coll.Type.Key, *coll.Type.Elem}
	default:
		return Compiled{}, fmt.Errorf("%w: function FILTER needs an ARRAY or a MAP, not %s", ErrType, coll.Type)
	}
	fn, rt, err := compileLambda(call, lambdas[0], scope, params...)
	if err != nil {
		return Compiled{}, err
	}
	if rt.Kind != types.Boolean && rt.Kind != types.Unknown {
		return Compiled{}, errAt(lambdas[0], fmt.Errorf("%w: the lambda of FILTER must return BOOLEAN, got %s", ErrType, rt))
	}
	get := coll.Eval
	// An element is kept only when the lambda is true: NULL drops it.
	return Compiled{Type: coll.Type, Eval: guard(scope, func(row []any) (any, bool) {
		f := fn.bind(row)
		switch c := get(row).(type) {
		case []any:
			out := []any{}
			for _, v := range c {
				keep, ok := f(v)
				if !ok {
					return nil, false
				}
				if keep == true {
					out = append(out, v)
				}
			}
			return out, true
		case map[string]any:
			out := map[string]any{}
			for _, k := range collSortedKeys(c) {
				keep, ok := f(k, c[k])
				if !ok {
					return nil, false
				}
				if keep == true {
					out[k] = c[k]
				}
			}
			return out, true
		}
		return nil, true
	})}, nil
}
