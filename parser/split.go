package parser

import "strings"

// SplitStatements cuts src into the statements ended by a `;` that lies
// outside string literals, quoted identifiers and comments, and returns
// them (each with its `;`, surrounding blanks trimmed) with the
// unfinished rest. The shell uses it to know when a multi-line statement
// is complete, and the engine to substitute variables statement by
// statement (DEFINE), so it must agree with the parser's lexer
// (grammar.go): strings are '…' with a doubled quote inside,
// identifiers may be quoted with "…" or `…` (doubled to escape), comments
// run from -- to the end of the line or from /* to */, and a function's
// body runs from $$ to $$.
//
// Statements are cut here rather than by the parser because input is
// incomplete while the user types it: an open string or comment is not
// an error but a reason to keep reading.
func SplitStatements(src string) (stmts []string, rest string) {
	start := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\'' || c == '"' || c == '`':
			end := closingQuote(src, i+1, c)
			if end < 0 {
				return stmts, src[start:]
			}
			i = end
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			nl := strings.IndexByte(src[i:], '\n')
			if nl < 0 {
				return stmts, src[start:]
			}
			i += nl
		case c == '$' && strings.HasPrefix(src[i:], "$$"):
			end := strings.Index(src[i+2:], "$$")
			if end < 0 {
				return stmts, src[start:]
			}
			i += 2 + end + 1
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return stmts, src[start:]
			}
			i += 2 + end + 1
		case c == ';':
			if s := strings.TrimSpace(src[start : i+1]); s != ";" {
				stmts = append(stmts, s)
			}
			start = i + 1
		}
	}
	return stmts, src[start:]
}

// closingQuote returns the index of the quote q closing a quoted run that
// starts at i, skipping doubled quotes, or -1 when it is not closed yet.
func closingQuote(src string, i int, q byte) int {
	for ; i < len(src); i++ {
		if src[i] != q {
			continue
		}
		if i+1 < len(src) && src[i+1] == q {
			i++
			continue
		}
		return i
	}
	return -1
}
