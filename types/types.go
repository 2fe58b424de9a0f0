package types

import (
	"fmt"
	"strings"
)

// Kind is the family of a SQL type.
type Kind uint8

// The kinds Sluice knows. Unknown is the zero value and marks an
// unresolved type (for example the NULL literal before coercion).
const (
	Unknown Kind = iota
	Boolean
	Integer
	BigInt
	Double
	Decimal
	String
	Bytes
	Timestamp
	Date
	Time
	Array
	Map
	Struct
)

var kindNames = [...]string{
	Unknown:   "UNKNOWN",
	Boolean:   "BOOLEAN",
	Integer:   "INTEGER",
	BigInt:    "BIGINT",
	Double:    "DOUBLE",
	Decimal:   "DECIMAL",
	String:    "STRING",
	Bytes:     "BYTES",
	Timestamp: "TIMESTAMP",
	Date:      "DATE",
	Time:      "TIME",
	Array:     "ARRAY",
	Map:       "MAP",
	Struct:    "STRUCT",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Type is a SQL type. Scalar types use only Kind; DECIMAL adds Precision
// and Scale; ARRAY uses Elem; MAP uses Key and Elem; STRUCT uses Fields.
type Type struct {
	Kind      Kind
	Precision int
	Scale     int
	Elem      *Type
	Key       *Type
	Fields    []Field
}

// Field is one named member of a STRUCT type.
type Field struct {
	Name string
	Type Type
}

// The scalar types, ready to use.
var (
	UnknownType   = Type{Kind: Unknown}
	BooleanType   = Type{Kind: Boolean}
	IntegerType   = Type{Kind: Integer}
	BigIntType    = Type{Kind: BigInt}
	DoubleType    = Type{Kind: Double}
	StringType    = Type{Kind: String}
	BytesType     = Type{Kind: Bytes}
	TimestampType = Type{Kind: Timestamp}
	DateType      = Type{Kind: Date}
	TimeType      = Type{Kind: Time}
)

// ArrayOf returns ARRAY<elem>.
func ArrayOf(elem Type) Type { return Type{Kind: Array, Elem: &elem} }

// MapOf returns MAP<key, elem>.
func MapOf(key, elem Type) Type { return Type{Kind: Map, Key: &key, Elem: &elem} }

// String prints the type as ksqlDB spells it in DESCRIBE and CAST.
func (t Type) String() string {
	switch t.Kind {
	case Decimal:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Array:
		return "ARRAY<" + t.Elem.String() + ">"
	case Map:
		return "MAP<" + t.Key.String() + ", " + t.Elem.String() + ">"
	case Struct:
		var b strings.Builder
		b.WriteString("STRUCT<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + f.Name + "` " + f.Type.String())
		}
		b.WriteString(">")
		return b.String()
	default:
		return t.Kind.String()
	}
}

// Equal reports whether two types are the same, deeply.
func (t Type) Equal(o Type) bool {
	if t.Kind != o.Kind || t.Precision != o.Precision || t.Scale != o.Scale {
		return false
	}
	if (t.Elem == nil) != (o.Elem == nil) || (t.Key == nil) != (o.Key == nil) || len(t.Fields) != len(o.Fields) {
		return false
	}
	if t.Elem != nil && !t.Elem.Equal(*o.Elem) {
		return false
	}
	if t.Key != nil && !t.Key.Equal(*o.Key) {
		return false
	}
	for i := range t.Fields {
		if t.Fields[i].Name != o.Fields[i].Name || !t.Fields[i].Type.Equal(o.Fields[i].Type) {
			return false
		}
	}
	return true
}

// IsNumeric reports whether arithmetic applies to the type.
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case Integer, BigInt, Double, Decimal:
		return true
	}
	return false
}

// ParseScalar resolves a scalar type name as written in SQL (case-insensitive),
// including ksqlDB's synonyms. It reports false for unknown names.
func ParseScalar(name string) (Type, bool) {
	switch strings.ToUpper(name) {
	case "BOOLEAN", "BOOL":
		return BooleanType, true
	case "INT", "INTEGER":
		return IntegerType, true
	case "BIGINT", "LONG":
		return BigIntType, true
	case "DOUBLE", "FLOAT", "REAL":
		return DoubleType, true
	case "VARCHAR", "STRING":
		return StringType, true
	case "BYTES":
		return BytesType, true
	case "TIMESTAMP":
		return TimestampType, true
	case "DATE":
		return DateType, true
	case "TIME":
		return TimeType, true
	}
	return Type{}, false
}
