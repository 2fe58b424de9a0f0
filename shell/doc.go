// Package shell is the interactive REPL, `sluice shell` (the binary's
// default command): it reads statements, runs them on a Backend and
// prints their results.
//
// Place in the flow: cmd/sluice builds a Backend — Embedded, an
// engine.Engine in this process, or Remote, a client of `sluice server`'s
// HTTP API (/ksql, /query-stream, /close-query) — and a LineReader, then
// calls Shell.Run. The shell sits beside server/ above engine/; it never
// reaches into the engine beyond engine.Engine's exported API.
//
// The parts, one file each:
//
//   - split.go cuts input into statements at `;` outside strings and
//     comments (the parser's lexing rules), so a statement may span lines
//     and the continuation prompt shows while one is open.
//   - lineedit.go holds LineReader: an editor over github.com/chzyer/readline
//     on a terminal (history of whole statements in
//     $XDG_STATE_HOME/sluice/history, Ctrl-C clears even with the
//     completion menu open, Ctrl-D leaves), or a
//     plain reader for scripts and pipes (no prompt, first error ends).
//   - complete.go completes keywords, stream, table, column and function
//     names from the backend's Names (catalog names as SQL that names
//     them: in their case, backquoted when not upper case), SHOW targets,
//     SET property names and, inside WITH ( … ) only, WITH properties.
//   - render.go prints finite results as tables (go-pretty), JSON or CSV,
//     and query rows as they arrive (column widths fixed with the header,
//     wider values wrapped inside their column), with NULL visible.
//   - embedded.go, remote.go and entities.go reduce both backends'
//     results to one Result, so output does not depend on the backend:
//     SHOW, DESCRIBE and EXPLAIN arrive as package ksqlwire's entities
//     (decoded from the server's answer, or made by engine.WireEntity)
//     and wireResult lays them out; the embedded backend adds DESCRIBE …
//     EXTENDED's engine.SourceDescription.Runtime after the columns.
//     WriteEntity prints an engine result the same way without a shell
//     (`sluice run`).
//   - print.go is PRINT 'topic': the embedded backend reads the topic
//     (topicprint.Reader), the remote one the server's PRINT lines, and
//     both make the same rows.
//
// Example (what cmd/sluice does for `sluice shell -e …`):
//
//	be := shell.NewEmbedded(eng, connOpts)
//	sh := shell.New(shell.Options{Backend: be, Lines: shell.NewPlainReader(strings.NewReader("SHOW STREAMS;")),
//	    Out: os.Stdout, Err: os.Stderr})
//	err := sh.Run(ctx) // a *StatementError after printing the first failure
package shell
