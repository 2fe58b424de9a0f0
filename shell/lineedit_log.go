package shell

import "io"

// LogWriter returns a writer for log entries that keeps the terminal
// editor's prompt intact: while a line is being edited it clears the
// prompt line, writes the entry, and draws the prompt and the line typed
// so far again below it; otherwise it writes straight to stderr. It
// returns nil for a reader that edits no terminal line (scripts, -e),
// whose log entries need no such care.
func LogWriter(lines LineReader) io.Writer {
	if e, ok := lines.(*editor); ok {
		return e.rl.Stderr()
	}
	return nil
}
