package pgwire

import (
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// resolveLiterals reads each quoted literal of p whose place expects
// another type than STRING (see expected) as Postgres reads an
// untyped literal: as that type's text input. `"ID" = '1'` compares with
// the INTEGER 1 and `"TS" = '2024-01-02 03:04:05'` with that timestamp,
// as they do in Postgres, and as clients that put values into the text
// themselves (pgx's simple protocol, psycopg2, psql users) expect.
// A bare NULL there is a NULL of that type, so `"C" = NULL` is unknown
// (no row) as in Postgres, where Sluice's dialect refuses it.
// A literal that is not valid input for the type keeps Sluice's
// dialect's meaning, so ksqlDB's own coercions (an ISO timestamp string)
// still hold. text is p's source; p is returned as is when nothing
// changes.
func resolveLiterals(text string, p parser.Parsed, source func(string) (types.Schema, bool)) (parser.Parsed, error) {
	type edit struct {
		start, end int
		lit        string
	}
	var edits []edit
	seen := map[int]bool{}
	expected(p.Stmt, source, func(e parser.Expr, t *types.Type) {
		l, ok := e.(*parser.Literal)
		if !ok || t == nil || t.Kind == types.Unknown || seen[l.Pos.Offset] {
			return
		}
		start := l.Pos.Offset
		if l.Kind == parser.LitNull {
			if start+4 <= len(text) && strings.EqualFold(text[start:start+4], "null") {
				seen[start] = true
				edits = append(edits, edit{start, start + 4, "CAST(NULL AS " + t.String() + ")"})
			}
			return
		}
		if l.Kind != parser.LitString {
			return
		}
		switch t.Kind {
		case types.Unknown, types.String, types.Array, types.Map, types.Struct:
			return
		}
		if start >= len(text) || text[start] != '\'' {
			return
		}
		lit, err := literal(l.Str, t)
		if err != nil {
			return
		}
		seen[start] = true
		edits = append(edits, edit{start, skipQuoted(text, start, '\'') + 1, lit})
	})
	if len(edits) == 0 {
		return p, nil
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(text[last:e.start])
		b.WriteString(e.lit)
		last = min(e.end, len(text))
	}
	b.WriteString(text[last:])
	stmts, err := parser.ParseScript(b.String())
	if err != nil || len(stmts) != 1 {
		// Not reached for a literal written as one; keep the client's
		// statement, whose errors name what the client wrote.
		return p, nil
	}
	return stmts[0], nil
}
