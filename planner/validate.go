package planner

// Checks of a query against its target, with ksqlDB's error texts.

import (
	"fmt"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// checkTargetKind refuses a target of another kind than the query
// produces (a table when it aggregates or reads a table, else a stream),
// in ksqlDB's words.
func (p *planning) checkTargetKind(produces parser.SourceKind) error {
	if p.target == nil {
		return nil
	}
	want := p.target.Kind
	if p.target.Existing != nil {
		want = p.target.Existing.Kind
	}
	if want == produces {
		return nil
	}
	if p.target.Existing != nil {
		return posErr(p.sel.Pos, fmt.Errorf("%w: incompatible data sink and query result. Data sink (%s) type is %s but select query result is %s", ErrInvalid, p.target.Existing.Name, want, produces))
	}
	return posErr(p.sel.Pos, fmt.Errorf("%w: invalid result type. Your SELECT query produces a %s. Please use CREATE %s AS SELECT statement instead", ErrInvalid, produces, produces))
}

// mustBeBoolean rejects a WHERE or HAVING condition of another type, in
// ksqlDB's words.
func mustBeBoolean(e parser.Expr, c expr.Compiled, clause string) error {
	if c.Type.Kind == types.Boolean || c.Type.Kind == types.Unknown {
		return nil
	}
	return posErr(e.Position(), fmt.Errorf("%w: Type error in %s expression: Should evaluate to boolean but is %s (%s) instead.",
		expr.ErrType, clause, parser.KsqlText(e), c.Type))
}
