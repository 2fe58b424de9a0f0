package expr_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

var (
	tBytes      = types.BytesType
	tStrArray   = types.ArrayOf(types.StringType)
	tBytesArray = types.ArrayOf(types.BytesType)
	tStrMap     = types.MapOf(types.StringType, types.StringType)
)

// stringFunctionCases follow ksqlDB's string UDFs, edge cases included.
var stringFunctionCases = []evalCase{
	// INSTR: 1-based, 0 when absent; a negative position searches
	// backwards from that many characters before the end.
	{"INSTR('CORPORATE FLOOR', 'OR')", tInt, int32(2)},
	{"INSTR('CORPORATE FLOOR', 'OR', 3)", tInt, int32(5)},
	{"INSTR('CORPORATE FLOOR', 'OR', 3, 2)", tInt, int32(14)},
	{"INSTR('CORPORATE FLOOR', 'OR', -3, 2)", tInt, int32(2)},
	{"INSTR('CORPORATE FLOOR', 'OR', -3)", tInt, int32(5)},
	{"INSTR('CORPORATE FLOOR', 'OR', -1)", tInt, int32(14)},
	{"INSTR('CORPORATE FLOOR', 'MISSING')", tInt, int32(0)},
	{"INSTR('CORPORATE FLOOR', 'OR', 100)", tInt, int32(0)},
	{"INSTR('CORPORATE FLOOR', 'OR', -100)", tInt, int32(0)},
	{"INSTR('CORPORATE FLOOR', 'OR', 0)", tInt, int32(0)},
	{"INSTR('CORPORATE FLOOR', 'OR', 1, 0)", tInt, int32(0)},
	{"INSTR('CORPORATE FLOOR', 'OR', 1, 4)", tInt, int32(0)},
	{"INSTR('aaa', 'aa', 1, 2)", tInt, int32(2)}, // occurrences overlap
	{"INSTR('abc', '')", tInt, int32(1)},
	{"INSTR('', '')", tInt, int32(0)},
	{"INSTR('héllo wörld', 'ö')", tInt, int32(8)},
	{"INSTR(s, 'c')", tInt, int32(3)},
	{"INSTR(ns, 'c')", tInt, int32(0)}, // ksqlDB gives 0, not NULL
	{"INSTR(s, ns)", tInt, int32(0)},
	{"INSTR(s, 'c', ni)", tInt, nil},
	{"INSTR(s, 'c', 1, ni)", tInt, nil},

	{"SPLIT('a,b,,c', ',')", tStrArray, []any{"a", "b", "", "c"}},
	{"SPLIT('a.b', '.')", tStrArray, []any{"a", "b"}}, // literal, not a regex
	{"SPLIT(',a,', ',')", tStrArray, []any{"", "a", ""}},
	{"SPLIT('abc', '')", tStrArray, []any{"a", "b", "c"}},
	{"SPLIT('', '')", tStrArray, []any{""}},
	{"SPLIT('', ',')", tStrArray, []any{""}},
	{"SPLIT('héllo', '')", tStrArray, []any{"h", "é", "l", "l", "o"}},
	{"SPLIT('a--b', '--')", tStrArray, []any{"a", "b"}},
	{"SPLIT(ns, ',')", tStrArray, nil},
	{"SPLIT(s, ns)", tStrArray, nil},
	{"SPLIT(TO_BYTES('a,b', 'utf8'), TO_BYTES(',', 'utf8'))", tBytesArray, []any{[]byte("a"), []byte("b")}},
	{"SPLIT(TO_BYTES('ab', 'utf8'), TO_BYTES('', 'utf8'))", tBytesArray, []any{[]byte("a"), []byte("b")}},
	{"SPLIT(TO_BYTES('', 'utf8'), TO_BYTES(',', 'utf8'))", tBytesArray, []any{[]byte{}}},
	{"SPLIT(TO_BYTES(ns, 'utf8'), TO_BYTES(',', 'utf8'))", tBytesArray, nil},

	{"SPLIT_TO_MAP('apple:=green/cherry:=red', '/', ':=')", tStrMap, map[string]any{"apple": "green", "cherry": "red"}},
	{"SPLIT_TO_MAP('a=1;;b;a=2;c=3=4', ';', '=')", tStrMap, map[string]any{"a": "2", "c": "3"}},
	{"SPLIT_TO_MAP('', ';', '=')", tStrMap, map[string]any{}},
	{"SPLIT_TO_MAP('a=1', '', '=')", tStrMap, nil},
	{"SPLIT_TO_MAP('a=1', '=', '=')", tStrMap, nil},
	{"SPLIT_TO_MAP(ns, ';', '=')", tStrMap, nil},
	{"SPLIT_TO_MAP('a=1', ns, '=')", tStrMap, nil},
	{"SPLIT_TO_MAP('a=1', ';', ns)", tStrMap, nil},

	{"LPAD('abc', 6, 'xy')", tString, "xyxabc"},
	{"LPAD('abc', 2, 'xy')", tString, "ab"}, // truncated on the right
	{"LPAD('abc', 0, 'xy')", tString, ""},
	{"LPAD('abc', -1, 'xy')", tString, nil},
	{"LPAD('abc', 5, '')", tString, nil},
	{"LPAD('é', 3, 'ü')", tString, "üüé"},
	{"LPAD(ns, 5, 'x')", tString, nil},
	{"LPAD(s, ni, 'x')", tString, nil},
	{"LPAD(s, 5, ns)", tString, nil},
	{"LPAD(TO_BYTES('AB', 'hex'), 3, TO_BYTES('01', 'hex'))", tBytes, []byte{1, 1, 0xAB}},
	{"LPAD(TO_BYTES('ABCD', 'hex'), 1, TO_BYTES('01', 'hex'))", tBytes, []byte{0xAB}},
	{"LPAD(TO_BYTES('AB', 'hex'), 3, TO_BYTES('', 'hex'))", tBytes, nil},
	{"RPAD('abc', 6, 'xy')", tString, "abcxyx"},
	{"RPAD('abc', 2, 'xy')", tString, "ab"},
	{"RPAD('', 3, 'x')", tString, "xxx"},
	{"RPAD('abc', -1, 'xy')", tString, nil},
	{"RPAD('abc', 5, '')", tString, nil},
	{"RPAD(ns, 5, 'x')", tString, nil},
	{"RPAD(s, ni, 'x')", tString, nil},
	{"RPAD(s, 5, ns)", tString, nil},
	{"RPAD(TO_BYTES('AB', 'hex'), 4, TO_BYTES('0102', 'hex'))", tBytes, []byte{0xAB, 1, 2, 1}},
	{"RPAD(TO_BYTES(ns, 'hex'), 4, TO_BYTES('0102', 'hex'))", tBytes, nil},

	{"REPLACE('hello world', 'o', '0')", tString, "hell0 w0rld"},
	{"REPLACE('a.b.c', '.', '')", tString, "abc"},
	{"REPLACE('abc', 'x', 'y')", tString, "abc"},
	{"REPLACE(ns, 'a', 'b')", tString, nil},
	{"REPLACE(s, ns, 'b')", tString, nil},
	{"REPLACE(s, 'a', ns)", tString, nil},

	{"REGEXP_EXTRACT('.*', 'hello world')", tString, "hello world"},
	{"REGEXP_EXTRACT('(\\w+) (\\w+)', 'hello world', 2)", tString, "world"},
	{"REGEXP_EXTRACT('(\\w+) (\\w+)', 'hello world', 0)", tString, "hello world"},
	{"REGEXP_EXTRACT('(\\w+) (\\w+)', 'hello world', 3)", tString, nil},
	{"REGEXP_EXTRACT('x(\\d)?', 'ax', 1)", tString, nil}, // group did not take part
	{"REGEXP_EXTRACT('\\d+', 'abc')", tString, nil},
	{"REGEXP_EXTRACT(ns, 'abc')", tString, nil},
	{"REGEXP_EXTRACT('b', ns)", tString, nil},
	{"REGEXP_EXTRACT('b', s, ni)", tString, nil},
	{"REGEXP_EXTRACT(s, 'xabcx')", tString, "abc"}, // pattern from a column
	// q21's pattern: the input must hold channel_id= to match.
	{"REGEXP_EXTRACT('(&|^)channel_id=([^&]*)', 'https://x/item.htm?query=1&channel_id=42', 2)", tString, "42"},
	{"REGEXP_EXTRACT('(&|^)channel_id=([^&]*)', 'channel_id=7&x=1', 2)", tString, "7"},
	{"REGEXP_EXTRACT('(&|^)channel_id=([^&]*)', 'https://x/item.htm?query=1', 2)", tString, nil},
	{"REGEXP_EXTRACT('(?i)abc', 'xABCx')", tString, "ABC"}, // case folded: no literal required
	{"REGEXP_EXTRACT_ALL('id=(\\d+)', 'a=1&b=2', 1)", tStrArray, []any{}},
	{"REGEXP_REPLACE('ab', 'zz', '$3')", tString, "ab"}, // no match: the replacement is never read (Java)
	{"REGEXP_EXTRACT_ALL('\\d+', 'a1b22c333')", tStrArray, []any{"1", "22", "333"}},
	{"REGEXP_EXTRACT_ALL('(\\w)(\\d)', 'a1 b2', 2)", tStrArray, []any{"1", "2"}},
	{"REGEXP_EXTRACT_ALL('(\\w)(\\d)', 'a1 b2', 3)", tStrArray, nil},
	{"REGEXP_EXTRACT_ALL('\\d', 'abc')", tStrArray, []any{}},
	{"REGEXP_EXTRACT_ALL(ns, 'abc')", tStrArray, nil},
	{"REGEXP_EXTRACT_ALL('a', ns)", tStrArray, nil},
	{"REGEXP_REPLACE('hello world', 'o+', '0')", tString, "hell0 w0rld"},
	{"REGEXP_REPLACE('john smith', '(\\w+) (\\w+)', '$2, $1')", tString, "smith, john"},
	{"REGEXP_REPLACE('ab', '(a)', '$1x')", tString, "axb"}, // Java reads $1x as group 1, then x
	{"REGEXP_REPLACE('ab', '(?P<first>a)', '[${first}]')", tString, "[a]b"},
	{"REGEXP_REPLACE('ab', 'a', '\\$')", tString, "$b"},
	{"REGEXP_REPLACE('ab', 'a', '$3')", tString, nil}, // no such group: Java throws
	{"REGEXP_REPLACE('', 'x*', '-')", tString, "-"},
	{"REGEXP_REPLACE(ns, 'a', 'b')", tString, nil},
	{"REGEXP_REPLACE(s, ns, 'b')", tString, nil},
	{"REGEXP_REPLACE(s, 'a', ns)", tString, nil},
	{"REGEXP_REPLACE('xabcx', s, '-')", tString, "x-x"},
	{"REGEXP_SPLIT_TO_ARRAY('a.b-c', '[.-]')", tStrArray, []any{"a", "b", "c"}},
	{"REGEXP_SPLIT_TO_ARRAY('-a--b-', '-')", tStrArray, []any{"", "a", "", "b", ""}},
	{"REGEXP_SPLIT_TO_ARRAY('abc', '')", tStrArray, []any{"a", "b", "c"}},
	{"REGEXP_SPLIT_TO_ARRAY('', 'x')", tStrArray, []any{""}},
	// ksqlDB's RegexpSplitToArrayTest
	{"REGEXP_SPLIT_TO_ARRAY('', 'z')", tStrArray, []any{""}},
	{"REGEXP_SPLIT_TO_ARRAY('x-y', 'z')", tStrArray, []any{"x-y"}},
	{"REGEXP_SPLIT_TO_ARRAY('', '')", tStrArray, []any{""}},
	{"REGEXP_SPLIT_TO_ARRAY('x-y', '')", tStrArray, []any{"x", "-", "y"}},
	{"REGEXP_SPLIT_TO_ARRAY('x', '')", tStrArray, []any{"x"}},
	{"REGEXP_SPLIT_TO_ARRAY('x-y', 'x')", tStrArray, []any{"", "-y"}},
	{"REGEXP_SPLIT_TO_ARRAY('x-y', 'y')", tStrArray, []any{"x-", ""}},
	{"REGEXP_SPLIT_TO_ARRAY('x-y', '.')", tStrArray, []any{"", "", "", ""}},
	{"REGEXP_SPLIT_TO_ARRAY('a-b-c-b-d', '.b.')", tStrArray, []any{"a", "c", "d"}},
	{"REGEXP_SPLIT_TO_ARRAY('a-b-c', '^..')", tStrArray, []any{"", "b-c"}},
	{"REGEXP_SPLIT_TO_ARRAY('a-b-ccatd-ecatf', '(-|cat)')", tStrArray, []any{"a", "b", "c", "d", "e", "f"}},
	{"REGEXP_SPLIT_TO_ARRAY('-A-B-', '-')", tStrArray, []any{"", "A", "B", ""}},
	{"REGEXP_SPLIT_TO_ARRAY('A', '^')", tStrArray, []any{"A"}},
	{"REGEXP_SPLIT_TO_ARRAY('A', '$')", tStrArray, []any{"A"}},
	{"REGEXP_SPLIT_TO_ARRAY('AB', '^')", tStrArray, []any{"AB"}},
	{"REGEXP_SPLIT_TO_ARRAY('AB', '$')", tStrArray, []any{"AB"}},
	{"REGEXP_SPLIT_TO_ARRAY('--A--A', '-')", tStrArray, []any{"", "", "A", "", "A"}},
	{"REGEXP_SPLIT_TO_ARRAY('aababa', '(ab)+')", tStrArray, []any{"a", "a"}},
	{"REGEXP_SPLIT_TO_ARRAY('aabcda', '(ab|cd)')", tStrArray, []any{"a", "", "a"}},
	{"REGEXP_SPLIT_TO_ARRAY(ns, 'x')", tStrArray, nil},
	{"REGEXP_SPLIT_TO_ARRAY(s, ns)", tStrArray, nil},

	{"MASK('AbCd#$123xy Z')", tString, "XxXx--nnnxx-X"},
	{"MASK('AbCd#$123xy Z', '*', '-', '!', '$')", tString, "*-*-$$!!!--$*"},
	{"MASK('AbCd#$123xy Z', ns, '-', ns, '$')", tString, "A-C-$$123--$Z"}, // NULL keeps the class
	{"MASK('')", tString, ""},
	{"MASK('ÀéΣ٣')", tString, "XxXn"},
	{"MASK(ns)", tString, nil},
	{"MASK(ns, '*', '-', '!', '$')", tString, nil},
	{"MASK(s, s, 'a', 'b', 'c')", tString, nil}, // a mask longer than one character
	{"MASK(s, 'ab', 'x', 'n', '-')", tString, nil},
	{"MASK_LEFT(s, 1, 'X', '', 'n', '-')", tString, nil},
	{"MASK_LEFT('AbCd#$123xy Z', 5)", tString, "XxXx-$123xy Z"},
	{"MASK_LEFT('AbCd#$123xy Z', 5, '*', '-', '!', '$')", tString, "*-*-$$123xy Z"},
	{"MASK_LEFT('Ab', 5)", tString, "Xx"},
	{"MASK_LEFT('Ab', 0)", tString, "Ab"},
	{"MASK_LEFT('Ab', -1)", tString, nil},
	{"MASK_LEFT(ns, 2)", tString, nil},
	{"MASK_LEFT(s, ni)", tString, nil},
	{"MASK_RIGHT('AbCd#$123xy Z', 5)", tString, "AbCd#$12nxx-X"},
	{"MASK_RIGHT('AbCd#$123xy Z', 5, '*', '-', '!', '$')", tString, "AbCd#$12!--$*"},
	{"MASK_RIGHT('Ab', 5)", tString, "Xx"},
	{"MASK_RIGHT('Ab', -1)", tString, nil},
	{"MASK_RIGHT(ns, 2)", tString, nil},
	{"MASK_KEEP_LEFT('AbCd#$123xy Z', 5)", tString, "AbCd#-nnnxx-X"},
	{"MASK_KEEP_LEFT('AbCd#$123xy Z', 5, '*', '-', '!', '$')", tString, "AbCd#$!!!--$*"},
	{"MASK_KEEP_LEFT('Ab', 5)", tString, "Ab"},
	{"MASK_KEEP_LEFT('Ab', -1)", tString, nil},
	{"MASK_KEEP_LEFT(ns, 2)", tString, nil},
	{"MASK_KEEP_RIGHT('AbCd#$123xy Z', 5)", tString, "XxXx--nn3xy Z"},
	{"MASK_KEEP_RIGHT('AbCd#$123xy Z', 5, '*', '-', '!', '$')", tString, "*-*-$$!!3xy Z"},
	{"MASK_KEEP_RIGHT('Ab', 5)", tString, "Ab"},
	{"MASK_KEEP_RIGHT('Ab', -1)", tString, nil},
	{"MASK_KEEP_RIGHT(ns, 2)", tString, nil},

	{"ENCODE('Hello', 'utf8', 'hex')", tString, "48656c6c6f"},
	{"ENCODE('48656C6C6F', 'hex', 'utf8')", tString, "Hello"},
	{"ENCODE('0x48656c6c6f', 'hex', 'ascii')", tString, "Hello"},
	{"ENCODE('0x41', 'HEX', 'base64')", tString, "QQ=="},
	{"ENCODE('0x141', 'hex', 'base64')", tString, "AUE="}, // odd digits after 0x get a leading 0
	{"ENCODE('X''4142''', 'hex', 'utf8')", tString, "AB"},
	{"ENCODE('414', 'hex', 'utf8')", tString, nil}, // odd digits otherwise: error
	{"ENCODE('zz', 'hex', 'utf8')", tString, nil},
	{"ENCODE('SGVsbG8=', 'base64', 'utf8')", tString, "Hello"},
	{"ENCODE('SGVsbG8', 'base64', 'hex')", tString, "48656c6c6f"},
	{"ENCODE('héllo', 'utf8', 'base64')", tString, "aMOpbGxv"},
	{"ENCODE('héllo', 'ascii', 'hex')", tString, "683f6c6c6f"}, // unmappable: '?'
	{"ENCODE('aMOpbGxv', 'base64', 'ascii')", tString, "h\uFFFD\uFFFDllo"},
	{"ENCODE(ns, 'utf8', 'hex')", tString, nil},
	{"ENCODE(s, ns, 'hex')", tString, nil},
	{"ENCODE(s, 'utf8', ns)", tString, nil},
	{"ENCODE(s, s, 'hex')", tString, nil},         // unknown encoding
	{"ENCODE('0x1', 'hex', 'hex')", tString, nil}, // same encoding: ksqlDB throws, giving NULL
	{"ENCODE('abc', 'utf8', 'utf16')", tString, nil},
	{"ENCODE('abc', 'base64', 'null')", tString, nil},

	{"CHR(75)", tString, "K"},
	{"CHR(22909)", tString, "好"},
	{"CHR(128512)", tString, "😀"},
	{"CHR(0)", tString, "\x00"},
	{"CHR(-1)", tString, nil},
	{"CHR(1114112)", tString, nil},
	{"CHR('\\u004b')", tString, "K"},
	{"CHR('\\u597d')", tString, "好"},
	{"CHR('\\ud83d\\ude00')", tString, "😀"}, // surrogate pair
	{"CHR('\\u004')", tString, nil},
	{"CHR('004b')", tString, nil},
	{"CHR('\\uzzzz')", tString, nil},
	{"CHR(ni)", tString, nil},
	{"CHR(ns)", tString, nil},

	{"UUID(TO_BYTES('00112233445566778899aabbccddeeff', 'hex'))", tString, "00112233-4455-6677-8899-aabbccddeeff"},
	{"UUID(TO_BYTES('0011', 'hex'))", tString, nil},
	{"UUID(null)", tString, nil},

	{"ELT(2, 'a', 'b', 'c')", tString, "b"},
	{"ELT(1, 'a')", tString, "a"},
	{"ELT(0, 'a', 'b')", tString, nil},
	{"ELT(3, 'a', 'b')", tString, nil},
	{"ELT(1)", tString, nil},
	{"ELT(2, 'a', ns)", tString, nil},
	{"ELT(ni, 'a', 'b')", tString, nil},
	{"FIELD('b', 'a', 'b', 'c')", tInt, int32(2)},
	{"FIELD('z', 'a', 'b')", tInt, int32(0)},
	{"FIELD('a', 'a', 'a')", tInt, int32(1)},
	{"FIELD('A', 'a')", tInt, int32(0)}, // case matters
	{"FIELD(s)", tInt, int32(0)},
	{"FIELD(ns, 'a', ns)", tInt, int32(0)}, // NULL equals nothing
	{"FIELD(s, ns, 'abc')", tInt, int32(2)},

	{"TO_BYTES('4142', 'hex')", tBytes, []byte("AB")},
	{"TO_BYTES('4a4B', 'HEX')", tBytes, []byte("JK")},
	{"TO_BYTES('414', 'hex')", tBytes, nil},
	{"TO_BYTES('héllo', 'utf8')", tBytes, []byte("héllo")},
	{"TO_BYTES('héllo', 'ascii')", tBytes, []byte("h?llo")},
	{"TO_BYTES('QUI=', 'base64')", tBytes, []byte("AB")},
	{"TO_BYTES('QUI', 'base64')", tBytes, []byte("AB")}, // padding is optional, as in Java
	{"TO_BYTES('Q', 'base64')", tBytes, nil},
	{"TO_BYTES('QU=I', 'base64')", tBytes, nil},
	{"TO_BYTES('', 'base64')", tBytes, []byte{}},
	{"TO_BYTES(ns, 'hex')", tBytes, nil},
	{"TO_BYTES(s, ns)", tBytes, nil},
	{"TO_BYTES(s, s)", tBytes, nil}, // unknown encoding
	{"TO_BYTES('abc', 'utf16')", tBytes, nil},
	{"FROM_BYTES(TO_BYTES('4a4b', 'hex'), 'hex')", tString, "4A4B"},
	{"FROM_BYTES(TO_BYTES('héllo', 'utf8'), 'utf8')", tString, "héllo"},
	{"FROM_BYTES(TO_BYTES('héllo', 'utf8'), 'ascii')", tString, "h\uFFFD\uFFFDllo"},
	{"FROM_BYTES(TO_BYTES('AB', 'utf8'), 'base64')", tString, "QUI="},
	{"FROM_BYTES(TO_BYTES(ns, 'utf8'), 'hex')", tString, nil},
	{"FROM_BYTES(TO_BYTES('AB', 'utf8'), ns)", tString, nil},
	{"FROM_BYTES(TO_BYTES('AB', 'utf8'), 'latin1')", tString, nil},

	{"LEN(TO_BYTES('héllo', 'utf8'))", tInt, int32(6)}, // bytes, not characters
	{"LEN(TO_BYTES(ns, 'utf8'))", tInt, nil},
}

func init() { functionCaseSets = append(functionCaseSets, stringFunctionCases) }

func TestUUIDShape(t *testing.T) {
	c, err := compileExpr(t, "UUID()")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Type.Equal(tString) || c.Const {
		t.Fatalf("UUID() type %s const %v, want a STRING that is not folded", c.Type, c.Const)
	}
	shape := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := c.Eval(testRow), c.Eval(testRow)
	for _, v := range []any{a, b} {
		if s, ok := v.(string); !ok || !shape.MatchString(s) {
			t.Errorf("UUID() = %#v, want a random (version 4) UUID", v)
		}
	}
	if a == b {
		t.Errorf("two UUID() calls gave the same %v", a)
	}
}

// An invalid literal regular expression is a compile error (ksqlDB
// would fail on every row); so are wrong argument types and counts.
func TestStringFunctionCompileErrors(t *testing.T) {
	for _, src := range []string{
		"REGEXP_EXTRACT('(', s)",
		"REGEXP_EXTRACT_ALL('a(?=b)', s)", // look-ahead: Java has it, RE2 does not
		"REGEXP_REPLACE(s, '[', 'x')",
		"REGEXP_SPLIT_TO_ARRAY(s, '(')",
		"MASK(s, 'X')",
		"MASK_LEFT(s)",
		"INSTR(s)",
		"INSTR(s, 1)",
		"SPLIT(s, TO_BYTES(s, 'utf8'))",
		"LPAD(s, 'x', 'y')",
		"LPAD(s, 3)",
		"CHR(d)",
		"ELT(s, 'a')",
		"FIELD(i, 'a')",
		"UUID(s)",
		"REPLACE(s, 'a')",
	} {
		_, err := compileExpr(t, src)
		if err == nil {
			t.Errorf("%s: compiled, want an error", src)
		} else if !errors.Is(err, expr.ErrType) {
			t.Errorf("%s: %v, want a type error", src, err)
		}
	}
}

// SUBSTRING and CONCAT on BYTES (functions.go) count and join bytes.
func TestSubstringConcatBytes(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"SUBSTRING(TO_BYTES('héllo', 'utf8'), 2, 2)", tBytes, []byte("é")},
		{"SUBSTRING(TO_BYTES('abcdef', 'utf8'), -2)", tBytes, []byte("ef")},
		{"SUBSTRING(TO_BYTES('abc', 'utf8'), 5)", tBytes, []byte{}},
		{"SUBSTRING(TO_BYTES('abc', 'utf8'), ni)", tBytes, nil},
		{"SUBSTRING(TO_BYTES(ns, 'utf8'), 1, 1)", tBytes, nil},
		{"CONCAT(TO_BYTES('ab', 'utf8'), null, TO_BYTES('c', 'utf8'))", tBytes, []byte("abc")},
		{"CONCAT(TO_BYTES(ns, 'utf8'))", tBytes, []byte{}},
	})
	if _, err := compileExpr(t, "CONCAT(s, TO_BYTES(s, 'utf8'))"); !errors.Is(err, expr.ErrType) {
		t.Errorf("CONCAT(STRING, BYTES): %v, want a type error", err)
	}
}
