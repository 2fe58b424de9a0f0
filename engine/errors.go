package engine

import (
	"errors"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
)

// FormatError renders err for a person reading the SQL in src: the
// position, the message, the offending line and a caret under the
// position. Errors without a position print as they are.
func FormatError(src string, err error) string {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return pe.Pretty()
	}
	var xe *expr.PosError
	if errors.As(err, &xe) && xe.Pos.Line > 0 {
		lines := strings.Split(src, "\n")
		msg := xe.Error()
		if xe.Pos.Line <= len(lines) {
			line := strings.TrimRight(lines[xe.Pos.Line-1], "\r")
			caret := strings.Repeat(" ", max(xe.Pos.Column-1, 0)) + "^"
			msg += "\n" + line + "\n" + caret
		}
		return msg
	}
	return err.Error()
}
