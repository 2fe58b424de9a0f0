package parser

import "time"

// Pos is a position in the SQL text: 1-based line and column, and the
// 0-based byte offset.
type Pos struct {
	Line, Column, Offset int
}

// Node is any AST node. Every node prints itself back as parseable SQL.
type Node interface {
	Position() Pos
	String() string
}

// Statement is one top-level SQL statement.
type Statement interface {
	Node
	statement()
}

// Expr is a scalar expression.
type Expr interface {
	Node
	expr()
}

// SourceKind says whether a source is a STREAM or a TABLE.
type SourceKind int

const (
	KindStream SourceKind = iota
	KindTable
)

func (k SourceKind) String() string {
	if k == KindTable {
		return "TABLE"
	}
	return "STREAM"
}

// TypeName is a SQL type as written: a scalar name (upper-cased, e.g.
// "VARCHAR", "DECIMAL") or a custom type's name (upper-cased unless it was
// quoted; see CreateType), with Params for DECIMAL(p, s), Elem for ARRAY<…>,
// Key and Elem for MAP<…, …>, Fields for STRUCT<…>.
type TypeName struct {
	Pos    Pos
	Name   string
	Params []int
	Elem   *TypeName
	Key    *TypeName
	Fields []StructField
}

// StructField is one field of a STRUCT type name.
type StructField struct {
	Name string
	Type *TypeName
}

// ColumnDef is a column in CREATE STREAM/TABLE (…).
type ColumnDef struct {
	Pos        Pos
	Name       string
	Type       *TypeName
	Key        bool // KEY (streams) or PRIMARY KEY (tables)
	PrimaryKey bool // spelled PRIMARY KEY
	// Headers marks a HEADERS column (all the record's headers) or, with
	// HeaderKey set, a HEADER('k') column (the last value of header k).
	Headers   bool
	HeaderKey string
}

// Property is one NAME=value entry of a WITH (…) clause. Name is
// upper-cased; Value is a *Literal.
type Property struct {
	Pos   Pos
	Name  string
	Value *Literal
}

// CreateSource is CREATE [OR REPLACE] STREAM|TABLE [IF NOT EXISTS] name
// [(columns)] [WITH (…)] [AS SELECT …].
type CreateSource struct {
	Pos         Pos
	Kind        SourceKind
	OrReplace   bool
	IfNotExists bool
	Source      bool // CREATE SOURCE STREAM|TABLE (read-only)
	Name        string
	Columns     []ColumnDef
	With        []Property
	Query       *Select // non-nil for CREATE … AS SELECT
}

// InsertValues is INSERT INTO target [(cols)] VALUES (…).
type InsertValues struct {
	Pos     Pos
	Target  string
	Columns []string
	Values  []Expr
}

// InsertSelect is INSERT INTO target [WITH (…)] SELECT ….
type InsertSelect struct {
	Pos    Pos
	Target string
	// TargetPos is where the target's name is written, for an error
	// about the target itself.
	TargetPos Pos
	With      []Property
	Query     *Select
}

// Select is a query. As a statement it is a push or pull query; inside
// CREATE … AS or INSERT INTO it defines a persistent query.
type Select struct {
	Pos         Pos
	Items       []SelectItem
	From        *Relation
	Joins       []*Join
	Window      *WindowSpec
	Where       Expr
	GroupBy     []Expr
	PartitionBy []Expr
	Having      Expr
	Emit        EmitMode
	Limit       int // 0 means no limit
	HasLimit    bool
}

// SelectItem is `*`, `src.*`, or `expr [AS alias]`.
type SelectItem struct {
	Pos        Pos
	Star       bool
	StarSource string // for src.*
	Expr       Expr
	Alias      string
	// AllFields is Expr->*: one output column per field of the struct
	// Expr, named after the field.
	AllFields bool
}

// Relation is a named source in FROM or JOIN, with an optional alias.
type Relation struct {
	Pos   Pos
	Name  string
	Alias string
}

// JoinType is the kind of a join.
type JoinType int

const (
	JoinInner JoinType = iota
	JoinLeft
	JoinRight
	JoinFull
)

func (j JoinType) String() string {
	return [...]string{"INNER", "LEFT", "RIGHT", "FULL"}[j]
}

// Join is `[INNER|LEFT|RIGHT|FULL [OUTER]] JOIN rel [WITHIN …] ON expr`.
type Join struct {
	Pos    Pos
	Type   JoinType
	Right  *Relation
	Within *JoinWindow
	On     Expr
}

// JoinWindow is WITHIN n unit or WITHIN (before, after) [GRACE PERIOD g].
type JoinWindow struct {
	Before, After time.Duration
	Grace         time.Duration
	HasGrace      bool
}

// WindowKind names the window shape.
type WindowKind int

const (
	WindowTumbling WindowKind = iota
	WindowHopping
	WindowSession
	WindowSliding
)

func (w WindowKind) String() string {
	return [...]string{"TUMBLING", "HOPPING", "SESSION", "SLIDING"}[w]
}

// WindowSpec is the WINDOW clause in either syntax. Size is the window
// size (the gap for SESSION, the time difference for SLIDING); Advance is
// used by HOPPING. Has* flags say whether a clause was written, so that
// defaults can be applied and printed honestly.
type WindowSpec struct {
	Pos          Pos
	Kind         WindowKind
	Size         time.Duration
	Advance      time.Duration
	Grace        time.Duration
	HasGrace     bool
	Retention    time.Duration
	HasRetention bool
	Compact      bool // written in the compact form (`5m`), kept for printing
}

// EmitMode is the EMIT clause.
type EmitMode int

const (
	EmitNone EmitMode = iota // not written
	EmitChanges
	EmitFinal
)

// SetProperty is SET 'name'='value'.
type SetProperty struct {
	Pos   Pos
	Name  string
	Value string
}

// UnsetProperty is UNSET 'name'.
type UnsetProperty struct {
	Pos  Pos
	Name string
}

// ShowKind names what SHOW / LIST lists.
type ShowKind int

const (
	ShowStreams ShowKind = iota
	ShowTables
	ShowQueries
	ShowTopics
	ShowProperties
	ShowFunctions
	ShowTypes
)

func (s ShowKind) String() string {
	return [...]string{"STREAMS", "TABLES", "QUERIES", "TOPICS", "PROPERTIES", "FUNCTIONS", "TYPES"}[s]
}

// Show is SHOW|LIST STREAMS|TABLES|QUERIES|TOPICS|PROPERTIES|FUNCTIONS|TYPES [EXTENDED].
type Show struct {
	Pos      Pos
	What     ShowKind
	Extended bool
}

// Describe is DESCRIBE name [EXTENDED], or DESCRIBE FUNCTION name.
type Describe struct {
	Pos      Pos
	Name     string
	Extended bool
	Function bool
}

// Explain is EXPLAIN statement, or EXPLAIN query_id.
type Explain struct {
	Pos       Pos
	Statement Statement // nil when QueryID is set
	QueryID   string
}

// Terminate is TERMINATE query_id or TERMINATE ALL.
type Terminate struct {
	Pos     Pos
	QueryID string
	All     bool
}

// PauseQuery is PAUSE query_id | PAUSE ALL, or with Resume, RESUME …: a
// paused persistent query stops reading and keeps its place, state and
// group membership until it is resumed.
type PauseQuery struct {
	Pos     Pos
	Resume  bool
	QueryID string
	All     bool
}

// Drop is DROP STREAM|TABLE [IF EXISTS] name [DELETE TOPIC].
type Drop struct {
	Pos         Pos
	Kind        SourceKind
	Name        string
	IfExists    bool
	DeleteTopic bool
}

// CreateType is CREATE TYPE [IF NOT EXISTS] name AS type: a named alias
// for a type, usable wherever a type is written. Name is upper-cased
// unless it was quoted.
type CreateType struct {
	Pos         Pos
	Name        string
	IfNotExists bool
	Type        *TypeName
}

// FunctionKind is what CREATE FUNCTION makes: a scalar, an aggregate
// (CREATE AGGREGATE FUNCTION) or a table function (CREATE TABLE FUNCTION).
type FunctionKind int

const (
	ScalarFunction FunctionKind = iota
	AggregateFunction
	TableFunction
)

// CreateFunction is CREATE [OR REPLACE] [AGGREGATE|TABLE] FUNCTION name
// (param type, …) RETURNS type [[NOT] DETERMINISTIC] LANGUAGE lang
// [AS $$ body $$] [WITH (…)]. Name is upper-cased unless it was quoted;
// Language is upper-cased; Body is the text between the $$ (HasBody says
// there was one, BodyPos where it starts).
type CreateFunction struct {
	Pos           Pos
	OrReplace     bool
	Kind          FunctionKind
	Name          string
	Params        []FunctionParam
	Returns       *TypeName
	Deterministic bool
	Language      string
	Body          string
	HasBody       bool
	// BodyPos is where Body starts in the statement (just after the
	// opening $$), to place an error inside the body.
	BodyPos Pos
	With    []Property
}

// FunctionParam is a parameter of CREATE FUNCTION. Variadic marks
// VARIADIC name ARRAY<T>: the last parameter, taking any number of T.
type FunctionParam struct {
	Pos      Pos
	Name     string
	Type     *TypeName
	Variadic bool
}

// DropFunction is DROP FUNCTION [IF EXISTS] name.
type DropFunction struct {
	Pos      Pos
	Name     string
	IfExists bool
}

// DropType is DROP TYPE [IF EXISTS] name.
type DropType struct {
	Pos      Pos
	Name     string
	IfExists bool
}

// ConnectorType says whether a connector is a SOURCE (into Kafka) or a
// SINK (out of Kafka) connector.
type ConnectorType int

const (
	ConnectorSource ConnectorType = iota + 1
	ConnectorSink
)

func (t ConnectorType) String() string {
	if t == ConnectorSink {
		return "SINK"
	}
	return "SOURCE"
}

// ConnectorProperty is one 'key'=value entry of a connector's WITH (…).
// Key is as written when quoted ('connector.class'), upper-cased when an
// unquoted identifier, as ksqlDB reads it; Value is a *Literal.
type ConnectorProperty struct {
	Pos   Pos
	Key   string
	Value *Literal
}

// CreateConnector is CREATE SOURCE|SINK CONNECTOR [IF NOT EXISTS] name
// WITH (…): a connector Kafka Connect runs. Name is upper-cased unless
// it was quoted, as ksqlDB names the connector.
type CreateConnector struct {
	Pos         Pos
	Type        ConnectorType
	IfNotExists bool
	Name        string
	Config      []ConnectorProperty
}

// ShowConnectors is SHOW|LIST [SOURCE|SINK] CONNECTORS; Type 0 lists
// every connector.
type ShowConnectors struct {
	Pos  Pos
	Type ConnectorType
}

// ShowConnectorPlugins is SHOW|LIST CONNECTOR PLUGINS.
type ShowConnectorPlugins struct {
	Pos Pos
}

// DescribeConnector is DESCRIBE CONNECTOR name.
type DescribeConnector struct {
	Pos  Pos
	Name string
}

// DropConnector is DROP CONNECTOR [IF EXISTS] name.
type DropConnector struct {
	Pos      Pos
	Name     string
	IfExists bool
}

// AlterSource is ALTER STREAM|TABLE name ADD [COLUMN] name type [, …]:
// value columns appended to a source's schema.
type AlterSource struct {
	Pos     Pos
	Kind    SourceKind
	Name    string
	Columns []ColumnDef
}

// Print is PRINT 'topic'|topic [FROM BEGINNING] [INTERVAL n] [LIMIT n].
type Print struct {
	Pos           Pos
	Topic         string
	FromBeginning bool
	Interval      int
	Limit         int
	HasLimit      bool
}

// RunScript is RUN SCRIPT 'path'.
type RunScript struct {
	Pos  Pos
	Path string
}

// Define is DEFINE name = 'value'.
type Define struct {
	Pos   Pos
	Name  string
	Value string
}

// Undefine is UNDEFINE name.
type Undefine struct {
	Pos  Pos
	Name string
}

// AssertTopic is ASSERT [NOT EXISTS] TOPIC name [WITH (…)] [TIMEOUT d]:
// it succeeds once the topic exists (or, with NOT EXISTS, does not),
// waiting up to Timeout.
type AssertTopic struct {
	Pos       Pos
	NotExists bool
	// Topic is as written: Kafka topic names are case-sensitive.
	Topic string
	// With holds the properties to check (PARTITIONS, REPLICAS).
	With []Property
	// Timeout is set when HasTimeout; without it the server's default
	// (ksql.assert.topic.default.timeout.ms) applies.
	Timeout    time.Duration
	HasTimeout bool
}

// AssertSchema is ASSERT [NOT EXISTS] SCHEMA [SUBJECT name] [ID n]
// [TIMEOUT d]: at least one of Subject and ID is set.
type AssertSchema struct {
	Pos       Pos
	NotExists bool
	Subject   string
	ID        int
	HasID     bool
	// Timeout is set when HasTimeout; without it
	// ksql.assert.schema.default.timeout.ms applies.
	Timeout    time.Duration
	HasTimeout bool
}

func (*CreateSource) statement()   {}
func (*InsertValues) statement()   {}
func (*InsertSelect) statement()   {}
func (*Select) statement()         {}
func (*SetProperty) statement()    {}
func (*UnsetProperty) statement()  {}
func (*Show) statement()           {}
func (*Describe) statement()       {}
func (*Explain) statement()        {}
func (*Terminate) statement()      {}
func (*PauseQuery) statement()     {}
func (*Drop) statement()           {}
func (*AlterSource) statement()    {}
func (*CreateType) statement()     {}
func (*DropType) statement()       {}
func (*CreateFunction) statement() {}
func (*DropFunction) statement()   {}
func (*Print) statement()          {}
func (*RunScript) statement()      {}
func (*Define) statement()         {}
func (*Undefine) statement()       {}
func (*AssertTopic) statement()    {}
func (*AssertSchema) statement()   {}

func (*CreateConnector) statement()      {}
func (*ShowConnectors) statement()       {}
func (*ShowConnectorPlugins) statement() {}
func (*DescribeConnector) statement()    {}
func (*DropConnector) statement()        {}

// ---- expressions ----

// LiteralKind is the kind of a literal value.
type LiteralKind int

const (
	LitNull LiteralKind = iota
	LitBool
	LitInteger // fits int32 → INT, else BIGINT
	LitDecimal // a number with a point, e.g. 1.50 (ksqlDB types it DECIMAL)
	LitDouble  // a number with an exponent, e.g. 1e3
	LitString
)

// Literal is a constant. Text is the source spelling for numbers; Str
// the unquoted value for strings; Bool for booleans.
type Literal struct {
	Pos  Pos
	Kind LiteralKind
	Text string
	Str  string
	Bool bool
}

// ColumnRef is a column name, optionally qualified by a source or alias:
// `price`, `b.price`. Names are upper-cased unless they were quoted.
type ColumnRef struct {
	Pos    Pos
	Source string
	Name   string
}

// BinaryOp is a binary operator.
type BinaryOp int

const (
	OpAdd BinaryOp = iota
	OpSub
	OpMul
	OpDiv
	OpMod
	OpConcat // ||
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAnd
	OpOr
	OpIsDistinct    // IS DISTINCT FROM
	OpIsNotDistinct // IS NOT DISTINCT FROM
)

var binaryOpText = [...]string{"+", "-", "*", "/", "%", "||", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "IS DISTINCT FROM", "IS NOT DISTINCT FROM"}

func (o BinaryOp) String() string { return binaryOpText[o] }

// Binary is L op R.
type Binary struct {
	Pos   Pos
	Op    BinaryOp
	Left  Expr
	Right Expr
}

// UnaryOp is a prefix operator.
type UnaryOp int

const (
	OpNot UnaryOp = iota
	OpNeg
	OpPlus
)

// Unary is op X.
type Unary struct {
	Pos Pos
	Op  UnaryOp
	X   Expr
}

// FuncCall is name(args). COUNT(*) has Star set and no Args.
type FuncCall struct {
	Pos      Pos
	Name     string // upper-cased
	Args     []Expr
	Star     bool
	Distinct bool
}

// Lambda is a lambda function, x => body or (x, y) => body: an argument
// of a higher-order function (TRANSFORM, REDUCE, FILTER) that the function
// calls for each element. Inside Body the parameters are read as column
// references; they hide columns of the same name.
type Lambda struct {
	Pos    Pos
	Params []string // upper-cased unless quoted
	Body   Expr
}

// When is one WHEN … THEN … arm of a CASE.
type When struct {
	Cond   Expr
	Result Expr
}

// Case is CASE [operand] WHEN … THEN … [ELSE …] END. Operand is nil
// for a searched CASE.
type Case struct {
	Pos     Pos
	Operand Expr
	Whens   []When
	Else    Expr
}

// Cast is CAST(X AS type).
type Cast struct {
	Pos  Pos
	X    Expr
	Type *TypeName
}

// IsNull is X IS [NOT] NULL.
type IsNull struct {
	Pos Pos
	X   Expr
	Not bool
}

// In is X [NOT] IN (list).
type In struct {
	Pos  Pos
	X    Expr
	List []Expr
	Not  bool
}

// Between is X [NOT] BETWEEN Lo AND Hi.
type Between struct {
	Pos    Pos
	X      Expr
	Lo, Hi Expr
	Not    bool
}

// Like is X [NOT] LIKE pattern [ESCAPE 'c'].
type Like struct {
	Pos     Pos
	X       Expr
	Pattern Expr
	Escape  string
	Not     bool
}

// Subscript is X[index] for arrays and maps.
type Subscript struct {
	Pos   Pos
	X     Expr
	Index Expr
}

// Dereference is X->field for structs.
type Dereference struct {
	Pos   Pos
	X     Expr
	Field string
}

// ArrayCtor is ARRAY[e, …].
type ArrayCtor struct {
	Pos   Pos
	Elems []Expr
}

// MapCtor is MAP(k := v, …).
type MapCtor struct {
	Pos    Pos
	Keys   []Expr
	Values []Expr
}

// StructCtor is STRUCT(name := v, …).
type StructCtor struct {
	Pos    Pos
	Names  []string
	Values []Expr
}

func (*Literal) expr()     {}
func (*ColumnRef) expr()   {}
func (*Binary) expr()      {}
func (*Unary) expr()       {}
func (*FuncCall) expr()    {}
func (*Lambda) expr()      {}
func (*Case) expr()        {}
func (*Cast) expr()        {}
func (*IsNull) expr()      {}
func (*In) expr()          {}
func (*Between) expr()     {}
func (*Like) expr()        {}
func (*Subscript) expr()   {}
func (*Dereference) expr() {}
func (*ArrayCtor) expr()   {}
func (*MapCtor) expr()     {}
func (*StructCtor) expr()  {}
