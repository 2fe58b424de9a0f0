package parser

import "fmt"

// ParseType parses a type's text (`STRUCT<SUM BIGINT, N BIGINT>`), as a
// statement's string property may give one (CREATE AGGREGATE FUNCTION's
// INTERMEDIATE). It reads the text as the type of a CAST, so it accepts
// exactly what a CAST does.
func ParseType(src string) (*TypeName, error) {
	x, err := ParseExpr("CAST(NULL AS " + src + ")")
	if err != nil {
		return nil, fmt.Errorf("not a type: %s", src)
	}
	c, ok := x.(*Cast)
	if !ok {
		return nil, fmt.Errorf("not a type: %s", src)
	}
	return c.Type, nil
}
