package format

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/types"
)

// A STRING column given an object or array reads its compact JSON text,
// fields in the record's order, as ksqlDB prints the node it read.
func TestJSONStringColumnKeepsNestedText(t *testing.T) {
	c, err := NewValueCodec(JSON, []types.Column{col("S", types.StringType), col("N", types.IntegerType)}, Props{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		record string
		want   []any
	}{
		{`{"S": {"Z": 6, "A": {"ID": 2, "NAME": "Food"}, "M": [1, "x"]}, "N": 1}`, []any{`{"Z":6,"A":{"ID":2,"NAME":"Food"},"M":[1,"x"]}`, int32(1)}},
		{`{"S": [3, 1, {"b": null, "a": true}]}`, []any{`[3,1,{"b":null,"a":true}]`, nil}},
		{`{"S": "plain"}`, []any{"plain", nil}},
	}
	for _, tc := range tests {
		dst := make([]any, 2)
		if err := c.Decode([]byte(tc.record), dst); err != nil {
			t.Fatalf("%s: %v", tc.record, err)
		}
		if diff := cmp.Diff(tc.want, dst); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.record, diff)
		}
	}
}
