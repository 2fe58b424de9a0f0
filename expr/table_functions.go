package expr

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// Table functions turn one row into several: in a SELECT list, a call
// such as EXPLODE(arr) gives a row per element. The planner lifts each
// call out of the SELECT items into a flat-map step (exec.FlatMapNode)
// before the projection; CompileTableCall compiles one call for it.

// TableEval computes the values a table function gives for one row: one
// per output row (nil or empty: the row gives none).
type TableEval func(row []any) []any

// TableCompiled is a compiled table function call: Type is the type of
// each value it gives.
type TableCompiled struct {
	Eval TableEval
	Type types.Type
}

type tableFunc struct {
	doc string
	// signatures lists the accepted parameters, for the error that
	// names them.
	signatures []string
	result     func(arg types.Type) (types.Type, bool)
	eval       func(arg any) []any
}

var tableFunctions = map[string]tableFunc{
	"EXPLODE": {
		doc:        "A row per element of an ARRAY, in order.",
		signatures: []string{"explode(ARRAY<DECIMAL> input)", "explode(ARRAY<T> list)"},
		result: func(arg types.Type) (types.Type, bool) {
			if arg.Kind != types.Array {
				return types.Type{}, false
			}
			return *arg.Elem, true
		},
		eval: func(arg any) []any { a, _ := arg.([]any); return a },
	},
	"CUBE_EXPLODE": {
		doc:        "A row per combination of an ARRAY's elements, each kept or NULL (a cube's grouping sets).",
		signatures: []string{"cube_explode(ARRAY<T> list)"},
		result: func(arg types.Type) (types.Type, bool) {
			return arg, arg.Kind == types.Array
		},
		eval: func(arg any) []any {
			a, _ := arg.([]any)
			if a == nil || len(a) > 20 {
				return nil
			}
			return cubeCombinations(a)
		},
	},
}

// cubeCombinations lists the 2^n ways of keeping or nulling each element,
// the first element as the highest bit (all NULL first); a combination
// that would keep a NULL element repeats another and is left out.
func cubeCombinations(a []any) []any {
	n := len(a)
	var out []any
masks:
	for mask := 0; mask < 1<<n; mask++ {
		combo := make([]any, n)
		for j := range n {
			if mask&(1<<(n-1-j)) == 0 {
				continue
			}
			if a[j] == nil {
				continue masks
			}
			combo[j] = a[j]
		}
		out = append(out, combo)
	}
	return out
}

// IsTableFunction reports whether name is a table function.
func IsTableFunction(name string) bool {
	_, ok := tableFunctions[strings.ToUpper(name)]
	return ok
}

// CompileTableCall compiles a table function call over scope.
func CompileTableCall(call *parser.FuncCall, scope Scope) (TableCompiled, error) {
	f, ok := tableFunctions[strings.ToUpper(call.Name)]
	if !ok {
		if fns := userFunctionsOf(scope); fns != nil {
			if tables := overloadsOf(fns.Overloads(call.Name), parser.TableFunction); len(tables) > 0 {
				return compileUserTableCall(call, scope, fns, tables)
			}
		}
		return TableCompiled{}, fmt.Errorf("%w: %s is not a table function", ErrUnknownFunction, call.Name)
	}
	lower := strings.ToLower(call.Name)
	if len(call.Args) != 1 || call.Star {
		return TableCompiled{}, &PosError{Pos: call.Pos, Err: fmt.Errorf("%w: Function '%s' takes one argument.\nValid alternatives are:\n%s", ErrType, lower, strings.Join(f.signatures, "\n"))}
	}
	arg, err := Compile(call.Args[0], scope)
	if err != nil {
		return TableCompiled{}, err
	}
	t, ok := f.result(arg.Type)
	if !ok {
		return TableCompiled{}, &PosError{Pos: call.Pos, Err: fmt.Errorf("%w: Function '%s' does not accept parameters (%s).\nValid alternatives are:\n%s", ErrType, lower, arg.Type, strings.Join(f.signatures, "\n"))}
	}
	argEval := arg.Eval
	return TableCompiled{Type: t, Eval: func(row []any) []any { return f.eval(argEval(row)) }}, nil
}
