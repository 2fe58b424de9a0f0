// Package parser turns Sluice SQL text into an AST.
//
// # Place in the flow
//
//	SQL text ─► parser/ ─► planner/ ─► exec/ ─► state/
//
// The parser is the first step and depends on nothing else of ours. It
// reads ksqlDB's dialect (so ksqlDB statements and test files carry over)
// plus a compact window syntax, and hands the planner a tree of the types
// in ast.go, every node carrying its source Pos. The shell, `sluice run`
// and the server call Parse or ParseScript; the server stores each
// statement's Text in the command topic.
//
// The package has five parts, kept apart on purpose:
//
//   - grammar.go: the participle lexer and grammar structs (g* types), which
//     mirror the text and are never seen outside the package;
//   - convert.go: one pass from grammar structs to the AST, which also
//     checks what the grammar cannot (a HOPPING window needs ADVANCE, a
//     duration needs a whole number, …);
//   - printer.go: String() on every node, printing normalized SQL that
//     parses back to the same tree (FuzzParse checks this);
//   - parser.go: the API and *Error, which names the unexpected token,
//     what was expected, and shows the line with a caret.
//   - walk.go: the one walker over expressions, Inspect (visit every node)
//     and Rewrite (copy the tree with some nodes replaced), for every
//     package that looks into or rewrites an expression.
//
// Names follow ksqlDB: unquoted identifiers are upper-cased, `backquoted`
// and "double-quoted" ones keep their case. Only clause words (SELECT,
// FROM, WHERE, JOIN, AND, CASE, …, see reserved in grammar.go) are
// reserved; words like SIZE, KEY, VALUE or TIMESTAMP can name columns.
//
// # Example
//
//	stmts, err := parser.Parse(`
//	    CREATE TABLE hotel_5m AS
//	      SELECT hotel, COUNT(*) AS bookings FROM bookings
//	      WINDOW TUMBLING 5m GRACE 2m
//	      GROUP BY hotel EMIT CHANGES;`)
//	if err != nil {
//	    var perr *parser.Error
//	    if errors.As(err, &perr) {
//	        fmt.Println(perr.Pretty()) // message, source line, caret
//	    }
//	    return err
//	}
//	ct := stmts[0].(*parser.CreateSource)
//	w := ct.Query.Window // {Kind: WindowTumbling, Size: 5m, Grace: 2m, HasGrace: true, Compact: true}
//	fmt.Println(ct)
//	// CREATE TABLE HOTEL_5M AS SELECT HOTEL, COUNT(*) AS BOOKINGS FROM BOOKINGS
//	//   WINDOW TUMBLING 5m GRACE 2m GROUP BY HOTEL EMIT CHANGES   (on one line)
//
// WINDOW TUMBLING (SIZE 5 MINUTES, GRACE PERIOD 2 MINUTES) gives the same
// WindowSpec except Compact, which only decides how it is printed.
//
// A misspelt keyword gives an error like:
//
//	line 1:10: unexpected "FORM", expected "FROM"
//	SELECT a FORM b
//	         ^
//
// Tests: parser_test.go (round trips, trees, positions, errors),
// testdata/* (datadriven; regenerate with `go test ./parser -run
// DataDriven -rewrite`), conformance_test.go (ksqlDB's own statements
// from ../shared/conformance/ksqldb), and FuzzParse.
package parser
