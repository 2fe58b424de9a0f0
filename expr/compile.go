package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// Eval computes an expression's value from a row. It never fails: errors
// become NULL.
type Eval func(row []any) any

// Compiled is an expression ready to run, with its result type.
type Compiled struct {
	Type types.Type
	Eval Eval
	// Const is set when the expression does not read the row.
	Const bool
}

// Scope resolves column references during compilation.
type Scope interface {
	// Resolve returns the row position and type of a column reference.
	Resolve(ref *parser.ColumnRef) (int, types.Type, error)
}

// ErrUnknownColumn is wrapped by errors for column names that resolve to
// nothing; the message names the column and lists the ones that exist.
var ErrUnknownColumn = errors.New("unknown column")

// ErrType is wrapped by type-checking errors.
var ErrType = errors.New("type error")

// ErrUnknownFunction is wrapped when a function name is not registered.
var ErrUnknownFunction = errors.New("unknown function")

// NullTypeMessage is ksqlDB's error for a bare NULL whose type nothing
// decides (a SELECT item, a STRUCT field).
const NullTypeMessage = "Can't infer a type of null. Please explicitly cast it to a required type, e.g. CAST(null AS VARCHAR)."

// PosError is a compile error at a position in the SQL text.
type PosError struct {
	Pos parser.Pos
	Err error
}

func (e *PosError) Error() string {
	if le, ok := e.Err.(*LocatedError); ok {
		return fmt.Sprintf("%sLine: %d, Col: %d: %s", le.Preface, e.Pos.Line, e.Pos.Column, le.Msg)
	}
	return fmt.Sprintf("line %d:%d: %v", e.Pos.Line, e.Pos.Column, e.Err)
}

// LocatedError is an error ksqlDB reports with the position of the node
// it found it at, in its own words: "Line: 3, Col: 84: Column 'ID' is
// ambiguous. …", after Preface when the stage that found it names itself
// ("Exception while preparing statement: " for the names resolved before
// a statement is analysed). A *PosError holding one prints the position
// that way instead of Sluice's "line 3:84: kind: …"; Kind keeps errors.Is
// working.
type LocatedError struct {
	Preface string
	Kind    error
	Msg     string
}

// Preparing is the preface ksqlDB gives the errors it finds while
// preparing a statement (resolving its sources and column names), before
// the statement is analysed.
const Preparing = "Exception while preparing statement: "

func (e *LocatedError) Error() string { return e.Preface + e.Msg }
func (e *LocatedError) Unwrap() error { return e.Kind }

func (e *PosError) Unwrap() error { return e.Err }

func errAt(n parser.Node, err error) error {
	var pe *PosError
	if errors.As(err, &pe) {
		return err
	}
	return &PosError{Pos: n.Position(), Err: err}
}

// InClause words a compile error as ksqlDB does for the clause it came
// from ("Error in WHERE expression: …"), keeping its position and kind.
func InClause(err error, clause string) error {
	if err == nil {
		return nil
	}
	prefix := "Error in " + clause + " expression: "
	var pe *PosError
	if errors.As(err, &pe) {
		return &PosError{Pos: pe.Pos, Err: &clauseError{prefix: prefix, err: pe.Err}}
	}
	return &clauseError{prefix: prefix, err: err}
}

// InClauseOf is InClause for a clause whose expression is e: a type
// error also quotes e as ksqlDB does ("…\nStatement: (ID = '10')").
func InClauseOf(err error, clause string, e parser.Expr) error {
	err = InClause(err, clause)
	if err == nil || !errors.Is(err, ErrType) {
		return err
	}
	var ce *clauseError
	if errors.As(err, &ce) {
		ce.suffix = "\nStatement: " + parser.KsqlText(e)
	}
	return err
}

type clauseError struct {
	prefix string
	err    error
	suffix string
}

// Error puts the clause after the kind ("type error: Error in WHERE
// expression: Cannot compare …"), so that the text reads as ksqlDB's.
func (e *clauseError) Error() string {
	msg := e.err.Error()
	for _, kind := range []error{ErrType, ErrUnknownColumn, ErrUnknownFunction} {
		if k := kind.Error() + ": "; strings.HasPrefix(msg, k) {
			return k + e.prefix + msg[len(k):] + e.suffix
		}
	}
	return e.prefix + msg + e.suffix
}

func (e *clauseError) Unwrap() error { return e.err }

// SchemaScope resolves unqualified (or any-qualified) names against one
// schema, ignoring case.
func SchemaScope(s types.Schema) Scope { return schemaScope{s} }

type schemaScope struct{ s types.Schema }

func (sc schemaScope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	if i := sc.s.Find(ref.Name); i >= 0 {
		return i, sc.s.Columns[i].Type, nil
	}
	return 0, types.Type{}, fmt.Errorf("%w %s: columns are %s", ErrUnknownColumn, ref.Name, strings.Join(sc.s.Names(), ", "))
}

// Compile type-checks e against scope and returns its closure.
func Compile(e parser.Expr, scope Scope) (Compiled, error) {
	c, err := compile(e, scope)
	if err != nil {
		return Compiled{}, errAt(e, err)
	}
	return c, nil
}

func constant(t types.Type, v any) Compiled {
	return Compiled{Type: t, Const: true, Eval: func([]any) any { return v }}
}

func compile(e parser.Expr, scope Scope) (Compiled, error) {
	switch x := e.(type) {
	case *parser.Literal:
		return compileLiteral(x)
	case *parser.ColumnRef:
		if c, ok := lambdaParam(scope, x); ok {
			return c, nil
		}
		idx, t, err := scope.Resolve(x)
		if err != nil {
			return Compiled{}, errAt(x, err)
		}
		return Compiled{Type: t, Eval: func(row []any) any { return row[idx] }}, nil
	case *parser.Unary:
		return compileUnary(x, scope)
	case *parser.Binary:
		return compileBinary(x, scope)
	case *parser.FuncCall:
		if c, handled, err := tmCompileCall(x, scope); handled {
			return c, err
		}
		if c, handled, err := compileLambdaCall(x, scope); handled {
			return c, err
		}
		return compileCall(x, scope)
	case *parser.Case:
		return compileCase(x, scope)
	case *parser.Cast:
		return compileCast(x, scope)
	case *parser.IsNull:
		inner, err := Compile(x.X, scope)
		if err != nil {
			return Compiled{}, err
		}
		f, not := inner.Eval, x.Not
		return Compiled{Type: types.BooleanType, Eval: func(row []any) any { return (f(row) == nil) != not }}, nil
	case *parser.In:
		return compileIn(x, scope)
	case *parser.Between:
		return compileBetween(x, scope)
	case *parser.Like:
		return compileLike(x, scope)
	case *parser.Dereference:
		return compileDereference(x, scope)
	case *parser.Subscript:
		return compileSubscript(x, scope)
	case *parser.StructCtor:
		return compileStructCtor(x, scope)
	case *parser.ArrayCtor:
		return compileArrayCtor(x, scope)
	case *parser.MapCtor:
		return compileMapCtor(x, scope)
	case *parser.Lambda:
		return Compiled{}, fmt.Errorf("%w: a lambda (%s) is only allowed as an argument of TRANSFORM, REDUCE or FILTER", ErrType, x)
	}
	return Compiled{}, errAt(e, fmt.Errorf("%w: %s is not supported yet", ErrType, e.String()))
}

func compileLiteral(l *parser.Literal) (Compiled, error) {
	switch l.Kind {
	case parser.LitNull:
		return constant(types.UnknownType, nil), nil
	case parser.LitBool:
		return constant(types.BooleanType, l.Bool), nil
	case parser.LitString:
		return constant(types.StringType, l.Str), nil
	case parser.LitInteger:
		n, err := strconv.ParseInt(l.Text, 10, 64)
		if err != nil {
			return Compiled{}, fmt.Errorf("%w: integer literal %s out of range", ErrType, l.Text)
		}
		if n >= -1<<31 && n < 1<<31 {
			return constant(types.IntegerType, int32(n)), nil
		}
		return constant(types.BigIntType, n), nil
	case parser.LitDecimal:
		// ksqlDB types 1.50 as DECIMAL(3, 2): precision is the digits
		// written (at least the scale, and at least 1), scale those after
		// the point.
		d, err := types.ParseDecimal(l.Text)
		if err != nil {
			return Compiled{}, fmt.Errorf("%w: bad number %s", ErrType, l.Text)
		}
		scale := max(int(-d.Exponent), 0)
		prec := max(int(d.NumDigits()), scale, 1)
		if d.Exponent > 0 || prec > types.MaxDecimalPrecision {
			f, _ := strconv.ParseFloat(l.Text, 64)
			return constant(types.DoubleType, f), nil
		}
		return constant(types.DecimalOf(prec, scale), d), nil
	case parser.LitDouble:
		f, err := strconv.ParseFloat(l.Text, 64)
		if err != nil {
			return Compiled{}, fmt.Errorf("%w: bad number %s", ErrType, l.Text)
		}
		return constant(types.DoubleType, f), nil
	}
	return Compiled{}, fmt.Errorf("%w: unknown literal", ErrType)
}

func compileUnary(u *parser.Unary, scope Scope) (Compiled, error) {
	x, err := Compile(u.X, scope)
	if err != nil {
		return Compiled{}, err
	}
	f := x.Eval
	switch u.Op {
	case parser.OpNot:
		if x.Type.Kind != types.Boolean && x.Type.Kind != types.Unknown {
			return Compiled{}, fmt.Errorf("%w: NOT needs a BOOLEAN, got %s", ErrType, x.Type)
		}
		return fold(Compiled{Type: types.BooleanType, Const: x.Const, Eval: func(row []any) any {
			if b, ok := f(row).(bool); ok {
				return !b
			}
			return nil
		}}), nil
	case parser.OpPlus:
		return x, nil
	case parser.OpNeg:
		if !x.Type.IsNumeric() {
			return Compiled{}, fmt.Errorf("%w: cannot negate %s", ErrType, x.Type)
		}
		return fold(Compiled{Type: x.Type, Const: x.Const, Eval: func(row []any) any {
			switch v := f(row).(type) {
			case int32:
				return -v
			case int64:
				return -v
			case float64:
				return -v
			case *apd.Decimal:
				if v.IsZero() {
					return v
				}
				return new(apd.Decimal).Neg(v)
			}
			return nil
		}}), nil
	}
	return Compiled{}, fmt.Errorf("%w: unknown unary operator", ErrType)
}

// fold evaluates constant expressions once at plan time.
func fold(c Compiled) Compiled {
	if !c.Const {
		return c
	}
	v := c.Eval(nil)
	return constant(c.Type, v)
}

func compileCase(c *parser.Case, scope Scope) (Compiled, error) {
	var operand Compiled
	if c.Operand != nil {
		var err error
		if operand, err = Compile(c.Operand, scope); err != nil {
			return Compiled{}, err
		}
	}
	conds := make([]Eval, len(c.Whens))
	results := make([]Eval, len(c.Whens))
	var resultType types.Type
	unify := func(t types.Type, n parser.Node) error {
		switch {
		case t.Kind == types.Unknown:
		case resultType.Kind == types.Unknown:
			resultType = t
		case resultType.IsNumeric() && t.IsNumeric():
			resultType = widen(resultType, t)
		case !resultType.Equal(t):
			return errAt(n, fmt.Errorf("%w: invalid Case expression type: all THEN and ELSE results must have the same type, got %s and %s", ErrType, resultType, t))
		}
		return nil
	}
	for i, w := range c.Whens {
		cond, err := Compile(w.Cond, scope)
		if err != nil {
			return Compiled{}, err
		}
		if c.Operand == nil && cond.Type.Kind != types.Boolean && cond.Type.Kind != types.Unknown {
			return Compiled{}, errAt(w.Cond, fmt.Errorf("%w: WHEN needs a BOOLEAN condition, got %s", ErrType, cond.Type))
		}
		res, err := Compile(w.Result, scope)
		if err != nil {
			return Compiled{}, err
		}
		if err := unify(res.Type, w.Result); err != nil {
			return Compiled{}, err
		}
		conds[i], results[i] = cond.Eval, res.Eval
	}
	var elseEval Eval = func([]any) any { return nil }
	if c.Else != nil {
		el, err := Compile(c.Else, scope)
		if err != nil {
			return Compiled{}, err
		}
		if err := unify(el.Type, c.Else); err != nil {
			return Compiled{}, err
		}
		elseEval = el.Eval
	}
	rt := resultType
	if rt.Kind == types.Unknown {
		return Compiled{}, errAt(c, fmt.Errorf("%w: Invalid Case expression. All case branches have NULL type", ErrType))
	}
	conv := converter(rt)
	if c.Operand != nil {
		op := operand.Eval
		return Compiled{Type: rt, Eval: func(row []any) any {
			v := op(row)
			if v != nil {
				for i, cond := range conds {
					if w := cond(row); w != nil && types.Equal(v, w) {
						return conv(results[i](row))
					}
				}
			}
			return conv(elseEval(row))
		}}, nil
	}
	return Compiled{Type: rt, Eval: func(row []any) any {
		for i, cond := range conds {
			if b, _ := cond(row).(bool); b {
				return conv(results[i](row))
			}
		}
		return conv(elseEval(row))
	}}, nil
}

// compileIn compiles X [NOT] IN (a, b, …) as ksqlDB does: X and the list
// are coerced to one common type (see coerce.go; bare NULLs are dropped
// first), and X matches when it equals a member. A NULL X, or a NULL
// member, never matches, so the result is never NULL: NULL NOT IN (1) is
// true.
func compileIn(in *parser.In, scope Scope) (Compiled, error) {
	exprs := []parser.Expr{in.X}
	for _, e := range in.List {
		if l, ok := e.(*parser.Literal); ok && l.Kind == parser.LitNull {
			continue
		}
		exprs = append(exprs, e)
	}
	u := userListCoercer{scope}
	items, err := u.typed(exprs)
	if err != nil {
		return Compiled{}, err
	}
	t, ok, err := u.common(items)
	if err != nil {
		return Compiled{}, errAt(in, fmt.Errorf("%w: Invalid Predicate: %w", ErrType, err))
	}
	evals := make([]Eval, len(items))
	allConst := true
	for i, it := range items {
		evals[i] = it.c.Eval
		if ok {
			if evals[i], err = coerceTo(it, t); err != nil {
				return Compiled{}, errAt(it.e, fmt.Errorf("%w: Invalid Predicate: %w", ErrType, err))
			}
		}
		allConst = allConst && it.c.Const
	}
	x, list, not := evals[0], evals[1:], in.Not
	return fold(Compiled{Type: types.BooleanType, Const: allConst, Eval: func(row []any) any {
		v := x(row)
		if v == nil {
			return not
		}
		for _, e := range list {
			if w := e(row); w != nil && structuredEqual(v, w) {
				return !not
			}
		}
		return not
	}}), nil
}

func compileBetween(b *parser.Between, scope Scope) (Compiled, error) {
	var cs [3]Compiled
	for i, e := range []parser.Expr{b.X, b.Lo, b.Hi} {
		c, err := Compile(e, scope)
		if err != nil {
			return Compiled{}, err
		}
		if i > 0 {
			if lit, ok := temporalLiteral(e, c, cs[0].Type); ok {
				c = lit
			}
		}
		if i > 0 && !comparable(cs[0].Type, c.Type) {
			// ksqlDB checks BETWEEN as X >= LO AND X <= HI, and says so.
			op := "GREATER_THAN_OR_EQUAL"
			if i == 2 {
				op = "LESS_THAN_OR_EQUAL"
			}
			return Compiled{}, errAt(e, fmt.Errorf("%w: Invalid expression: Cannot compare %s (%s) to %s (%s) with %s.", ErrType,
				parser.KsqlText(b.X), cs[0].Type, parser.KsqlText(e), c.Type, op))
		}
		cs[i] = c
	}
	x, lo, hi, not := cs[0].Eval, cs[1].Eval, cs[2].Eval, b.Not
	return Compiled{Type: types.BooleanType, Eval: func(row []any) any {
		v, l, h := x(row), lo(row), hi(row)
		if v == nil || l == nil || h == nil {
			return nil
		}
		c1, ok1 := types.Compare(v, l)
		c2, ok2 := types.Compare(v, h)
		if !ok1 || !ok2 {
			return nil
		}
		return (c1 >= 0 && c2 <= 0) != not
	}}, nil
}

func compileLike(l *parser.Like, scope Scope) (Compiled, error) {
	x, err := Compile(l.X, scope)
	if err != nil {
		return Compiled{}, err
	}
	p, err := Compile(l.Pattern, scope)
	if err != nil {
		return Compiled{}, err
	}
	// ksqlDB's words; a bare NULL on either side is allowed (NULL).
	if x.Type.Kind != types.String && x.Type.Kind != types.Unknown {
		return Compiled{}, errAt(l.X, fmt.Errorf("%w: The column type for Like condition must be VARCHAR. The column type is %s", ErrType, x.Type))
	}
	if p.Type.Kind != types.String && p.Type.Kind != types.Unknown {
		return Compiled{}, errAt(l.Pattern, fmt.Errorf("%w: The pattern type for Like condition must be VARCHAR. The pattern type is %s", ErrType, p.Type))
	}
	var esc rune
	if l.Escape != "" {
		esc = []rune(l.Escape)[0]
	}
	f, pf, not := x.Eval, p.Eval, l.Not
	return Compiled{Type: types.BooleanType, Eval: func(row []any) any {
		s, ok1 := f(row).(string)
		pat, ok2 := pf(row).(string)
		if !ok1 || !ok2 {
			return nil
		}
		return likeMatch([]rune(s), []rune(pat), esc) != not
	}}, nil
}

// likeMatch matches SQL LIKE patterns: % any run, _ one character.
func likeMatch(s, p []rune, esc rune) bool {
	for len(p) > 0 {
		c := p[0]
		switch {
		case esc != 0 && c == esc && len(p) > 1:
			if len(s) == 0 || s[0] != p[1] {
				return false
			}
			s, p = s[1:], p[2:]
		case c == '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeMatch(s[i:], p, esc) {
					return true
				}
			}
			return false
		case c == '_':
			if len(s) == 0 {
				return false
			}
			s, p = s[1:], p[1:]
		default:
			if len(s) == 0 || s[0] != c {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return len(s) == 0
}
