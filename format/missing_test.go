package format_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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

// TestJSONSelect: a codec told which columns are needed converts only
// those, leaves the others NULL and does not count them missing, on the
// fast path and the general one alike.
func TestJSONSelect(t *testing.T) {
	cols := []types.Column{{Name: "A", Type: types.BigIntType}, {Name: "B", Type: types.StringType}, {Name: "C", Type: types.DoubleType}}
	for _, tc := range []struct {
		name string
		data string
		want []any
		miss int
	}{
		{"fast path", `{"A":1,"B":"x","C":2.5}`, []any{int64(1), nil, 2.5}, 0},
		{"case-insensitive names", `{"a":1,"b":"x","c":2.5}`, []any{int64(1), nil, 2.5}, 0},
		{"a needed column missing", `{"B":"x","C":2.5}`, []any{nil, nil, 2.5}, 1},
		{"an unneeded column of the wrong type is not read", `{"A":1,"B":{"deep":[1,2]},"C":2.5}`, []any{int64(1), nil, 2.5}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := format.NewValueCodec("JSON", cols, format.Props{})
			if err != nil {
				t.Fatal(err)
			}
			c.(format.Selective).Select([]bool{true, false, true})
			dst := make([]any, 3)
			if err := c.Decode([]byte(tc.data), dst); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, dst); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if got := c.(format.MissingReporter).Missing(); got != tc.miss {
				t.Errorf("missing %d, want %d", got, tc.miss)
			}
		})
	}
}
