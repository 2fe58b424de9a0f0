package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
// cursor. It returns each candidate's remainder and the word's length.
type Completer func(pending, line string) (rest []string, wordLen int)

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
	rl, err := readline.NewEx(&readline.Config{
		HistoryFile: historyFile,
		// Entries are whole statements, saved by AddHistory, not each
		// line of a multi-line statement.
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete:           &completerAdapter{complete: complete, pending: pending},
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
	})
	if err != nil {
		return nil, fmt.Errorf("line editor: %w", err)
	}
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
}

// Do implements readline.AutoCompleter.
func (c *completerAdapter) Do(line []rune, pos int) ([][]rune, int) {
	rest, n := c.complete(c.pending(), string(line[:pos]))
	out := make([][]rune, len(rest))
	for i, r := range rest {
		out[i] = []rune(r)
	}
	return out, n
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
