package planner

import (
	"testing"

	"github.com/sluice-sql/sluice/types"
)

// TestRekeyFormat checks the key format keyless join inputs are re-keyed
// in: the session's default, KAFKA without one, JSON where a format of
// primitives cannot hold the key.
func TestRekeyFormat(t *testing.T) {
	structType := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "A", Type: types.IntegerType}}}
	for _, tc := range []struct {
		def  string
		key  types.Type
		want string
	}{
		{"", types.IntegerType, "KAFKA"},
		{"NONE", types.StringType, "KAFKA"},
		{"delimited", types.IntegerType, "DELIMITED"},
		{"JSON", types.IntegerType, "JSON"},
		{"AVRO", structType, "AVRO"},
		{"", structType, "JSON"},
		{"DELIMITED", structType, "JSON"},
	} {
		if got := rekeyFormat(tc.def, tc.key); got != tc.want {
			t.Errorf("rekeyFormat(%q, %s) = %s, want %s", tc.def, tc.key, got, tc.want)
		}
	}
}
