package exec

import "github.com/sluice-sql/sluice/expr"

// A user-defined function that fails on a row panics with an
// *expr.FunctionError (its Eval has no error return). Task.Process turns
// it into a bad record; where rows do not come from a record (pull
// queries reading state, a task advancing idle time), processGuarded and
// Task.advanceIdle turn it into an error or a counted, logged skip, so
// that it never unwinds past the engine.

// processGuarded runs row through op, returning a user-defined function's
// failure as its *expr.FunctionError. Other panics go on unwinding.
func processGuarded(op Operator, tc *TaskContext, row *Row) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fe, ok := p.(*expr.FunctionError)
			if !ok {
				panic(p)
			}
			err = fe
		}
	}()
	return op.Process(tc, row)
}

// guardFunctions runs f, returning a user-defined function's failure as
// its *expr.FunctionError (a pull query reading an aggregate's state
// computes a user-defined aggregate's results). Other panics go on
// unwinding.
func guardFunctions(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fe, ok := p.(*expr.FunctionError)
			if !ok {
				panic(p)
			}
			err = fe
		}
	}()
	f()
	return nil
}

// keyOrNull computes a PARTITION BY key, NULL where a user-defined
// function fails in it: ksqlDB writes such a record with a NULL key (and
// logs it to its processing log) rather than dropping it. The failure is
// counted as a function error and logged, the first time and every
// 1000th, with the record's position.
func keyOrNull(tc *TaskContext, eval expr.Eval, cols []any) (out any) {
	defer func() {
		if p := recover(); p != nil {
			fe, ok := p.(*expr.FunctionError)
			if !ok {
				panic(p)
			}
			out = nil
			if n := tc.Metrics.CountError(ErrKindFunction); n <= 1 || n%1000 == 0 {
				args := []any{"query", tc.QueryID, "function", fe.Function, "err", fe.Err, "nulled_so_far", n}
				if in := tc.input; in != nil {
					args = append(args, "topic", in.Topic, "partition", in.Partition, "offset", in.Offset)
				}
				tc.Log.Warn("PARTITION BY key is NULL: a function failed on the record", args...)
			}
		}
	}()
	return eval(cols)
}
