package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// What CREATE FUNCTION checks beyond one signature: a VARIADIC parameter's
// place and type, and that a name stays one kind of function from one
// origin (the statements, or this instance's --udf-dir).

// checkVariadic refuses VARIADIC anywhere but on the last parameter, or
// on a type that is not an ARRAY.
func checkVariadic(p parser.FunctionParam, t types.Type, last bool) error {
	if !p.Variadic {
		return nil
	}
	if !last {
		return posErr(p.Pos, fmt.Errorf("%w: VARIADIC %s: only the last parameter can be VARIADIC", ErrInvalid, p.Name))
	}
	if t.Kind != types.Array {
		return posErr(p.Pos, fmt.Errorf("%w: VARIADIC %s %s: a VARIADIC parameter is an ARRAY<T> (each argument a T)", ErrInvalid, p.Name, t))
	}
	return nil
}

// checkFunctionName refuses a function whose name has overloads of
// another kind (a scalar and a table function of one name could not be
// told apart in a SELECT list), or overloads another origin made: a
// function of this instance's --udf-dir cannot be redefined by a
// statement, nor a statement's by the directory.
func checkFunctionName(cat *Catalog, f *expr.UserFunction) error {
	for _, old := range cat.Functions(f.Name) {
		if old.Dir != "" && f.Dir == "" {
			return fmt.Errorf("%w: Function '%s' comes from this instance's --udf-dir (%s) and cannot be redefined by a statement", ErrExists, f.Name, old.Dir)
		}
		if old.Dir == "" && f.Dir != "" {
			return fmt.Errorf("%w: Function '%s' already exists (created by a statement); --udf-dir cannot redefine it", ErrExists, f.Name)
		}
		if old.Kind != f.Kind {
			return fmt.Errorf("%w: Function '%s' already exists as %s function; %s function cannot take its name (DROP FUNCTION %s first)", ErrExists, f.Name, withArticle(kindName(old.Kind)), withArticle(kindName(f.Kind)), f.Name)
		}
	}
	return nil
}

// withArticle puts "a" or "an" before a kind's name.
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

func kindName(k parser.FunctionKind) string {
	switch k {
	case parser.AggregateFunction:
		return "aggregate"
	case parser.TableFunction:
		return "table"
	}
	return "scalar"
}

// IsTableFunction reports whether name is a table function, built-in or
// user-defined.
func (c *Catalog) IsTableFunction(name string) bool {
	return expr.IsTableFunction(name) || expr.IsUserTableFunction(c.Functions(name))
}
