package parser

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func itoa(n int) string { return strconv.Itoa(n) }

// ignorePos compares ASTs without their source positions.
var ignorePos = cmpopts.IgnoreTypes(Pos{})

// astDiff reports how two trees differ, ignoring positions; "" if equal.
func astDiff(a, b any) string { return cmp.Diff(a, b, ignorePos) }

// assertRoundTrip checks that printing st and parsing the result gives
// the same tree.
func assertRoundTrip(t *testing.T, src string, st Statement) {
	t.Helper()
	printed := st.String()
	again, err := ParseOne(printed)
	if err != nil {
		t.Errorf("round trip of %q: printed %q does not parse: %v", src, printed, err)
		return
	}
	if d := astDiff(st, again); d != "" {
		t.Errorf("round trip of %q via %q changed the tree (-first +second):\n%s", src, printed, d)
	}
}
