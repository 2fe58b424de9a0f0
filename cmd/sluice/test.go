package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/testrunner"
)

type testCmd struct {
	Statements string   `help:"SQL statements file (ksql-test-runner form)." type:"existingfile"`
	Input      string   `help:"Input records JSON (ksql-test-runner form)." type:"existingfile"`
	Output     string   `help:"Expected output records JSON (ksql-test-runner form)." type:"existingfile"`
	Files      []string `arg:"" optional:"" help:"Query-validation-test JSON files." type:"existingfile"`
	Report     string   `help:"Also write a Markdown report (totals, per file, every case not passed with its reason) to this file." placeholder:"FILE"`
	Floor      int      `help:"Succeed when at least this many cases pass, failures allowed (a ratchet); without it any failure fails." default:"-1"`
	Parallel   int      `help:"REST cases run at once, each against its own broker and server (their time is mostly waiting)." default:"4"`
	udfDirFlag
}

// runRESTCases runs a REST file's cases, parallel at once, and returns
// their results in the file's order.
func runRESTCases(file string, cases []testrunner.RESTCase, parallel int) []testrunner.Result {
	results := make([]testrunner.Result, len(cases))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = testrunner.RunREST(file, &cases[i])
		}()
	}
	wg.Wait()
	return results
}

func (c *testCmd) Run(*slog.Logger) error {
	testrunner.UDFDir = c.UDFDir
	var results []testrunner.Result
	switch {
	case c.Statements != "" || c.Input != "" || c.Output != "":
		if c.Statements == "" || c.Input == "" || c.Output == "" {
			return &exitError{2, "sluice test: --statements, --input and --output go together"}
		}
		tc, err := testrunner.LoadRunnerCase(c.Statements, c.Input, c.Output)
		if err != nil {
			return &exitError{2, fmt.Sprintf("sluice test: %v", err)}
		}
		results = append(results, testrunner.RunCase(filepath.Base(c.Statements), tc))
	case len(c.Files) > 0:
		for _, path := range c.Files {
			rest, err := testrunner.IsRESTFile(path)
			if err != nil {
				return &exitError{2, fmt.Sprintf("sluice test: %v", err)}
			}
			if rest {
				f, err := testrunner.LoadREST(path)
				if err != nil {
					return &exitError{2, fmt.Sprintf("sluice test: %v", err)}
				}
				results = append(results, runRESTCases(filepath.Base(path), f.Cases, c.Parallel)...)
				continue
			}
			f, err := testrunner.LoadQTT(path)
			if err != nil {
				return &exitError{2, fmt.Sprintf("sluice test: %v", err)}
			}
			for i := range f.Cases {
				results = append(results, testrunner.RunCase(filepath.Base(path), &f.Cases[i]))
			}
		}
	default:
		return &exitError{2, "sluice test: give test files, or --statements, --input and --output"}
	}
	failed := testrunner.WriteReport(os.Stdout, results)
	if c.Report != "" {
		f, err := os.Create(c.Report)
		if err != nil {
			return &exitError{2, fmt.Sprintf("sluice test: %v", err)}
		}
		err = testrunner.WriteMarkdown(f, results, "sluice test --report "+c.Report+" "+strings.Join(reportArgs(c.Files), " "))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return &exitError{2, fmt.Sprintf("sluice test: report: %v", err)}
		}
	}
	if c.Floor >= 0 {
		if passed := testrunner.Summarize(results).Passed; passed < c.Floor {
			return &exitError{1, fmt.Sprintf("sluice test: %d cases pass, fewer than the floor of %d", passed, c.Floor)}
		}
		return nil
	}
	if failed > 0 {
		return &exitError{1, ""}
	}
	return nil
}

// reportArgs names the files a report covers: their directories' globs,
// so the command line in the report stays short and stable.
func reportArgs(files []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		dir := filepath.Dir(f)
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, dir); err == nil {
				dir = rel
			}
		}
		g := filepath.Join(dir, "*.json")
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}
