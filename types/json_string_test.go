package types_test

import (
	"testing"

	"github.com/sluice-sql/sluice/types"
)

// Jackson's escaping (CharTypes' output table): '"' and '\\', five control
// characters by their short names, the other control characters as
// \u00XX with upper-case digits; '/', HTML characters, DEL and non-ASCII
// written as they are.
func TestAppendJSONString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`a\b`, `"a\\b"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x0b\x0e\x1a\x1f", `"\u0000\u0001\u000B\u000E\u001A\u001F"`},
		{"</script>&'", `"</script>&'"`},
		{"a/b", `"a/b"`},
		{"\x7f", "\"\x7f\""},
		{"héllo ✓ 𝄞", `"héllo ✓ 𝄞"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"a\xffb", "\"a\uFFFDb\""},
		{"tail\x01", `"tail\u0001"`},
	} {
		if got := string(types.AppendJSONString(nil, tc.in)); got != tc.want {
			t.Errorf("AppendJSONString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := string(types.AppendJSONString([]byte("k:"), "v")); got != `k:"v"` {
		t.Errorf("AppendJSONString appends: got %q", got)
	}
}
