package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/chzyer/readline"
)

// LineReader reads the user's input a line at a time. The shell sees
// readline only through it, so scripts run on a plain reader with the
// same loop.
type LineReader interface {
	// ReadLine returns the next line without its newline: io.EOF at the
	// end (Ctrl-D), ErrInterrupt when the user pressed Ctrl-C.
	ReadLine(prompt string) (string, error)
	// AddHistory records a whole statement as one history entry.
	AddHistory(entry string)
	Close() error
}

// ErrInterrupt is Ctrl-C at the prompt: the shell drops the statement
// being typed.
var ErrInterrupt = errors.New("interrupted")

// plainReader reads lines from a script or a pipe: no prompt, no
// history, no terminal control.
type plainReader struct{ r *bufio.Reader }

// NewPlainReader reads lines from r.
func NewPlainReader(r io.Reader) LineReader { return &plainReader{r: bufio.NewReader(r)} }

func (p *plainReader) ReadLine(string) (string, error) {
	line, err := p.r.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (p *plainReader) AddHistory(string) {}
func (p *plainReader) Close() error      { return nil }

// editor is the terminal line editor (github.com/chzyer/readline):
// Emacs keys, history search, tab completion.
type editor struct{ rl *readline.Instance }

// Completer completes the word before the cursor: pending is the
// statement typed on earlier lines, line the current line up to the
// cursor. It returns what the word may become, each candidate whole,
// and the word as typed.
type Completer func(pending, line string) (words []string, typed string)

// NewEditor starts line editing on the terminal with history in
// historyFile ("" for none).
func NewEditor(historyFile string, complete Completer, pending func() string) (LineReader, error) {
	if historyFile != "" {
		if err := os.MkdirAll(filepath.Dir(historyFile), 0o700); err != nil {
			// A shell without history beats no shell.
			fmt.Fprintf(os.Stderr, "no history: %v\n", err)
			historyFile = ""
		}
	}
	ca := &completerAdapter{complete: complete, pending: pending}
	var inst atomic.Pointer[readline.Instance]
	rl, err := readline.NewEx(&readline.Config{
		HistoryFile: historyFile,
		// Entries are whole statements, saved by AddHistory, not each
		// line of a multi-line statement.
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete:           ca,
		Listener:               ca,
		FuncFilterInputRune: func(r rune) (rune, bool) {
			// readline's first Ctrl-C with the completion menu open only
			// closes the menu; ours clears the line as it does anywhere
			// else: leaving completion first lets the key do that.
			if rl := inst.Load(); r == readline.CharInterrupt && rl != nil && rl.Operation.IsInCompleteMode() {
				rl.Operation.ExitCompleteMode(false)
			}
			return r, true
		},
		InterruptPrompt: "^C",
		EOFPrompt:       "",
	})
	if err != nil {
		return nil, fmt.Errorf("line editor: %w", err)
	}
	inst.Store(rl)
	return &editor{rl: rl}, nil
}

func (e *editor) ReadLine(prompt string) (string, error) {
	e.rl.SetPrompt(prompt)
	line, err := e.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", ErrInterrupt
	}
	return line, err
}

func (e *editor) AddHistory(entry string) { _ = e.rl.SaveHistory(entry) }
func (e *editor) Close() error            { return e.rl.Close() }

type completerAdapter struct {
	complete Completer
	pending  func() string

	// offered is the completion Do offered last, for OnChange to fix
	// up once readline has written a candidate's remainder. Do and
	// OnChange both run on readline's input goroutine.
	offered *offer
}

// offer is a completion of the word that starts at rune start.
type offer struct {
	start int
	// written are typed word + remainder as readline writes them, and
	// words what each should become.
	written, words []string
}

// Do implements readline.AutoCompleter.
func (c *completerAdapter) Do(line []rune, pos int) ([][]rune, int) {
	words, typed := c.complete(c.pending(), string(line[:pos]))
	n := len([]rune(typed))
	o := &offer{start: pos - n}
	var out [][]rune
	for _, w := range words {
		if r := rests([]string{w}, typed); len(r) == 1 {
			out = append(out, []rune(r[0]))
			o.written = append(o.written, typed+r[0])
			o.words = append(o.words, w)
		}
	}
	c.offered = o
	return out, n
}

// OnChange implements readline.Listener. readline only appends to the
// typed word, so once it has written a candidate whole the word is
// replaced by the candidate as complete gave it (a catalog name in the
// catalog's case, backquoted where it must be). Any key but Tab that
// does not finish a candidate ends the offer.
func (c *completerAdapter) OnChange(line []rune, pos int, key rune) ([]rune, int, bool) {
	o := c.offered
	if o == nil {
		return nil, 0, false
	}
	newLine, newPos, ok := o.fix(line, pos)
	if ok || key != readline.CharTab {
		c.offered = nil
	}
	return newLine, newPos, ok
}

// fix replaces a written candidate that starts at o.start and ends at or
// before pos by its word.
func (o *offer) fix(line []rune, pos int) ([]rune, int, bool) {
	for i, w := range o.written {
		wr := []rune(w)
		end := o.start + len(wr)
		if o.start < 0 || end > pos || string(line[o.start:end]) != w || w == o.words[i] {
			continue
		}
		out := append(append(append([]rune{}, line[:o.start]...), []rune(o.words[i])...), line[end:]...)
		return out, pos + len([]rune(o.words[i])) - len(wr), true
	}
	return nil, 0, false
}

// HistoryFile is where the shell keeps its history:
// $XDG_STATE_HOME/sluice/history, else ~/.local/state/sluice/history,
// else under the user's configuration directory.
func HistoryFile() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sluice", "history"), nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "sluice", "history"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for the history file: %w", err)
	}
	return filepath.Join(d, "sluice", "history"), nil
}
