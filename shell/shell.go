package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
)

// Prompts: the continuation prompt is as wide as the first so that
// multi-line statements line up.
const (
	Prompt             = "sluice> "
	ContinuationPrompt = "   ...> "
)

// Options configure a Shell.
type Options struct {
	Backend Backend
	// Lines is where input comes from: an editor on a terminal, a plain
	// reader for scripts.
	Lines LineReader
	// Out gets results, Err errors.
	Out, Err io.Writer
	// Interactive keeps going after an error and lets Ctrl-C stop only
	// the running statement; otherwise the first error ends Run.
	Interactive bool
}

// Shell is the read-eval-print loop.
type Shell struct {
	be          Backend
	lines       LineReader
	stdout, err io.Writer
	interactive bool

	// out is stdout, plus the spool file while SPOOL is on.
	out    io.Writer
	spool  *os.File
	format Format
	timing bool

	mu      sync.Mutex
	pending string
	// stop cancels the statement running now (Ctrl-C).
	stop context.CancelFunc
}

// New returns a shell.
func New(o Options) *Shell {
	return &Shell{be: o.Backend, lines: o.Lines, stdout: o.Out, out: o.Out, err: o.Err, interactive: o.Interactive, format: FormatTable}
}

// Complete is the shell's Completer: keywords, catalog names and
// property names for the word before the cursor.
func (s *Shell) Complete(pending, line string) (words []string, typed string) {
	return complete(pending, line, func() Names {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		return s.be.Names(ctx)
	})
}

// Pending returns the statement typed so far on earlier lines.
func (s *Shell) Pending() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// StatementError is a statement that failed; Run returns it in scripts
// so the caller can exit with the code for bad input.
type StatementError struct{ Msg string }

func (e *StatementError) Error() string { return e.Msg }

// errExit is the exit command.
var errExit = errors.New("exit")

// ErrInterrupted ends a script stopped by Ctrl-C (SIGINT) between
// statements: the caller exits non-zero, as a shell does.
var ErrInterrupted = errors.New("interrupted")

// Run reads and runs statements until end of input, exit, or ctx ends.
// In a script the first failing statement ends it with a
// *StatementError (already printed).
func (s *Shell) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer s.spoolOff()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-sigs:
				s.mu.Lock()
				stop := s.stop
				s.mu.Unlock()
				switch {
				case sig == syscall.SIGTERM:
					cancel(nil)
					_ = s.lines.Close()
				case stop != nil:
					stop()
				case !s.interactive:
					cancel(ErrInterrupted)
				}
			}
		}
	}()

	for {
		prompt := Prompt
		if s.Pending() != "" {
			prompt = ContinuationPrompt
		}
		line, err := s.lines.ReadLine(prompt)
		if ctx.Err() != nil {
			return interrupted(ctx)
		}
		switch {
		case errors.Is(err, ErrInterrupt):
			s.setPending("")
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed):
			// A script's last statement may omit its `;`.
			if rest := s.Pending(); !blank(rest) {
				s.setPending("")
				return s.runLine(ctx, rest+";")
			}
			return nil
		case err != nil:
			return fmt.Errorf("read input: %w", err)
		}
		if s.Pending() == "" {
			if done, err := s.command(line); done {
				s.lines.AddHistory(strings.TrimSpace(line))
				if errors.Is(err, errExit) {
					return nil
				}
				if err != nil {
					fmt.Fprintln(s.errOut(), err)
					if !s.interactive {
						return &StatementError{Msg: err.Error()}
					}
				}
				continue
			}
		}
		text := s.Pending() + line + "\n"
		stmts, rest := parser.SplitStatements(text)
		if blank(rest) {
			rest = ""
		}
		s.setPending(rest)
		if len(stmts) == 0 {
			continue
		}
		s.lines.AddHistory(historyEntry(text[:len(text)-len(rest)]))
		for _, st := range stmts {
			if err := s.runLine(ctx, st); err != nil {
				if !s.interactive {
					return err
				}
			}
			if ctx.Err() != nil {
				return interrupted(ctx)
			}
		}
	}
}

// interrupted is what Run returns once ctx ended: ErrInterrupted after
// Ctrl-C in a script, nil after SIGTERM or the caller's cancel.
func interrupted(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), ErrInterrupted) {
		return ErrInterrupted
	}
	return nil
}

func (s *Shell) setPending(p string) {
	s.mu.Lock()
	s.pending = p
	s.mu.Unlock()
}

// historyEntry joins a multi-line statement into one line, so Up brings
// back the whole statement.
func historyEntry(text string) string {
	var parts []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// runLine runs one statement and prints its result or error.
func (s *Shell) runLine(ctx context.Context, text string) error {
	err := s.runStatement(ctx, text, 0)
	if err != nil {
		fmt.Fprintln(s.errOut(), err)
	}
	return err
}

func (s *Shell) errOut() io.Writer {
	if s.spool != nil {
		return io.MultiWriter(s.err, s.spool)
	}
	return s.err
}

// maxScriptDepth bounds RUN SCRIPT nesting (a script that runs itself).
const maxScriptDepth = 8

func (s *Shell) runStatement(ctx context.Context, text string, depth int) error {
	parsed, err := parser.ParseScript(text)
	if err != nil {
		return &StatementError{Msg: engine.FormatError(text, err)}
	}
	for _, p := range parsed {
		if rs, ok := p.Stmt.(*parser.RunScript); ok {
			if err := s.runScript(ctx, rs.Path, depth+1); err != nil {
				return err
			}
			continue
		}
		sctx, stop := context.WithCancel(ctx)
		s.mu.Lock()
		s.stop = stop
		s.mu.Unlock()
		err := s.execute(sctx, text, p)
		s.mu.Lock()
		s.stop = nil
		s.mu.Unlock()
		stop()
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Shell) execute(ctx context.Context, text string, p parser.Parsed) error {
	start := time.Now()
	res, err := s.be.Execute(ctx, p)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			fmt.Fprintln(s.out, "Statement cancelled")
			return nil
		}
		return &StatementError{Msg: engine.FormatError(text, err)}
	}
	rows := -1
	if res.Rows != nil {
		if rows, err = s.printRows(ctx, res.Rows); err != nil {
			return err
		}
	} else {
		rows = writeResult(s.out, s.format, res)
	}
	if s.timing {
		d := time.Since(start)
		if rows >= 0 {
			unit := "rows"
			if rows == 1 {
				unit = "row"
			}
			fmt.Fprintf(s.out, "%d %s in %.3f s (%.0f rows/s)\n", rows, unit, d.Seconds(), float64(rows)/max(d.Seconds(), 1e-9))
		} else {
			fmt.Fprintf(s.out, "took %.3f s\n", d.Seconds())
		}
	}
	return nil
}

// writeResult prints a result without rows and returns how many rows
// its table has (-1: none).
func writeResult(w io.Writer, f Format, res *Result) int {
	rows := -1
	if res.Message != "" {
		fmt.Fprintln(w, res.Message)
	}
	if res.Text != "" {
		io.WriteString(w, strings.TrimRight(res.Text, "\n")+"\n")
	}
	if res.Table != nil {
		writeTable(w, f, res.Table)
		rows = len(res.Table.Rows)
	}
	io.WriteString(w, res.After)
	return rows
}

// printRows prints a query's rows until it ends or ctx does (Ctrl-C),
// and returns how many it printed.
func (s *Shell) printRows(ctx context.Context, rows RowStream) (int, error) {
	defer rows.Close()
	if rows.Pull() && s.format == FormatTable {
		var all [][]any
		for {
			row, ok, err := rows.Next(ctx)
			if err != nil && ctx.Err() == nil {
				return len(all), &StatementError{Msg: err.Error()}
			}
			if !ok {
				break
			}
			all = append(all, row)
		}
		writeTable(s.out, s.format, rowsTable(rows.Columns(), all))
		return len(all), nil
	}
	if s.interactive && !rows.Pull() {
		fmt.Fprintln(s.out, "Press Ctrl-C to stop the query.")
	}
	p := newRowPrinter(s.out, s.format, rows.Columns())
	p.header()
	n := 0
	for {
		row, ok, err := rows.Next(ctx)
		if err != nil && ctx.Err() == nil {
			p.footer()
			return n, &StatementError{Msg: err.Error()}
		}
		if !ok {
			break
		}
		p.row(row)
		n++
	}
	if ctx.Err() != nil && s.interactive {
		// The terminal echoed ^C where the next line would start.
		fmt.Fprintln(s.out)
	}
	p.footer()
	if ctx.Err() != nil {
		fmt.Fprintln(s.out, "Query terminated")
	}
	return n, nil
}

// runScript runs the statements of a file (RUN SCRIPT), stopping at the
// first error.
func (s *Shell) runScript(ctx context.Context, path string, depth int) error {
	if depth > maxScriptDepth {
		return &StatementError{Msg: fmt.Sprintf("RUN SCRIPT '%s': scripts nest more than %d deep", path, maxScriptDepth)}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return &StatementError{Msg: fmt.Sprintf("RUN SCRIPT: %v", err)}
	}
	stmts, rest := parser.SplitStatements(string(src))
	if !blank(rest) {
		stmts = append(stmts, rest)
	}
	for _, st := range stmts {
		if err := s.runStatement(ctx, st, depth); err != nil {
			return &StatementError{Msg: fmt.Sprintf("%s: %v", filepath.Base(path), err)}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

const helpText = `Statements end with ';' and may span lines. Besides SQL (CREATE, INSERT,
SELECT, SHOW/LIST, DESCRIBE, EXPLAIN, TERMINATE, DROP, SET/UNSET, PRINT,
RUN SCRIPT 'file'), the shell knows:

  help                    this text
  exit, quit              leave the shell (or Ctrl-D)
  \format table|json|csv  how results print (now: %s)
  \timing                 print the time and rows of each statement (now: %s)
  SPOOL 'file'            copy the session's output to a file; SPOOL OFF stops

Ctrl-C clears the line, or stops the running query. Tab completes
keywords, streams, tables, columns, functions and property names.
`

// command runs a shell command (help, exit, \format, \timing, SPOOL) if
// line is one; done says whether it was.
func (s *Shell) command(line string) (done bool, err error) {
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ";"))
	if len(f) == 0 {
		return false, nil
	}
	switch strings.ToLower(f[0]) {
	case "exit", "quit", `\q`:
		if len(f) == 1 {
			return true, errExit
		}
	case "help", `\h`, `\?`:
		if len(f) == 1 {
			fmt.Fprintf(s.out, helpText, s.format, onOff(s.timing))
			return true, nil
		}
	case `\format`:
		if len(f) != 2 {
			return true, fmt.Errorf(`usage: \format table|json|csv`)
		}
		fm, err := ParseFormat(f[1])
		if err != nil {
			return true, err
		}
		s.format = fm
		return true, nil
	case `\timing`:
		switch {
		case len(f) == 1:
			s.timing = !s.timing
		case strings.EqualFold(f[1], "on") || strings.EqualFold(f[1], "off"):
			s.timing = strings.EqualFold(f[1], "on")
		default:
			return true, fmt.Errorf(`usage: \timing [on|off]`)
		}
		fmt.Fprintf(s.out, "Timing is %s.\n", onOff(s.timing))
		return true, nil
	case "spool":
		if len(f) != 2 {
			return true, fmt.Errorf("usage: SPOOL 'file' | SPOOL OFF")
		}
		if strings.EqualFold(f[1], "off") {
			s.spoolOff()
			return true, nil
		}
		return true, s.spoolOn(strings.Trim(f[1], `'"`))
	}
	return false, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func (s *Shell) spoolOn(path string) error {
	s.spoolOff()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("SPOOL: %w", err)
	}
	s.spool = f
	s.out = io.MultiWriter(s.stdout, f)
	return nil
}

func (s *Shell) spoolOff() {
	if s.spool != nil {
		_ = s.spool.Close()
		s.spool = nil
	}
	s.out = s.stdout
}
