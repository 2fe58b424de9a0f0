package pgcatalog

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// fn is a scalar function: its result type from its arguments' types,
// and its body. Strict functions return NULL for any NULL argument
// without running.
type fn struct {
	minArgs, maxArgs int
	strict           bool
	ret              func(args []uint32) uint32
	// argType is the type an untyped literal argument i becomes.
	argType func(i int) uint32
	call    func(x *execCtx, args []any, types []uint32) (any, error)
}

func returns(t uint32) func([]uint32) uint32 { return func([]uint32) uint32 { return t } }
func argsAre(t uint32) func(int) uint32      { return func(int) uint32 { return t } }

var startTime = time.Now()

// functions are the scalar functions clients call, by their name (with or
// without pg_catalog.).
var functions map[string]*fn

func init() {
	text := func(f func(x *execCtx, s []string) (any, error)) func(*execCtx, []any, []uint32) (any, error) {
		return func(x *execCtx, args []any, types []uint32) (any, error) {
			ss := make([]string, len(args))
			for i, a := range args {
				ss[i] = x.textOf(a, types[i])
			}
			return f(x, ss)
		}
	}
	constant := func(typ uint32, f func(x *execCtx) any) *fn {
		return &fn{ret: returns(typ), call: func(x *execCtx, _ []any, _ []uint32) (any, error) { return f(x), nil }}
	}
	truthy := func(min, max int) *fn {
		return &fn{minArgs: min, maxArgs: max, ret: returns(OIDBool), argType: argsAre(OIDText), call: func(*execCtx, []any, []uint32) (any, error) { return true, nil }}
	}
	nothing := func(min, max int, typ uint32) *fn {
		return &fn{minArgs: min, maxArgs: max, ret: returns(typ), call: func(*execCtx, []any, []uint32) (any, error) { return nil, nil }}
	}
	functions = map[string]*fn{
		"version": constant(OIDText, func(x *execCtx) any {
			sluice := "Sluice"
			if x.sess.sluiceVersion != "" {
				sluice += " " + x.sess.sluiceVersion
			}
			return fmt.Sprintf("PostgreSQL %s (%s) on %s-linux, compiled by Go, 64-bit", ServerVersion, sluice, runtime.GOARCH)
		}),
		"current_schema":           constant(OIDName, func(*execCtx) any { return "public" }),
		"current_database":         constant(OIDName, func(x *execCtx) any { return x.sess.database }),
		"current_catalog":          constant(OIDName, func(x *execCtx) any { return x.sess.database }),
		"current_user":             constant(OIDName, func(x *execCtx) any { return x.sess.user }),
		"session_user":             constant(OIDName, func(x *execCtx) any { return x.sess.user }),
		"user":                     constant(OIDName, func(x *execCtx) any { return x.sess.user }),
		"pg_backend_pid":           constant(OIDInt4, func(x *execCtx) any { return int64(x.sess.pid) }),
		"now":                      constant(OIDTimestamptz, func(x *execCtx) any { return x.now }),
		"transaction_timestamp":    constant(OIDTimestamptz, func(x *execCtx) any { return x.now }),
		"statement_timestamp":      constant(OIDTimestamptz, func(x *execCtx) any { return x.now }),
		"clock_timestamp":          constant(OIDTimestamptz, func(*execCtx) any { return time.Now().UTC() }),
		"pg_postmaster_start_time": constant(OIDTimestamptz, func(*execCtx) any { return startTime.UTC() }),
		"pg_conf_load_time":        constant(OIDTimestamptz, func(*execCtx) any { return startTime.UTC() }),
		"pg_is_in_recovery":        constant(OIDBool, func(*execCtx) any { return false }),
		"txid_current":             constant(OIDInt8, func(x *execCtx) any { return int64(x.sess.nextXid()) }),
		"pg_current_xact_id":       constant(OIDInt8, func(x *execCtx) any { return int64(x.sess.nextXid()) }),
		"inet_server_addr":         nothing(0, 0, OIDText),
		"inet_server_port":         nothing(0, 0, OIDInt4),
		"inet_client_addr":         nothing(0, 0, OIDText),
		"pg_my_temp_schema":        constant(OIDOid, func(*execCtx) any { return int64(0) }),
		"current_schemas": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDNameArray), argType: argsAre(OIDBool),
			call: func(_ *execCtx, args []any, _ []uint32) (any, error) {
				if t, _ := truth(args[0]); t {
					return []any{"pg_catalog", "public"}, nil
				}
				return []any{"public"}, nil
			}},
		"current_setting": {minArgs: 1, maxArgs: 2, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDText, OIDBool}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				name, ok := canonicalSetting(x.textOf(args[0], types[0]))
				if !ok || !x.sess.hasSetting(name) {
					if len(args) == 2 {
						if missingOK, _ := truth(args[1]); missingOK {
							return nil, nil
						}
					}
					return nil, &Error{Code: "42704", Message: fmt.Sprintf("unrecognized configuration parameter %q", x.textOf(args[0], types[0]))}
				}
				return x.sess.setting(name), nil
			}},
		"set_config": {minArgs: 3, maxArgs: 3, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDText, OIDText, OIDBool}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				name, ok := canonicalSetting(x.textOf(args[0], types[0]))
				if !ok {
					return nil, &Error{Code: "42704", Message: fmt.Sprintf("unrecognized configuration parameter %q", x.textOf(args[0], types[0]))}
				}
				if err := x.sess.checkSettable(name); err != nil {
					return nil, err
				}
				v, err := x.sess.normalizeSetting(name, x.textOf(args[1], types[1]))
				if err != nil {
					return nil, err
				}
				x.sess.set(name, v)
				return x.sess.setting(name), nil
			}},
		"format_type": {minArgs: 2, maxArgs: 2, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDOid, OIDInt4}[i] },
			call: func(_ *execCtx, args []any, _ []uint32) (any, error) {
				if args[0] == nil {
					return nil, nil
				}
				mod := int64(-1)
				if args[1] != nil {
					mod, _ = toInt(args[1], OIDInt4)
				}
				oid, _ := toInt(args[0], OIDOid)
				return formatType(uint32(oid), int32(mod)), nil
			}},
		"pg_get_userbyid": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDName), argType: argsAre(OIDOid),
			call: func(x *execCtx, args []any, _ []uint32) (any, error) {
				if n, _ := toInt(args[0], OIDOid); uint32(n) == ownerOID {
					return x.sess.user, nil
				}
				return fmt.Sprintf("unknown (OID=%v)", args[0]), nil
			}},
		"pg_table_is_visible": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDBool), argType: argsAre(OIDOid),
			call: func(x *execCtx, args []any, _ []uint32) (any, error) {
				n, _ := toInt(args[0], OIDOid)
				if _, isIndex := x.cat.indexName[uint32(n)]; isIndex {
					return true, nil
				}
				r := x.cat.byOID[uint32(n)]
				return r != nil && (r.schema == "pg_catalog" || r.schema == "public"), nil
			}},
		"pg_type_is_visible":       truthy(1, 1),
		"pg_function_is_visible":   truthy(1, 1),
		"pg_has_role":              truthy(2, 3),
		"has_table_privilege":      truthy(2, 3),
		"has_schema_privilege":     truthy(2, 3),
		"has_database_privilege":   truthy(2, 3),
		"has_column_privilege":     truthy(3, 4),
		"has_any_column_privilege": truthy(2, 3),
		"has_function_privilege":   truthy(2, 3),
		"has_sequence_privilege":   truthy(2, 3),
		"pg_relation_is_publishable": {minArgs: 1, maxArgs: 1, ret: returns(OIDBool), argType: argsAre(OIDRegclass),
			call: func(*execCtx, []any, []uint32) (any, error) { return false, nil }},
		"pg_get_expr": nothing(2, 3, OIDText),
		"pg_get_constraintdef": {minArgs: 1, maxArgs: 2, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDOid, OIDBool}[i] },
			call: func(x *execCtx, args []any, _ []uint32) (any, error) {
				n, _ := toInt(args[0], OIDOid)
				for _, r := range x.cat.user {
					if r.pkey == uint32(n) {
						return "PRIMARY KEY (" + keyColumnList(r) + ")", nil
					}
				}
				return nil, nil
			}},
		"pg_get_indexdef": {minArgs: 1, maxArgs: 3, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDOid, OIDInt4, OIDBool}[i] },
			call: func(x *execCtx, args []any, _ []uint32) (any, error) {
				n, _ := toInt(args[0], OIDOid)
				for _, r := range x.cat.user {
					if r.pkey == uint32(n) {
						if len(args) >= 2 {
							if col, _ := toInt(args[1], OIDInt4); col > 0 {
								return keyColumnName(r, int(col)), nil
							}
						}
						pretty := false
						if len(args) == 3 {
							pretty, _ = truth(args[2])
						}
						return x.cat.indexDef(r, pretty), nil
					}
				}
				return nil, nil
			}},
		"pg_get_viewdef": nothing(1, 2, OIDText),
		"pg_tablespace_location": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDText), argType: argsAre(OIDOid),
			call: func(*execCtx, []any, []uint32) (any, error) { return "", nil }},
		"pg_get_triggerdef":                  nothing(1, 2, OIDText),
		"pg_get_functiondef":                 nothing(1, 1, OIDText),
		"pg_get_function_result":             nothing(1, 1, OIDText),
		"pg_get_function_arguments":          nothing(1, 1, OIDText),
		"pg_get_function_identity_arguments": nothing(1, 1, OIDText),
		"pg_get_statisticsobjdef_columns":    nothing(1, 1, OIDText),
		"pg_get_partkeydef":                  nothing(1, 1, OIDText),
		"pg_get_serial_sequence":             nothing(2, 2, OIDText),
		"pg_get_ruledef":                     nothing(1, 2, OIDText),
		"obj_description": {minArgs: 1, maxArgs: 2, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDOid, OIDName}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				n, _ := toInt(args[0], OIDOid)
				if len(args) == 2 && x.textOf(args[1], types[1]) != "pg_class" {
					return nil, nil
				}
				if r := x.cat.byOID[uint32(n)]; r != nil && r.src != nil {
					return description(r.src), nil
				}
				return nil, nil
			}},
		"col_description":   nothing(2, 2, OIDText),
		"shobj_description": nothing(2, 2, OIDText),
		"pg_encoding_to_char": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDName), argType: argsAre(OIDInt4),
			call: func(_ *execCtx, args []any, _ []uint32) (any, error) {
				if n, _ := toInt(args[0], OIDInt4); n == 6 {
					return "UTF8", nil
				}
				return "SQL_ASCII", nil
			}},
		"pg_char_to_encoding": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt4), argType: argsAre(OIDName),
			call: func(_ *execCtx, args []any, _ []uint32) (any, error) { return int64(6), nil }},
		"pg_relation_size":       {minArgs: 1, maxArgs: 2, strict: true, ret: returns(OIDInt8), argType: argsAre(OIDRegclass), call: func(*execCtx, []any, []uint32) (any, error) { return int64(0), nil }},
		"pg_total_relation_size": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt8), argType: argsAre(OIDRegclass), call: func(*execCtx, []any, []uint32) (any, error) { return int64(0), nil }},
		"pg_table_size":          {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt8), argType: argsAre(OIDRegclass), call: func(*execCtx, []any, []uint32) (any, error) { return int64(0), nil }},
		"pg_indexes_size":        {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt8), argType: argsAre(OIDRegclass), call: func(*execCtx, []any, []uint32) (any, error) { return int64(0), nil }},
		"pg_database_size":       {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt8), argType: argsAre(OIDName), call: func(*execCtx, []any, []uint32) (any, error) { return int64(0), nil }},
		"pg_size_pretty": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDText), argType: argsAre(OIDInt8),
			call: func(_ *execCtx, args []any, _ []uint32) (any, error) {
				n, _ := toInt(args[0], OIDInt8)
				return fmt.Sprintf("%d bytes", n), nil
			}},
		"array_to_string": {minArgs: 2, maxArgs: 3, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDTextArray, OIDText, OIDText}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				if args[0] == nil || args[1] == nil {
					return nil, nil
				}
				arr, _ := args[0].([]any)
				var parts []string
				for _, e := range arr {
					if e == nil {
						if len(args) == 3 && args[2] != nil {
							parts = append(parts, x.textOf(args[2], types[2]))
						}
						continue
					}
					parts = append(parts, x.textOf(e, elemType(types[0])))
				}
				return strings.Join(parts, x.textOf(args[1], types[1])), nil
			}},
		"array_length": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDInt4), argType: func(i int) uint32 { return []uint32{OIDTextArray, OIDInt4}[i] },
			call: func(_ *execCtx, args []any, _ []uint32) (any, error) { return arrayBound(args, false, true) }},
		"cardinality": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt4), argType: argsAre(OIDTextArray),
			call: func(_ *execCtx, args []any, _ []uint32) (any, error) {
				a, _ := args[0].([]any)
				return int64(len(a)), nil
			}},
		"array_upper": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDInt4), argType: func(i int) uint32 { return []uint32{OIDTextArray, OIDInt4}[i] },
			call: func(_ *execCtx, args []any, types []uint32) (any, error) {
				return arrayBound(args, types[0] == OIDInt2Vector || types[0] == OIDOidVector, true)
			}},
		"array_lower": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDInt4), argType: func(i int) uint32 { return []uint32{OIDTextArray, OIDInt4}[i] },
			call: func(_ *execCtx, args []any, types []uint32) (any, error) {
				return arrayBound(args, types[0] == OIDInt2Vector || types[0] == OIDOidVector, false)
			}},
		"quote_ident": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return quoteIdent(s[0]), nil })},
		"quote_literal": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return "'" + strings.ReplaceAll(s[0], "'", "''") + "'", nil })},
		"lower": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return strings.ToLower(s[0]), nil })},
		"upper": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return strings.ToUpper(s[0]), nil })},
		"length": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt4), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return int64(len([]rune(s[0]))), nil })},
		"octet_length": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt4), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return int64(len(s[0])), nil })},
		"char_length": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDInt4), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return int64(len([]rune(s[0]))), nil })},
		"btrim": {minArgs: 1, maxArgs: 2, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) {
				if len(s) == 2 {
					return strings.Trim(s[0], s[1]), nil
				}
				return strings.Trim(s[0], " "), nil
			})},
		"replace": {minArgs: 3, maxArgs: 3, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return strings.ReplaceAll(s[0], s[1], s[2]), nil })},
		"position": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDInt4), argType: argsAre(OIDText),
			// The parser passes POSITION(a IN b) as position(b, a).
			call: text(func(_ *execCtx, s []string) (any, error) {
				i := strings.Index(s[0], s[1])
				if i < 0 {
					return int64(0), nil
				}
				return int64(len([]rune(s[0][:i])) + 1), nil
			})},
		"strpos": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDInt4), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) {
				i := strings.Index(s[0], s[1])
				if i < 0 {
					return int64(0), nil
				}
				return int64(len([]rune(s[0][:i])) + 1), nil
			})},
		"substring": {minArgs: 2, maxArgs: 3, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDText, OIDInt4, OIDInt4}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) { return substring(x, args, types) }},
		"substr": {minArgs: 2, maxArgs: 3, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDText, OIDInt4, OIDInt4}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) { return substring(x, args, types) }},
		"concat": {minArgs: 0, maxArgs: 100, ret: returns(OIDText), argType: argsAre(OIDText),
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				var b strings.Builder
				for i, a := range args {
					if a != nil {
						b.WriteString(x.textOf(a, types[i]))
					}
				}
				return b.String(), nil
			}},
		"to_char": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDTimestamptz, OIDText}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				return toChar(x, args[0], types[0], x.textOf(args[1], types[1]))
			}},
		"to_regclass": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDRegclass), argType: argsAre(OIDText),
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				v, err := x.cat.regclassOf(x.textOf(args[0], types[0]))
				if err != nil {
					return nil, nil
				}
				return v, nil
			}},
		"to_regtype": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDRegtype), argType: argsAre(OIDText),
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				if oid, ok := lookupTypeName(x.textOf(args[0], types[0])); ok {
					return int64(oid), nil
				}
				return nil, nil
			}},
		"to_regnamespace": {minArgs: 1, maxArgs: 1, strict: true, ret: returns(OIDRegnamespace), argType: argsAre(OIDText),
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				if oid, ok := namespaceOID(unquoteIdent(x.textOf(args[0], types[0]))); ok {
					return int64(oid), nil
				}
				return nil, nil
			}},
		"split_part": {minArgs: 3, maxArgs: 3, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDText, OIDText, OIDInt4}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				n, err := toInt(args[2], OIDInt4)
				if err != nil {
					return nil, err
				}
				parts := strings.Split(x.textOf(args[0], types[0]), x.textOf(args[1], types[1]))
				if n < 0 {
					n = int64(len(parts)) + n + 1
				}
				if n == 0 && args[2] != nil {
					return nil, &Error{Code: CodeInvalidParameter, Message: "field position must not be zero"}
				}
				if n < 1 || n > int64(len(parts)) {
					return "", nil
				}
				return parts[n-1], nil
			}},
		"left": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDText, OIDInt4}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				r := []rune(x.textOf(args[0], types[0]))
				n, _ := toInt(args[1], OIDInt4)
				if n < 0 {
					n = max(int64(len(r))+n, 0)
				}
				return string(r[:min(n, int64(len(r)))]), nil
			}},
		"right": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDText), argType: func(i int) uint32 { return []uint32{OIDText, OIDInt4}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				r := []rune(x.textOf(args[0], types[0]))
				n, _ := toInt(args[1], OIDInt4)
				if n < 0 {
					n = max(int64(len(r))+n, 0)
				}
				return string(r[int64(len(r))-min(n, int64(len(r))):]), nil
			}},
		"ltrim": {minArgs: 1, maxArgs: 2, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) {
				if len(s) == 2 {
					return strings.TrimLeft(s[0], s[1]), nil
				}
				return strings.TrimLeft(s[0], " "), nil
			})},
		"rtrim": {minArgs: 1, maxArgs: 2, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) {
				if len(s) == 2 {
					return strings.TrimRight(s[0], s[1]), nil
				}
				return strings.TrimRight(s[0], " "), nil
			})},
		"starts_with": {minArgs: 2, maxArgs: 2, strict: true, ret: returns(OIDBool), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) { return strings.HasPrefix(s[0], s[1]), nil })},
		"regexp_replace": {minArgs: 3, maxArgs: 4, strict: true, ret: returns(OIDText), argType: argsAre(OIDText),
			call: text(func(_ *execCtx, s []string) (any, error) {
				flags := ""
				if len(s) == 4 {
					flags = s[3]
				}
				re, err := compileRegex(s[1], strings.Contains(flags, "i"))
				if err != nil {
					return nil, err
				}
				// Postgres writes \1 for a group; Go's regexp ${1}.
				repl := regexp.MustCompile(`\\(\d)`).ReplaceAllString(strings.ReplaceAll(s[2], "$", "$$"), "$${$1}")
				if strings.Contains(flags, "g") {
					return re.ReplaceAllString(s[0], repl), nil
				}
				if loc := re.FindStringSubmatchIndex(s[0]); loc != nil {
					var dst []byte
					dst = re.ExpandString(dst, repl, s[0], loc)
					return s[0][:loc[0]] + string(dst) + s[0][loc[1]:], nil
				}
				return s[0], nil
			})},
		"string_to_array": {minArgs: 2, maxArgs: 3, ret: returns(OIDTextArray), argType: argsAre(OIDText),
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				if args[0] == nil {
					return nil, nil
				}
				str := x.textOf(args[0], types[0])
				if str == "" {
					return []any{}, nil
				}
				var parts []string
				if args[1] == nil {
					for _, r := range str {
						parts = append(parts, string(r))
					}
				} else {
					parts = strings.Split(str, x.textOf(args[1], types[1]))
				}
				out := make([]any, len(parts))
				for i, p := range parts {
					out[i] = p
					if len(args) == 3 && args[2] != nil && p == x.textOf(args[2], types[2]) {
						out[i] = nil
					}
				}
				return out, nil
			}},
		"parse_ident": {minArgs: 1, maxArgs: 2, strict: true, ret: returns(OIDTextArray), argType: func(i int) uint32 { return []uint32{OIDText, OIDBool}[i] },
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				parts := splitQualified(x.textOf(args[0], types[0]))
				out := make([]any, len(parts))
				for i, p := range parts {
					out[i] = p
				}
				return out, nil
			}},
		"format": {minArgs: 1, maxArgs: 100, ret: returns(OIDText), argType: argsAre(OIDText),
			call: func(x *execCtx, args []any, types []uint32) (any, error) {
				if args[0] == nil {
					return nil, nil
				}
				return formatText(x, x.textOf(args[0], types[0]), args[1:], types[1:])
			}},
		"pg_client_encoding": constant(OIDName, func(x *execCtx) any { return x.sess.setting("client_encoding") }),
		"pg_typeof": {minArgs: 1, maxArgs: 1, ret: returns(OIDRegtype),
			call: func(_ *execCtx, _ []any, types []uint32) (any, error) { return int64(types[0]), nil }},
	}
}

func keyColumnName(r *vrel, n int) string {
	if n >= 1 && n <= len(r.src.Columns) {
		return quoteIdent(r.src.Columns[n-1].Name)
	}
	return ""
}

func arrayBound(args []any, zeroBased, upper bool) (any, error) {
	a, _ := args[0].([]any)
	dim, _ := toInt(args[1], OIDInt4)
	if dim != 1 || len(a) == 0 {
		return nil, nil
	}
	lo := int64(1)
	if zeroBased {
		lo = 0
	}
	if upper {
		return lo + int64(len(a)) - 1, nil
	}
	return lo, nil
}

func substring(x *execCtx, args []any, types []uint32) (any, error) {
	s := []rune(x.textOf(args[0], types[0]))
	start, err := toInt(args[1], OIDInt4)
	if err != nil {
		return nil, err
	}
	end := int64(len(s)) + 1
	if len(args) == 3 {
		n, err := toInt(args[2], OIDInt4)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, &Error{Code: "22011", Message: "negative substring length not allowed"}
		}
		end = start + n
	}
	if start < 1 {
		start = 1
	}
	if end > int64(len(s))+1 {
		end = int64(len(s)) + 1
	}
	if start >= end {
		return "", nil
	}
	return string(s[start-1 : end-1]), nil
}

// toChar is to_char for timestamps with the common template patterns.
func toChar(x *execCtx, v any, typ uint32, format string) (any, error) {
	t, ok := v.(time.Time)
	if !ok {
		return x.textOf(v, typ), nil
	}
	r := strings.NewReplacer("YYYY", "2006", "MM", "01", "DD", "02", "HH24", "15", "HH12", "03", "HH", "03", "MI", "04", "SS", "05", "MS", "000", "US", "000000", "TZ", "MST", "Mon", "Jan", "Day", "Monday")
	return t.UTC().Format(r.Replace(format)), nil
}

// agg is an aggregate: its result type and how it folds a group's
// argument rows.
type agg struct {
	// args is how many arguments it takes (count(*) takes none).
	args int
	ret  func(args []uint32) uint32
	fold func(a *aggSpec, rows [][]any) (any, error)
}

var aggregates map[string]*agg

func init() {
	nonNull := func(rows [][]any) []any {
		var out []any
		for _, r := range rows {
			if len(r) > 0 && r[0] != nil {
				out = append(out, r[0])
			}
		}
		return out
	}
	first := func(args []uint32) uint32 {
		if len(args) == 0 {
			return OIDText
		}
		return args[0]
	}
	extreme := func(sign int) *agg {
		return &agg{ret: first, fold: func(_ *aggSpec, rows [][]any) (any, error) {
			var best any
			for _, v := range nonNull(rows) {
				if best == nil || compareValues(v, best)*sign > 0 {
					best = v
				}
			}
			return best, nil
		}}
	}
	boolAgg := func(and bool) *agg {
		return &agg{ret: returns(OIDBool), fold: func(_ *aggSpec, rows [][]any) (any, error) {
			vals := nonNull(rows)
			if len(vals) == 0 {
				return nil, nil
			}
			for _, v := range vals {
				if t, _ := truth(v); t != and {
					return !and, nil
				}
			}
			return and, nil
		}}
	}
	aggregates = map[string]*agg{
		"count": {ret: returns(OIDInt8), fold: func(a *aggSpec, rows [][]any) (any, error) {
			if a.star {
				return int64(len(rows)), nil
			}
			return int64(len(nonNull(rows))), nil
		}},
		"min": extreme(-1),
		"max": extreme(1),
		// Postgres's result types: sum of int2/int4 is int8, of int8 and
		// numeric numeric, of floats float8; avg of floats float8, of the
		// rest numeric.
		"sum": {ret: func(args []uint32) uint32 {
			switch {
			case len(args) == 0:
				return OIDNumeric
			case args[0] == OIDFloat8 || args[0] == OIDFloat4:
				return OIDFloat8
			case args[0] == OIDInt2 || args[0] == OIDInt4:
				return OIDInt8
			}
			return OIDNumeric
		}, fold: func(_ *aggSpec, rows [][]any) (any, error) {
			vals := nonNull(rows)
			if len(vals) == 0 {
				return nil, nil
			}
			var sum any = int64(0)
			for _, v := range vals {
				s, err := arith("+", sum, v)
				if err != nil {
					return nil, err
				}
				sum = s
			}
			return sum, nil
		}},
		"avg": {ret: func(args []uint32) uint32 {
			if len(args) > 0 && (args[0] == OIDFloat8 || args[0] == OIDFloat4) {
				return OIDFloat8
			}
			return OIDNumeric
		}, fold: func(_ *aggSpec, rows [][]any) (any, error) {
			vals := nonNull(rows)
			if len(vals) == 0 {
				return nil, nil
			}
			total := 0.0
			for _, v := range vals {
				f, err := toFloat(v)
				if err != nil {
					return nil, err
				}
				total += f
			}
			return total / float64(len(vals)), nil
		}},
		"array_agg": {ret: func(args []uint32) uint32 { return arrayTypeOf(first(args)) }, fold: func(_ *aggSpec, rows [][]any) (any, error) {
			if len(rows) == 0 {
				return nil, nil
			}
			out := make([]any, len(rows))
			for i, r := range rows {
				out[i] = r[0]
			}
			return out, nil
		}},
		"string_agg": {args: 2, ret: returns(OIDText), fold: func(a *aggSpec, rows [][]any) (any, error) {
			var b strings.Builder
			n := 0
			for _, r := range rows {
				if r[0] == nil {
					continue
				}
				if n > 0 && r[1] != nil {
					b.WriteString(fmt.Sprint(r[1]))
				}
				b.WriteString(fmt.Sprint(r[0]))
				n++
			}
			if n == 0 {
				return nil, nil
			}
			return b.String(), nil
		}},
		"bool_and": boolAgg(true),
		"every":    boolAgg(true),
		"bool_or":  boolAgg(false),
	}
}

// setFunctions are the set-returning functions usable in FROM: their
// columns, and the rows for given argument values.
var setFunctions = map[string]func(cp *compiler, args []*expr, loc int32) ([]scopeCol, func(c *evalCtx, vals []any) ([][]any, error), error){
	"generate_series": func(cp *compiler, args []*expr, loc int32) ([]scopeCol, func(*evalCtx, []any) ([][]any, error), error) {
		if len(args) < 2 || len(args) > 3 {
			return nil, nil, cp.errAt(CodeUndefinedFunction, loc, "function generate_series(%s) does not exist", argTypeList(args))
		}
		typ := OIDInt4
		for i := range args {
			args[i] = cp.resolveUnknown(args[i], OIDInt4)
			if args[i].typ == OIDInt8 {
				typ = OIDInt8
			}
		}
		return []scopeCol{{name: "generate_series", typ: typ, typmod: -1}}, func(_ *evalCtx, vals []any) ([][]any, error) {
			for _, v := range vals {
				if v == nil {
					return nil, nil
				}
			}
			lo, _ := toInt(vals[0], OIDInt8)
			hi, _ := toInt(vals[1], OIDInt8)
			step := int64(1)
			if len(vals) == 3 {
				step, _ = toInt(vals[2], OIDInt8)
			}
			if step == 0 {
				return nil, &Error{Code: CodeInvalidParameter, Message: "step size cannot equal zero"}
			}
			var rows [][]any
			for i := lo; step > 0 && i <= hi || step < 0 && i >= hi; i += step {
				rows = append(rows, []any{i})
				if len(rows) > 1_000_000 {
					return nil, &Error{Code: "54000", Message: "generate_series: too many rows for Sluice's Postgres catalog"}
				}
			}
			return rows, nil
		}, nil
	},
	"unnest": func(cp *compiler, args []*expr, loc int32) ([]scopeCol, func(*evalCtx, []any) ([][]any, error), error) {
		if len(args) == 0 {
			return nil, nil, cp.errAt(CodeUndefinedFunction, loc, "function unnest() does not exist")
		}
		var cols []scopeCol
		for i := range args {
			args[i] = cp.resolveUnknown(args[i], OIDTextArray)
			cols = append(cols, scopeCol{name: "unnest", typ: elemType(args[i].typ), typmod: -1})
		}
		return cols, func(_ *evalCtx, vals []any) ([][]any, error) {
			n := 0
			for _, v := range vals {
				if a, ok := v.([]any); ok && len(a) > n {
					n = len(a)
				}
			}
			rows := make([][]any, n)
			for i := range rows {
				rows[i] = make([]any, len(vals))
				for j, v := range vals {
					if a, ok := v.([]any); ok && i < len(a) {
						rows[i][j] = a[i]
					}
				}
			}
			return rows, nil
		}, nil
	},
	"generate_subscripts": func(cp *compiler, args []*expr, loc int32) ([]scopeCol, func(*evalCtx, []any) ([][]any, error), error) {
		if len(args) < 2 || len(args) > 3 {
			return nil, nil, cp.errAt(CodeUndefinedFunction, loc, "function generate_subscripts(%s) does not exist", argTypeList(args))
		}
		zeroBased := args[0].typ == OIDInt2Vector || args[0].typ == OIDOidVector
		for i := 1; i < len(args); i++ {
			args[i] = cp.resolveUnknown(args[i], []uint32{0, OIDInt4, OIDBool}[i])
		}
		return []scopeCol{{name: "generate_subscripts", typ: OIDInt4, typmod: -1}}, func(_ *evalCtx, vals []any) ([][]any, error) {
			a, _ := vals[0].([]any)
			dim, _ := toInt(vals[1], OIDInt4)
			if dim != 1 || len(a) == 0 {
				return nil, nil
			}
			reverse := false
			if len(vals) == 3 {
				reverse, _ = truth(vals[2])
			}
			lo := int64(1)
			if zeroBased {
				lo = 0
			}
			rows := make([][]any, len(a))
			for i := range a {
				n := lo + int64(i)
				if reverse {
					n = lo + int64(len(a)-1-i)
				}
				rows[i] = []any{n}
			}
			return rows, nil
		}, nil
	},
	"_pg_expandarray": func(cp *compiler, args []*expr, loc int32) ([]scopeCol, func(*evalCtx, []any) ([][]any, error), error) {
		if len(args) != 1 {
			return nil, nil, cp.errAt(CodeUndefinedFunction, loc, "function _pg_expandarray(%s) does not exist", argTypeList(args))
		}
		elem := elemType(args[0].typ)
		return []scopeCol{{name: "x", typ: elem, typmod: -1}, {name: "n", typ: OIDInt4, typmod: -1}}, func(_ *evalCtx, vals []any) ([][]any, error) {
			a, _ := vals[0].([]any)
			rows := make([][]any, len(a))
			for i, v := range a {
				rows[i] = []any{v, int64(i + 1)}
			}
			return rows, nil
		}, nil
	},
}

func argTypeList(args []*expr) string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = formatType(a.typ, -1)
	}
	return strings.Join(names, ", ")
}

func (cp *compiler) compileFuncCall(fc *pg.FuncCall, sc *scope) (*expr, error) {
	var qual []string
	for _, n := range fc.Funcname {
		qual = append(qual, strVal(n))
	}
	name := qual[len(qual)-1]
	if len(qual) > 1 && qual[0] != "pg_catalog" && qual[0] != "information_schema" {
		return nil, cp.errAt(CodeUndefinedFunction, fc.Location, "function %s() does not exist", strings.Join(qual, "."))
	}
	if fc.Over != nil {
		return cp.compileWindow(name, fc, sc)
	}
	if a, ok := aggregates[name]; ok {
		return cp.compileAggregate(name, a, fc, sc)
	}
	var args []*expr
	for _, n := range fc.Args {
		e, err := cp.compileExpr(n, sc)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	f, ok := functions[name]
	if srf, isSet := setFunctions[name]; isSet && !ok {
		return cp.compileSetInSelectList(name, srf, args, fc, sc)
	}
	if !ok || len(args) < f.minArgs || len(args) > max(f.maxArgs, f.minArgs) {
		return nil, &Error{Code: CodeUndefinedFunction, Position: cp.position(fc.Location),
			Message: fmt.Sprintf("function %s(%s) does not exist", strings.Join(qual, "."), argTypeList(args))}
	}
	types := make([]uint32, len(args))
	for i := range args {
		if f.argType != nil {
			want := f.argType(min(i, f.maxArgs-1))
			if args[i].typ == OIDUnknown {
				args[i] = cp.resolveUnknown(args[i], want)
			}
		}
		if args[i].typ == OIDUnknown {
			args[i] = cp.resolveUnknown(args[i], OIDText)
		}
		types[i] = args[i].typ
	}
	strict := f.strict
	call := f.call
	return &expr{typ: f.ret(types), typmod: -1, name: name, eval: func(c *evalCtx) (any, error) {
		vals := make([]any, len(args))
		for i, a := range args {
			v, err := a.eval(c)
			if err != nil {
				return nil, err
			}
			if v == nil && strict {
				return nil, nil
			}
			vals[i] = v
		}
		return call(c.x, vals, types)
	}}, nil
}

func (cp *compiler) compileAggregate(name string, a *agg, fc *pg.FuncCall, sc *scope) (*expr, error) {
	st := sc.sel
	if st == nil || st.noAgg != "" || st.inAggArgs {
		where := "here"
		if st != nil && st.noAgg != "" {
			where = "in " + st.noAgg
		}
		return nil, cp.errAt("42803", fc.Location, "aggregate functions are not allowed %s", where)
	}
	st.inAggArgs = true
	defer func() { st.inAggArgs = false }()
	spec := &aggSpec{name: name, star: fc.AggStar, distinct: fc.AggDistinct}
	var types []uint32
	for _, n := range fc.Args {
		e, err := cp.compileExpr(n, sc)
		if err != nil {
			return nil, err
		}
		e = cp.resolveUnknown(e, OIDText)
		spec.args = append(spec.args, e)
		types = append(types, e.typ)
	}
	if fc.AggFilter != nil {
		f, err := cp.compileExpr(fc.AggFilter, sc)
		if err != nil {
			return nil, err
		}
		spec.filter = f
	}
	if len(fc.AggOrder) > 0 {
		keys, err := cp.compileSort(fc.AggOrder, sc, nil, nil)
		if err != nil {
			return nil, err
		}
		spec.order = keys
	}
	want := a.args
	if want == 0 {
		want = 1
	}
	if fc.AggStar && name == "count" {
		want = 0
	}
	if len(spec.args) != want || fc.AggStar && name != "count" {
		args := argTypeList(spec.args)
		if fc.AggStar {
			args = "*"
		}
		return nil, cp.errAt(CodeUndefinedFunction, fc.Location, "function %s(%s) does not exist", name, args)
	}
	spec.typ = a.ret(types)
	i := len(st.aggs)
	st.aggs = append(st.aggs, spec)
	return &expr{typ: spec.typ, typmod: -1, name: name, eval: func(c *evalCtx) (any, error) {
		if c.aggs == nil {
			return nil, &Error{Code: "42803", Message: "aggregate used outside a grouped query"}
		}
		return c.aggs[i], nil
	}}, nil
}

func (cp *compiler) compileWindow(name string, fc *pg.FuncCall, sc *scope) (*expr, error) {
	st := sc.sel
	if st == nil || st.noAgg != "" {
		return nil, cp.errAt("42P20", fc.Location, "window functions are not allowed here")
	}
	switch name {
	case "row_number", "rank", "dense_rank":
	default:
		return nil, cp.errAt(CodeFeatureUnsupported, fc.Location, "window function %s is not supported by Sluice's Postgres catalog", name)
	}
	spec := &winSpec{name: name}
	for _, p := range fc.Over.PartitionClause {
		e, err := cp.compileExpr(p, sc)
		if err != nil {
			return nil, err
		}
		spec.partition = append(spec.partition, e)
	}
	keys, err := cp.compileSort(fc.Over.OrderClause, sc, nil, nil)
	if err != nil {
		return nil, err
	}
	spec.order = keys
	i := len(st.wins)
	st.wins = append(st.wins, spec)
	return &expr{typ: OIDInt8, typmod: -1, name: name, eval: func(c *evalCtx) (any, error) { return c.wins[i], nil }}, nil
}

func (cp *compiler) compileSubLink(sl *pg.SubLink, sc *scope) (*expr, error) {
	p, err := cp.compileQuery(sl.Subselect, sc)
	if err != nil {
		return nil, err
	}
	if sl.SubLinkType != pg.SubLinkType_EXISTS_SUBLINK && len(p.cols) != 1 {
		return nil, cp.errAt(CodeSyntaxError, sl.Location, "subquery must return only one column")
	}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		return &expr{typ: OIDBool, typmod: -1, name: "exists", eval: func(c *evalCtx) (any, error) {
			rows, err := p.run(c)
			return len(rows) > 0, err
		}}, nil
	case pg.SubLinkType_EXPR_SUBLINK:
		return &expr{typ: p.cols[0].typ, typmod: p.cols[0].typmod, name: p.cols[0].name, eval: func(c *evalCtx) (any, error) {
			rows, err := p.run(c)
			if err != nil || len(rows) == 0 {
				return nil, err
			}
			if len(rows) > 1 {
				return nil, &Error{Code: "21000", Message: "more than one row returned by a subquery used as an expression"}
			}
			return rows[0][0], nil
		}}, nil
	case pg.SubLinkType_ARRAY_SUBLINK:
		return &expr{typ: arrayTypeOf(p.cols[0].typ), typmod: -1, name: "array", eval: func(c *evalCtx) (any, error) {
			rows, err := p.run(c)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(rows))
			for i, r := range rows {
				out[i] = r[0]
			}
			return out, nil
		}}, nil
	case pg.SubLinkType_ANY_SUBLINK, pg.SubLinkType_ALL_SUBLINK:
		l, err := cp.compileExpr(sl.Testexpr, sc)
		if err != nil {
			return nil, err
		}
		op := "="
		if len(sl.OperName) > 0 {
			op = nameOf(sl.OperName)
		}
		l = cp.resolveUnknown(l, p.cols[0].typ)
		return cp.quantified(op, l, sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK, func(c *evalCtx) ([]any, error) {
			rows, err := p.run(c)
			if err != nil {
				return nil, err
			}
			vals := make([]any, len(rows))
			for i, r := range rows {
				vals[i] = r[0]
			}
			return vals, nil
		}, p.cols[0].typ, sl.Location)
	}
	return nil, cp.errAt(CodeFeatureUnsupported, sl.Location, "this subquery form is not supported by Sluice's Postgres catalog")
}

// defaultPID is what pg_backend_pid() returns until the server gives the
// session its BackendKeyData process id (Session.SetBackendPID).
var defaultPID = os.Getpid()

// compileSetInSelectList compiles a set-returning function called in a
// select list: the query expands each row by its set.
func (cp *compiler) compileSetInSelectList(name string, srf func(*compiler, []*expr, int32) ([]scopeCol, func(*evalCtx, []any) ([][]any, error), error), args []*expr, fc *pg.FuncCall, sc *scope) (*expr, error) {
	st := sc.sel
	if st == nil || st.noAgg != "" || st.inAggArgs {
		return nil, cp.errAt(CodeFeatureUnsupported, fc.Location, "set-returning functions are not allowed here")
	}
	cols, gen, err := srf(cp, args, fc.Location)
	if err != nil {
		return nil, err
	}
	spec := &srfSpec{args: args, gen: gen, record: len(cols) > 1}
	i := len(st.srfs)
	st.srfs = append(st.srfs, spec)
	e := &expr{typ: cols[0].typ, typmod: -1, name: name, eval: func(c *evalCtx) (any, error) {
		if c.srfs == nil {
			return nil, nil
		}
		return c.srfs[i], nil
	}}
	if spec.record {
		e.typ, e.fields = OIDRecord, cols
	}
	return e, nil
}

// formatText is format(): %s, %I (quote_ident) and %L (quote_literal)
// over the arguments in order, %% a percent sign.
func formatText(x *execCtx, f string, args []any, types []uint32) (any, error) {
	var b strings.Builder
	n := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return nil, &Error{Code: CodeInvalidParameter, Message: "unterminated format() type specifier"}
		}
		verb := f[i]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if n >= len(args) {
			return nil, &Error{Code: CodeInvalidParameter, Message: "too few arguments for format()"}
		}
		arg, typ := args[n], types[n]
		n++
		switch verb {
		case 's':
			if arg != nil {
				b.WriteString(x.textOf(arg, typ))
			}
		case 'I':
			if arg == nil {
				return nil, &Error{Code: "22004", Message: "null values cannot be formatted as an SQL identifier"}
			}
			b.WriteString(quoteIdent(x.textOf(arg, typ)))
		case 'L':
			if arg == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString("'" + strings.ReplaceAll(x.textOf(arg, typ), "'", "''") + "'")
			}
		default:
			return nil, &Error{Code: CodeInvalidParameter, Message: fmt.Sprintf("unrecognized format() type specifier %q", string(verb))}
		}
	}
	return b.String(), nil
}
