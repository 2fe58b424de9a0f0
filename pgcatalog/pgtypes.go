package pgcatalog

import (
	"fmt"
	"strings"
)

// More type OIDs: the ones catalog columns and functions use.
const (
	OIDChar         uint32 = 18
	OIDInt2Vector   uint32 = 22
	OIDRegproc      uint32 = 24
	OIDXid          uint32 = 28
	OIDOidVector    uint32 = 30
	OIDJSON         uint32 = 114
	OIDPgNodeTree   uint32 = 194
	OIDAclitem      uint32 = 1033
	OIDBpchar       uint32 = 1042
	OIDTimestamptz  uint32 = 1184
	OIDInterval     uint32 = 1186
	OIDRegclass     uint32 = 2205
	OIDRegtype      uint32 = 2206
	OIDRecord       uint32 = 2249
	OIDCstring      uint32 = 2275
	OIDAnyarray     uint32 = 2277
	OIDVoid         uint32 = 2278
	OIDUUID         uint32 = 2950
	OIDRegnamespace uint32 = 4089
	OIDRegrole      uint32 = 4096
	OIDNameArray    uint32 = 1003
	OIDCharArray    uint32 = 1002
	OIDOidArray     uint32 = 1028
	OIDAclitemArray uint32 = 1034
	OIDVarcharArray uint32 = 1015
	OIDFloat4Array  uint32 = 1021
)

// pgType is one row of pg_type: what a client learns about a type.
type pgType struct {
	oid      uint32
	name     string // typname
	sqlName  string // format_type's name without modifiers
	size     int16  // typlen
	kind     byte   // typtype: b base, p pseudo
	category byte   // typcategory
	elem     uint32 // typelem of an array type
	array    uint32 // typarray of an element type
	align    byte
}

// pgTypes are the types this catalog knows: every type TypeOf returns,
// the ones catalog columns use, and their array types.
var pgTypes = func() map[uint32]*pgType {
	base := []pgType{
		{OIDBool, "bool", "boolean", 1, 'b', 'B', 0, OIDBoolArray, 'c'},
		{OIDBytea, "bytea", "bytea", -1, 'b', 'U', 0, OIDByteaArray, 'i'},
		{OIDChar, "char", `"char"`, 1, 'b', 'Z', 0, OIDCharArray, 'c'},
		{OIDName, "name", "name", 64, 'b', 'S', 0, OIDNameArray, 'c'},
		{OIDInt8, "int8", "bigint", 8, 'b', 'N', 0, OIDInt8Array, 'd'},
		{OIDInt2, "int2", "smallint", 2, 'b', 'N', 0, OIDInt2Array, 's'},
		{OIDInt2Vector, "int2vector", "int2vector", -1, 'b', 'A', OIDInt2, 1006, 'i'},
		{OIDInt4, "int4", "integer", 4, 'b', 'N', 0, OIDInt4Array, 'i'},
		{OIDRegproc, "regproc", "regproc", 4, 'b', 'N', 0, 1008, 'i'},
		{OIDText, "text", "text", -1, 'b', 'S', 0, OIDTextArray, 'i'},
		{OIDOid, "oid", "oid", 4, 'b', 'N', 0, OIDOidArray, 'i'},
		{OIDXid, "xid", "xid", 4, 'b', 'U', 0, 1011, 'i'},
		{OIDOidVector, "oidvector", "oidvector", -1, 'b', 'A', OIDOid, 1013, 'i'},
		{OIDJSON, "json", "json", -1, 'b', 'U', 0, 199, 'i'},
		{OIDPgNodeTree, "pg_node_tree", "pg_node_tree", -1, 'b', 'Z', 0, 0, 'i'},
		{OIDFloat4, "float4", "real", 4, 'b', 'N', 0, OIDFloat4Array, 'i'},
		{OIDFloat8, "float8", "double precision", 8, 'b', 'N', 0, OIDFloat8Array, 'd'},
		{OIDUnknown, "unknown", "unknown", -2, 'p', 'X', 0, 0, 'c'},
		{OIDAclitem, "aclitem", "aclitem", 12, 'b', 'U', 0, OIDAclitemArray, 'i'},
		{OIDBpchar, "bpchar", "character", -1, 'b', 'S', 0, 1014, 'i'},
		{OIDVarchar, "varchar", "character varying", -1, 'b', 'S', 0, OIDVarcharArray, 'i'},
		{OIDDate, "date", "date", 4, 'b', 'D', 0, OIDDateArray, 'i'},
		{OIDTime, "time", "time without time zone", 8, 'b', 'D', 0, OIDTimeArray, 'd'},
		{OIDTimestamp, "timestamp", "timestamp without time zone", 8, 'b', 'D', 0, OIDTimestampArray, 'd'},
		{OIDTimestamptz, "timestamptz", "timestamp with time zone", 8, 'b', 'D', 0, 1185, 'd'},
		{OIDInterval, "interval", "interval", 16, 'b', 'T', 0, 1187, 'd'},
		{OIDNumeric, "numeric", "numeric", -1, 'b', 'N', 0, OIDNumericArray, 'i'},
		{OIDRegclass, "regclass", "regclass", 4, 'b', 'N', 0, 2210, 'i'},
		{OIDRegtype, "regtype", "regtype", 4, 'b', 'N', 0, 2211, 'i'},
		{OIDRecord, "record", "record", -1, 'p', 'P', 0, 2287, 'd'},
		{OIDCstring, "cstring", "cstring", -2, 'p', 'P', 0, 1263, 'c'},
		{OIDAnyarray, "anyarray", "anyarray", -1, 'p', 'P', 0, 0, 'd'},
		{OIDVoid, "void", "void", 4, 'p', 'P', 0, 0, 'i'},
		{OIDUUID, "uuid", "uuid", 16, 'b', 'U', 0, 2951, 'c'},
		{OIDJSONB, "jsonb", "jsonb", -1, 'b', 'U', 0, 3807, 'i'},
		{OIDRegnamespace, "regnamespace", "regnamespace", 4, 'b', 'N', 0, 4090, 'i'},
		{OIDRegrole, "regrole", "regrole", 4, 'b', 'N', 0, 4097, 'i'},
	}
	m := make(map[uint32]*pgType, 2*len(base))
	for i := range base {
		t := base[i]
		m[t.oid] = &t
		if t.array != 0 && t.elem == 0 {
			align := t.align
			if align != 'd' {
				align = 'i'
			}
			m[t.array] = &pgType{oid: t.array, name: "_" + t.name, sqlName: t.sqlName + "[]", size: -1, kind: 'b', category: 'A', elem: t.oid, align: align}
		}
	}
	for _, t := range base {
		if t.elem != 0 && t.array != 0 {
			m[t.array] = &pgType{oid: t.array, name: "_" + t.name, sqlName: t.sqlName + "[]", size: -1, kind: 'b', category: 'A', elem: t.oid, align: 'i'}
		}
	}
	return m
}()

// isArrayType reports whether oid is an array type (int2vector and
// oidvector count: they subscript and print as arrays of their element).
func isArrayType(oid uint32) bool {
	t := pgTypes[oid]
	return t != nil && t.elem != 0
}

func elemType(oid uint32) uint32 {
	if t := pgTypes[oid]; t != nil {
		return t.elem
	}
	return 0
}

func arrayTypeOf(elem uint32) uint32 {
	if t := pgTypes[elem]; t != nil && t.array != 0 {
		return t.array
	}
	return OIDTextArray
}

func typeName(oid uint32) string {
	if t := pgTypes[oid]; t != nil {
		return t.name
	}
	return fmt.Sprint(oid)
}

// fieldType is the PGType a result column of type oid (and typmod) has.
func fieldType(oid uint32, typmod int32) PGType {
	if t := pgTypes[oid]; t != nil {
		return PGType{OID: oid, Name: t.name, Size: t.size, TypeMod: typmod}
	}
	return PGType{OID: oid, Name: fmt.Sprint(oid), Size: -1, TypeMod: typmod}
}

// formatType is format_type(oid, typmod): the SQL name of a type with its
// modifiers, as psql's \d and JDBC print it.
func formatType(oid uint32, typmod int32) string {
	t := pgTypes[oid]
	if t == nil {
		return "???"
	}
	if t.elem != 0 && t.category == 'A' && t.oid != OIDInt2Vector && t.oid != OIDOidVector {
		return formatType(t.elem, typmod) + "[]"
	}
	if typmod < 0 {
		return t.sqlName
	}
	switch oid {
	case OIDNumeric:
		m := typmod - 4
		return fmt.Sprintf("numeric(%d,%d)", (m>>16)&0xffff, m&0xffff)
	case OIDVarchar, OIDBpchar:
		return fmt.Sprintf("%s(%d)", t.sqlName, typmod-4)
	case OIDTime:
		return fmt.Sprintf("time(%d) without time zone", typmod)
	case OIDTimestamp:
		return fmt.Sprintf("timestamp(%d) without time zone", typmod)
	case OIDTimestamptz:
		return fmt.Sprintf("timestamp(%d) with time zone", typmod)
	}
	return t.sqlName
}

// typeNames resolves the names a cast or regtype literal may use.
var typeNames = func() map[string]uint32 {
	m := map[string]uint32{
		"int": OIDInt4, "integer": OIDInt4, "smallint": OIDInt2, "bigint": OIDInt8,
		"boolean": OIDBool, "real": OIDFloat4, "double precision": OIDFloat8, "float": OIDFloat8,
		"character varying": OIDVarchar, "character": OIDBpchar, "string": OIDText,
		"decimal": OIDNumeric, "timestamp without time zone": OIDTimestamp,
		"timestamp with time zone": OIDTimestamptz, "time without time zone": OIDTime,
		`"char"`: OIDChar,
	}
	for oid, t := range pgTypes {
		m[t.name] = oid
		m[t.sqlName] = oid
	}
	return m
}()

// lookupTypeName resolves a type name as SQL text ('integer', 'text[]',
// 'pg_catalog.int4').
func lookupTypeName(s string) (uint32, bool) {
	s = strings.TrimSpace(strings.ToLower(s))
	s = strings.TrimPrefix(s, "pg_catalog.")
	if strings.HasSuffix(s, "[]") {
		elem, ok := lookupTypeName(strings.TrimSuffix(s, "[]"))
		if !ok {
			return 0, false
		}
		a := pgTypes[elem]
		if a == nil || a.array == 0 {
			return 0, false
		}
		return a.array, true
	}
	if i := strings.IndexByte(s, '('); i > 0 {
		s = strings.TrimSpace(s[:i])
	}
	oid, ok := typeNames[s]
	return oid, ok
}
