package pgcatalog

import "github.com/sluice-sql/sluice/types"

// PGType is a Postgres type as a RowDescription names it.
type PGType struct {
	OID  uint32
	Name string
	// Size is pg_type.typlen: the fixed width in bytes, -1 variable.
	Size int16
	// TypeMod is the type modifier (atttypmod); -1 for none.
	TypeMod int32
}

// Postgres type OIDs Sluice's types map to (pg_type.oid, stable across
// every Postgres version).
const (
	OIDBool           uint32 = 16
	OIDBytea          uint32 = 17
	OIDName           uint32 = 19
	OIDInt8           uint32 = 20
	OIDInt2           uint32 = 21
	OIDInt4           uint32 = 23
	OIDText           uint32 = 25
	OIDOid            uint32 = 26
	OIDFloat4         uint32 = 700
	OIDFloat8         uint32 = 701
	OIDBoolArray      uint32 = 1000
	OIDByteaArray     uint32 = 1001
	OIDInt2Array      uint32 = 1005
	OIDInt4Array      uint32 = 1007
	OIDTextArray      uint32 = 1009
	OIDInt8Array      uint32 = 1016
	OIDFloat8Array    uint32 = 1022
	OIDVarchar        uint32 = 1043
	OIDDate           uint32 = 1082
	OIDTime           uint32 = 1083
	OIDTimestamp      uint32 = 1114
	OIDDateArray      uint32 = 1182
	OIDTimestampArray uint32 = 1115
	OIDTimeArray      uint32 = 1183
	OIDNumericArray   uint32 = 1231
	OIDNumeric        uint32 = 1700
	OIDJSONB          uint32 = 3802
	OIDUnknown        uint32 = 705
)

// TypeOf is how a Sluice type looks to Postgres clients. Scalars map to
// their Postgres namesakes (TIMESTAMP is Postgres's timestamp without time
// zone, holding UTC as Sluice's does; DECIMAL(p,s) is numeric(p,s)); an
// ARRAY of a scalar is that scalar's array type; MAP, STRUCT and arrays of
// them are jsonb, the one Postgres type that carries named and nested
// values as they are.
func TypeOf(t types.Type) PGType {
	switch t.Kind {
	case types.Boolean:
		return PGType{OIDBool, "bool", 1, -1}
	case types.Integer:
		return PGType{OIDInt4, "int4", 4, -1}
	case types.BigInt:
		return PGType{OIDInt8, "int8", 8, -1}
	case types.Double:
		return PGType{OIDFloat8, "float8", 8, -1}
	case types.Decimal:
		return PGType{OIDNumeric, "numeric", -1, int32(t.Precision<<16|t.Scale) + 4}
	case types.String:
		return PGType{OIDText, "text", -1, -1}
	case types.Bytes:
		return PGType{OIDBytea, "bytea", -1, -1}
	case types.Timestamp:
		return PGType{OIDTimestamp, "timestamp", 8, -1}
	case types.Date:
		return PGType{OIDDate, "date", 4, -1}
	case types.Time:
		return PGType{OIDTime, "time", 8, -1}
	case types.Array:
		if t.Elem != nil {
			if a, ok := arrayOf[t.Elem.Kind]; ok {
				return a
			}
		}
	}
	return PGType{OIDJSONB, "jsonb", -1, -1}
}

// arrayOf are the array types of the scalars that have one here.
var arrayOf = map[types.Kind]PGType{
	types.Boolean:   {OIDBoolArray, "_bool", -1, -1},
	types.Integer:   {OIDInt4Array, "_int4", -1, -1},
	types.BigInt:    {OIDInt8Array, "_int8", -1, -1},
	types.Double:    {OIDFloat8Array, "_float8", -1, -1},
	types.Decimal:   {OIDNumericArray, "_numeric", -1, -1},
	types.String:    {OIDTextArray, "_text", -1, -1},
	types.Bytes:     {OIDByteaArray, "_bytea", -1, -1},
	types.Timestamp: {OIDTimestampArray, "_timestamp", -1, -1},
	types.Date:      {OIDDateArray, "_date", -1, -1},
	types.Time:      {OIDTimeArray, "_time", -1, -1},
}
