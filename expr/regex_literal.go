package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// strRegex is a compiled pattern of the REGEXP_ functions and need, a
// string every match of it contains ("" when the pattern has none, or
// only under case folding). An input without need cannot match, so the
// functions answer it without running the matcher: Go's matcher tries a
// pattern that does not start with a literal at every position of the
// input, and q21's '(&|^)channel_id=([^&]*)' over URLs that mostly lack
// channel_id was half of that query's time.
type strRegex struct {
	*regexp.Regexp
	need string
}

func compileStrRegex(p string) (*strRegex, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	return &strRegex{Regexp: re, need: requiredLiteral(p)}, nil
}

// cannotMatch reports whether s lacks what every match contains.
func (r *strRegex) cannotMatch(s string) bool {
	return r.need != "" && !strings.Contains(s, r.need)
}

// requiredLiteral is the longest literal string every match of pattern p
// contains, "" for none. It reads the parsed pattern: a literal is
// required where reaching it cannot be avoided, in a concatenation, a
// group or a repetition of at least once; nothing under an alternation,
// an optional part or a case-insensitive flag is. A literal holding
// U+FFFD is left out: the matcher reads invalid UTF-8 in the input as that
// rune, which no substring search would find.
func requiredLiteral(p string) string {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return ""
	}
	lit := required(re.Simplify())
	if strings.ContainsRune(lit, utf8.RuneError) {
		return ""
	}
	return lit
}

func required(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if lit := required(sub); len(lit) > len(best) {
				best = lit
			}
		}
		return best
	}
	return ""
}
