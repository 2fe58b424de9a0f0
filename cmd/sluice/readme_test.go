package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/testrunner"
)

// TestReadmeSluiceTestExamples runs every `go run ./cmd/sluice test …`
// command of README.md's "Testing queries with `sluice test`" section, the
// way a newcomer on a fresh clone would: the files it names must be in the
// repository, and every case in them must pass.
func TestReadmeSluiceTestExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeTestCommands(t, string(readme))
	if len(commands) != 4 {
		t.Fatalf("found %d `sluice test` commands in the README's section, want 4: %q", len(commands), commands)
	}
	for _, args := range commands {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			files, n := expandTestArgs(t, args)
			checkAllPass(t, n, files...)
		})
	}
}

// readmeTestCommands returns the arguments after `go run ./cmd/sluice test`
// of each command in the section's first code block, with continuation
// lines joined and trailing comments removed.
func readmeTestCommands(t *testing.T, readme string) [][]string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "## Testing queries with `sluice test`")
	if !ok {
		t.Fatal("README.md has no section \"Testing queries with `sluice test`\"")
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("the README's `sluice test` section has no sh code block")
	}
	joined := strings.ReplaceAll(block[1], "\\\n", " ")
	var commands [][]string
	for _, line := range strings.Split(joined, "\n") {
		line, _, _ = strings.Cut(line, "#")
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "go run ./cmd/sluice test ")
		if !ok {
			continue
		}
		commands = append(commands, strings.Fields(rest))
	}
	return commands
}

// expandTestArgs expands the shell globs of a `sluice test` command line
// against the repository and counts the cases it should run: every case of
// each QTT or REST file, or one for ksql-test-runner's three-file form.
func expandTestArgs(t *testing.T, args []string) (expanded []string, cases int) {
	t.Helper()
	if len(args) > 0 && strings.HasPrefix(args[0], "--") {
		for i := 1; i < len(args); i += 2 {
			if _, err := os.Stat(filepath.Join(repoRoot, args[i])); err != nil {
				t.Fatalf("%s %s: %v", args[i-1], args[i], err)
			}
		}
		return args, 1
	}
	for _, pattern := range args {
		paths, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s matches no file in the repository (%v)", pattern, err)
		}
		for _, p := range paths {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				t.Fatal(err)
			}
			expanded = append(expanded, rel)
			isREST, err := testrunner.IsRESTFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if isREST {
				f, err := testrunner.LoadREST(p)
				if err != nil {
					t.Fatal(err)
				}
				cases += len(f.Cases)
				continue
			}
			f, err := testrunner.LoadQTT(p)
			if err != nil {
				t.Fatal(err)
			}
			cases += len(f.Cases)
		}
	}
	return expanded, cases
}
