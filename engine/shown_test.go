package engine_test

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/shell"
)

// shown is a SHOW, DESCRIBE or EXPLAIN result as users read it: laid out
// by the shell's renderer, which the shell and `sluice run` print with.
func shown(res *engine.Result) string {
	st, _ := parser.ParseOne(res.Statement)
	var b strings.Builder
	shell.WriteEntity(&b, parser.Parsed{Stmt: st, Text: res.Statement}, res.Entity)
	return b.String()
}

// typeLines is a SHOW TYPES result, one "name<TAB>type" line a type, so
// tests can state the types exactly.
func typeLines(res *engine.Result) string {
	l, ok := res.Entity.(*engine.TypeList)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, t := range l.Types {
		fmt.Fprintf(&b, "%s\t%s\n", t.Name, t.Type)
	}
	return b.String()
}
