package expr_test

// urlFunctionCases follow java.net.URI, URLEncoder and URLDecoder, which
// ksqlDB's URL functions are built on.
var urlFunctionCases = []evalCase{
	{"URL_EXTRACT_PROTOCOL('http://a.com/x')", tString, "http"},
	{"URL_EXTRACT_PROTOCOL('HTTP://a.com/x')", tString, "HTTP"}, // case kept
	{"URL_EXTRACT_PROTOCOL('www.a.com')", tString, nil},
	{"URL_EXTRACT_PROTOCOL('mailto:me@a.com')", tString, "mailto"},
	{"URL_EXTRACT_PROTOCOL(ns)", tString, nil},

	{"URL_EXTRACT_HOST('http://user@a.com:8080/x')", tString, "a.com"},
	{"URL_EXTRACT_HOST('http://[::1]:8080/x')", tString, "[::1]"},
	{"URL_EXTRACT_HOST('http://1.2.3.4/')", tString, "1.2.3.4"},
	{"URL_EXTRACT_HOST('http://a.com./')", tString, "a.com."},
	{"URL_EXTRACT_HOST('http://my_host/')", tString, nil}, // registry-based authority
	{"URL_EXTRACT_HOST('http://a.123/')", tString, nil},   // top label must start with a letter
	{"URL_EXTRACT_HOST('file:///etc/hosts')", tString, nil},
	{"URL_EXTRACT_HOST('mailto:me@a.com')", tString, nil},
	{"URL_EXTRACT_HOST('/just/a/path')", tString, nil},

	{"URL_EXTRACT_PORT('http://a.com:8080/x')", tInt, int32(8080)},
	{"URL_EXTRACT_PORT('http://a.com/x')", tInt, nil},
	{"URL_EXTRACT_PORT('http://a.com:/x')", tInt, nil},
	{"URL_EXTRACT_PORT('http://my_host:80/x')", tInt, nil},

	{"URL_EXTRACT_PATH('http://a.com')", tString, ""},
	{"URL_EXTRACT_PATH('http://a.com?q')", tString, ""},
	{"URL_EXTRACT_PATH('http://a.com/p%20q/r')", tString, "/p q/r"},
	{"URL_EXTRACT_PATH('www.a.com')", tString, "www.a.com"},
	{"URL_EXTRACT_PATH('')", tString, ""},
	{"URL_EXTRACT_PATH('mailto:me@a.com')", tString, nil},
	{"URL_EXTRACT_PATH('http://my_host/x')", tString, "/x"},

	{"URL_EXTRACT_QUERY('http://a.com/p?x=%41&y')", tString, "x=A&y"},
	{"URL_EXTRACT_QUERY('http://a.com/p?a+b')", tString, "a+b"}, // '+' is not a space in a URI
	{"URL_EXTRACT_QUERY('http://a.com/p?')", tString, ""},
	{"URL_EXTRACT_QUERY('http://a.com/p')", tString, nil},
	{"URL_EXTRACT_QUERY('http://a.com/p#f?x')", tString, nil},
	{"URL_EXTRACT_QUERY('mailto:me@a.com?subject=hi')", tString, nil}, // opaque

	{"URL_EXTRACT_FRAGMENT('http://a.com/?q#f%20g')", tString, "f g"},
	{"URL_EXTRACT_FRAGMENT('http://a.com/#')", tString, ""},
	{"URL_EXTRACT_FRAGMENT('http://a.com/')", tString, nil},
	{"URL_EXTRACT_FRAGMENT('mailto:me@a.com#top')", tString, "top"},

	// URLs java.net.URI rejects give NULL from every function.
	{"URL_EXTRACT_PATH('http://a.com/a b')", tString, nil},
	{"URL_EXTRACT_PATH('http://a.com/a|b')", tString, nil},
	{"URL_EXTRACT_PATH('http://a.com/%zz')", tString, nil},
	{"URL_EXTRACT_FRAGMENT('http://a.com/#a#b')", tString, nil},
	{"URL_EXTRACT_PATH('http://a.com/[x]')", tString, nil},
	{"URL_EXTRACT_PROTOCOL('http:')", tString, nil},
	{"URL_EXTRACT_PROTOCOL('http://')", tString, nil},
	{"URL_EXTRACT_PROTOCOL('1http://a.com')", tString, nil},
	{"URL_EXTRACT_PORT('http://a.com /')", tInt, nil},

	{"URL_EXTRACT_PARAMETER('http://a.com/?one=a&two=b&three', 'two')", tString, "b"},
	{"URL_EXTRACT_PARAMETER('http://a.com/?one=a&two=b&three', 'three')", tString, ""},
	{"URL_EXTRACT_PARAMETER('http://a.com/?one=a&two=b&three', 'four')", tString, nil},
	{"URL_EXTRACT_PARAMETER('http://a.com/?k=1&k=2', 'k')", tString, "1"},
	{"URL_EXTRACT_PARAMETER('http://a.com/?k=a=b', 'k')", tString, "a=b"},
	{"URL_EXTRACT_PARAMETER('http://a.com/?k=x%20y', 'k')", tString, "x y"},
	{"URL_EXTRACT_PARAMETER('http://a.com/?k=v%26w=z', 'w')", tString, "z"}, // split after decoding
	{"URL_EXTRACT_PARAMETER('http://a.com/', 'k')", tString, nil},
	{"URL_EXTRACT_PARAMETER('http://a.com/?k=1', ns)", tString, nil},
	{"URL_EXTRACT_PARAMETER(ns, 'k')", tString, nil},

	{"URL_ENCODE_PARAM('?foo $bar')", tString, "%3Ffoo+%24bar"},
	{"URL_ENCODE_PARAM('a*b.c-d_e~f')", tString, "a*b.c-d_e%7Ef"},
	{"URL_ENCODE_PARAM('é/')", tString, "%C3%A9%2F"},
	{"URL_ENCODE_PARAM('')", tString, ""},
	{"URL_ENCODE_PARAM(ns)", tString, nil},

	{"URL_DECODE_PARAM('%3Ffoo+%24bar')", tString, "?foo $bar"},
	{"URL_DECODE_PARAM('%C3%A9%c3%a9')", tString, "éé"},
	{"URL_DECODE_PARAM('%FF')", tString, "\uFFFD"},
	{"URL_DECODE_PARAM('%zz')", tString, nil},
	{"URL_DECODE_PARAM('abc%4')", tString, nil},
	{"URL_DECODE_PARAM(ns)", tString, nil},
}

func init() { functionCaseSets = append(functionCaseSets, urlFunctionCases) }
