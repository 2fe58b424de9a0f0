package format_test

import (
	"testing"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// The JSON codec tells a column absent from the object apart from one
// that is present and null, so the engine can count incomplete records.
func TestJSONMissingColumns(t *testing.T) {
	cols := []types.Column{{Name: "A", Type: types.BigIntType}, {Name: "B", Type: types.StringType}, {Name: "C", Type: types.DoubleType}}
	c, err := format.NewValueCodec("JSON", cols, format.Props{})
	if err != nil {
		t.Fatal(err)
	}
	mr, ok := c.(format.MissingReporter)
	if !ok {
		t.Fatal("the JSON value codec does not report missing columns")
	}
	tests := []struct {
		in   string
		want int
	}{
		{`{"A":1,"B":"x","C":1.5}`, 0},
		{`{"a":1,"b":null,"C":null}`, 0},
		{`{"A":1}`, 2},
		{`{"b":"x","other":3}`, 2},
		{`{}`, 3},
		{`null`, 0},
	}
	for _, tc := range tests {
		dst := make([]any, len(cols))
		if err := c.Decode([]byte(tc.in), dst); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got := mr.Missing(); got != tc.want {
			t.Errorf("%s: Missing() = %d, want %d", tc.in, got, tc.want)
		}
	}
}
