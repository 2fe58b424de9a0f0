// Package types defines Sluice's SQL types, the Go values that carry them,
// and the schemas (ordered, typed columns) that every other package shares.
//
// Place in the flow: parser/ produces type names, planner/ resolves them to
// Type values and checks expressions, exec/ and format/ move values of these
// types through rows. Nothing here depends on another Sluice package.
//
// Values are plain Go values chosen for speed on the hot path:
//
//	BOOLEAN   bool
//	INT       int32
//	BIGINT    int64
//	DOUBLE    float64
//	DECIMAL   *apd.Decimal (github.com/cockroachdb/apd/v3), never nil
//	          and never mutated once in a row; its exponent is minus the
//	          type's scale, so 3.4 in a DECIMAL(3, 2) is 3.40
//	STRING    string
//	BYTES     []byte
//	TIMESTAMP int64 milliseconds since the epoch
//	ARRAY     []any
//	MAP       map[string]any
//	STRUCT    []any in field order
//
// SQL NULL is the Go nil. A row is a []any indexed by column position,
// positions resolved at plan time.
//
// How ksqlDB (its Jackson) writes a value as JSON text is decided here
// once, for the JSON format, TO_JSON_STRING and the REST API alike:
// AppendJSONDouble for a DOUBLE (Java's Double.toString, NaN and the
// infinities as strings) and AppendJSONString for a string (only '"',
// '\\' and control characters escaped; \b \t \n \f \r by name, the
// others as upper-case \u00XX).
//
// Example:
//
//	s := types.Schema{Columns: []types.Column{
//		{Name: "ID", Type: types.String, Key: true},
//		{Name: "PRICE", Type: types.Double},
//	}}
//	i, _ := s.Find("price") // 1: lookups fold case like ksqlDB's unquoted names
package types
