package parser

import (
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file holds the participle grammar: the lexer and the g* structs that
// participle fills. They mirror the text, not the meaning; convert.go turns
// them into the AST of ast.go in one pass. Nothing outside this package
// sees these types.

// sqlLexer splits SQL text into tokens. Order matters: a Duration (5m)
// must be tried before a Number, and comments before operators.
var sqlLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `--[^\n]*|/\*(?s:.*?)\*/`},
	{Name: "Whitespace", Pattern: `\s+`},
	{Name: "Duration", Pattern: `\d+(?i:ms|s|m|h|d)\b`},
	{Name: "Number", Pattern: `(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?`},
	{Name: "String", Pattern: `'(?:[^']|'')*'`},
	// Dollar is a dollar-quoted body ($$ … $$): a function's source.
	{Name: "Dollar", Pattern: `\$\$(?s:.*?)\$\$`},
	{Name: "QIdent", Pattern: "`(?:[^`]|``)*`" + `|"(?:[^"]|"")*"`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "Op", Pattern: `->|=>|\|\||<>|!=|<=|>=|:=|[-+*/%=<>(),.;\[\]]`},
})

var (
	identType  = sqlLexer.Symbols()["Ident"]
	qidentType = sqlLexer.Symbols()["QIdent"]

	whitespaceType = sqlLexer.Symbols()["Whitespace"]
	commentType    = sqlLexer.Symbols()["Comment"]
)

// reserved words cannot be unquoted identifiers: they start or end clauses,
// so accepting them as names would make the grammar ambiguous. Every other
// keyword (SIZE, GRACE, KEY, VALUE, TIMESTAMP, …) is usable as a name.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		SELECT FROM WHERE GROUP BY HAVING PARTITION WINDOW EMIT LIMIT
		JOIN INNER LEFT RIGHT FULL OUTER ON WITHIN
		AND OR NOT IN IS NULL TRUE FALSE BETWEEN LIKE ESCAPE DISTINCT
		CASE WHEN THEN ELSE END CAST AS WITH
		CREATE INSERT INTO VALUES DROP`) {
		reserved[w] = true
	}
}

// gIdent is an identifier: an unquoted word that is not reserved, or a
// backquoted or double-quoted name. Value is upper-cased unless quoted.
type gIdent struct {
	Pos    lexer.Position
	Value  string
	Raw    string // as written, without quotes
	Quoted bool
}

func (g *gIdent) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	switch t.Type {
	case identType:
		up := strings.ToUpper(t.Value)
		if reserved[up] || ctorNames[up] && opensCtor(lex, up) {
			return participle.NextMatch
		}
		g.Value, g.Raw = up, t.Value
	case qidentType:
		q := t.Value[:1]
		g.Raw = strings.ReplaceAll(t.Value[1:len(t.Value)-1], q+q, q)
		g.Value, g.Quoted = g.Raw, true
	default:
		return participle.NextMatch
	}
	g.Pos = t.Pos
	lex.Next()
	return nil
}

// opensCtor reports whether the token after the next one opens a
// constructor's argument list: an unquoted ARRAY[, MAP( or STRUCT( is
// always a constructor. Refusing it as a name here also keeps the parser
// from trying both readings of nested constructors, which is exponential.
func opensCtor(lex *lexer.PeekingLexer, word string) bool {
	cp := lex.MakeCheckpoint()
	defer lex.LoadCheckpoint(cp)
	lex.Next()
	if word == "ARRAY" {
		return lex.Peek().Value == "["
	}
	return lex.Peek().Value == "("
}

type gScript struct {
	Stmts []*gStatement `parser:"';'* ( @@ ( ';'+ @@ )* ';'* )?"`
}

type gStatement struct {
	Pos    lexer.Position
	Tokens []lexer.Token

	CreateFn  *gCreateFunc `parser:"  @@"`
	DropFn    *gDropFunc   `parser:"| @@"`
	CreateTyp *gCreateType `parser:"| @@"`
	DropType  *gDropType   `parser:"| @@"`
	CreateCon *gCreateConn `parser:"| @@"`
	DropConn  *gDropConn   `parser:"| @@"`
	ShowConn  *gShowConn   `parser:"| @@"`
	DescConn  *gDescConn   `parser:"| @@"`
	Create    *gCreate     `parser:"| @@"`
	Insert    *gInsert     `parser:"| @@"`
	Select    *gSelect     `parser:"| @@"`
	Set       *gSet        `parser:"| @@"`
	Unset     *gUnset      `parser:"| @@"`
	Show      *gShow       `parser:"| @@"`
	Describe  *gDescribe   `parser:"| @@"`
	Explain   *gExplain    `parser:"| @@"`
	Terminate *gTerminate  `parser:"| @@"`
	Pause     *gPause      `parser:"| @@"`
	Drop      *gDrop       `parser:"| @@"`
	Alter     *gAlter      `parser:"| @@"`
	Print     *gPrint      `parser:"| @@"`
	Run       *gRunScript  `parser:"| @@"`
	Define    *gDefine     `parser:"| @@"`
	Undefine  *gUndefine   `parser:"| @@"`
	Assert    *gAssert     `parser:"| @@"`
}

type gCreate struct {
	Pos         lexer.Position
	OrReplace   bool       `parser:"'CREATE' ( @'OR' 'REPLACE' )?"`
	Source      bool       `parser:"@'SOURCE'?"`
	Kind        string     `parser:"@( 'STREAM' | 'TABLE' )"`
	IfNotExists bool       `parser:"( @'IF' 'NOT' 'EXISTS' )?"`
	Name        *gIdent    `parser:"@@"`
	Columns     []*gColumn `parser:"( '(' @@ ( ',' @@ )* ')' )?"`
	With        []*gProp   `parser:"( 'WITH' '(' @@ ( ',' @@ )* ')' )?"`
	Query       *gSelect   `parser:"( 'AS' @@ )?"`
}

// gCreateFunc is CREATE [OR REPLACE] [AGGREGATE|TABLE] FUNCTION name
// (arg type, …) RETURNS type [[NOT] DETERMINISTIC] LANGUAGE lang
// [AS $$ body $$] [WITH (…)].
type gCreateFunc struct {
	Pos       lexer.Position
	OrReplace bool          `parser:"'CREATE' ( @'OR' 'REPLACE' )?"`
	Kind      string        `parser:"@( 'AGGREGATE' | 'TABLE' )? 'FUNCTION'"`
	Name      *gIdent       `parser:"@@"`
	Params    []*gFuncParam `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
	Returns   *gType        `parser:"'RETURNS' @@"`
	Not       bool          `parser:"( @'NOT'?"`
	Det       bool          `parser:"  @'DETERMINISTIC' )?"`
	Language  *gIdent       `parser:"'LANGUAGE' @@"`
	Body      *gDollar      `parser:"( 'AS' @@ )?"`
	With      []*gProp      `parser:"( 'WITH' '(' @@ ( ',' @@ )* ')' )?"`
}

// gDollar is a dollar-quoted body with its position, so that an error
// inside the body can be placed in the statement.
type gDollar struct {
	Pos  lexer.Position
	Text string `parser:"@Dollar"`
}

// gFuncParam is one parameter of CREATE FUNCTION: a name and a type.
type gFuncParam struct {
	Pos  lexer.Position
	Name *gIdent `parser:"@@"`
	Type *gType  `parser:"@@"`
}

// gDropFunc is DROP FUNCTION [IF EXISTS] name.
type gDropFunc struct {
	Pos      lexer.Position
	IfExists bool    `parser:"'DROP' 'FUNCTION' ( @'IF' 'EXISTS' )?"`
	Name     *gIdent `parser:"@@"`
}

// gCreateType is CREATE TYPE [IF NOT EXISTS] name AS type.
type gCreateType struct {
	Pos         lexer.Position
	IfNotExists bool    `parser:"'CREATE' 'TYPE' ( @'IF' 'NOT' 'EXISTS' )?"`
	Name        *gIdent `parser:"@@ 'AS'"`
	Type        *gType  `parser:"@@"`
}

// gDropType is DROP TYPE [IF EXISTS] name.
type gDropType struct {
	Pos      lexer.Position
	IfExists bool    `parser:"'DROP' 'TYPE' ( @'IF' 'EXISTS' )?"`
	Name     *gIdent `parser:"@@"`
}

// gCreateConn is CREATE SOURCE|SINK CONNECTOR [IF NOT EXISTS] name
// WITH (…): a Kafka Connect connector, its WITH entries passed to Connect.
type gCreateConn struct {
	Pos         lexer.Position
	Type        string       `parser:"'CREATE' @( 'SOURCE' | 'SINK' ) 'CONNECTOR'"`
	IfNotExists bool         `parser:"( @'IF' 'NOT' 'EXISTS' )?"`
	Name        *gIdent      `parser:"@@"`
	With        []*gConnProp `parser:"'WITH' '(' @@ ( ',' @@ )* ')'"`
}

// gConnProp is one entry of a connector's WITH: its key a quoted string
// ('connector.class', as Connect spells it) or an identifier, as ksqlDB
// accepts both.
type gConnProp struct {
	Pos   lexer.Position
	Key   *string     `parser:"( @String"`
	Name  *gIdent     `parser:"| @@ ) '='"`
	Value *gPropValue `parser:"@@"`
}

// gDropConn is DROP CONNECTOR [IF EXISTS] name.
type gDropConn struct {
	Pos      lexer.Position
	IfExists bool    `parser:"'DROP' 'CONNECTOR' ( @'IF' 'EXISTS' )?"`
	Name     *gIdent `parser:"@@"`
}

// gShowConn is SHOW|LIST [SOURCE|SINK] CONNECTORS and SHOW|LIST
// CONNECTOR PLUGINS.
type gShowConn struct {
	Pos     lexer.Position
	Plugins bool   `parser:"( 'SHOW' | 'LIST' ) ( @'CONNECTOR' 'PLUGINS'"`
	Scope   string `parser:"| @( 'SOURCE' | 'SINK' )? 'CONNECTORS' )"`
}

// gDescConn is DESCRIBE CONNECTOR name.
type gDescConn struct {
	Pos  lexer.Position
	Name *gIdent `parser:"'DESCRIBE' 'CONNECTOR' @@"`
}

type gColumn struct {
	Pos        lexer.Position
	Name       *gIdent `parser:"@@"`
	Type       *gType  `parser:"@@"`
	PrimaryKey bool    `parser:"( @'PRIMARY' 'KEY'"`
	Key        bool    `parser:"| @'KEY'"`
	Headers    bool    `parser:"| @'HEADERS'"`
	Header     *string `parser:"| 'HEADER' '(' @String ')' )?"`
}

type gProp struct {
	Pos   lexer.Position
	Name  *gIdent     `parser:"@@ '='"`
	Value *gPropValue `parser:"@@"`
}

type gPropValue struct {
	Pos    lexer.Position
	String *string `parser:"  @String"`
	Bool   *string `parser:"| @( 'TRUE' | 'FALSE' )"`
	Number *string `parser:"| @Number"`
	Neg    *string `parser:"| '-' @Number"`
}

type gInsert struct {
	Pos     lexer.Position
	Target  *gIdent   `parser:"'INSERT' 'INTO' @@"`
	Columns []*gIdent `parser:"( '(' @@ ( ',' @@ )* ')' )?"`
	Values  *gValues  `parser:"( 'VALUES' '(' @@ ')'"`
	With    []*gProp  `parser:"| ( 'WITH' '(' @@ ( ',' @@ )* ')' )?"`
	Query   *gSelect  `parser:"  @@ )"`
}

type gValues struct {
	Exprs []*gExpr `parser:"( @@ ( ',' @@ )* )?"`
}

type gSelect struct {
	Pos         lexer.Position
	Items       []*gSelectItem `parser:"'SELECT' @@ ( ',' @@ )*"`
	From        *gRelation     `parser:"'FROM' @@"`
	Joins       []*gJoin       `parser:"@@*"`
	Window      *gWindow       `parser:"( 'WINDOW' @@ )?"`
	Where       *gExpr         `parser:"( 'WHERE' @@ )?"`
	GroupBy     *gGroupBy      `parser:"( 'GROUP' 'BY' @@ )?"`
	PartitionBy *gPartitionBy  `parser:"( 'PARTITION' 'BY' @@ )?"`
	Having      *gExpr         `parser:"( 'HAVING' @@ )?"`
	Emit        string         `parser:"( 'EMIT' @( 'CHANGES' | 'FINAL' ) )?"`
	Limit       *gLimit        `parser:"( 'LIMIT' @@ )?"`
}

// gPartitionBy is PARTITION BY's list. An empty `()` parses so that the
// converter can say what is missing, as ksqlDB does, instead of a bare
// "unexpected )".
//
// Like GROUP BY's, its items are value expressions, as in ksqlDB's
// grammar: arithmetic, concatenation and primaries, but no AND, OR, NOT,
// comparison or predicate unless inside parentheses.
type gPartitionBy struct {
	Pos   lexer.Position
	Empty bool    `parser:"  @( '(' ')' )"`
	Exprs []*gAdd `parser:"| @@ ( ',' @@ )*"`
}

// gGroupBy is a list of value expressions, optionally in parentheses as
// a grouping set: GROUP BY (a, b).
type gGroupBy struct {
	Set   []*gAdd `parser:"  '(' @@ ( ',' @@ )+ ')'"`
	Exprs []*gAdd `parser:"| @@ ( ',' @@ )*"`
}

// gLimit is a SELECT's LIMIT; a minus sign parses so that pull queries
// can refuse it with ksqlDB's words.
type gLimit struct {
	Pos  lexer.Position
	Neg  bool   `parser:"@'-'?"`
	Text string `parser:"@Number"`
}

type gNumber struct {
	Pos  lexer.Position
	Text string `parser:"@Number"`
}

type gSelectItem struct {
	Pos        lexer.Position
	Star       bool       `parser:"  @'*'"`
	StarSource *gIdent    `parser:"| @@ '.' '*'"`
	Expr       *gExprItem `parser:"| @@"`
}

type gExprItem struct {
	Expr  *gExpr  `parser:"@@"`
	Alias *gIdent `parser:"( 'AS'? @@ )?"`
}

type gRelation struct {
	Pos   lexer.Position
	Name  *gIdent `parser:"@@"`
	Alias *gIdent `parser:"( 'AS'? @@ )?"`
}

type gJoin struct {
	Pos    lexer.Position
	Type   string     `parser:"( @'INNER' | @'LEFT' 'OUTER'? | @'RIGHT' 'OUTER'? | @'FULL' 'OUTER'? )? 'JOIN'"`
	Right  *gRelation `parser:"@@"`
	Within *gWithin   `parser:"( 'WITHIN' @@ )?"`
	On     *gExpr     `parser:"'ON' @@"`
}

type gWithin struct {
	Before *gDur `parser:"(   '(' @@ ','"`
	After  *gDur `parser:"    @@ ')'"`
	Single *gDur `parser:"  | @@ )"`
	Grace  *gDur `parser:"( 'GRACE' 'PERIOD' @@ )?"`
}

// gDur is a duration: compact (`parser:"5m"`) or spelled (`parser:"5 MINUTES"`).
type gDur struct {
	Pos     lexer.Position
	Compact string `parser:"  @Duration"`
	N       string `parser:"| @Number"`
	Unit    string `parser:"  @( 'MILLISECOND' | 'MILLISECONDS' | 'SECOND' | 'SECONDS' | 'MINUTE' | 'MINUTES' | 'HOUR' | 'HOURS' | 'DAY' | 'DAYS' )"`
}

type gWindow struct {
	Pos lexer.Position
	// Name is the optional name ksqlDB's grammar lets a window have
	// (WINDOW w TUMBLING (…)); nothing refers to it.
	Name    *gWindowName      `parser:"@@?"`
	Kind    string            `parser:"@( 'TUMBLING' | 'HOPPING' | 'SESSION' | 'SLIDING' )"`
	Params  []*gWindowParam   `parser:"( '(' @@ ( ',' @@ )* ')'"`
	Compact *gDur             `parser:"| @@"`
	Options []*gWindowCompact `parser:"  @@* )"`
}

// gWindowName is an unquoted word naming a window: it is one only where a
// window kind follows it, so that a misspelt kind (WINDOW ROLLING 5m) is
// still reported where it stands.
type gWindowName struct {
	Value string
}

func (g *gWindowName) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	up := strings.ToUpper(t.Value)
	if _, kind := windowKinds[up]; t.Type != identType || reserved[up] || kind {
		return participle.NextMatch
	}
	cp := lex.MakeCheckpoint()
	lex.Next()
	next := lex.Peek()
	if _, kind := windowKinds[strings.ToUpper(next.Value)]; next.Type != identType || !kind {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	g.Value = up
	return nil
}

type gWindowParam struct {
	Pos       lexer.Position
	Size      *gDur `parser:"  'SIZE' @@"`
	Advance   *gDur `parser:"| 'ADVANCE' 'BY' @@"`
	Retention *gDur `parser:"| 'RETENTION' @@"`
	Grace     *gDur `parser:"| 'GRACE' 'PERIOD' @@"`
	Gap       *gDur `parser:"| @@"`
}

type gWindowCompact struct {
	Pos       lexer.Position
	Advance   *gDur `parser:"  'ADVANCE' 'BY'? @@"`
	Grace     *gDur `parser:"| 'GRACE' 'PERIOD'? @@"`
	Retention *gDur `parser:"| 'RETENTION' @@"`
}

type gSet struct {
	Pos   lexer.Position
	Name  string `parser:"'SET' @String '='"`
	Value string `parser:"@String"`
}

type gUnset struct {
	Pos  lexer.Position
	Name string `parser:"'UNSET' @String"`
}

type gShow struct {
	Pos      lexer.Position
	What     string `parser:"( 'SHOW' | 'LIST' ) @( 'STREAMS' | 'TABLES' | 'QUERIES' | 'TOPICS' | 'PROPERTIES' | 'FUNCTIONS' | 'TYPES' )"`
	Extended bool   `parser:"@'EXTENDED'?"`
}

type gDescribe struct {
	Pos      lexer.Position
	Function *gIdent `parser:"'DESCRIBE' ( 'FUNCTION' @@"`
	Name     *gIdent `parser:"| @@"`
	Extended bool    `parser:"  @'EXTENDED'? )"`
}

type gExplain struct {
	Pos     lexer.Position
	Stmt    *gStatement `parser:"'EXPLAIN' ( @@"`
	QueryID *gIdent     `parser:"| @@ )"`
}

type gTerminate struct {
	Pos     lexer.Position
	All     bool    `parser:"'TERMINATE' ( @'ALL'"`
	QueryID *gIdent `parser:"| @@ )"`
}

type gPause struct {
	Pos     lexer.Position
	Verb    string  `parser:"@( 'PAUSE' | 'RESUME' )"`
	All     bool    `parser:"( @'ALL'"`
	QueryID *gIdent `parser:"| @@ )"`
}

type gDrop struct {
	Pos         lexer.Position
	Kind        string  `parser:"'DROP' @( 'STREAM' | 'TABLE' )"`
	IfExists    bool    `parser:"( @'IF' 'EXISTS' )?"`
	Name        *gIdent `parser:"@@"`
	DeleteTopic bool    `parser:"( @'DELETE' 'TOPIC' )?"`
}

type gAlter struct {
	Pos  lexer.Position
	Kind string       `parser:"'ALTER' @( 'STREAM' | 'TABLE' )"`
	Name *gIdent      `parser:"@@"`
	Adds []*gAlterAdd `parser:"@@ ( ',' @@ )*"`
}

type gAlterAdd struct {
	Pos  lexer.Position
	Name *gIdent `parser:"'ADD' 'COLUMN'? @@"`
	Type *gType  `parser:"@@"`
}

type gPrint struct {
	Pos           lexer.Position
	String        *string  `parser:"'PRINT' ( @String"`
	Ident         *gIdent  `parser:"| @@ )"`
	FromBeginning bool     `parser:"( @'FROM' 'BEGINNING' )?"`
	Interval      *gNumber `parser:"( 'INTERVAL' @@ )?"`
	Limit         *gNumber `parser:"( 'LIMIT' @@ )?"`
}

type gRunScript struct {
	Pos  lexer.Position
	Path string `parser:"'RUN' 'SCRIPT' @String"`
}

type gDefine struct {
	Pos   lexer.Position
	Name  *gIdent `parser:"'DEFINE' @@ '='"`
	Value string  `parser:"@String"`
}

type gUndefine struct {
	Pos  lexer.Position
	Name *gIdent `parser:"'UNDEFINE' @@"`
}

// gAssert is ASSERT [NOT EXISTS] TOPIC name [WITH (…)] [TIMEOUT d] or
// ASSERT [NOT EXISTS] SCHEMA [SUBJECT name] [ID n] [TIMEOUT d].
type gAssert struct {
	Pos       lexer.Position
	NotExists bool          `parser:"'ASSERT' ( @'NOT' 'EXISTS' )?"`
	Topic     *gAssertTopic `parser:"( 'TOPIC' @@"`
	Schema    *gAssertSchem `parser:"| 'SCHEMA' @@ )"`
	Timeout   *gDur         `parser:"( 'TIMEOUT' @@ )?"`
}

type gAssertTopic struct {
	Name *gIdent  `parser:"@@"`
	With []*gProp `parser:"( 'WITH' '(' @@ ( ',' @@ )* ')' )?"`
}

// gAssertSchem takes the subject as a string or a name: subjects such as
// orders-value need quoting either way.
type gAssertSchem struct {
	Pos          lexer.Position
	SubjectStr   *string  `parser:"( 'SUBJECT' ( @String"`
	SubjectIdent *gIdent  `parser:"| @@ ) )?"`
	ID           *gNumber `parser:"( 'ID' @@ )?"`
}

// ---- types ----

type gType struct {
	Pos    lexer.Position
	Array  *gType      `parser:"  'ARRAY' '<' @@ '>'"`
	Map    *gMapType   `parser:"| 'MAP' '<' @@ '>'"`
	Struct *gStructTyp `parser:"| 'STRUCT' '<' @@ '>'"`
	Name   *gTypeWord  `parser:"| ( @@"`
	Params []*gTypeArg `parser:"    ( '(' @@ ( ',' @@ )* ')' )?"`
	// Quoted is a custom type's name written quoted: kept as written.
	Quoted string `parser:"  | @QIdent )"`
}

// gTypeArg is a type parameter: a number, or the word STRING, which
// ksqlDB's grammar also takes (VARCHAR(STRING)) and which means nothing.
type gTypeArg struct {
	Number *gNumber `parser:"  @@"`
	String bool     `parser:"| @'STRING'"`
}

// gTypeWord is the name of a scalar type (INT, VARCHAR, DECIMAL, …) or of
// a custom type: an unquoted word that is not reserved, as ksqlDB's
// grammar has it, so that `COL0 NULL` is a syntax error rather than an
// unknown type.
type gTypeWord struct {
	Value string
}

func (g *gTypeWord) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	if t.Type != identType || reserved[strings.ToUpper(t.Value)] {
		return participle.NextMatch
	}
	g.Value = t.Value
	lex.Next()
	return nil
}

type gMapType struct {
	Key  *gType `parser:"@@ ','"`
	Elem *gType `parser:"@@"`
}

type gStructTyp struct {
	Fields []*gStructField `parser:"( @@ ( ',' @@ )* )?"`
}

type gStructField struct {
	Name *gIdent `parser:"@@"`
	Type *gType  `parser:"@@"`
}

// ---- expressions, one struct per precedence level, loosest first ----

type gExpr struct {
	Pos   lexer.Position
	Left  *gAnd   `parser:"@@"`
	Right []*gAnd `parser:"( 'OR' @@ )*"`
}

type gAnd struct {
	Pos   lexer.Position
	Left  *gNot   `parser:"@@"`
	Right []*gNot `parser:"( 'AND' @@ )*"`
}

type gNot struct {
	Pos lexer.Position
	Not *gNot `parser:"  'NOT' @@"`
	Cmp *gCmp `parser:"| @@"`
}

type gCmp struct {
	Pos  lexer.Position
	Left *gAdd     `parser:"@@"`
	Tail *gCmpTail `parser:"@@?"`
}

type gCmpTail struct {
	Pos     lexer.Position
	Op      string    `parser:"(  @( '=' | '<>' | '!=' | '<=' | '>=' | '<' | '>' )"`
	Right   *gAdd     `parser:"   @@"`
	Is      *gIs      `parser:"| 'IS' @@"`
	Not     bool      `parser:"| @'NOT'? ("`
	In      []*gExpr  `parser:"    'IN' '(' @@ ( ',' @@ )* ')'"`
	Between *gBetween `parser:"  | 'BETWEEN' @@"`
	Like    *gLike    `parser:"  | 'LIKE' @@ ) )"`
}

type gIs struct {
	Not      bool  `parser:"@'NOT'?"`
	Null     bool  `parser:"( @'NULL'"`
	Distinct *gAdd `parser:"| 'DISTINCT' 'FROM' @@ )"`
}

type gBetween struct {
	Lo *gAdd `parser:"@@ 'AND'"`
	Hi *gAdd `parser:"@@"`
}

type gLike struct {
	Pattern *gAdd   `parser:"@@"`
	Escape  *string `parser:"( 'ESCAPE' @String )?"`
}

type gAdd struct {
	Pos  lexer.Position
	Left *gMul    `parser:"@@"`
	Rest []*gAddR `parser:"@@*"`
}

type gAddR struct {
	Pos   lexer.Position
	Op    string `parser:"@( '+' | '-' | '||' )"`
	Right *gMul  `parser:"@@"`
}

type gMul struct {
	Pos  lexer.Position
	Left *gUnary  `parser:"@@"`
	Rest []*gMulR `parser:"@@*"`
}

type gMulR struct {
	Pos   lexer.Position
	Op    string  `parser:"@( '*' | '/' | '%' )"`
	Right *gUnary `parser:"@@"`
}

type gUnary struct {
	Pos     lexer.Position
	Op      string    `parser:"  @( '-' | '+' )"`
	X       *gUnary   `parser:"  @@"`
	Postfix *gPostfix `parser:"| @@"`
}

type gPostfix struct {
	Pos lexer.Position
	X   *gPrimary  `parser:"@@"`
	Ops []*gPostOp `parser:"@@*"`
}

type gPostOp struct {
	Pos   lexer.Position
	Index *gExpr  `parser:"  '[' @@ ']'"`
	Field *gIdent `parser:"| '->' @@"`
	// AllFields is x->*, every field of a struct; valid only as a whole
	// SELECT item (the converter checks).
	AllFields bool `parser:"| '->' @'*'"`
}

type gPrimary struct {
	Pos    lexer.Position
	Paren  *gExpr      `parser:"  '(' @@ ')'"`
	Null   bool        `parser:"| @'NULL'"`
	Bool   string      `parser:"| @( 'TRUE' | 'FALSE' )"`
	Number string      `parser:"| @Number"`
	String *string     `parser:"| @String"`
	Case   *gCase      `parser:"| 'CASE' @@"`
	Cast   *gCast      `parser:"| 'CAST' '(' @@ ')'"`
	Array  *gArrayCtor `parser:"| 'ARRAY' '[' @@ ']'"`
	Map    *gMapCtor   `parser:"| 'MAP' '(' @@ ')'"`
	Struct *gStructCtr `parser:"| 'STRUCT' '(' @@ ')'"`
	Call   *gCall      `parser:"| @@"`
	Column *gColumnRef `parser:"| @@"`
}

type gCase struct {
	Operand *gExpr   `parser:"@@?"`
	Whens   []*gWhen `parser:"@@+"`
	Else    *gExpr   `parser:"( 'ELSE' @@ )? 'END'"`
}

type gWhen struct {
	Cond   *gExpr `parser:"'WHEN' @@"`
	Result *gExpr `parser:"'THEN' @@"`
}

type gCast struct {
	X    *gExpr `parser:"@@ 'AS'"`
	Type *gType `parser:"@@"`
}

type gArrayCtor struct {
	Elems []*gExpr `parser:"( @@ ( ',' @@ )* )?"`
}

type gMapCtor struct {
	Entries []*gMapEntry `parser:"( @@ ( ',' @@ )* )?"`
}

type gMapEntry struct {
	Key   *gExpr `parser:"@@ ':='"`
	Value *gExpr `parser:"@@"`
}

type gStructCtr struct {
	Entries []*gStructEntry `parser:"( @@ ( ',' @@ )* )?"`
}

type gStructEntry struct {
	Name  *gIdent `parser:"@@ ':='"`
	Value *gExpr  `parser:"@@"`
}

type gCall struct {
	Pos          lexer.Position
	Name         *gIdent  `parser:"@@ '(' ("`
	Star         bool     `parser:"    @'*'"`
	Distinct     bool     `parser:"  | @'DISTINCT'"`
	DistinctArgs []*gExpr `parser:"    @@ ( ',' @@ )*"`
	Args         []*gArg  `parser:"  | @@ ( ',' @@ )* )? ')'"`
}

// gArg is one argument of a call: a lambda (x => …, (x, y) => …), which
// only higher-order functions such as TRANSFORM accept, or an expression.
type gArg struct {
	Lambda *gLambda `parser:"  @@"`
	Expr   *gExpr   `parser:"| @@"`
}

type gLambda struct {
	Pos    lexer.Position
	Params []*gIdent `parser:"( '(' @@ ( ',' @@ )* ')' | @@ ) '=>'"`
	Body   *gExpr    `parser:"@@"`
}

type gColumnRef struct {
	Pos   lexer.Position
	First *gIdent `parser:"@@"`
	Next  *gIdent `parser:"( '.' @@ )?"`
}

var parserOptions = []participle.Option{
	participle.Lexer(sqlLexer),
	participle.Elide("Whitespace", "Comment"),
	participle.CaseInsensitive("Ident"),
	participle.UseLookahead(participle.MaxLookahead),
}

var (
	scriptParser = participle.MustBuild[gScript](parserOptions...)
	exprParser   = participle.MustBuild[gExpr](parserOptions...)
)
