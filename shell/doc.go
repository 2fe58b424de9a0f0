// Package shell will hold the interactive REPL (`sluice shell`): readline
// line editing behind a small interface, multi-line statements, history,
// completion from the catalog, and result tables. It sits above engine/
// (embedded mode) or talks to server/ over HTTP (client mode).
//
// Its work is tracked as its own issue; nothing here runs yet.
package shell
