package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
)

// qualifiedText prints a join expression with its columns qualified by
// their source, as ksqlDB's errors do.
func qualifiedText(e parser.Expr, alias string) string {
	return strings.ToUpper(qualified(e, alias).String())
}

// mapKeyName names the join column ksqlDB would have made the key, for
// the error refusing MAP keys.
func mapKeyName(l *joinLayout, on [2]parser.Expr) string {
	for side, e := range on {
		if ref, ok := e.(*parser.ColumnRef); ok {
			return "`" + strings.ToUpper(l.sides[side].aliasOf(ref)) + "_" + strings.ToUpper(ref.Name) + "`"
		}
	}
	return "`ROWKEY`"
}

// onText prints a join's ON equality as ksqlDB does in its errors: in
// the order written, each column qualified by the source it belongs to.
func onText(eq *parser.Binary, pre *joinLayout) string {
	q := func(e parser.Expr) string {
		return parenthesizedOperand(parser.Rewrite(e, func(x parser.Expr) parser.Expr {
			ref, ok := x.(*parser.ColumnRef)
			if !ok || ref.Source != "" {
				return nil
			}
			i, _, err := pre.resolve(ref)
			if err != nil || i >= len(pre.names) {
				return nil
			}
			c := *ref
			best := ""
			for _, b := range pre.inputs {
				if a := strings.ToUpper(b.alias); len(a) > len(best) && strings.HasPrefix(pre.names[i], a+"_") {
					best = a
				}
			}
			c.Source = best
			return &c
		}))
	}
	return q(eq.Left) + " = " + q(eq.Right)
}

// joinSyntax is a join type as ksqlDB prints it, optional words in
// brackets.
func joinSyntax(t parser.JoinType) string {
	return [...]string{"[INNER] JOIN", "LEFT [OUTER] JOIN", "RIGHT [OUTER] JOIN", "[FULL] OUTER JOIN"}[t]
}

// joinTypeName is a join type's lower-case name in ksqlDB's errors.
func joinTypeName(t parser.JoinType) string {
	return [...]string{"inner", "left", "right", "full-outer"}[t]
}

func joinKind(leftTable, rightTable bool) string {
	if leftTable && rightTable {
		return "table-table"
	}
	return "stream-table"
}

func windowMismatch(left, right *joinInput) error {
	name := func(s *joinInput) string {
		switch s.window {
		case exec.SessionWindowed:
			return "SESSION"
		case exec.TimeWindowed:
			return "TUMBLING"
		}
		return "not windowed"
	}
	if left.window == exec.NotWindowed || right.window == exec.NotWindowed {
		w, n := left, right
		if left.window == exec.NotWindowed {
			w, n = right, left
		}
		return fmt.Errorf("%w: Can not join windowed source to non-windowed source.\n`%s` is %s windowed\n`%s` is not windowed", ErrInvalid, w.label, name(w), n.label)
	}
	if left.window != right.window {
		return fmt.Errorf("%w: Incompatible windowed sources.\nLeft source: %s\nRight source: %s\nSession windowed sources can only be joined to other session windowed sources, and may still not result in expected behaviour as session bounds must be an exact match for the join to work\nHopping and tumbling windowed sources can only be joined to other hopping and tumbling windowed sources", ErrInvalid, name(left), name(right))
	}
	return fmt.Errorf("%w: Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385.", ErrUnsupported)
}

// parenthesized prints a join condition as ksqlDB does in errors.
func parenthesized(e parser.Expr) string {
	if b, ok := e.(*parser.Binary); ok {
		return "(" + parenthesizedOperand(b.Left) + " " + b.Op.String() + " " + parenthesizedOperand(b.Right) + ")"
	}
	return e.String()
}

func parenthesizedOperand(e parser.Expr) string {
	if _, ok := e.(*parser.Binary); ok {
		return parenthesized(e)
	}
	if ref, ok := e.(*parser.ColumnRef); ok && ref.Source != "" {
		return strings.ToUpper(ref.Source) + "." + strings.ToUpper(ref.Name)
	}
	return strings.ToUpper(e.String())
}
