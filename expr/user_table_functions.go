package expr

import (
	"fmt"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// A user-defined table function (CREATE TABLE FUNCTION … RETURNS
// ARRAY<T>) is called once per input row like a scalar one; the ARRAY it
// returns is the rows it gives, one per element, as EXPLODE's argument
// is. A NULL or empty ARRAY gives no row. A failure panics with a
// *FunctionError, so the input record is a bad record and none of its
// rows is emitted.

// compileUserTableCall compiles a call of one of overloads, the table
// functions of the call's name.
func compileUserTableCall(call *parser.FuncCall, scope Scope, fns UserFunctions, overloads []*UserFunction) (TableCompiled, error) {
	f, impl, args, err := bindUserCall(call, scope, fns, overloads)
	if err != nil {
		return TableCompiled{}, &PosError{Pos: call.Pos, Err: err}
	}
	if f.Result.Kind != types.Array {
		return TableCompiled{}, &PosError{Pos: call.Pos, Err: fmt.Errorf("%w: table function %s returns %s, not an ARRAY", ErrType, f.Name, f.Result)}
	}
	name := f.Name
	return TableCompiled{Type: *f.Result.Elem, Eval: func(row []any) []any {
		// A table function runs once per row, and its rows are many
		// allocations already: its arguments get their own slice.
		out, err := impl(args.fill(make([]any, len(args)), row))
		if err != nil {
			panic(&FunctionError{Function: name, Err: err})
		}
		rows, _ := out.([]any)
		return rows
	}}, nil
}

// IsUserTableFunction reports whether fs has a table function of name.
func IsUserTableFunction(fs []*UserFunction) bool {
	return len(overloadsOf(fs, parser.TableFunction)) > 0
}
