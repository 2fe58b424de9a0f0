package planner

// The validate and resolve passes of a join: which inputs ksqlDB can
// join, and what the ON clause names and keys by.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// checkJoinInputs refuses inputs ksqlDB cannot join: KAFKA values, a
// table joined to a stream, a stream-table join of a type it lacks, and
// inputs windowed differently.
func checkJoinInputs(j *parser.Join, left, right *joinInput) error {
	var kafka []string
	for _, in := range []*joinInput{left, right} {
		if in.src != nil && strings.EqualFold(in.src.ValueFormat, "KAFKA") {
			kafka = append(kafka, in.src.Name)
		}
	}
	if len(kafka) > 0 {
		return posErr(j.Pos, fmt.Errorf("%w: Source(s) %s are using the 'KAFKA' value format. This format does not yet support JOIN.", ErrUnsupported, strings.Join(kafka, ", ")))
	}
	leftTable, rightTable := left.table, right.table
	if leftTable && !rightTable {
		return posErr(j.Pos, fmt.Errorf("%w: Invalid join order: table-stream joins are not supported; only stream-table joins. Got %s %s %s.", ErrInvalid, left.label, joinSyntax(j.Type), right.label))
	}
	if rightTable && !leftTable && (j.Type == parser.JoinRight || j.Type == parser.JoinFull) {
		return posErr(j.Pos, fmt.Errorf("%w: Invalid join type: %s join not supported for stream-table join. Got %s %s %s.", ErrInvalid, joinTypeName(j.Type), left.label, joinSyntax(j.Type), right.label))
	}
	// Time windows of different sizes give keys ksqlDB serializes
	// differently, and it does not re-key windowed inputs, unless their
	// key format is a Schema Registry one: those it re-serializes anyway
	// (both inputs' keys carry their own schema ids), and only the window
	// start is in the key.
	sizes := left.window == exec.TimeWindowed && left.windowSize != right.windowSize &&
		!(format.UsesRegistry(left.keyFormat) && format.UsesRegistry(right.keyFormat))
	if left.window != right.window || sizes {
		return posErr(j.Pos, windowMismatch(left, right))
	}
	return nil
}

// joinCondition checks the ON clause (one equality whose sides each name
// columns of one input) and returns the layout of the two inputs' rows,
// the equality, and the input its left operand names (0 or 1).
func joinCondition(j *parser.Join, left, right *joinInput, bases []*joinInput) (*joinLayout, *parser.Binary, int, error) {
	ins := []*joinInput{left, right}
	// The ON clause: one equality, each side naming one input.
	eq, ok := j.On.(*parser.Binary)
	if !ok || eq.Op != parser.OpEq {
		return nil, nil, 0, posErr(j.On.Position(), fmt.Errorf("%w: Invalid join condition: joins on multiple conditions are not yet supported. Got %s.", ErrUnsupported, parenthesized(j.On)))
	}
	pre := &joinLayout{inputs: bases, sides: [2]*joinInput{left, right}}
	for _, in := range ins {
		pre.names = append(pre.names, in.names...)
		pre.types = append(pre.types, in.types...)
	}
	var badQualifier error
	walkExpr(j.On, func(x parser.Expr) {
		if ref, ok := x.(*parser.ColumnRef); ok && ref.Source != "" && pre.input(ref.Source) == nil && badQualifier == nil {
			badQualifier = posErr(ref.Pos, fmt.Errorf("%w: Failed to prepare statement: '%s' is not a valid stream/table name or alias.", ErrInvalid, strings.ToUpper(ref.Source)))
		}
	})
	if badQualifier != nil {
		return nil, nil, 0, badQualifier
	}
	sideOf := func(e parser.Expr) (int, error) {
		side := -1
		var err error
		walkExpr(e, func(x parser.Expr) {
			ref, ok := x.(*parser.ColumnRef)
			if !ok || err != nil {
				return
			}
			i, _, rerr := pre.resolve(ref)
			if rerr != nil {
				var located *expr.LocatedError
				if errors.As(rerr, &located) || strings.Contains(rerr.Error(), "not a valid stream/table") {
					err = rerr
				} else {
					err = &expr.LocatedError{Kind: ErrInvalid, Msg: fmt.Sprintf("JOIN ON column '%s' cannot be resolved.", strings.ToUpper(ref.String()))}
				}
				return
			}
			s := 0
			if i >= len(left.names) {
				s = 1
			}
			if side >= 0 && side != s {
				side = -2
			} else if side != -2 {
				side = s
			}
		})
		if err != nil {
			return 0, err
		}
		if side < 0 {
			return 0, fmt.Errorf("%w: Invalid comparison expression '%s' in join '%s'. Each side of the join comparision must contain references from exactly one source.", ErrInvalid, e, parenthesized(j.On))
		}
		return side, nil
	}
	ls, err := sideOf(eq.Left)
	if err != nil {
		return nil, nil, 0, posErr(eq.Left.Position(), err)
	}
	rs, err := sideOf(eq.Right)
	if err != nil {
		return nil, nil, 0, posErr(eq.Right.Position(), err)
	}
	if err := checkJoinSources(eq, pre, right); err != nil {
		return nil, nil, 0, posErr(j.On.Position(), err)
	}
	if ls == rs {
		return nil, nil, 0, posErr(j.On.Position(), fmt.Errorf("%w: Each side of the join comparision must contain references from exactly one source. Got %s.", ErrInvalid, parenthesized(j.On)))
	}
	return pre, eq, ls, nil
}

// checkJoinSources applies ksqlDB's rules on the sources an ON equality
// names, one source a side: not the same source on both sides, and one
// of them the source being joined (in an n-way join, criteria naming
// only earlier sources are refused).
func checkJoinSources(eq *parser.Binary, pre *joinLayout, joined *joinInput) error {
	sourceOf := func(e parser.Expr) string {
		found := ""
		walkExpr(e, func(x parser.Expr) {
			ref, ok := x.(*parser.ColumnRef)
			if !ok {
				return
			}
			i, _, err := pre.resolve(ref)
			if err != nil || i < 0 || i >= len(pre.names) {
				return
			}
			// The column's name is its input's alias and its own: the
			// longest alias it starts with is its input's.
			owner := ""
			for _, in := range pre.inputs {
				if a := strings.ToUpper(in.alias); strings.HasPrefix(pre.names[i], a+"_") && len(a) > len(owner) {
					owner = a
				}
			}
			found = owner
		})
		return found
	}
	left, right := sourceOf(eq.Left), sourceOf(eq.Right)
	if left == "" || right == "" {
		return nil
	}
	if left == right {
		return fmt.Errorf("%w: Each side of the join must reference exactly one source and not the same source. Left side references `%s` and right references `%s`", ErrInvalid, left, right)
	}
	if source := strings.ToUpper(joined.alias); left != source && right != source {
		return fmt.Errorf("%w: A join criteria is expected to reference the source (`%s`) in the FROM clause, instead the right source references `%s` and the left source references `%s`", ErrInvalid, source, right, left)
	}
	return nil
}

// checkWithin requires a WITHIN clause on a stream-stream join and refuses
// one on any other.
func checkWithin(j *parser.Join, streams bool) error {
	if streams && j.Within == nil {
		return posErr(j.Pos, fmt.Errorf("%w: Stream-Stream joins must have a WITHIN clause specified. None was provided. To learn about how to specify a WITHIN clause with a stream-stream join, please visit: https://docs.confluent.io/current/ksql/docs/syntax-reference.html#create-stream-as-select", ErrInvalid))
	}
	if !streams && j.Within != nil {
		return posErr(j.Pos, fmt.Errorf("%w: A window definition was provided for a Stream-Table join. These joins are not windowed. Please drop the window definition (i.e. the WITHIN clause) and try to execute your Stream-Table join again.", ErrInvalid))
	}
	return nil
}

// joinKeyExprs compiles each side's join expression against its own
// input, left input first, and checks they have one type a key may have.
func joinKeyExprs(j *parser.Join, eq *parser.Binary, ls int, pre *joinLayout, left, right *joinInput) ([2]parser.Expr, [2]expr.Compiled, error) {
	onExpr := [2]parser.Expr{eq.Left, eq.Right}
	if ls == 1 {
		onExpr = [2]parser.Expr{eq.Right, eq.Left}
	}
	var keyType [2]types.Type
	var keyExpr [2]expr.Compiled
	for side, e := range onExpr {
		c, err := expr.Compile(e, pre.scopeOf(side))
		if err != nil {
			return onExpr, keyExpr, posErr(e.Position(), err)
		}
		keyType[side], keyExpr[side] = c.Type, c
	}
	if !keyType[0].Equal(keyType[1]) {
		return onExpr, keyExpr, posErr(j.On.Position(), fmt.Errorf("%w: Invalid join condition: types don't match. Got %s{%s} = %s{%s}.", ErrInvalid, qualifiedText(onExpr[0], left.alias), keyType[0], qualifiedText(onExpr[1], right.alias), keyType[1]))
	}
	if containsMap(keyType[0]) {
		return onExpr, keyExpr, posErr(j.On.Position(), fmt.Errorf("%w: Map keys, including types that contain maps, are not supported as they may lead to unexpected behavior due to inconsistent serialization. Key column name: %s. Column type: %s. See https://github.com/confluentinc/ksql/issues/6621 for more.", ErrUnsupported, mapKeyName(pre, onExpr), keyType[0]))
	}

	return onExpr, keyExpr, nil
}
