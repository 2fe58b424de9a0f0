package testrunner

import (
	"encoding/json"
	"testing"
)

// Upstream QTT files may carry comments, which ksqlDB's reader accepts.
func TestDecodeWithComments(t *testing.T) {
	cases := []struct{ in, want string }{
		{"{\n  // a comment\n  \"a\": 1\n}", `{"a":1}`},
		{"{\"a\": \"x // not a comment\", /* block\n comment */ \"b\": [1, 2] // end\n}", `{"a":"x // not a comment","b":[1,2]}`},
		{`{"a": "quote \" // still text"}`, `{"a":"quote \" // still text"}`},
	}
	for _, tc := range cases {
		var v any
		if err := decodeStrict([]byte(tc.in), &v); err != nil {
			t.Fatalf("decode %q: %v", tc.in, err)
		}
		got, _ := json.Marshal(v)
		if string(got) != tc.want {
			t.Errorf("decode %q = %s, want %s", tc.in, got, tc.want)
		}
	}
}
