package shell

import "strings"

// blank reports whether s holds nothing but whitespace and complete
// comments, so a rest like "-- done" does not keep the continuation
// prompt up.
func blank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case strings.HasPrefix(s[i:], "--"):
			nl := strings.IndexByte(s[i:], '\n')
			if nl < 0 {
				return true
			}
			i += nl
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return false
			}
			i += 2 + end + 1
		default:
			return false
		}
	}
	return true
}
