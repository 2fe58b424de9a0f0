package pgwire

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/pgcatalog"
	"github.com/sluice-sql/sluice/types"
)

// A Sluice statement's parameters ($1, $2, … as pgx, JDBC and psycopg
// send them) are not part of Sluice's dialect: each is replaced, at
// Execute, by a literal of the type the statement expects there, so the
// engine sees plain Sluice SQL. The type comes from what the parameter is
// compared with or inserted into (a column, a literal), unless the
// client declared one; a parameter whose type cannot be seen is text.

// paramRef is one $n in a statement's text.
type paramRef struct {
	start, end int // byte offsets of "$n"
	n          int // 1-based
}

// scanParams finds the $n of sql outside quoted text, quoted names and
// comments.
func scanParams(sql string) []paramRef {
	var out []paramRef
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(sql, i, c)
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 3
		case c == '$':
			if i > 0 && isIdentByte(sql[i-1]) {
				continue
			}
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			if j == i+1 {
				continue
			}
			n, err := strconv.Atoi(sql[i+1 : j])
			if err != nil || n < 1 || n > math.MaxUint16 {
				continue
			}
			out = append(out, paramRef{start: i, end: j, n: n})
			i = j - 1
		}
	}
	return out
}

// skipQuoted returns the offset of the quote closing the one at i (a
// doubled quote stands for itself), or the end of sql.
func skipQuoted(sql string, i int, q byte) int {
	for j := i + 1; j < len(sql); j++ {
		if sql[j] == q {
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j
		}
	}
	return len(sql)
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// substitute replaces each $n of sql by lit(n).
func substitute(sql string, refs []paramRef, lit func(n int) string) string {
	out, _ := substituteAt(sql, refs, lit)
	return out
}

// substituteAt is substitute that also says where each replacement
// starts and ends in its result.
func substituteAt(sql string, refs []paramRef, lit func(n int) string) (string, [][2]int) {
	var b strings.Builder
	at := make([][2]int, len(refs))
	last := 0
	for i, r := range refs {
		b.WriteString(sql[last:r.start])
		at[i][0] = b.Len()
		b.WriteString(lit(r.n))
		at[i][1] = b.Len()
		last = r.end
	}
	b.WriteString(sql[last:])
	return b.String(), at
}

// parseWithParams parses a statement with each parameter as a
// placeholder name. Where the grammar wants a number, not an expression
// (LIMIT $1), the parser stops at the placeholder: that parameter is
// then a number (numeric), and parsing goes on. A syntax error's
// position is moved back into text.
func parseWithParams(text string, refs []paramRef) ([]parser.Parsed, map[int]bool, error) {
	numeric := map[int]bool{}
	for {
		sub, at := substituteAt(text, refs, func(n int) string {
			if numeric[n] {
				return "0"
			}
			return placeholder(n)
		})
		stmts, err := parser.ParseScript(sub)
		if err == nil {
			return stmts, numeric, nil
		}
		var pe *parser.Error
		if !errors.As(err, &pe) {
			return nil, nil, err
		}
		retry := false
		for i, r := range refs {
			if at[i][0] == pe.Pos.Offset && !numeric[r.n] {
				numeric[r.n] = true
				retry = true
			}
		}
		if !retry {
			// Back into the client's text: each placeholder before the
			// error is longer or shorter than its $n.
			moved := *pe
			for i, r := range refs {
				if at[i][0] < pe.Pos.Offset {
					moved.Pos.Offset -= (at[i][1] - at[i][0]) - (r.end - r.start)
				}
			}
			return nil, nil, &moved
		}
	}
}

// placeholder is the name a parameter stands under while the statement
// is parsed for its parameters' types: a quoted column name no source
// has.
func placeholder(n int) string { return `"$` + strconv.Itoa(n) + `"` }

// paramOf reports the parameter number a placeholder column stands for.
func paramOf(e parser.Expr) (int, bool) {
	c, ok := e.(*parser.ColumnRef)
	if !ok || c.Source != "" || !strings.HasPrefix(c.Name, "$") {
		return 0, false
	}
	n, err := strconv.Atoi(c.Name[1:])
	return n, err == nil && n > 0
}

// inferParams sees the Sluice types of a statement's parameters, parsed
// with placeholders: types[n-1] is nil where nothing shows one.
func inferParams(st parser.Statement, count int, source func(string) (types.Schema, bool)) []*types.Type {
	out := make([]*types.Type, count)
	expected(st, source, func(e parser.Expr, t *types.Type) {
		if n, ok := paramOf(e); ok && n <= count && out[n-1] == nil && t != nil {
			out[n-1] = t
		}
	})
	return out
}

// expected calls fn with each expression of st whose type its place
// shows, and that type: the other side of a comparison or an arithmetic
// operator, the tested value of IN and BETWEEN (and they of it), a LIKE
// pattern (STRING), a value inserted into a column. A nil type: the
// place shows none. This is how Postgres types what carries no type of
// its own — a parameter, a quoted literal.
func expected(st parser.Statement, source func(string) (types.Schema, bool), fn func(e parser.Expr, t *types.Type)) {
	switch s := st.(type) {
	case *parser.InsertValues:
		schema, ok := source(s.Target)
		if !ok {
			return
		}
		cols := s.Columns
		if len(cols) == 0 {
			for _, c := range schema.Columns {
				if !c.Header {
					cols = append(cols, c.Name)
				}
			}
		}
		for i, v := range s.Values {
			if i >= len(cols) {
				break
			}
			if j := schema.Find(cols[i]); j >= 0 {
				t := schema.Columns[j].Type
				fn(v, &t)
			}
		}
	case *parser.Select:
		var schemas []namedSchema
		add := func(r *parser.Relation) {
			if r == nil {
				return
			}
			if sc, ok := source(r.Name); ok {
				schemas = append(schemas, namedSchema{name: r.Name, alias: r.Alias, schema: sc})
			}
		}
		add(s.From)
		for _, j := range s.Joins {
			add(j.Right)
		}
		typeOf := func(e parser.Expr) *types.Type { return exprType(e, schemas) }
		visit := func(e parser.Expr) {
			parser.Inspect(e, func(x parser.Expr) bool {
				switch x := x.(type) {
				case *parser.Binary:
					fn(x.Left, typeOf(x.Right))
					fn(x.Right, typeOf(x.Left))
				case *parser.In:
					t := typeOf(x.X)
					for _, e := range x.List {
						fn(e, t)
						fn(x.X, typeOf(e))
					}
				case *parser.Between:
					t := typeOf(x.X)
					for _, e := range []parser.Expr{x.Lo, x.Hi} {
						fn(e, t)
						fn(x.X, typeOf(e))
					}
				case *parser.Like:
					fn(x.Pattern, &types.StringType)
				}
				return true
			})
		}
		visit(s.Where)
		visit(s.Having)
		for _, j := range s.Joins {
			visit(j.On)
		}
		for _, it := range s.Items {
			visit(it.Expr)
		}
	}
}

type namedSchema struct {
	name, alias string
	schema      types.Schema
}

// pseudoColumns are the columns every source has beside its own.
var pseudoColumns = map[string]types.Type{
	"ROWTIME":      types.BigIntType,
	"ROWPARTITION": types.IntegerType,
	"ROWOFFSET":    types.BigIntType,
	"WINDOWSTART":  types.BigIntType,
	"WINDOWEND":    types.BigIntType,
}

// exprType is the type of a column or a literal; nil for anything else.
func exprType(e parser.Expr, schemas []namedSchema) *types.Type {
	switch x := e.(type) {
	case *parser.ColumnRef:
		for _, s := range schemas {
			if x.Source != "" && x.Source != s.name && x.Source != s.alias {
				continue
			}
			if i := s.schema.Find(x.Name); i >= 0 {
				t := s.schema.Columns[i].Type
				return &t
			}
		}
		if t, ok := pseudoColumns[x.Name]; ok {
			return &t
		}
	case *parser.Literal:
		switch x.Kind {
		case parser.LitBool:
			return &types.BooleanType
		case parser.LitInteger:
			return &types.BigIntType
		case parser.LitDouble, parser.LitDecimal:
			return &types.DoubleType
		case parser.LitString:
			return &types.StringType
		}
	case *parser.Cast:
		if x.Type != nil {
			if t, ok := types.ParseScalar(x.Type.String()); ok {
				return &t
			}
		}
	}
	return nil
}

// paramOIDs are the parameters' Postgres types: the client's where it
// declared one, else TypeOf the inferred type, else text.
func paramOIDs(declared []uint32, inferred []*types.Type) []uint32 {
	out := make([]uint32, len(inferred))
	for i, t := range inferred {
		switch {
		case i < len(declared) && declared[i] != 0:
			out[i] = declared[i]
		case t != nil:
			out[i] = pgcatalog.TypeOf(*t).OID
		default:
			out[i] = pgcatalog.OIDText
		}
	}
	return out
}

// decodeParams reads a Bind's parameter values: text ones as strings,
// binary ones by their type through pgtype; NULL is nil.
func decodeParams(m *pgtype.Map, oids []uint32, formats []int16, values [][]byte) ([]any, error) {
	if len(values) != len(oids) {
		return nil, protocolErrorf("bind message supplies %d parameters, but prepared statement requires %d", len(values), len(oids))
	}
	if len(formats) > 1 && len(formats) != len(values) {
		return nil, protocolErrorf("bind message has %d parameter formats but %d parameters", len(formats), len(values))
	}
	out := make([]any, len(values))
	for i, v := range values {
		if v == nil {
			continue
		}
		f := textFormat
		if len(formats) == 1 {
			f = formats[0]
		} else if len(formats) > 1 {
			f = formats[i]
		}
		switch f {
		case textFormat:
			out[i] = string(v)
		case binaryFormat:
			dt, ok := m.TypeForOID(oids[i])
			if !ok {
				return nil, &pgError{code: pgcatalog.CodeFeatureUnsupported, message: fmt.Sprintf("parameter $%d: binary format of type oid %d not supported", i+1, oids[i])}
			}
			x, err := dt.Codec.DecodeValue(m, oids[i], binaryFormat, v)
			if err != nil {
				return nil, &pgError{code: codeInvalidTextRep, message: fmt.Sprintf("parameter $%d: %v", i+1, err)}
			}
			out[i] = x
		default:
			return nil, protocolErrorf("unsupported format code: %d", f)
		}
	}
	return out, nil
}

// literal is v as a Sluice literal of type t (nil: v's own kind): a
// string is always one quoted string, so no value changes the
// statement around it.
func literal(v any, t *types.Type) (string, error) {
	if v == nil {
		// Typed, so that "col = $1" with NULL is unknown (no row), as in
		// Postgres, where Sluice's dialect refuses a bare NULL there.
		if t != nil && t.Kind != types.Unknown {
			return "CAST(NULL AS " + t.String() + ")", nil
		}
		return "NULL", nil
	}
	kind := types.Unknown
	if t != nil {
		kind = t.Kind
	}
	bad := func() (string, error) {
		what := "text"
		if t != nil {
			what = t.String()
		}
		return "", &pgError{code: codeInvalidTextRep, message: fmt.Sprintf("invalid input for %s: %v", what, v)}
	}
	switch kind {
	case types.Boolean:
		switch x := v.(type) {
		case bool:
			return boolLiteral(x), nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "t", "true", "1", "yes", "on", "y":
				return "TRUE", nil
			case "f", "false", "0", "no", "off", "n":
				return "FALSE", nil
			}
		}
		return bad()
	case types.Integer, types.BigInt:
		if n, ok := asInt(v); ok {
			return intLiteral(n), nil
		}
		if s, ok := v.(string); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return intLiteral(n), nil
			}
		}
		return bad()
	case types.Double:
		if f, ok := asFloat(v); ok {
			return doubleLiteral(f), nil
		}
		if s, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return doubleLiteral(f), nil
			}
		}
		return bad()
	case types.Decimal:
		var text string
		switch x := v.(type) {
		case pgtype.Numeric:
			b, err := x.MarshalJSON()
			if err != nil || x.NaN || x.InfinityModifier != pgtype.Finite {
				return bad()
			}
			text = string(b)
		case string:
			text = strings.TrimSpace(x)
		default:
			if n, ok := asInt(v); ok {
				text = strconv.FormatInt(n, 10)
			} else if f, ok := asFloat(v); ok {
				text = strconv.FormatFloat(f, 'f', -1, 64)
			}
		}
		d, err := types.ParseDecimal(text)
		if err != nil || d.Form != 0 {
			return bad()
		}
		s := types.FormatDecimal(d)
		if d.Negative {
			return "(" + s + ")", nil
		}
		return s, nil
	case types.String:
		if s, ok := v.(string); ok {
			return quote(s), nil
		}
		return quote(fmt.Sprint(v)), nil
	case types.Bytes:
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case string:
			if strings.HasPrefix(x, `\x`) {
				var err error
				if b, err = hex.DecodeString(x[2:]); err != nil {
					return bad()
				}
			} else {
				b = []byte(x)
			}
		default:
			return bad()
		}
		return "TO_BYTES('" + hex.EncodeToString(b) + "', 'hex')", nil
	case types.Timestamp:
		tm, ok := asTime(v, pgcatalog.OIDTimestamp)
		if !ok {
			return bad()
		}
		return "FROM_UNIXTIME(" + intLiteral(tm.UnixMilli()) + ")", nil
	case types.Date:
		tm, ok := asTime(v, pgcatalog.OIDDate)
		if !ok {
			return bad()
		}
		return "FROM_DAYS(" + intLiteral(tm.Unix()/86400) + ")", nil
	case types.Time:
		var us int64
		switch x := v.(type) {
		case pgtype.Time:
			us = x.Microseconds
		case string:
			var pt pgtype.Time
			if err := pt.Scan(strings.TrimSpace(x)); err != nil {
				return bad()
			}
			us = pt.Microseconds
		default:
			return bad()
		}
		ms := us / 1000
		text := fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
		return "PARSE_TIME('" + text + "', 'HH:mm:ss.SSS')", nil
	case types.Unknown:
		switch x := v.(type) {
		case string:
			return quote(x), nil
		case bool:
			return boolLiteral(x), nil
		case time.Time:
			return "FROM_UNIXTIME(" + intLiteral(x.UnixMilli()) + ")", nil
		}
		if n, ok := asInt(v); ok {
			return intLiteral(n), nil
		}
		if f, ok := asFloat(v); ok {
			return doubleLiteral(f), nil
		}
	}
	return "", &pgError{code: pgcatalog.CodeFeatureUnsupported, message: fmt.Sprintf("a parameter of type %v is not supported", t)}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func boolLiteral(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// intLiteral writes a negative number in parentheses, so that it never
// makes a comment ("--") with a minus before it.
func intLiteral(n int64) string {
	if n < 0 {
		return "(" + strconv.FormatInt(n, 10) + ")"
	}
	return strconv.FormatInt(n, 10)
}

// doubleLiteral writes f with an exponent, which makes it a DOUBLE
// literal; NaN and the infinities as casts of their names.
func doubleLiteral(f float64) string {
	switch {
	case math.IsNaN(f):
		return "CAST('NaN' AS DOUBLE)"
	case math.IsInf(f, 1):
		return "CAST('Infinity' AS DOUBLE)"
	case math.IsInf(f, -1):
		return "CAST('-Infinity' AS DOUBLE)"
	}
	s := strconv.FormatFloat(f, 'E', -1, 64)
	if f < 0 {
		return "(" + s + ")"
	}
	return s
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), true
		}
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case int16, int32, int64:
		n, _ := asInt(x)
		return float64(n), true
	}
	return 0, false
}

// asTime reads a timestamp or date parameter: a time.Time from binary,
// or text as Postgres reads the type oid.
func asTime(v any, oid uint32) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true
	case string:
		x = strings.TrimSpace(x)
		if tm, ok := decodeTime(x, oid); ok {
			return tm, true
		}
		// Postgres reads a zone or a time of day where its type has none
		// and drops it: '2024-01-02 03:04:05Z' is a timestamp without
		// time zone, '2024-01-02 00:00:00' a date.
		if oid == pgcatalog.OIDDate && len(x) > 10 {
			return decodeTime(x[:10], oid)
		}
		if i := strings.LastIndexAny(x, "Z+-"); oid == pgcatalog.OIDTimestamp && i > 10 {
			return decodeTime(strings.TrimSpace(x[:i]), oid)
		}
	}
	return time.Time{}, false
}

// decodeTime reads x as Postgres's text input of a timestamp or date.
func decodeTime(x string, oid uint32) (time.Time, bool) {
	m := pgtype.NewMap()
	dt, _ := m.TypeForOID(oid)
	d, err := dt.Codec.DecodeValue(m, oid, textFormat, []byte(x))
	if err != nil {
		return time.Time{}, false
	}
	tm, ok := d.(time.Time)
	return tm, ok
}
