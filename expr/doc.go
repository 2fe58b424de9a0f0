// Package expr compiles SQL expressions into closures over rows, and holds
// the scalar and aggregate functions they call.
//
// Place in the flow: planner/ resolves column names to row positions and
// calls Compile once per expression at plan time; exec/ operators call the
// resulting Eval on every record. Evaluation never looks a column up by
// name and never returns an error: as in ksqlDB, a failing expression
// (integer division by zero, a bad cast) yields NULL. DOUBLE division by
// zero gives ±Infinity or NaN, as in Java and ksqlDB.
//
// Example:
//
//	schema := types.Schema{Columns: []types.Column{{Name: "PRICE", Type: types.DoubleType}}}
//	e, _ := parser.ParseExpr("price * 2 > 10")
//	c, _ := expr.Compile(e, expr.SchemaScope(schema))
//	c.Eval([]any{6.0}) // true
package expr
