package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/sluice-sql/sluice/testrunner"
)

type testCmd struct {
	Statements string   `help:"SQL statements file (ksql-test-runner form)." type:"existingfile"`
	Input      string   `help:"Input records JSON (ksql-test-runner form)." type:"existingfile"`
	Output     string   `help:"Expected output records JSON (ksql-test-runner form)." type:"existingfile"`
	Files      []string `arg:"" optional:"" help:"Query-validation-test JSON files." type:"existingfile"`
}

func (c *testCmd) Run(*slog.Logger) error {
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
	if failed := testrunner.WriteReport(os.Stdout, results); failed > 0 {
		return &exitError{1, ""}
	}
	return nil
}
