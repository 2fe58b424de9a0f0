package shell

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// SHOW TYPES prints the same table from both backends: the embedded
// engine's TypeList and the server's type_list.
func TestTypeTable(t *testing.T) {
	address := types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "NUMBER", Type: types.IntegerType}, {Name: "STREET", Type: types.StringType}}}
	want := &Table{Columns: []string{"Type Name", "Schema"}, Rows: [][]string{
		{"ADDRESS", "STRUCT<NUMBER INTEGER, STREET STRING>"},
		{"IDS", "ARRAY<BIGINT>"},
	}}
	for _, tc := range []struct {
		name string
		got  func() *Result
	}{
		{"embedded", func() *Result {
			return entityResult(parser.Parsed{}, &engine.TypeList{Types: []planner.CustomType{
				{Name: "ADDRESS", Type: address}, {Name: "IDS", Type: types.ArrayOf(types.BigIntType)}}})
		}},
		{"remote", func() *Result {
			var e wireEntity
			body := `{"@type":"type_list","statementText":"SHOW TYPES;","types":{
				"IDS":{"type":"ARRAY","fields":null,"memberSchema":{"type":"BIGINT","fields":null,"memberSchema":null}},
				"ADDRESS":{"type":"STRUCT","fields":[{"name":"NUMBER","schema":{"type":"INTEGER"}},{"name":"STREET","schema":{"type":"STRING"}}]}},"warnings":[]}`
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatal(err)
			}
			return e.result(parser.Parsed{})
		}},
	} {
		if diff := cmp.Diff(want, tc.got().Table); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
