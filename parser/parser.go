package parser

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Parsed is one statement of a script together with its exact source
// text (without the trailing `;`, trimmed), as stored in the command topic.
type Parsed struct {
	Stmt Statement
	Text string
}

// Parse parses a script of `;`-separated statements; the last `;` is
// optional. It returns an *Error on bad input.
func Parse(src string) ([]Statement, error) {
	ps, err := ParseScript(src)
	if err != nil {
		return nil, err
	}
	out := make([]Statement, len(ps))
	for i, p := range ps {
		out[i] = p.Stmt
	}
	return out, nil
}

// ParseScript is Parse that also returns each statement's source text.
func ParseScript(src string) (out []Parsed, err error) {
	defer recoverError(src, &err)
	g, err := scriptParser.ParseString("", src)
	if err != nil {
		return nil, withStatement(src, convertError(src, err, reparseWith(scriptParser)))
	}
	c := &converter{src: src}
	for _, gs := range g.Stmts {
		st := c.statement(gs)
		if len(c.allFields) > 0 {
			c.fail(c.allFields[0], "*", "->* selects every field of a struct: it must be a whole SELECT item")
		}
		if c.err != nil {
			return nil, withStatement(src, c.err)
		}
		out = append(out, Parsed{Stmt: st, Text: statementText(src, gs.Tokens)})
	}
	return out, nil
}

// ParseOne parses exactly one statement (a trailing `;` is allowed).
func ParseOne(src string) (Statement, error) {
	ps, err := ParseScript(src)
	if err != nil {
		return nil, err
	}
	switch len(ps) {
	case 1:
		return ps[0].Stmt, nil
	case 0:
		return nil, newError(src, endPos(src), "", "expected a statement", []string{"statement"})
	}
	return nil, newError(src, ps[1].Stmt.Position(), "", "expected one statement, found more", nil)
}

// ParseExpr parses a single scalar expression.
func ParseExpr(src string) (x Expr, err error) {
	defer recoverError(src, &err)
	g, err := exprParser.ParseString("", src)
	if err != nil {
		return nil, convertError(src, err, reparseWith(exprParser))
	}
	c := &converter{src: src}
	x = c.expr(g)
	if len(c.allFields) > 0 {
		c.fail(c.allFields[0], "*", "->* selects every field of a struct: it must be a whole SELECT item")
	}
	if c.err != nil {
		return nil, c.err
	}
	return x, nil
}

func statementText(src string, toks []lexer.Token) string {
	for len(toks) > 0 && elided(toks[0]) {
		toks = toks[1:]
	}
	for len(toks) > 0 && elided(toks[len(toks)-1]) {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return ""
	}
	last := toks[len(toks)-1]
	return strings.TrimSpace(src[toks[0].Pos.Offset : last.Pos.Offset+len(last.Value)])
}

func elided(t lexer.Token) bool { return t.Type == whitespaceType || t.Type == commentType }

// endPos is where an "unexpected end of input" points: just after the
// last token, so the caret lands on a line the user can see.
func endPos(src string) Pos {
	end := len(src)
	if last := previousToken(src, len(src)); last != nil {
		end = last.Pos.Offset + len(last.Value)
	}
	return offsetPos(src, end)
}

func offsetPos(src string, off int) Pos {
	before := src[:off]
	line := 1 + strings.Count(before, "\n")
	col := 1 + utf8.RuneCountInString(before[strings.LastIndex(before, "\n")+1:])
	return Pos{Line: line, Column: col, Offset: off}
}

// recoverError turns a panic inside participle or the converter into an
// *Error: no input may crash the caller.
func recoverError(src string, err *error) {
	if r := recover(); r != nil {
		*err = newError(src, Pos{Line: 1, Column: 1}, "", fmt.Sprintf("internal parser error: %v", r), nil)
	}
}

// Error is a parse error with its position in the source.
type Error struct {
	Pos      Pos
	Msg      string   // the full message, e.g. `unexpected "FORM", expected "FROM"`
	Token    string   // the offending token as written; "" at end of input
	Expected []string // what would have been accepted there, if known
	Line     string   // the source line holding Pos
	// Statement is the text of the statement the error is in, with its
	// `;`, when the error came from parsing a script.
	Statement string
}

// Error words the error as ksqlDB words every parse failure: the
// position, "Syntax Error", then on its own line what went wrong, and
// last the statement.
func (e *Error) Error() string {
	if e.Statement == "" {
		return e.head()
	}
	return e.head() + "\nStatement: " + e.Statement
}

func (e *Error) head() string {
	return fmt.Sprintf("line %d:%d: Syntax Error\n%s", e.Pos.Line, e.Pos.Column, e.Msg)
}

// Pretty returns the message, the source line and a caret under the
// offending token (which show where in the statement it is).
func (e *Error) Pretty() string {
	var b strings.Builder
	b.WriteString(e.head())
	b.WriteString("\n")
	b.WriteString(e.Line)
	b.WriteString("\n")
	col := e.Pos.Column - 1
	for i, r := range []rune(e.Line) {
		if i >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteString("^")
	return b.String()
}

// ClientOnly is the error for a statement only a client runs (RUN
// SCRIPT, which the shell and `sluice run` read themselves), sent to a
// server: ksqlDB's server grammar has no such statement, so it is an
// unknown statement there. text is the statement's source text.
func ClientOnly(st Statement, text string) *Error {
	word, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	p := st.Position()
	line, _, _ := strings.Cut(text, "\n")
	line = strings.Repeat(" ", max(p.Column-1, 0)) + line
	return &Error{Pos: p, Msg: fmt.Sprintf("Unknown statement '%s'", strings.ToUpper(word)), Token: word, Line: line, Statement: text + ";"}
}

// withStatement sets e.Statement to the statement of src holding e: from
// the end of the previous `;` (outside strings and comments) to its own
// `;`, or the end of the script.
func withStatement(src string, e *Error) *Error {
	lx, err := sqlLexer.LexString("", src)
	if err != nil {
		return e
	}
	start, end := 0, len(src)
	for {
		t, err := lx.Next()
		if err != nil || t.EOF() {
			break
		}
		if t.Value != ";" || t.Type == whitespaceType || t.Type == commentType {
			continue
		}
		if t.Pos.Offset < e.Pos.Offset {
			start = t.Pos.Offset + 1
			continue
		}
		end = t.Pos.Offset + 1
		break
	}
	if start <= end && end <= len(src) {
		e.Statement = strings.TrimSpace(src[start:end])
	}
	return e
}

func newError(src string, p Pos, token, msg string, expected []string) *Error {
	if p.Line == 0 {
		p.Line, p.Column = 1, 1
	}
	lines := strings.Split(src, "\n")
	line := ""
	if p.Line-1 < len(lines) {
		line = strings.TrimRight(lines[p.Line-1], "\r")
	}
	return &Error{Pos: p, Msg: msg, Token: token, Expected: expected, Line: line}
}

var (
	unexpectedRE = regexp.MustCompile(`unexpected token "((?:[^"\\]|\\.)*)"(?: \(expected (.*)\))?$`)
	grammarNames = strings.NewReplacer(
		"<ident>", "identifier", "<qident>", "identifier", "<number>", "number",
		"<string>", "string", "<duration>", "duration", "<op>", "operator", "<eof>", "end of input",
	)
)

// convertError maps participle's errors to *Error, naming the unexpected
// token and what the grammar expected there.
func convertError(src string, err error, reparse func(string) error) *Error {
	var lexErr *lexer.Error
	if errors.As(err, &lexErr) {
		p := pos(lexErr.Pos)
		tok := ""
		if p.Offset < len(src) {
			r, _ := utf8.DecodeRuneInString(src[p.Offset:])
			tok = string(r)
		}
		msg := fmt.Sprintf("unexpected character %q", tok)
		if tok == "'" {
			msg = "unterminated string"
		} else if tok == "`" || tok == `"` {
			msg = "unterminated quoted identifier"
		}
		return newError(src, p, tok, msg, nil)
	}
	var perr participle.Error
	if !errors.As(err, &perr) {
		return newError(src, Pos{}, "", err.Error(), nil)
	}
	p := pos(perr.Position())
	var ute *participle.UnexpectedTokenError
	if errors.As(err, &ute) && ute.Unexpected.EOF() {
		p = endPos(src)
	}
	m := unexpectedRE.FindStringSubmatch(perr.Message())
	if m == nil {
		return newError(src, p, "", perr.Message(), nil)
	}
	token := tokenAt(src, p)
	if p.Offset >= len(src) {
		p = endPos(src)
	}
	var expected []string
	if m[2] != "" {
		expected = describeExpected(m[2])
	}
	prev := previousToken(src, p.Offset)
	atStatement := false
	switch {
	case len(expected) > 0:
		// A misspelt keyword (FORM for FROM) is often swallowed as an alias,
		// so the parser stumbles one token later: point at the typo instead.
		if prev != nil && prev.Type == identType && looksLikeOneOf(prev.Value, expected) {
			p, token = pos(prev.Pos), prev.Value
		}
	case prev == nil || prev.Value == ";":
		expected = []string{"statement (" + strings.Join(statementKeywords, ", ") + ")"}
		atStatement = true
	case token != "":
		expected = []string{`";"`, "end of input"}
	}
	if closer := missingCloser(src, p, token, reparse); closer != "" {
		return newError(src, p, token, fmt.Sprintf("missing '%s' at '%s'", closer, token), []string{strconv.Quote(closer)})
	}
	expected = withListSeparator(src, p, token, expected, reparse)
	if reserved[strings.ToUpper(token)] && !atStatement {
		// A reserved word where it cannot stand: ksqlDB names the word
		// rather than what would have fitted.
		return newError(src, p, token, atOrNear(p, token, expected), expected)
	}
	return newError(src, p, token, ksqlDetail(p, token, expected, atStatement), expected)
}

// withListSeparator completes an expectation of a closing bracket alone
// with the list separator the grammar also takes there. participle names
// only the last alternative it tried, so where a list may go on or close
// (a column list after a column: `, …` or `)`) it says `")"`; ANTLR, whose
// set ksqlDB prints, says {',', ')'}. The comma counts as expected when,
// put before the token, it is read (the parser stops later than at it).
func withListSeparator(src string, p Pos, token string, expected []string, reparse func(string) error) []string {
	if len(expected) != 1 || token == "" || p.Offset > len(src) {
		return expected
	}
	switch expected[0] {
	case `")"`, `"]"`, `">"`:
	default:
		return expected
	}
	fixed := src[:p.Offset] + ", " + src[p.Offset:]
	err := reparse(fixed)
	var perr participle.Error
	if err == nil || errors.As(err, &perr) && perr.Position().Offset > p.Offset {
		return append([]string{`","`}, expected...)
	}
	return expected
}

// ksqlDetail words what went wrong as ksqlDB does after "Syntax Error":
// a statement that starts with no statement keyword is an unknown
// statement; where only certain tokens fit, it lists them in ANTLR's
// names (Expecting {',', ')'}); elsewhere it names the token (Syntax error
// at or near 'X' at line L:C), then says what would have fitted.
func ksqlDetail(p Pos, token string, expected []string, atStatement bool) string {
	if atStatement && token != "" {
		msg := fmt.Sprintf("Unknown statement '%s'", token)
		if near := Closest(token, statementKeywords); near != "" {
			msg += fmt.Sprintf("\nDid you mean '%s'?", near)
		}
		return msg + "\nexpected " + strings.Join(expected, " or ")
	}
	if names, ok := antlrNames(expected); ok {
		return "Expecting {" + strings.Join(names, ", ") + "}"
	}
	return atOrNear(p, token, expected)
}

// atOrNear is ksqlDB's "Syntax error at or near 'X' at line L:C", then
// what would have fitted.
func atOrNear(p Pos, token string, expected []string) string {
	shown := token
	if shown == "" {
		shown = "<EOF>"
	}
	msg := fmt.Sprintf("Syntax error at or near '%s' at line %d:%d", shown, p.Line, p.Column)
	if len(expected) > 0 {
		msg += ": expected " + strings.Join(expected, " or ")
	}
	return msg
}

// antlrNames spells expected tokens as ANTLR names them in ksqlDB's
// messages: literal tokens quoted, token classes by name. ok is false if
// any expectation is a construct (an expression, a type), not a token.
func antlrNames(expected []string) (names []string, ok bool) {
	if len(expected) == 0 {
		return nil, false
	}
	classes := map[string]string{"number": "INTEGER_VALUE", "string": "STRING", "identifier": "IDENTIFIER", "end of input": "<EOF>"}
	var literals, named []string
	for _, e := range expected {
		if lit, err := strconv.Unquote(e); err == nil && strings.HasPrefix(e, `"`) {
			literals = append(literals, "'"+lit+"'")
			continue
		}
		n, isClass := classes[e]
		if !isClass {
			return nil, false
		}
		named = append(named, n)
	}
	// ANTLR lists literal tokens before token classes.
	return append(literals, named...), true
}

// missingCloser returns the bracket the source failed to close before
// the token at p, or "". As ANTLR's single-token insertion (whose "missing
// ')' at ','" ksqlDB shows), the bracket counts as missing only if, with
// it inserted, the parser reads past the token.
func missingCloser(src string, p Pos, token string, reparse func(string) error) string {
	closer := unclosedBracket(src, p.Offset)
	if closer == "" || token == "" {
		return ""
	}
	fixed := src[:p.Offset] + closer + " " + src[p.Offset:]
	err := reparse(fixed)
	var perr participle.Error
	if err == nil || errors.As(err, &perr) && perr.Position().Offset > p.Offset+len(closer)+1 {
		return closer
	}
	return ""
}

func reparseWith[T any](p *participle.Parser[T]) func(string) error {
	return func(src string) error {
		_, err := p.ParseString("", src)
		return err
	}
}

// unclosedBracket returns the closer of the innermost '(' or '[' still
// open before offset, or "".
func unclosedBracket(src string, offset int) string {
	lx, err := sqlLexer.LexString("", src)
	if err != nil {
		return ""
	}
	var open []string
	for {
		t, err := lx.Next()
		if err != nil || t.EOF() || t.Pos.Offset >= offset {
			break
		}
		if t.Type == whitespaceType || t.Type == commentType {
			continue
		}
		switch t.Value {
		case "(":
			open = append(open, ")")
		case "[":
			open = append(open, "]")
		case ")", "]":
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
	}
	if len(open) == 0 {
		return ""
	}
	return open[len(open)-1]
}

var statementKeywords = []string{
	"SELECT", "CREATE", "INSERT", "SHOW", "LIST", "DESCRIBE", "EXPLAIN", "DROP", "ALTER", "TERMINATE",
	"PRINT", "SET", "UNSET", "RUN SCRIPT", "DEFINE", "UNDEFINE", "ASSERT",
}

// previousToken returns the last non-blank token that ends at or before
// offset, or nil.
func previousToken(src string, offset int) *lexer.Token {
	lx, err := sqlLexer.LexString("", src)
	if err != nil {
		return nil
	}
	var prev *lexer.Token
	for {
		t, err := lx.Next()
		if err != nil || t.EOF() || t.Pos.Offset+len(t.Value) > offset {
			return prev
		}
		if t.Type != whitespaceType && t.Type != commentType {
			tok := t
			prev = &tok
		}
	}
}

// looksLikeOneOf reports whether word is a near miss (edit distance 1 or
// 2, or a transposition) of one of the expected keywords.
func looksLikeOneOf(word string, expected []string) bool {
	w := strings.ToUpper(word)
	if len(w) < 3 {
		return false
	}
	for _, e := range expected {
		k := strings.Trim(e, `"`)
		if k == e || k == w {
			continue
		}
		if d := editDistance(w, k); d == 1 || d == 2 && len(k) > 4 {
			return true
		}
	}
	return false
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and adjacent transpositions.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// tokenAt returns the token text starting at p, lexed again from the
// source so that it is exactly as written.
func tokenAt(src string, p Pos) string {
	if p.Offset >= len(src) {
		return ""
	}
	lx, err := sqlLexer.LexString("", src[p.Offset:])
	if err != nil {
		return ""
	}
	t, err := lx.Next()
	if err != nil || t.EOF() {
		return ""
	}
	return t.Value
}

// describeExpected turns participle's EBNF for the production that failed
// into the few things a user could have written next: the first term, and
// the first terms of any optional groups before it.
func describeExpected(ebnf string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(term string) {
		terms := []string{term}
		if ts, ok := productionTerms[term]; ok {
			terms = ts
		} else if name, ok := productionNames[term]; ok {
			terms = []string{name}
		}
		for _, t := range terms {
			t = grammarNames.Replace(t)
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	var walk func(s string) bool // reports whether s can be empty
	walk = func(s string) bool {
		for _, alt := range splitTop(s, '|') {
			terms := splitTop(alt, ' ')
			empty := true
			for _, t := range terms {
				optional := strings.HasSuffix(t, "?") || strings.HasSuffix(t, "*")
				t = strings.TrimRight(t, "?*+")
				if strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") {
					if !walk(t[1:len(t)-1]) && !optional {
						empty = false
						break
					}
					continue
				}
				add(t)
				if !optional {
					empty = false
					break
				}
			}
			if empty {
				return true
			}
		}
		return false
	}
	walk(strings.TrimSpace(ebnf))
	if seen[`"MINUTES"`] {
		var kept []string
		for _, e := range out {
			if !timeUnits[strings.Trim(e, `"`)] {
				kept = append(kept, e)
			}
		}
		out = append(kept, "time unit (MILLISECONDS, SECONDS, MINUTES, HOURS, DAYS)")
	}
	return out
}

// splitTop splits s at sep outside parentheses and quotes.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start, inQuote := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			if part := strings.TrimSpace(s[start:i]); part != "" {
				out = append(out, part)
			}
			start = i + 1
		}
	}
	if part := strings.TrimSpace(s[start:]); part != "" {
		out = append(out, part)
	}
	return out
}

var timeUnits = map[string]bool{
	"MILLISECOND": true, "MILLISECONDS": true, "SECOND": true, "SECONDS": true, "MINUTE": true,
	"MINUTES": true, "HOUR": true, "HOURS": true, "DAY": true, "DAYS": true,
}

// productionTerms names the tokens of productions that are a choice of
// single tokens.
var productionTerms = map[string][]string{
	"GTypeArg": {`"STRING"`, "number"},
}

var productionNames = map[string]string{
	"gIdent": "identifier",
	"GExpr":  "expression", "GAnd": "expression", "GNot": "expression", "GCmp": "expression",
	"GAdd": "expression", "GMul": "expression", "GUnary": "expression", "GPostfix": "expression",
	"GPrimary": "expression", "GRelation": "source name", "GIdent": "identifier", "GNumber": "number",
	"GType": "type", "GTypeWord": "type", "GArg": "expression", "GLambda": "lambda", "GDur": "duration", "GSelect": `"SELECT"`, "GStatement": "statement",
	"GJoin": `"JOIN"`, "GWindow": `"TUMBLING", "HOPPING", "SESSION" or "SLIDING"`, "GColumn": "column definition", "GProp": "property",
	"GPropValue": "string, number, TRUE or FALSE", "GSelectItem": "select item", "GWithin": "duration", "GCmpTail": "comparison",
	"GWindowParam": "window parameter", "GWindowCompact": `"GRACE"`, "GValues": "expression",
	"GCreateConn": `"CREATE"`, "GConnProp": "property", "GDropConn": `"DROP"`, "GShowConn": `"SHOW"`, "GDescConn": `"DESCRIBE"`,
	"GCreate": `"CREATE"`, "GInsert": `"INSERT"`, "GSet": `"SET"`, "GUnset": `"UNSET"`,
	"GShow": `"SHOW"`, "GDescribe": `"DESCRIBE"`, "GExplain": `"EXPLAIN"`, "GTerminate": `"TERMINATE"`,
	"GDrop": `"DROP"`, "GAlter": `"ALTER"`, "GAlterAdd": `"ADD"`, "GPrint": `"PRINT"`, "GRunScript": `"RUN"`, "GDefine": `"DEFINE"`, "GUndefine": `"UNDEFINE"`,
	"GAssert": `"ASSERT"`, "GAssertTopic": "topic name", "GAssertSchem": `"SUBJECT" or "ID"`,
	"GColumnRef": "column", "GCall": "function call", "GCase": `"WHEN"`, "GCast": "expression",
	"GExprItem": "expression", "GWhen": `"WHEN"`, "GIs": `"NULL"`, "GBetween": "expression", "GLike": "expression",
	"GMapType": "type", "GStructTyp": "field", "GStructField": "field", "GAddR": "operator", "GMulR": "operator",
	"GPostOp": "operator", "GMapEntry": "expression", "GStructEntry": "field name", "GArrayCtor": "expression",
	"GMapCtor": "expression", "GStructCtr": "field name",
}

// Closest returns the candidate a misspelt word most likely meant: the
// nearest by edit distance (case ignored), if it is near enough to be a
// typo — at most 1 edit for short words, 2 for longer ones, none for
// words under three letters. "" if none.
func Closest(word string, candidates []string) string {
	w := strings.ToUpper(word)
	if len(w) < 3 {
		return "" // one edit of a word this short is a different word
	}
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(w, strings.ToUpper(c))
		if d == 0 || d > 2 || (d == 2 && len(w) <= 4) {
			continue
		}
		if d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best
}
