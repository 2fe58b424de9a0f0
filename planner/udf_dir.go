package planner

import (
	"context"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
)

// CreateDirFunction plans a CREATE FUNCTION of a --udf-dir manifest, as
// CreateFunction does one of the command topic, with module the bytes of
// the file its PATH names; origin names the manifest's file and line,
// which SHOW FUNCTIONS and DESCRIBE FUNCTION show, and marks the function
// as this instance's own: statements cannot redefine or drop it.
func CreateDirFunction(ctx context.Context, cat *Catalog, st *parser.CreateFunction, origin string, module []byte) (*expr.UserFunction, error) {
	return createFunction(ctx, cat, st, origin, module)
}
