package pgcatalog

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Values while a statement runs are nil (NULL), bool, int64 (every
// integer and oid-like type), float64, string (text-like types and
// unknown literals), []any (arrays, int2vector, oidvector) and time.Time.

// truth is SQL's three-valued logic: a bool, or NULL.
func truth(v any) (val, known bool) {
	switch b := v.(type) {
	case bool:
		return b, true
	case nil:
		return false, false
	case string:
		t, err := parseBool(b)
		return t, err == nil
	}
	return false, false
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "t", "true", "yes", "y", "on", "1":
		return true, nil
	case "f", "false", "no", "n", "off", "0":
		return false, nil
	}
	return false, &Error{Code: "22P02", Message: fmt.Sprintf("invalid input syntax for type boolean: %q", s)}
}

func toInt(v any, typ uint32) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		return int64(math.RoundToEven(x)), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, &Error{Code: "22P02", Message: fmt.Sprintf("invalid input syntax for type %s: %q", formatType(typ, -1), x)}
		}
		return n, nil
	}
	return 0, &Error{Code: "42846", Message: fmt.Sprintf("cannot cast %T to %s", v, formatType(typ, -1))}
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, &Error{Code: "22P02", Message: fmt.Sprintf("invalid input syntax for type double precision: %q", x)}
		}
		return f, nil
	}
	return 0, &Error{Code: "42846", Message: fmt.Sprintf("cannot cast %T to double precision", v)}
}

// compareValues orders two non-NULL values of comparable types.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case float64:
			return cmp.Compare(float64(x), y)
		case string:
			if n, err := strconv.ParseInt(y, 10, 64); err == nil {
				return cmp.Compare(x, n)
			}
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, float64(y))
		case float64:
			return cmp.Compare(x, y)
		}
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(x, y)
		case int64:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return cmp.Compare(n, y)
			}
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0
			case !x:
				return -1
			}
			return 1
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	case []any:
		if y, ok := b.([]any); ok {
			for i := 0; i < len(x) && i < len(y); i++ {
				if x[i] == nil || y[i] == nil {
					if x[i] == nil && y[i] == nil {
						continue
					}
					if x[i] == nil {
						return 1
					}
					return -1
				}
				if c := compareValues(x[i], y[i]); c != 0 {
					return c
				}
			}
			return cmp.Compare(len(x), len(y))
		}
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func cmpOrdered[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// formatFloat prints a float as Postgres 12+ does: the shortest text that
// reads back to the same value.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if strings.Contains(s, "e") {
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		if len(exp) < 2 {
			exp = strings.Repeat("0", 2-len(exp)) + exp
		}
		s = mant + "e" + string(sign) + exp
	}
	return s
}

// textOf is a value's text form as Postgres prints a value of type typ.
func (x *execCtx) textOf(v any, typ uint32) string {
	switch val := v.(type) {
	case nil:
		return ""
	case bool:
		if val {
			return "true"
		}
		return "false"
	case int64:
		switch typ {
		case OIDRegclass:
			return x.cat.regclassName(uint32(val))
		case OIDRegtype:
			if val == 0 {
				return "-"
			}
			return formatType(uint32(val), -1)
		case OIDRegnamespace:
			return x.cat.namespaceName(uint32(val))
		case OIDRegproc:
			if val == 0 {
				return "-"
			}
		case OIDRegrole:
			if val == 0 {
				return "-"
			}
			return x.sess.user
		}
		return strconv.FormatInt(val, 10)
	case float64:
		if typ == OIDFloat4 {
			return formatFloat(val, 32)
		}
		return formatFloat(val, 64)
	case string:
		return val
	case time.Time:
		return val.UTC().Format("2006-01-02 15:04:05.999999") + "+00"
	case []any:
		elem := elemType(typ)
		if typ == OIDInt2Vector || typ == OIDOidVector {
			parts := make([]string, len(val))
			for i, e := range val {
				parts[i] = x.textOf(e, elem)
			}
			return strings.Join(parts, " ")
		}
		var b strings.Builder
		b.WriteByte('{')
		for i, e := range val {
			if i > 0 {
				b.WriteByte(',')
			}
			if e == nil {
				b.WriteString("NULL")
				continue
			}
			b.WriteString(quoteArrayElem(x.textOf(e, elem)))
		}
		b.WriteByte('}')
		return b.String()
	}
	return fmt.Sprint(v)
}

func quoteArrayElem(s string) string {
	if s == "" || strings.EqualFold(s, "null") || strings.ContainsAny(s, "{},\"\\ \t\n") {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
	}
	return s
}

// parseArray reads an array's text form ('{a,"b c",NULL}').
func parseArray(s string) ([]any, error) {
	s = strings.TrimSpace(s)
	bad := &Error{Code: "22P02", Message: fmt.Sprintf("malformed array literal: %q", s)}
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil, bad
	}
	body := s[1 : len(s)-1]
	out := []any{}
	if strings.TrimSpace(body) == "" {
		return out, nil
	}
	for i := 0; i <= len(body); {
		for i < len(body) && body[i] == ' ' {
			i++
		}
		var elem strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for i < len(body) && body[i] != '"' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				elem.WriteByte(body[i])
				i++
			}
			if i >= len(body) {
				return nil, bad
			}
			i++
		}
		for i < len(body) && body[i] != ',' {
			if !quoted {
				elem.WriteByte(body[i])
			}
			i++
		}
		text := strings.TrimSpace(elem.String())
		if !quoted && strings.EqualFold(text, "null") {
			out = append(out, nil)
		} else if quoted {
			out = append(out, elem.String())
		} else {
			out = append(out, text)
		}
		i++
	}
	return out, nil
}

// cast converts v from type from to type to.
func (x *execCtx) cast(v any, from, to uint32) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == to {
		return v, nil
	}
	switch to {
	case OIDText, OIDVarchar, OIDName, OIDBpchar, OIDJSON, OIDJSONB, OIDPgNodeTree, OIDCstring, OIDUnknown:
		return x.textOf(v, from), nil
	case OIDChar:
		s := x.textOf(v, from)
		if len(s) > 1 {
			s = s[:1]
		}
		return s, nil
	case OIDBool:
		switch b := v.(type) {
		case bool:
			return b, nil
		case int64:
			return b != 0, nil
		case string:
			return parseBool(b)
		}
	case OIDInt2, OIDInt4, OIDInt8, OIDOid, OIDXid, OIDRegproc, OIDRegrole:
		if s, ok := v.(string); ok && to == OIDRegproc {
			return x.regprocOf(s)
		}
		if s, ok := v.(string); ok && to == OIDRegrole {
			if s == x.sess.user {
				return int64(ownerOID), nil
			}
			return nil, &Error{Code: "42704", Message: fmt.Sprintf("role %q does not exist", s)}
		}
		return toInt(v, to)
	case OIDRegclass:
		if s, ok := v.(string); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return n, nil
			}
			return x.cat.regclassOf(s)
		}
		return toInt(v, to)
	case OIDRegtype:
		if s, ok := v.(string); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return n, nil
			}
			oid, ok := lookupTypeName(s)
			if !ok {
				return nil, &Error{Code: "42704", Message: fmt.Sprintf("type %q does not exist", s)}
			}
			return int64(oid), nil
		}
		return toInt(v, to)
	case OIDRegnamespace:
		if s, ok := v.(string); ok {
			if oid, ok := x.cat.namespaceOID(unquoteIdent(s)); ok {
				return int64(oid), nil
			}
			return nil, &Error{Code: "3F000", Message: fmt.Sprintf("schema %q does not exist", s)}
		}
		return toInt(v, to)
	case OIDFloat4, OIDFloat8, OIDNumeric:
		return toFloat(v)
	case OIDTimestamptz, OIDTimestamp, OIDDate:
		if s, ok := v.(string); ok {
			for _, layout := range []string{"2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02"} {
				if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
					return t, nil
				}
			}
			return nil, &Error{Code: "22007", Message: fmt.Sprintf("invalid input syntax for type %s: %q", formatType(to, -1), s)}
		}
		if t, ok := v.(time.Time); ok {
			return t, nil
		}
	}
	if isArrayType(to) {
		var elems []any
		switch a := v.(type) {
		case []any:
			elems = a
		case string:
			if to == OIDInt2Vector || to == OIDOidVector {
				for _, f := range strings.Fields(a) {
					elems = append(elems, f)
				}
			} else {
				var err error
				if elems, err = parseArray(a); err != nil {
					return nil, err
				}
			}
		default:
			return nil, &Error{Code: "42846", Message: fmt.Sprintf("cannot cast type %s to %s", formatType(from, -1), formatType(to, -1))}
		}
		out := make([]any, len(elems))
		efrom := elemType(from)
		if _, isText := v.(string); isText || efrom == 0 {
			efrom = OIDUnknown
		}
		for i, e := range elems {
			c, err := x.cast(e, efrom, elemType(to))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	if from == OIDUnknown || from == OIDText {
		return v, nil
	}
	return nil, &Error{Code: "42846", Message: fmt.Sprintf("cannot cast type %s to %s", formatType(from, -1), formatType(to, -1))}
}

// unquoteIdent reads one possibly quoted identifier as Postgres folds it.
func unquoteIdent(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return strings.ToLower(s)
}

// splitQualified splits 'schema.name' (each part possibly quoted).
func splitQualified(s string) []string {
	var parts []string
	var cur strings.Builder
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inQuote = !inQuote
			cur.WriteByte(c)
		case c == '.' && !inQuote:
			parts = append(parts, unquoteIdent(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, unquoteIdent(cur.String()))
}

// quoteIdent is quote_ident: quoted unless it is a plain lower-case name.
func quoteIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain && !reservedWords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

var reservedWords = map[string]bool{
	"all": true, "analyse": true, "analyze": true, "and": true, "any": true, "array": true, "as": true, "asc": true,
	"case": true, "cast": true, "check": true, "collate": true, "column": true, "constraint": true, "create": true,
	"default": true, "desc": true, "distinct": true, "do": true, "else": true, "end": true, "false": true, "for": true,
	"from": true, "grant": true, "group": true, "having": true, "in": true, "into": true, "limit": true, "not": true,
	"null": true, "offset": true, "on": true, "or": true, "order": true, "select": true, "table": true, "then": true,
	"to": true, "true": true, "union": true, "user": true, "using": true, "when": true, "where": true, "with": true,
}

// regprocOf resolves a function name as text::regproc does: the oid
// pg_proc gives the name, 0 ("-") for none.
func (x *execCtx) regprocOf(name string) (any, error) {
	for _, row := range x.relationRows(systemByName["pg_catalog.pg_proc"]) {
		if row[1] == strings.TrimPrefix(name, "pg_catalog.") {
			return row[0], nil
		}
	}
	return int64(0), nil
}
