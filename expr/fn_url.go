package expr

// ksqlDB's URL functions: URL_EXTRACT_PROTOCOL, _HOST, _PORT, _PATH,
// _QUERY, _FRAGMENT and _PARAMETER read a URL as java.net.URI does;
// URL_ENCODE_PARAM and URL_DECODE_PARAM follow java.net.URLEncoder and
// URLDecoder (application/x-www-form-urlencoded, UTF-8).
//
// The rules that matter, all Java's:
//   - A missing component is NULL; a present but empty one ("?" with no
//     query, "#" with no fragment) is ''. A hierarchical URL always has a
//     path, '' when empty; an opaque one (mailto:x) has no path, host,
//     port or query.
//   - Components come back percent-decoded, except the scheme and host.
//     The scheme keeps its case.
//   - A URL that java.net.URI rejects (a space, a character such as
//     " < > \ ^ ` { | }, a bad %-escape, a second '#') gives NULL for
//     every function, as ksqlDB's function error does.
//   - An authority whose host is not a DNS name, IPv4 or bracketed IPv6
//     address (my_host) is, as in Java, registry-based: no host, no port.
//   - URL_EXTRACT_PARAMETER splits the decoded query on '&' and each pair
//     on its first '='; a name with no '=' has the value ''.

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/types"
)

// javaURI holds the components of a URL as java.net.URI reports them;
// a nil pointer is a component the URL does not have.
type javaURI struct {
	scheme, host, path, query, fragment *string
	port                                int // -1 when absent
}

func strPtr(s string) *string { return &s }

// parseJavaURI parses s as java.net.URI would; ok is false where Java
// throws URISyntaxException.
func parseJavaURI(s string) (javaURI, bool) {
	out := javaURI{port: -1}
	if !javaURIChars(s) {
		return out, false
	}
	u, err := url.Parse(s)
	if err != nil {
		return out, false
	}
	rest := s
	if u.Scheme != "" {
		// Go lower-cases the scheme; Java keeps it as written.
		out.scheme = strPtr(s[:len(u.Scheme)])
		rest = s[len(u.Scheme)+1:]
		if rest == "" || rest[0] == '#' {
			return out, false // Java: expected scheme-specific part
		}
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		out.fragment = strPtr(javaDecoded(u.Fragment))
	}
	if out.scheme != nil && !strings.HasPrefix(rest, "/") {
		return out, true // opaque (mailto:x): only a scheme and a fragment
	}
	if strings.HasPrefix(rest, "//") {
		if rest == "//" {
			return out, false // Java: expected authority
		}
		if host, port, ok := javaServer(u.Host); ok {
			if host != "" {
				out.host = strPtr(host)
			}
			out.port = port
		}
	}
	out.path = strPtr(javaDecoded(u.Path))
	if u.RawQuery != "" || u.ForceQuery {
		q, err := url.PathUnescape(u.RawQuery)
		if err != nil {
			return javaURI{port: -1}, false
		}
		out.query = strPtr(javaDecoded(q))
	}
	return out, true
}

// javaURIChars reports whether every character of s may appear in a
// java.net.URI: ASCII letters, digits, the marks and reserved
// characters, '%' only before two hex digits, one '#', '[' and ']' only
// in the authority, and non-ASCII characters other than controls and
// spaces.
func javaURIChars(s string) bool {
	authEnd := -1 // the authority, when there is one, ends before authEnd
	if i := strings.Index(s, "//"); i >= 0 && !strings.ContainsAny(s[:i], "/?#") &&
		(i == 0 || strings.HasSuffix(s[:i], ":")) {
		authEnd = i + 2 + strings.IndexAny(s[i+2:]+"/", "/?#")
	}
	hashes := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
				return false
			}
			i += n
			continue
		}
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.!~*'();/?:@&=+$,", c) >= 0:
		case c == '#':
			if hashes++; hashes > 1 {
				return false
			}
		case c == '[' || c == ']':
			if i >= authEnd {
				return false
			}
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
		default:
			return false
		}
		i++
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// javaServer splits a server-based authority host[:port] (user info
// already removed by net/url) as Java does; ok is false for an
// authority Java takes as registry-based, which has no host or port.
func javaServer(hostport string) (host string, port int, ok bool) {
	port = -1
	host = hostport
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", -1, false
		}
		host, hostport = hostport[:end+1], hostport[end+1:]
	} else if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		host, hostport = hostport[:i], hostport[i:]
	} else {
		hostport = ""
	}
	if hostport != "" {
		if hostport[0] != ':' {
			return "", -1, false
		}
		if p := hostport[1:]; p != "" {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil || n < 0 {
				return "", -1, false
			}
			port = int(n)
		}
	}
	if host == "" || strings.HasPrefix(host, "[") || javaHostname(host) {
		return host, port, true
	}
	return "", -1, false
}

// javaHostname reports whether h is a DNS name as RFC 2396 defines it
// (labels of letters, digits and inner '-', the last starting with a
// letter unless it is the only one, a trailing '.' allowed), or an IPv4
// address, which the same grammar admits.
func javaHostname(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return false
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	if len(labels) > 1 && !('a' <= last[0] && last[0] <= 'z' || 'A' <= last[0] && last[0] <= 'Z') {
		return isIPv4(h)
	}
	return true
}

func isIPv4(h string) bool {
	parts := strings.Split(h, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n > 255 || len(p) > 3 {
			return false
		}
	}
	return true
}

// javaDecoded replaces each byte that is not part of valid UTF-8 with
// U+FFFD, as Java does when it decodes %-escaped bytes to a String.
func javaDecoded(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

// urlEncodeParam encodes s as java.net.URLEncoder does with UTF-8:
// letters, digits and . - * _ stay, a space becomes '+', every other
// byte becomes %XX.
func urlEncodeParam(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// urlDecodeParam decodes s as java.net.URLDecoder does with UTF-8: '+'
// is a space, %XX a byte; an incomplete or non-hex escape is an error.
func urlDecodeParam(s string) (string, error) {
	d, err := url.QueryUnescape(s)
	if err != nil {
		return "", err
	}
	return javaDecoded(d), nil
}

// urlExtract registers a one-argument URL function returning the
// component get picks from the parsed URL.
func urlExtract(name string, get func(javaURI) *string) *scalar {
	return &scalar{name: name, bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck(name, args, 1, 1, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			s, ok := a[0].(string)
			if !ok {
				return nil
			}
			u, ok := parseJavaURI(s)
			if !ok {
				return nil
			}
			if p := get(u); p != nil {
				return *p
			}
			return nil
		}, nil
	}}
}

// urlExtractParameter returns the value of the first parameter called
// name in the decoded query: empty for a bare name, nil when absent.
func urlExtractParameter(query *string, name string) any {
	if query == nil {
		return nil
	}
	for _, pair := range strings.Split(*query, "&") {
		k, v, hasValue := strings.Cut(pair, "=")
		if k != name {
			continue
		}
		if !hasValue {
			return ""
		}
		return v
	}
	return nil
}

func init() {
	register(urlExtract("URL_EXTRACT_PROTOCOL", func(u javaURI) *string { return u.scheme }))
	register(urlExtract("URL_EXTRACT_HOST", func(u javaURI) *string { return u.host }))
	register(urlExtract("URL_EXTRACT_PATH", func(u javaURI) *string { return u.path }))
	register(urlExtract("URL_EXTRACT_QUERY", func(u javaURI) *string { return u.query }))
	register(urlExtract("URL_EXTRACT_FRAGMENT", func(u javaURI) *string { return u.fragment }))
	register(&scalar{name: "URL_EXTRACT_PORT", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("URL_EXTRACT_PORT", args, 1, 1, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.IntegerType, func(a []any) any {
			s, ok := a[0].(string)
			if !ok {
				return nil
			}
			u, ok := parseJavaURI(s)
			if !ok || u.port < 0 {
				return nil
			}
			return int32(u.port)
		}, nil
	}})
	register(&scalar{name: "URL_EXTRACT_PARAMETER", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("URL_EXTRACT_PARAMETER", args, 2, 2, types.String, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			s, ok := a[0].(string)
			name, ok2 := a[1].(string)
			if !ok || !ok2 {
				return nil
			}
			u, ok := parseJavaURI(s)
			if !ok {
				return nil
			}
			return urlExtractParameter(u.query, name)
		}, nil
	}})
	register(strFuncNullable("URL_ENCODE_PARAM", func(s string) (string, bool) { return urlEncodeParam(s), true }))
	register(strFuncNullable("URL_DECODE_PARAM", func(s string) (string, bool) {
		d, err := urlDecodeParam(s)
		return d, err == nil
	}))
}

// strFuncNullable is strFunc for a function that can fail at run time:
// ok false gives NULL.
func strFuncNullable(name string, f func(string) (string, bool)) *scalar {
	return &scalar{name: name, bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck(name, args, 1, 1, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			s, ok := a[0].(string)
			if !ok {
				return nil
			}
			if r, ok := f(s); ok {
				return r
			}
			return nil
		}, nil
	}}
}
