package expr

// ksqlDB's string functions: INSTR, SPLIT, SPLIT_TO_MAP, LPAD, RPAD,
// REPLACE, the REGEXP_ family, the MASK family, ENCODE, CHR, UUID, ELT,
// FIELD, TO_BYTES and FROM_BYTES. Each follows ksqlDB's UDF of the same
// name (io.confluent.ksql.function.udf.string), NULL handling included.
//
// Differences from ksqlDB, all deliberate:
//   - Positions and lengths count Unicode code points, as Sluice's LEN and
//     SUBSTRING do, where Java counts UTF-16 units; the two differ only for
//     characters outside the Basic Multilingual Plane.
//   - Regular expressions are Go's RE2, not java.util.regex: no
//     backreferences or look-around. A literal pattern RE2 rejects is a
//     compile error; a pattern from a column that does not compile gives
//     NULL, as any runtime error does.
//   - A runtime error (bad encoding name, bad hex, a mask that is not one
//     character, a negative mask length) gives NULL, as in ksqlDB, which
//     logs the exception and emits NULL; even with literal arguments the
//     statement is accepted, as ksqlDB accepts it. Literal regular
//     expressions are the exception: an invalid one is a compile error.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/types"
)

// strIntKind marks an argument that takes INT or BIGINT in strCheck.
const strIntKind = types.Integer

// strCheck checks the argument count and each argument's kind against
// want (String, Bytes, or strIntKind for INT/BIGINT); a NULL literal
// (Unknown) fits anything. Extra arguments are checked against the last
// kind of want, for variadic functions.
func strCheck(name string, args []types.Type, lo, hi int, want ...types.Kind) error {
	if err := argCount(name, args, lo, hi); err != nil {
		return err
	}
	for i, t := range args {
		k := want[min(i, len(want)-1)]
		ok := t.Kind == types.Unknown || t.Kind == k ||
			(k == strIntKind && t.Kind == types.BigInt)
		if !ok {
			return fmt.Errorf("%w: function %s does not accept %s as argument %d", errArgs, name, t, i+1)
		}
	}
	return nil
}

// strInt reads an INT or BIGINT argument.
func strInt(v any) (int, bool) {
	n, ok := types.AsInt64(v)
	return int(n), ok
}

// strBytesOrString returns the kind (String or Bytes) of the first
// argument, Unknown counting as String.
func strBytesOrString(t types.Type) types.Kind {
	if t.Kind == types.Bytes {
		return types.Bytes
	}
	return types.String
}

func init() {
	register(&scalar{name: "INSTR", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("INSTR", args, 2, 4, types.String, types.String, strIntKind, strIntKind); err != nil {
			return types.Type{}, nil, err
		}
		return types.IntegerType, func(a []any) any {
			pos, occ := 1, 1
			if len(a) > 2 {
				p, ok := strInt(a[2])
				if !ok {
					return nil
				}
				pos = p
			}
			if len(a) > 3 {
				o, ok := strInt(a[3])
				if !ok {
					return nil
				}
				occ = o
			}
			s, ok := a[0].(string)
			sub, ok2 := a[1].(string)
			if !ok || !ok2 {
				return int32(0) // ksqlDB: NULL string or substring gives 0
			}
			return int32(strInstr([]rune(s), []rune(sub), pos, occ))
		}, nil
	}})
	register(&scalar{name: "SPLIT", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("SPLIT", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		k := strBytesOrString(args[0])
		if args[0].Kind == types.Unknown {
			k = strBytesOrString(args[1])
		}
		if err := strCheck("SPLIT", args, 2, 2, k, k); err != nil {
			return types.Type{}, nil, err
		}
		if k == types.Bytes {
			return types.ArrayOf(types.BytesType), func(a []any) any {
				b, ok := a[0].([]byte)
				d, ok2 := a[1].([]byte)
				if !ok || !ok2 {
					return nil
				}
				return strSplitBytes(b, d)
			}, nil
		}
		return types.ArrayOf(types.StringType), func(a []any) any {
			s, ok := a[0].(string)
			d, ok2 := a[1].(string)
			if !ok || !ok2 {
				return nil
			}
			var parts []string
			if d == "" {
				// Java's split on an empty pattern: one element per
				// character, and [""] for the empty string.
				parts = strings.Split(s, "")
				if len(parts) == 0 {
					parts = []string{""}
				}
			} else {
				parts = strings.Split(s, d)
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out
		}, nil
	}})
	register(&scalar{name: "SPLIT_TO_MAP", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("SPLIT_TO_MAP", args, 3, 3, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.MapOf(types.StringType, types.StringType), func(a []any) any {
			s, ok := a[0].(string)
			ed, ok2 := a[1].(string)
			kd, ok3 := a[2].(string)
			if !ok || !ok2 || !ok3 || ed == "" || kd == "" || ed == kd {
				return nil
			}
			out := map[string]any{}
			for _, e := range strings.Split(s, ed) {
				if e == "" || !strings.Contains(e, kd) {
					continue
				}
				kv := strings.SplitN(e, kd, 3)
				out[kv[0]] = kv[1] // later entries win; text after a second delimiter is dropped
			}
			return out
		}, nil
	}})
	register(&scalar{name: "LPAD", bind: strBindPad("LPAD", true)})
	register(&scalar{name: "RPAD", bind: strBindPad("RPAD", false)})
	register(&scalar{name: "REPLACE", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("REPLACE", args, 3, 3, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			s, ok := a[0].(string)
			old, ok2 := a[1].(string)
			nw, ok3 := a[2].(string)
			if !ok || !ok2 || !ok3 {
				return nil
			}
			return strings.ReplaceAll(s, old, nw)
		}, nil
	}})
	register(&scalar{name: "CHR", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("CHR", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		switch args[0].Kind {
		case types.Integer, types.BigInt, types.Unknown:
			return types.StringType, func(a []any) any {
				n, ok := types.AsInt64(a[0])
				if !ok || n < 0 || n > unicode.MaxRune {
					return nil
				}
				return string(rune(n))
			}, nil
		case types.String:
			return types.StringType, func(a []any) any {
				s, ok := a[0].(string)
				if !ok || len(s) < 6 || !strings.HasPrefix(s, `\u`) {
					return nil
				}
				return strUnescapeJava(s)
			}, nil
		}
		return types.Type{}, nil, fmt.Errorf("%w: function CHR does not accept %s", errArgs, args[0])
	}})
	register(&scalar{name: "UUID", volatile: true, bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("UUID", args, 0, 1, types.Bytes); err != nil {
			return types.Type{}, nil, err
		}
		if len(args) == 0 {
			return types.StringType, func([]any) any {
				var b [16]byte
				if _, err := rand.Read(b[:]); err != nil {
					return nil
				}
				b[6] = b[6]&0x0f | 0x40 // version 4
				b[8] = b[8]&0x3f | 0x80 // IETF variant
				return strFormatUUID(b[:])
			}, nil
		}
		return types.StringType, func(a []any) any {
			b, ok := a[0].([]byte)
			if !ok || len(b) != 16 {
				return nil
			}
			return strFormatUUID(b)
		}, nil
	}})
	register(&scalar{name: "ELT", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("ELT", args, 1, -1, strIntKind, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			n, ok := strInt(a[0])
			if !ok || n < 1 || n >= len(a) {
				return nil
			}
			return a[n]
		}, nil
	}})
	register(&scalar{name: "FIELD", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("FIELD", args, 1, -1, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.IntegerType, func(a []any) any {
			s, ok := a[0].(string)
			if !ok {
				return int32(0) // NULL equals nothing
			}
			for i, v := range a[1:] {
				if v == s {
					return int32(i + 1)
				}
			}
			return int32(0)
		}, nil
	}})
	register(&scalar{name: "TO_BYTES", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("TO_BYTES", args, 2, 2, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.BytesType, func(a []any) any {
			s, ok := a[0].(string)
			enc, ok2 := a[1].(string)
			if !ok || !ok2 {
				return nil
			}
			b, err := strDecode(s, enc)
			if err != nil {
				return nil
			}
			return b
		}, nil
	}})
	register(&scalar{name: "FROM_BYTES", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("FROM_BYTES", args, 2, 2, types.Bytes, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			b, ok := a[0].([]byte)
			enc, ok2 := a[1].(string)
			if !ok || !ok2 {
				return nil
			}
			s, err := strEncode(b, enc)
			if err != nil {
				return nil
			}
			return s
		}, nil
	}})
	register(&scalar{name: "ENCODE", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := strCheck("ENCODE", args, 3, 3, types.String); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			s, ok := a[0].(string)
			in, ok2 := a[1].(string)
			out, ok3 := a[2].(string)
			if !ok || !ok2 || !ok3 {
				return nil
			}
			r, err := strEncodeString(s, in, out)
			if err != nil {
				return nil
			}
			return r
		}, nil
	}})
}

// strInstr is ksqlDB's INSTR on code points: the 1-based position of the
// occurrence-th match of sub searching from pos (from the end when pos is
// negative), 0 when there is none.
func strInstr(s, sub []rune, pos, occ int) int {
	if pos > len(s) || -pos > len(s) || pos == 0 || occ <= 0 {
		return 0
	}
	if pos < 0 {
		rs, rsub := strReverse(s), strReverse(sub)
		i := strOrdinalIndex(rs[-pos-1:], rsub, occ)
		if i < 0 {
			return 0
		}
		return len(s) + pos - i - len(sub) + 2
	}
	i := strOrdinalIndex(s[pos-1:], sub, occ)
	if i < 0 {
		return 0
	}
	return i + pos
}

// strOrdinalIndex finds the n-th (overlapping) occurrence of sub in s.
func strOrdinalIndex(s, sub []rune, n int) int {
	if len(sub) == 0 {
		return 0
	}
	idx := -1
	for found := 0; found < n; found++ {
		next := -1
		for i := idx + 1; i+len(sub) <= len(s); i++ {
			if string(s[i:i+len(sub)]) == string(sub) {
				next = i
				break
			}
		}
		if next < 0 {
			return -1
		}
		idx = next
	}
	return idx
}

func strReverse(r []rune) []rune {
	out := make([]rune, len(r))
	for i, c := range r {
		out[len(r)-1-i] = c
	}
	return out
}

func strSplitBytes(b, d []byte) []any {
	var parts [][]byte
	switch {
	case len(b) == 0:
		parts = [][]byte{{}}
	case len(d) == 0:
		for i := range b {
			parts = append(parts, []byte{b[i]})
		}
	default:
		parts = bytes.Split(b, d)
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = bytes.Clone(p)
	}
	return out
}

// strBindPad binds LPAD or RPAD(input, length, padding) for STRING or
// BYTES: NULL when any argument is NULL, the padding is empty or the
// length negative; an input longer than the length is truncated (on the
// right, for both).
func strBindPad(name string, left bool) func([]types.Type) (types.Type, func([]any) any, error) {
	return func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount(name, args, 3, 3); err != nil {
			return types.Type{}, nil, err
		}
		k := strBytesOrString(args[0])
		if args[0].Kind == types.Unknown {
			k = strBytesOrString(args[2])
		}
		if err := strCheck(name, args, 3, 3, k, strIntKind, k); err != nil {
			return types.Type{}, nil, err
		}
		pad := func(in, p []rune, n int) []rune {
			if len(in) >= n {
				return in[:n]
			}
			fill := make([]rune, n-len(in))
			for i := range fill {
				fill[i] = p[i%len(p)]
			}
			if left {
				return append(fill, in...)
			}
			return append(append([]rune(nil), in...), fill...)
		}
		t := types.StringType
		if k == types.Bytes {
			t = types.BytesType
		}
		return t, func(a []any) any {
			n, ok := strInt(a[1])
			if !ok || n < 0 || a[0] == nil || a[2] == nil {
				return nil
			}
			if k == types.Bytes {
				in, p := a[0].([]byte), a[2].([]byte)
				if len(p) == 0 {
					return nil
				}
				r := pad(strBytesToRunes(in), strBytesToRunes(p), n)
				out := make([]byte, len(r))
				for i, c := range r {
					out[i] = byte(c)
				}
				return out
			}
			in, p := a[0].(string), a[2].(string)
			if p == "" {
				return nil
			}
			return string(pad([]rune(in), []rune(p), n))
		}, nil
	}
}

func strBytesToRunes(b []byte) []rune {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return r
}

func strFormatUUID(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// strUnescapeJava undoes Java string escapes (\uXXXX, \n, \t, \\, …) as
// Apache Commons' StringEscapeUtils.unescapeJava, which CHR(STRING) uses;
// it reports nil for a malformed \u escape.
func strUnescapeJava(s string) any {
	var units []uint16
	var b strings.Builder
	flush := func() {
		if len(units) > 0 {
			b.WriteString(strUTF16(units))
			units = units[:0]
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 >= len(s) {
			flush()
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		c := s[i+1]
		if c == 'u' {
			j := i + 1
			for j < len(s) && s[j] == 'u' {
				j++
			}
			if j+4 > len(s) {
				return nil
			}
			n, err := strconv.ParseUint(s[j:j+4], 16, 16)
			if err != nil {
				return nil
			}
			units = append(units, uint16(n))
			i = j + 4
			continue
		}
		flush()
		switch c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		default:
			b.WriteByte(c)
		}
		i += 2
	}
	flush()
	return b.String()
}

// strUTF16 decodes UTF-16 code units, pairing surrogates.
func strUTF16(u []uint16) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		r := rune(u[i])
		if r >= 0xD800 && r < 0xDC00 && i+1 < len(u) && u[i+1] >= 0xDC00 && u[i+1] < 0xE000 {
			r = (r-0xD800)<<10 + (rune(u[i+1]) - 0xDC00) + 0x10000
			i++
		}
		b.WriteRune(r)
	}
	return b.String()
}

var strEncodings = []string{"hex", "utf8", "ascii", "base64"}

func strEncodingName(enc string) (string, error) {
	for _, e := range strEncodings {
		if strings.EqualFold(enc, e) {
			return e, nil
		}
	}
	return "", fmt.Errorf("unknown encoding type '%s'; supported formats are 'hex', 'utf8', 'ascii', and 'base64'", enc)
}

// strDecode is TO_BYTES: text in the encoding to bytes. Hex takes either
// case and needs an even number of digits; base64 is strict but for
// optional padding, as Java's basic decoder.
func strDecode(s, enc string) ([]byte, error) {
	e, err := strEncodingName(enc)
	if err != nil {
		return nil, err
	}
	switch e {
	case "hex":
		return hex.DecodeString(s)
	case "base64":
		if strings.Contains(s, "=") {
			return base64.StdEncoding.DecodeString(s)
		}
		return base64.RawStdEncoding.DecodeString(s) // padding is optional, as in Java
	case "ascii":
		return strToASCII(s), nil
	}
	return []byte(s), nil
}

// strEncode is FROM_BYTES: bytes to text in the encoding; hex is
// upper-case, as Java's DatatypeConverter prints it.
func strEncode(b []byte, enc string) (string, error) {
	e, err := strEncodingName(enc)
	if err != nil {
		return "", err
	}
	switch e {
	case "hex":
		return strings.ToUpper(hex.EncodeToString(b)), nil
	case "base64":
		return base64.StdEncoding.EncodeToString(b), nil
	case "ascii":
		return strFromASCII(b), nil
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// strToASCII encodes as Java's US_ASCII charset: non-ASCII characters
// become '?'.
func strToASCII(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 127 {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}

// strFromASCII decodes as Java's US_ASCII charset: bytes above 127
// become U+FFFD.
func strFromASCII(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c > 127 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// strEncodeString is ENCODE(s, in, out): text in one encoding re-encoded
// in another. Hex input may carry a 0x prefix or X'…' quotes; hex output
// is lower-case; base64 input is read leniently (characters outside the
// alphabet are skipped), as Apache Commons' decoder does.
func strEncodeString(s, in, out string) (string, error) {
	in, out = strings.ToLower(in), strings.ToLower(out)
	known := func(e string) bool { return e == "hex" || e == "utf8" || e == "ascii" || e == "base64" }
	if !known(in) || !known(out) || in == out {
		return "", fmt.Errorf("supported input and output encodings are: hex, utf8, ascii and base64")
	}
	var b []byte
	switch in {
	case "hex":
		switch {
		case strings.HasPrefix(s, "0x"):
			s = s[2:]
			if len(s)%2 != 0 {
				s = "0" + s
			}
		case len(s) >= 3 && (s[0] == 'x' || s[0] == 'X') && s[1] == '\'' && s[len(s)-1] == '\'':
			s = s[2 : len(s)-1]
		}
		var err error
		if b, err = hex.DecodeString(s); err != nil {
			return "", err
		}
	case "base64":
		b = strLenientBase64(s)
	case "ascii":
		b = strToASCII(s)
	default:
		b = []byte(s)
	}
	switch out {
	case "hex":
		return hex.EncodeToString(b), nil
	case "base64":
		return base64.StdEncoding.EncodeToString(b), nil
	case "ascii":
		return strFromASCII(b), nil
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

func strLenientBase64(s string) []byte {
	var clean []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			clean = append(clean, c)
		case c == '-':
			clean = append(clean, '+')
		case c == '_':
			clean = append(clean, '/')
		case c == '=':
			i = len(s) // padding ends the data
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1] // a lone trailing character carries no whole byte
	}
	b, err := base64.RawStdEncoding.DecodeString(string(clean))
	if err != nil {
		return nil
	}
	return b
}

// strRegexCache keeps compiled patterns that come from columns.
var strRegexCache struct {
	sync.Mutex
	m map[string]*strRegex
}

func strRegexp(p string) (*strRegex, error) {
	strRegexCache.Lock()
	defer strRegexCache.Unlock()
	if re, ok := strRegexCache.m[p]; ok {
		return re, nil
	}
	re, err := compileStrRegex(p)
	if err != nil {
		return nil, err
	}
	if strRegexCache.m == nil || len(strRegexCache.m) >= 1024 {
		strRegexCache.m = map[string]*strRegex{}
	}
	strRegexCache.m[p] = re
	return re, nil
}

// strPattern prepares the regular expression argument at position i: a
// literal is compiled now (an invalid one is a compile error); otherwise
// each call compiles through the cache. The returned function gives nil
// for a NULL or invalid pattern.
func strPattern(name string, consts []any, i int) (func(a []any) *strRegex, error) {
	if p, ok := consts[i].(string); ok {
		re, err := compileStrRegex(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: invalid regular expression pattern %q: %v", ErrType, name, p, err)
		}
		return func([]any) *strRegex { return re }, nil
	}
	return func(a []any) *strRegex {
		p, ok := a[i].(string)
		if !ok {
			return nil
		}
		re, err := strRegexp(p)
		if err != nil {
			return nil
		}
		return re
	}, nil
}

func init() {
	register(&scalar{name: "REGEXP_EXTRACT", bindConsts: func(args []types.Type, consts []any) (types.Type, func([]any) any, error) {
		if err := strCheck("REGEXP_EXTRACT", args, 2, 3, types.String, types.String, strIntKind); err != nil {
			return types.Type{}, nil, err
		}
		pat, err := strPattern("REGEXP_EXTRACT", consts, 0)
		if err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			re, s, g, ok := strRegexArgs(pat, a)
			if !ok || re.cannotMatch(s) {
				return nil
			}
			m := re.FindStringSubmatchIndex(s)
			if m == nil || m[2*g] < 0 {
				return nil
			}
			return s[m[2*g]:m[2*g+1]]
		}, nil
	}})
	register(&scalar{name: "REGEXP_EXTRACT_ALL", bindConsts: func(args []types.Type, consts []any) (types.Type, func([]any) any, error) {
		if err := strCheck("REGEXP_EXTRACT_ALL", args, 2, 3, types.String, types.String, strIntKind); err != nil {
			return types.Type{}, nil, err
		}
		pat, err := strPattern("REGEXP_EXTRACT_ALL", consts, 0)
		if err != nil {
			return types.Type{}, nil, err
		}
		return types.ArrayOf(types.StringType), func(a []any) any {
			re, s, g, ok := strRegexArgs(pat, a)
			if !ok {
				return nil
			}
			out := []any{}
			if re.cannotMatch(s) {
				return out
			}
			for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
				if m[2*g] < 0 {
					out = append(out, nil)
				} else {
					out = append(out, s[m[2*g]:m[2*g+1]])
				}
			}
			return out
		}, nil
	}})
	register(&scalar{name: "REGEXP_REPLACE", bindConsts: func(args []types.Type, consts []any) (types.Type, func([]any) any, error) {
		if err := strCheck("REGEXP_REPLACE", args, 3, 3, types.String); err != nil {
			return types.Type{}, nil, err
		}
		pat, err := strPattern("REGEXP_REPLACE", consts, 1)
		if err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			s, ok := a[0].(string)
			repl, ok2 := a[2].(string)
			re := pat(a)
			if !ok || !ok2 || re == nil {
				return nil
			}
			if re.cannotMatch(s) {
				return s // nothing to replace
			}
			r, ok := strReplaceAll(re.Regexp, s, repl)
			if !ok {
				return nil
			}
			return r
		}, nil
	}})
	register(&scalar{name: "REGEXP_SPLIT_TO_ARRAY", bindConsts: func(args []types.Type, consts []any) (types.Type, func([]any) any, error) {
		if err := strCheck("REGEXP_SPLIT_TO_ARRAY", args, 2, 2, types.String); err != nil {
			return types.Type{}, nil, err
		}
		pat, err := strPattern("REGEXP_SPLIT_TO_ARRAY", consts, 1)
		if err != nil {
			return types.Type{}, nil, err
		}
		return types.ArrayOf(types.StringType), func(a []any) any {
			s, ok := a[0].(string)
			re := pat(a)
			if !ok || re == nil {
				return nil
			}
			return strRegexSplit(re.Regexp, s)
		}, nil
	}})
	for _, m := range []struct {
		name string
		kind int // 0 MASK, 1 LEFT, 2 RIGHT, 3 KEEP_LEFT, 4 KEEP_RIGHT
	}{{"MASK", 0}, {"MASK_LEFT", 1}, {"MASK_RIGHT", 2}, {"MASK_KEEP_LEFT", 3}, {"MASK_KEEP_RIGHT", 4}} {
		register(&scalar{name: m.name, bind: strBindMask(m.name, m.kind)})
	}
}

// strRegexArgs reads REGEXP_EXTRACT(_ALL)'s (pattern, input[, group]);
// ok is false for a NULL argument, an invalid pattern or a group the
// pattern does not have.
func strRegexArgs(pat func([]any) *strRegex, a []any) (*strRegex, string, int, bool) {
	re := pat(a)
	s, ok := a[1].(string)
	g := 0
	if len(a) > 2 {
		n, ok2 := strInt(a[2])
		if !ok2 {
			return nil, "", 0, false
		}
		g = n
	}
	if re == nil || !ok || g < 0 || g > re.NumSubexp() {
		return nil, "", 0, false
	}
	return re, s, g, true
}

// strReplaceAll replaces every match with repl read as a Java
// replacement string: $n and ${name} refer to groups, a backslash quotes
// the next character. ok is false for a malformed replacement (Java
// throws).
func strReplaceAll(re *regexp.Regexp, s, repl string) (string, bool) {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		last = m[1]
		for i := 0; i < len(repl); i++ {
			c := repl[i]
			switch c {
			case '\\':
				i++
				if i >= len(repl) {
					return "", false
				}
				b.WriteByte(repl[i])
			case '$':
				i++
				if i >= len(repl) {
					return "", false
				}
				g := -1
				if repl[i] == '{' {
					end := strings.IndexByte(repl[i:], '}')
					if end < 0 {
						return "", false
					}
					g = re.SubexpIndex(repl[i+1 : i+end])
					if g < 0 {
						return "", false
					}
					i += end
				} else {
					if repl[i] < '0' || repl[i] > '9' {
						return "", false
					}
					// Java takes further digits while the number stays a
					// group the pattern has.
					g = int(repl[i] - '0')
					if g > re.NumSubexp() {
						return "", false
					}
					for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
						n := g*10 + int(repl[i+1]-'0')
						if n > re.NumSubexp() {
							break
						}
						g = n
						i++
					}
				}
				if m[2*g] >= 0 {
					b.WriteString(s[m[2*g]:m[2*g+1]])
				}
			default:
				b.WriteByte(c)
			}
		}
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// strRegexSplit is REGEXP_SPLIT_TO_ARRAY: Guava's Splitter (every piece
// kept) for patterns that cannot match the empty string, Java's
// String.split (no leading empty piece from a zero-width match, trailing
// empty pieces dropped) for those that can.
func strRegexSplit(re *regexp.Regexp, s string) []any {
	var parts []string
	if !re.MatchString("") {
		parts = re.Split(s, -1)
	} else {
		last := 0
		for _, m := range re.FindAllStringIndex(s, -1) {
			if m[1] == 0 {
				continue // a zero-width match at the start gives no piece
			}
			if m[0] == m[1] && m[0] == len(s) {
				break
			}
			parts = append(parts, s[last:m[0]])
			last = m[1]
		}
		parts = append(parts, s[last:])
		if s != "" {
			for len(parts) > 1 && parts[len(parts)-1] == "" {
				parts = parts[:len(parts)-1]
			}
		}
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

// strMaskNone marks a mask argument given as NULL: that class of
// characters is left as it is.
const strMaskNone = -1

// strBindMask binds MASK(input[, upper, lower, digit, other]) and the
// positional MASK_*(input, n[, upper, lower, digit, other]).
func strBindMask(name string, kind int) func([]types.Type) (types.Type, func([]any) any, error) {
	return func(args []types.Type) (types.Type, func([]any) any, error) {
		fixed := 2 // input and n
		if kind == 0 {
			fixed = 1
		}
		if len(args) != fixed && len(args) != fixed+4 {
			return types.Type{}, nil, fmt.Errorf("%w: function %s does not accept %d arguments", errArgs, name, len(args))
		}
		want := []types.Kind{types.String, strIntKind, types.String}
		if kind == 0 {
			want = []types.Kind{types.String, types.String}
		}
		if err := strCheck(name, args, 0, -1, want...); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			masks := [4]rune{'X', 'x', 'n', '-'}
			if len(a) > fixed {
				for i := range masks {
					masks[i] = strMaskNone
					if c, ok := a[fixed+i].(string); ok {
						r := []rune(c)
						if len(r) != 1 {
							return nil
						}
						masks[i] = r[0]
					}
				}
			}
			n := 0
			if kind != 0 {
				var ok bool
				if n, ok = strInt(a[1]); !ok || n < 0 {
					return nil
				}
			}
			s, ok := a[0].(string)
			if !ok {
				return nil
			}
			r := []rune(s)
			n = min(n, len(r))
			from, to := 0, len(r) // the masked range
			switch kind {
			case 1:
				to = n
			case 2:
				from = len(r) - n
			case 3:
				from = n
			case 4:
				to = len(r) - n
			}
			for i := from; i < to; i++ {
				r[i] = strMaskRune(r[i], masks)
			}
			return string(r)
		}, nil
	}
}

func strMaskRune(c rune, masks [4]rune) rune {
	m := masks[3]
	switch {
	case unicode.IsUpper(c):
		m = masks[0]
	case unicode.IsLower(c):
		m = masks[1]
	case unicode.Is(unicode.Nd, c):
		m = masks[2]
	}
	if m == strMaskNone {
		return c
	}
	return m
}
