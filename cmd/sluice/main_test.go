package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/testrunner"
)

// sluiceBin is the binary built once by TestMain.
var sluiceBin string

// repoRoot is the directory holding go.mod; commands run there.
var repoRoot string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sluice-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	sluiceBin = filepath.Join(dir, "sluice")
	build := exec.Command("go", "build", "-o", sluiceBin, "github.com/sluice-sql/sluice/cmd/sluice")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "go build:", err)
		return 1
	}
	if repoRoot, err = filepath.Abs(filepath.Join("..", "..")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Every binary a test starts without --brokers runs its embedded
	// broker on a free port, not on the fixed default (Kafka's 9092): many
	// run at once, and a developer's own Kafka may hold it. A test of the
	// default removes the variable from its command's environment.
	if err := os.Setenv("SLUICE_BROKER_LISTEN", "127.0.0.1:0"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// runSluice runs the binary to completion in the repository root.
func runSluice(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runSluiceIn(t, repoRoot, "", args...)
}

// runSluiceStdin is runSluice with stdin (a script piped in).
func runSluiceStdin(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runSluiceIn(t, repoRoot, stdin, args...)
}

// runSluiceIn runs the binary to completion in dir with stdin, giving up
// after two minutes.
func runSluiceIn(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sluiceBin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		code = ee.ExitCode()
	default:
		t.Fatalf("sluice %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}

// requireExit checks an exit code.
func requireExit(t *testing.T, got, want int, stderr string) {
	t.Helper()
	if got != want {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", got, want, stderr)
	}
}

func TestTestGoldenFiles(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(repoRoot, "testrunner", "testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no files in testrunner/testdata")
	}
	var all []string
	total := 0
	for _, p := range paths {
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rel)
		f, err := testrunner.LoadQTT(p)
		if err != nil {
			t.Fatal(err)
		}
		total += len(f.Cases)
		t.Run(filepath.Base(p), func(t *testing.T) {
			checkAllPass(t, len(f.Cases), rel)
		})
	}
	t.Run("all", func(t *testing.T) { checkAllPass(t, total, all...) })
}

// checkAllPass runs `sluice test FILES` and requires n PASS lines and the
// closing line "n passed, 0 failed, 0 skipped".
func checkAllPass(t *testing.T, n int, files ...string) {
	t.Helper()
	stdout, stderr, code := runSluice(t, append([]string{"test"}, files...)...)
	if code != 0 {
		t.Fatalf("exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := fmt.Sprintf("%d passed, 0 failed, 0 skipped\n", n)
	if !strings.HasSuffix(stdout, "\n"+want) {
		t.Errorf("stdout does not end with %q:\n%s", want, stdout)
	}
	if got := strings.Count(stdout, "\nPASS  ") + boolInt(strings.HasPrefix(stdout, "PASS  ")); got != n {
		t.Errorf("%d PASS lines, want %d:\n%s", got, n, stdout)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestTestWrongOutput(t *testing.T) {
	stdout, stderr, code := runSluice(t, "test", "cmd/sluice/testdata/wrong-output.json")
	want := `FAIL  wrong-output.json :: deliberately wrong expected value
    topic DOUBLED: record 1 differs in value: expected {"topic":"DOUBLED","key":"b","value":{"TWICE":7},"timestamp":20} got {"topic":"DOUBLED","key":"b","value":{"TWICE":6},"timestamp":20}
0 passed, 1 failed, 0 skipped
`
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1\nstderr:\n%s", code, stderr)
	}
}

func TestTestRunnerForm(t *testing.T) {
	dir := "cmd/sluice/testdata/runner/"
	args := []string{"test", "--statements", dir + "statements.sql", "--input", dir + "input.json", "--output"}

	stdout, stderr, code := runSluice(t, append(args, dir+"output.json")...)
	if want := "PASS  statements.sql :: statements\n1 passed, 0 failed, 0 skipped\n"; stdout != want || code != 0 {
		t.Errorf("right output: exit code %d, stdout:\n%s\nwant exit code 0, stdout:\n%s\nstderr:\n%s", code, stdout, want, stderr)
	}

	stdout, stderr, code = runSluice(t, append(args, dir+"output-wrong.json")...)
	want := `FAIL  statements.sql :: statements
    topic HOT: record 1 differs in value: expected {"topic":"HOT","key":"s1","value":{"DOUBLED":81.0},"timestamp":3000} got {"topic":"HOT","key":"s1","value":{"DOUBLED":80.0},"timestamp":3000}
0 passed, 1 failed, 0 skipped
`
	if diff := cmp.Diff(want, stdout); diff != "" || code != 1 {
		t.Errorf("wrong output: exit code %d (want 1), stdout (-want +got):\n%s\nstderr:\n%s", code, diff, stderr)
	}
}

func TestRunSyntaxError(t *testing.T) {
	file := filepath.Join(repoRoot, "cmd", "sluice", "testdata", "syntax-error.sql")
	_, stderr, code := runSluice(t, "run", file, "--data-dir", t.TempDir())
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("stderr has %d lines, want 4 (position, message, source line, caret):\n%s", len(lines), stderr)
	}
	if want := file + ": line 3:25: Syntax Error"; lines[0] != want {
		t.Errorf("position %q, want %q", lines[0], want)
	}
	if want := "Expecting {',', ')'}"; lines[1] != want {
		t.Errorf("message %q, want %q", lines[1], want)
	}
	if want := "  WITH (kafka_topic='s' value_format='JSON', partitions=1);"; lines[2] != want {
		t.Errorf("source line %q, want %q", lines[2], want)
	}
	if want := strings.Repeat(" ", 24) + "^"; lines[3] != want {
		t.Errorf("caret line %q, want %q", lines[3], want)
	}
	requireExit(t, code, 2, stderr)
}

func TestRunUnknownColumn(t *testing.T) {
	file := filepath.Join(repoRoot, "cmd", "sluice", "testdata", "unknown-column.sql")
	_, stderr, code := runSluice(t, "run", file, "--data-dir", t.TempDir())
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("stderr has %d lines, want at least 3:\n%s", len(lines), stderr)
	}
	got := strings.Join(lines[len(lines)-3:], "\n")
	want := file + ": line 3:14: unknown column: SELECT column 'W' cannot be resolved. (S has columns ID, V, ROWTIME, ROWPARTITION, ROWOFFSET)\n" +
		"  SELECT id, w FROM s;\n" +
		"             ^"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error (-want +got):\n%s\nstderr:\n%s", diff, stderr)
	}
	requireExit(t, code, 2, stderr)
}

// proc is a long-running sluice process whose stdout is read line by line.
type proc struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr lockedBuffer
	all    []string // every stdout line read so far
	// stopping is set once stop has taken over waiting for the process.
	stopping bool
}

// lockedBuffer is a process's stderr, which tests read while the process
// writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startSluice(t *testing.T, args ...string) *proc {
	t.Helper()
	return startCmd(t, exec.Command(sluiceBin, args...))
}

// startCmd starts cmd (the sluice binary, perhaps run by a wrapper such
// as ip netns exec) with stdout read line by line and stderr kept.
func startCmd(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd, lines: make(chan string, 1024)}
	p.cmd.Dir = repoRoot
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() {
		// Kill fails harmlessly when the process has exited.
		_ = p.cmd.Process.Kill()
		if !p.stopping {
			_ = p.cmd.Wait()
		}
	})
	return p
}

// waitFor reads stdout lines until until(all lines so far) is true or
// the deadline passes.
func (p *proc) waitFor(t *testing.T, timeout time.Duration, what string, until func([]string) bool) {
	t.Helper()
	deadline := time.After(timeout)
	for !until(p.all) {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("stdout ended before %s; stdout:\n%s", what, strings.Join(p.all, "\n"))
			}
			p.all = append(p.all, line)
		case <-deadline:
			t.Fatalf("no %s within %s; stdout:\n%s", what, timeout, strings.Join(p.all, "\n"))
		}
	}
}

// stop sends SIGTERM, reads stdout to its end and requires exit code 0
// within timeout. Stderr can be read afterwards.
func (p *proc) stop(t *testing.T, timeout time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	p.stopping = true
	go func() {
		for line := range p.lines {
			p.all = append(p.all, line)
		}
		exited <- p.cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("after SIGTERM: %v\nstderr:\n%s", err, p.stderr.String())
		}
	case <-time.After(timeout):
		t.Fatalf("still running %s after SIGTERM", timeout)
	}
}

// tableRows returns the cells of the data rows of printed tables: lines
// "| a | b |" that are not a header.
func tableRows(lines []string, header string) [][]string {
	var rows [][]string
	for _, l := range lines {
		if !strings.HasPrefix(l, "|") || l == header {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(l, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

func TestRunBookings(t *testing.T) {
	p := startSluice(t, "run", "queries/bookings.sql", "--data-dir", t.TempDir())
	const header = "| HOTEL      | WINDOWSTART   | WINDOWEND     | BOOKINGS      | REVENUE    |"
	p.waitFor(t, 30*time.Second, "7 rows", func(lines []string) bool { return len(tableRows(lines, header)) >= 7 })
	p.stop(t, 30*time.Second)

	rule := "+------------+---------------+---------------+---------------+------------+"
	if len(p.all) < 3 || p.all[0] != rule || p.all[1] != header || p.all[2] != rule {
		t.Errorf("table does not start with rule, header, rule:\n%s", strings.Join(p.all, "\n"))
	}
	// A window's updates share a partition of the output (the key is
	// hotel and window); different windows may not, and tasks of
	// different partitions run in parallel: only the order within a
	// window of a hotel is defined.
	perWindow := map[string][][]string{}
	for _, r := range tableRows(p.all, header) {
		k := r[0] + " " + r[1]
		perWindow[k] = append(perWindow[k], r[2:])
	}
	want := map[string][][]string{
		"Ritz 1767261600000": {
			{"1767261900000", "1", "220.0"},
			{"1767261900000", "2", "470.0"},
			{"1767261900000", "3", "770.0"},
		},
		"Ritz 1767261900000": {
			{"1767262200000", "1", "200.0"},
			{"1767262200000", "2", "410.0"},
		},
		"Savoy 1767261600000": {{"1767261900000", "1", "180.0"}},
		"Savoy 1767261900000": {{"1767262200000", "1", "190.0"}},
	}
	if diff := cmp.Diff(want, perWindow); diff != "" {
		t.Errorf("rows per window (-want +got):\n%s\nstdout:\n%s", diff, strings.Join(p.all, "\n"))
	}
}

var listening = regexp.MustCompile(`^broker listening on (127\.0\.0\.1:\d+)$`)

// startBroker runs `sluice broker` on a free port with a fresh data
// directory and returns the process and its address.
func startBroker(t *testing.T) (*proc, string) {
	t.Helper()
	b := startSluice(t, "broker", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	b.waitFor(t, 30*time.Second, "listening line", func(lines []string) bool { return len(lines) > 0 })
	m := listening.FindStringSubmatch(b.all[0])
	if m == nil {
		t.Fatalf("first line %q, want %q", b.all[0], "broker listening on 127.0.0.1:PORT")
	}
	return b, m[1]
}

func TestBrokerAndRun(t *testing.T) {
	b, addr := startBroker(t)

	r := startSluice(t, "run", "cmd/sluice/testdata/pings.sql", "--brokers", addr, "--data-dir", t.TempDir())
	const header = "| HOST       | DOUBLE_MS  |"
	r.waitFor(t, 30*time.Second, "2 rows", func(lines []string) bool { return len(tableRows(lines, header)) >= 2 })
	r.stop(t, 30*time.Second)
	if diff := cmp.Diff([][]string{{"b", "300"}, {"c", "600"}}, tableRows(r.all, header)); diff != "" {
		t.Errorf("rows (-want +got):\n%s\nstdout:\n%s", diff, strings.Join(r.all, "\n"))
	}
	if strings.Contains(r.stderr.String(), "embedded broker") {
		t.Errorf("run started its own broker despite --brokers:\n%s", r.stderr.String())
	}

	b.stop(t, 30*time.Second)
	if len(b.all) != 1 {
		t.Errorf("broker stdout after its first line: %q", b.all[1:])
	}
}

// TestJSONLogs: with --log-format json every stderr line is a JSON
// object, and the lines about a query carry its id as a field.
func TestJSONLogs(t *testing.T) {
	r := startSluice(t, "--log-format", "json", "--log-level", "info", "run", "cmd/sluice/testdata/counts.sql", "--data-dir", t.TempDir())
	const header = "| PAGE       | N          |"
	r.waitFor(t, 60*time.Second, "the count of 2", func(lines []string) bool {
		rows := tableRows(lines, header)
		return len(rows) > 0 && rows[len(rows)-1][1] == "2"
	})
	r.stop(t, 30*time.Second)
	restored := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stderr.String()), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("stderr line is not JSON: %q", line)
		}
		if entry["msg"] == "state restored" {
			restored++
			if entry["query"] != "CTAS_HIT_COUNTS" || entry["level"] != "INFO" {
				t.Errorf("state restored entry: %v", entry)
			}
		}
	}
	if restored != 1 {
		t.Errorf("%d \"state restored\" entries, want 1:\n%s", restored, r.stderr.String())
	}
}
